"""Inline forms of the models helpers for compiled replay (``dcgraph.compiled.inline``).

A rewritten model calls ``declare``, ``advance``, ``constrain`` and ``log_jacobian`` once per
parameter and a factory per statement; on a compiled path these are written as code:

* ``declare(name, line, *args)`` at a call site whose arguments are numbers, strings or
  tuples: the recorded ``ParamSpec`` (arguments not known when compiling are guarded equal to
  the recorded ones; the path's first declaration guards that no ``Discovery`` is active, the
  per-thread state only ``BoundModel`` sets around a whole run: discovering re-traces);
* ``advance(at, spec)`` of known ``at`` and ``spec``: the int;
* ``constrain`` / ``log_jacobian`` of a known offset and spec, on a float64 ``theta`` of the
  recorded shape (guarded once): a scalar's map on ``float(theta[at])``, identity and lower
  bound written out, an unconstrained vector a copy of its slice;
* a factory with positional parameters: the ``DistExpr`` built directly, and only where a
  call needs it when its only users are statements ``observe(x, d, line)`` on floats (whose
  forms use its parameters; a statement's call, the fallback, gets a fresh, equal one);
* ``x |= normal(loc, scale)`` on floats: the statement's log density written out;
* the scatter rules of ``constrain`` / ``log_jacobian`` (``dcgraph.ad.defscatter``, registered
  here with their inline forms) of a known offset and spec: ``g0[at] += g * slope`` with
  constant slopes folded, an unconstrained vector's adjoint added as it is (when it has the
  vector's shape, else the rule's call).

Each form gives exactly the helper's value for the arguments its guards pass.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ..ad import defscatter
from ..compiled import GuardFailed
from ..compiled.inline import definline
from ..compiled.support import unalias
from ..tape import Phi, PrimitiveCall
from .distributions import FACTORIES, FAMILIES, DistExpr, normal
from .fastpaths import LOG_2PI
from .params import ParamSpec, _exp, _identity, _lower, _one, _zero
from .runtime import (_state, advance, constrain, constrain_scatter, declare, log_jacobian,
                      log_jacobian_scatter, observe)

__all__ = ["FORMS", "STATEMENT_Z", "float_operand", "float_or_retrace"]

_PLAIN = (int, float, bool, str, type(None))


def _plain(value) -> bool:
    if type(value) is tuple:
        return all(type(v) is int for v in value)
    return type(value) in _PLAIN and (type(value) is not float or math.isfinite(value))


def _declare(site):
    node = site.node
    lines = [site.guard(f"{site.bind(_state, '_dcg_state')}.discovery is not None")] \
        if site.once("not discovering") else []   # before any declaration: re-trace
    pairs = list(zip(node.args[2:], site.args[2:])) + \
        [(x, site.kwargs.get(n)) for n, x in node.kwargs.items()]
    if type(node.value) is not ParamSpec or len(node.args) < 2 \
            or not (site.known(node.args[0]) and site.known(node.args[1])) \
            or not all(_plain(x.value) for x, _ in pairs):
        if not lines:
            return None
        kw = ", ".join(f"{site.bind(n, '_key')}: {e}" for n, e in site.kwargs.items())
        call = f"{site.bind(declare, '_declare')}({', '.join(site.args)}, **{{{kw}}})"
        return lines + [f"v{site.k} = {call}"], f"v{site.k}", None
    lines += [site.guard(f"{expr} != {site.literal(x.value)}") for x, expr in pairs
              if not site.known(x)]
    return lines, site.bind(node.value, f"_spec{site.k}"), "constant"


def _advance(site):
    at, spec = site.node.args
    if not (site.known(at) and site.known(spec)) or type(site.node.value) is not int:
        return None
    return [], site.literal(site.node.value), "constant"


def _theta(site, size: int):
    """``theta``'s expression when the coordinates ``at:at + size`` of the recorded ``theta``
    (a float64 vector) exist and ``at`` and the spec are known, with the guard that ``theta``
    has the recorded type, dtype and shape (the first time on the path); else (None, [])."""
    theta, at, spec = site.node.args
    value = theta.value
    if not (site.known(at) and site.known(spec)) or type(at.value) is not int \
            or type(value) is not np.ndarray or value.dtype != np.float64 or value.ndim != 1 \
            or not 0 <= at.value <= len(value) - size:
        return None, []
    t = site.args[0]
    test = (f"_type({t}) is not {site.bind(np.ndarray, '_ndarray')} or {t}.shape != "
            f"{site.literal(value.shape)} or {t}.dtype != {site.bind(value.dtype, '_F8')}")
    return t, [site.guard(test)] if site.once(("theta", t)) else []


def _scalar(site, which: int):
    """A scalar parameter's map ``which`` (0 forward, 1 log-Jacobian) on ``float(theta[at])``."""
    spec = site.node.args[2].value
    if spec.scalar is None:
        return None
    t, lines = _theta(site, 1)
    if t is None:
        return None
    at = site.node.args[1].value
    fn, u = spec.scalar[which], f"{site.bind(float, '_float')}({t}[{at}])"
    if fn is _zero:
        return lines, "0.0", "typed"
    if fn is _identity:
        expr = u
    elif fn is _lower:
        expr = f"{site.literal(float(spec.bijector.low))} + {site.bind(math.exp, '_exp')}({u})"
    else:
        expr = f"{site.bind(fn, '_map')}({site.bind(spec.bijector, '_bijector')}, {u})"
    return lines + [f"v{site.k} = {expr}"], f"v{site.k}", "typed"


def _constrain(site):
    spec = site.node.args[2].value
    if type(spec) is ParamSpec and spec.vector:
        t, lines = _theta(site, spec.size)
        if t is None:
            return None
        at = site.node.args[1].value
        return lines + [f"v{site.k} = {t}[{at}:{at + spec.size}].copy()"], f"v{site.k}", "typed"
    return _scalar(site, 0) if type(spec) is ParamSpec else None


def _log_jacobian(site):
    return _scalar(site, 1) if type(site.node.args[2].value) is ParamSpec else None


def _factory(site):
    node = site.node
    family = node.fn.__name__
    if node.kwargs or len(node.args) != len(FAMILIES[family][1]):
        return None
    params = "".join(a + ", " for a in site.args)
    built = f"{site.bind(DistExpr, '_DistExpr')}({site.bind(family, '_family')}, ({params}))"
    users = site.users(node)
    if users and all(type(u) is PrimitiveCall and u.fn is observe and len(u.args) == 3
                     and u.args[1] is node and _scalar_normal(u) for u in users):
        return [], built, "typed"         # built where a statement's call needs it
    return [f"v{site.k} = {built}"], f"v{site.k}", "typed"


def _known_site(site):
    """(theta expression, at, spec) when ``at`` and ``spec`` are known, else None."""
    theta, at, spec = site.node.args
    if not (site.known(at) and site.known(spec)) or type(at.value) is not int \
            or type(spec.value) is not ParamSpec:
        return None
    return site.args[0], at.value, spec.value


def _slope_times(site, g, slope, spec, t, at) -> str:
    """``_scaled_slope(g, slope, spec, theta, at)`` as an expression."""
    if slope is _one:
        return g
    if slope is _zero:
        return "0.0"
    u = f"{site.bind(float, '_float')}({t}[{at}])"
    if slope is _exp:
        return f"{g} * {site.bind(math.exp, '_exp')}({u})"
    return (f"{g} * {site.bind(slope, '_slope')}({site.bind(spec.bijector, '_bijector')}, "
            f"{u})")


def _constrain_scatter(site, g):
    known = _known_site(site)
    if known is None:
        return None
    t, at, spec = known
    if spec.scalar is not None:
        return str(at), _slope_times(site, g, spec.scalar[2], spec, t, at)
    if not spec.vector:
        return None
    n = spec.size
    call = ", ".join([g, site.code.v(site.node)] + site.args)
    return (f"{at}:{at + n}", f"({g} if _type({g}) is {site.bind(np.ndarray, '_ndarray')} and "
            f"{g}.shape == ({n},) else {site.bind(constrain_scatter, '_scatter')}({call})[1])")


def _log_jacobian_scatter(site, g):
    known = _known_site(site)
    if known is None or known[2].scalar is None:
        return None
    t, at, spec = known
    return str(at), _slope_times(site, g, spec.scalar[3], spec, t, at)


defscatter(constrain, constrain_scatter, 0, inline=_constrain_scatter)
defscatter(log_jacobian, log_jacobian_scatter, 0, inline=_log_jacobian_scatter)

_HALF_LOG_2PI = 0.5 * LOG_2PI
#: ``Site.code.seen`` key (with the statement's node) of a written-out normal statement's
#: ``(z, scale)`` variables: ``z = (x - loc) / scale`` and the scale as a float
STATEMENT_Z = "normal statement z"
_NAN_TESTS, _REACHES = ("models: NaN tests",), ("models: reaches the returned value",)


def float_operand(site, x, expr, checks: list, guards: list | None = None):
    """``float(x)`` as an expression for a float or float64 operand (its runtime type checked
    into ``checks`` unless fixed), or None for another recorded type. With ``guards`` (a
    forward form's lines), a read ``a[i]`` of a float64 vector needs no check: ``a``'s type
    is guarded once on the path instead (``Site.typed_item``)."""
    t = type(x.value)
    if t is not float and t is not np.float64:
        return None
    if not site.typed(x):
        item = site.typed_item(x) if guards is not None else None
        if item is None:
            checks.append(f"_type({expr}) is {site.bind(t, '_float' if t is float else '_float64')}")
        else:
            guards += item
    return expr if t is float else f"{site.bind(float, '_float')}({expr})"


def _scalar_normal(node) -> bool:
    """Was ``node`` a statement ``observe(x, normal(loc, scale), line)`` on float or float64
    operands (the case ``_observe`` writes out)?"""
    x, d, line = node.args
    inner = unalias(d)
    return type(node.value) is float and not node.kwargs and type(inner) is PrimitiveCall \
        and inner.fn is normal and not inner.kwargs and len(inner.args) == 2 \
        and all(type(a.value) in (float, np.float64) for a in (x, *inner.args))


def _observe(site):
    """``x |= normal(loc, scale)`` on floats: ``_normal_statement``'s scalar case written out
    (the call where an operand's type differs, ``scale <= 0`` or the result is NaN, which
    then raises the statement's error; a call giving no float re-traces: the value is typed).

    When the operands' types need no test, the call stands in only for a scale that is not
    positive (normal's check raises) or a NaN result (the call raises): then
    ``z = (x - loc) / scale`` and the scale's float are kept in variables of the statement
    (``STATEMENT_Z``: the joint form reads them), and a scale node's ``log`` and ``> 0``
    check are written once per path, at its first statement (later statements of that scale
    read the log; had the first one's call returned, the unbound variable would make the path
    raise, and be traced)."""
    node = site.node
    x, d, line = node.args
    inner = unalias(d)
    if not _scalar_normal(node) or not site.known(line):
        return None
    checks: list = []
    guards: list = []
    loc, scale = inner.args
    xs, ls, ss = [float_operand(site, a, site.code.v(a), checks, guards) for a in (x, loc, scale)]
    typed = not checks                   # else a call may stand for the formulas: no z kept
    if site.known(scale) and type(scale.value) is float and scale.value > 0:
        log_scale = site.literal(math.log(scale.value))
    elif ss.isidentifier() and typed:    # a float variable: its log once per path
        shared = site.local(f"_log_{ss}")
        if site.once(("log of scale", ss)):
            checks.append(f"{ss} > 0")
            log_scale = f"({shared} := {site.bind(math.log, '_log')}({ss}))"
        else:
            log_scale = shared
    else:
        if not ss.isidentifier():            # ``float(scale)`` once, in the check
            sc = site.local(f"_s{site.k}")
            checks.append(f"({sc} := {ss}) > 0")
            ss = sc
        else:
            checks.append(f"{ss} > 0")
        log_scale = f"{site.bind(math.log, '_log')}({ss})"
    z, v = site.local(f"_z{site.k}"), f"v{site.k}"
    if typed:                            # the call stands in only where it raises
        site.code.seen[STATEMENT_Z, node] = (z, ss)
    value = f"-0.5 * ({z} := ({xs} - {ls}) / {ss}) * {z} - {log_scale} - " \
            f"{site.literal(_HALF_LOG_2PI)}"
    call = f"{site.bind(float_or_retrace, '_float_or_retrace')}(" \
           f"{site.bind(observe, '_observe')}({', '.join(site.args)}), {site.k})"
    line0 = f"{v} = {value} if {' and '.join(checks)} else {call}" if checks else \
        f"{v} = {value}"
    nan_test = f"if {v} != {v}: {v} = {call}"
    if not _reaches_return(site, node):
        return guards + [line0, nan_test], v, "typed"
    _nan_tests(site).append(nan_test)
    return guards + [line0], v, "typed"


def _nan_tests(site) -> list:
    """The NaN tests of statements whose values reach the returned value by additions, run
    in order after the forward code only when that value is NaN (their calls raise the
    first NaN statement's error; a NaN total none of them explains is returned)."""
    tests = site.code.seen.get(_NAN_TESTS)
    if tests is None:
        tests = site.code.seen[_NAN_TESTS] = []
        ret, code = site.code.tape.returned.inputs[0], site.code

        def block():
            total = code.v(ret)
            return [f"if {total} != {total}:"] + ["    " + t for t in tests] if tests else []
        site.closing(block)
    return tests


def _reaches_return(site, node) -> bool:
    """Does the float ``node`` reach the path's returned value only through float additions
    (``lp = lp + observe(...)``: a NaN in it makes the returned value NaN)?"""
    memo = site.code.seen.setdefault(_REACHES, {})
    target = unalias(site.code.tape.returned.inputs[0])
    chain, u, found = [], node, False
    while True:
        if u is target:
            found = True
            break
        if u in memo:
            found = memo[u]
            break
        chain.append(u)
        users = site.users(u)
        if len(users) != 1:
            break
        nxt = users[0]
        if not (type(nxt) is Phi or (type(nxt) is PrimitiveCall and nxt.mutates is None and
                                     (nxt.fn is operator.add or nxt.fn is operator.iadd)
                                     and type(nxt.value) is float and not nxt.kwargs)):
            break
        u = nxt
    for c in chain:
        memo[c] = found
    return found


def float_or_retrace(value, k: int) -> float:
    """``value`` when a float (a statement's call where its written-out form does not apply),
    else ``GuardFailed(k)``: the path is traced again."""
    if type(value) is not float:
        raise GuardFailed(k)
    return value


#: helper -> its inline form (registered with ``dcgraph.compiled.inline.definline``)
FORMS = {declare: _declare, advance: _advance, constrain: _constrain,
         log_jacobian: _log_jacobian, observe: _observe, **{f: _factory for f in FACTORIES}}
for _fn, _form in FORMS.items():
    definline(_fn, _form)

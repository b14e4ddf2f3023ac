"""Joint rules of ``x |= family(...)`` for compiled replay: one call gives the adjoints of the
left side and of the family's parameters, each summed to its operand's shape.

``STATEMENT_JOINTS`` (factory -> rule, each ``observe_joint`` for its family) is registered
with ``dcgraph.ad.defjoint`` on ``observe``'s argument 1, so a statement whose right side is a factory call made on the path is
pulled back by one call (no ``Sparse`` of parameter adjoints, no factory rules); the value
rules of ``runtime`` and ``distributions`` stay the reference (the uncompiled sweep uses them).

``JOINTS``: family -> ``joint(d, x, wants) -> (adjoint of x, None (the line), of parameter 0,
...)`` with None where ``wants`` (same order) is False; a family without a row uses ``generic_joint`` (the family's
partials in one evaluation, then unbroadcast). ``normal`` reads what its forward pass kept on
the expression (``fastpaths``: ``x - loc`` and ``z @ z`` on vectors, ``z = (x - loc) / scale``).
"""
from __future__ import annotations

import re

import numpy as np

from ..ad import defjoint
from ..ad.values import unbroadcast
from ..compiled.support import unalias
from .distributions import FACTORIES, DistExpr, normal
from .inline_forms import STATEMENT_Z, float_operand
from .runtime import StatementError, observe

__all__ = ["JOINTS", "STATEMENT_JOINTS", "generic_joint", "observe_joint"]

_FLOATS = (float, np.float64)


def generic_joint(d: DistExpr, x, wants: tuple) -> tuple:
    """Any family: ``d.partials`` (all wanted partials from one evaluation), unbroadcast."""
    grads = d.partials(x, wants[0], any(wants[2:]))
    out = [None] * len(wants)
    if wants[0]:
        gx = grads.get("x")
        out[0] = None if gx is None else unbroadcast(x, gx)
    for k, (name, p) in enumerate(zip(d.names, d.params), 2):
        if wants[k]:
            gp = grads.get(name)
            out[k] = unbroadcast(p, 0.0 if gp is None else gp)
    return tuple(out)


def _normal_joint(d: DistExpr, x, wants: tuple) -> tuple:
    loc, scale = d.params
    cache = d._cache
    if cache is not None and cache[0] is x and cache[3] is not None:   # a float vector x
        r, zz, inv = cache[1], cache[2], cache[3]     # r = x - loc, zz = sum(z * z)
        if not (wants[2] or wants[3]):                 # a prior on x: one product
            return r * (-inv * inv), None, None, None
        iz = r * (inv * inv)
        gloc = None
        if wants[2]:
            gloc = float(iz.sum()) if type(loc) in _FLOATS else unbroadcast(loc, iz)
        return (-iz if wants[0] else None, None, gloc, (zz - x.size) * inv if wants[3] else None)
    if type(x) in _FLOATS and type(loc) in _FLOATS and type(scale) in _FLOATS:
        s = float(scale)                   # Python floats: faster math
        r = float(x) - float(loc)
        iz = r / s / s
        return -iz, None, iz, (r * iz - 1.0) / s
    return generic_joint(d, x, wants)


def _uniform_joint(d: DistExpr, x, wants: tuple) -> tuple:
    low, high = d.params
    if type(x) in _FLOATS and type(low) in _FLOATS and type(high) in _FLOATS:
        w = 1.0 / (high - low)
        return 0.0, None, w, -w
    return generic_joint(d, x, wants)


#: family -> its joint rule (families not listed: ``generic_joint``)
JOINTS = {"normal": _normal_joint, "uniform": _uniform_joint}


def observe_joint(wants, g, ans, x, d, line):
    """The adjoints of ``x``, ``line`` (None) and ``d``'s parameters for ``x |= d`` (``d`` a
    factory's ``DistExpr``), in that order, scaled by ``g``."""
    return _checked(JOINTS.get(d.family, generic_joint), wants, g, x, d, line)


def _checked(joint, wants, g, x, d, line):
    try:
        out = joint(d, x, wants)
    except NotImplementedError as exc:
        raise StatementError(line, f"{d!r} has no gradient: {exc}") from None
    if wants[0] and out[0] is None:
        raise StatementError(line, f"{d!r} has no gradient with respect to the left side")
    if type(g) is not float or g != 1.0:
        return tuple(None if a is None else g * a for a in out)
    return out


def observe_normal_joint(wants, g, ans, x, d, line):
    """``observe_joint`` of ``x |= normal(...)`` (whose partials always exist); a prior on a
    float vector (``wants`` only ``x``) inline."""
    cache = d._cache
    if not (wants[2] or wants[3]) and cache is not None and cache[0] is x and \
            cache[3] is not None and type(g) is float:
        inv = cache[3]
        return cache[1] * (-g * inv * inv), None, None, None
    out = _normal_joint(d, x, wants)
    if type(g) is not float or g != 1.0:
        return tuple(None if a is None else g * a for a in out)
    return out


def observe_uniform_joint(wants, g, ans, x, d, line):
    """``observe_joint`` of ``x |= uniform(low, high)``, floats inline."""
    low, high = d.params
    if type(g) is float and type(x) in _FLOATS and type(low) in _FLOATS and \
            type(high) in _FLOATS:
        w = g / (high - low)
        return 0.0, None, w, -w
    return _checked(_uniform_joint, wants, g, x, d, line)


def _family_rule(family: str):
    joint = JOINTS.get(family, generic_joint)

    def observe_family_joint(wants, g, ans, x, d, line):
        return _checked(joint, wants, g, x, d, line)
    observe_family_joint.__name__ = observe_family_joint.__qualname__ = f"observe_{family}_joint"
    return observe_family_joint


_NAME_OR_NUMBER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$|\(?-?[0-9.]+(e[-+]?[0-9]+)?\)?$")


def normal_joint_form(site, g: str, wants: tuple):
    """``observe_normal_joint`` of floats written out for compiled replay (``defjoint``'s
    inline form; the call where an operand's type differs): ``r = x - loc``,
    ``iz = r / scale / scale``, adjoints ``(-iz, None, iz, (r * iz - 1) / scale)``; from the
    forward form's ``z = (x - loc) / scale`` when the statement was written out
    (``STATEMENT_Z``): ``iz = z / scale``, the scale's ``(z * z - 1) / scale``."""
    x, d, line = site.node.args
    if g != "1.0":
        return None
    kept = site.code.seen.get((STATEMENT_Z, site.node))
    if kept is not None:                 # the items as they are: no tuple
        z, sc = kept
        iz = site.local("_iz")
        return _adjoints(wants, f"({iz} := {z} / {sc})", iz, f"({z} * {z} - 1.0) / {sc}")
    checks: list = []
    operands = [float_operand(site, a, site.code.v(a), checks)
                for a in (x, *unalias(d).args)]
    if None in operands:
        return None
    xs, ls, ss = operands
    r, iz = site.local("_r"), site.local("_iz")
    sc = ss if _NAME_OR_NUMBER.match(ss) else site.local("_sc")   # else its float() once
    bound = sc if sc == ss else f"({sc} := {ss})"
    items = _adjoints(wants, f"({iz} := ({r} := {xs} - {ls}) / {bound} / {sc})", iz,
                      f"({iz} * {r} - 1.0) / {sc}")
    if not checks:
        return items
    value = f"({', '.join('None' if a is None else a for a in items)})"
    call = f"{site.bind(observe_normal_joint, 'observe_normal_joint')}" \
           f"({', '.join([repr(wants), g, site.code.v(site.node)] + site.args)})"
    return f"{value} if {' and '.join(checks)} else {call}"


def _adjoints(wants, defined: str, iz: str, scale: str) -> list:
    """The wanted adjoints ``[-iz, None, iz, scale]`` (None where not wanted), in order; the
    first of ``iz``'s uses is ``defined``, the expression binding it (``iz`` read once:
    its value, ``defined`` without the binding)."""
    uses = [k for k in (0, 2) if wants[k]] + ([3] if wants[3] and iz in scale else [])
    if len(uses) == 1 and uses[0] != 3:
        defined = defined[len(f"({iz} := "):-1]
    items, first = [], True
    for k in range(4):
        if not wants[k] or k == 1:
            items.append(None)
        elif k == 3:
            items.append(scale.replace(iz, defined, 1) if first and iz in scale else scale)
        else:
            items.append(("-" if k == 0 else "") + (defined if first else iz))
            first = False
    return items


#: factory -> the joint rule of a statement on its expression
_INLINE = {"normal": observe_normal_joint, "uniform": observe_uniform_joint}
STATEMENT_JOINTS = {f: _INLINE.get(f.__name__) or _family_rule(f.__name__) for f in FACTORIES}
defjoint(observe, 1, STATEMENT_JOINTS, inline={normal: normal_joint_form})

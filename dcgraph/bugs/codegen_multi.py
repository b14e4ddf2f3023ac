"""Generated code for multivariate stochastic statements (``dmnorm``, ``dmt``, ``ddirich``,
``dmulti``, ``dwish``): one node per vector or matrix block.

A multivariate part's values are kept flat (instance after instance, row-major inside a block) and
reshaped to ``(n,) + event`` (or ``event`` for a statement outside loops) where a density or a
transform needs them. Unconstrained sizes and transforms follow ``dcgraph.dist.bijectors``: real
vectors as they are, simplices by Stan's stick-breaking (``K - 1`` coordinates), positive definite
``p x p`` matrices by the Cholesky map (``p (p + 1) / 2`` coordinates, diagonal exponentiated).
"""
from __future__ import annotations

import ast

import numpy as np

from .emit import attr_call, name

__all__ = ["event_shape", "unconstrained_size", "stochastic_multivariate"]

_STICK_FORWARD = ("sp.expit(u - OFF) * np.exp(np.concatenate((ZEROS, np.cumsum("
                  "sp.log_expit(OFF - u), axis=-1)[..., :-1]), axis=-1))")
_STICK_LAST = "np.exp(np.cumsum(sp.log_expit(OFF - u), axis=-1)[..., -1:])"
_STICK_JAC = ("np.sum(sp.log_expit(u - OFF) + sp.log_expit(OFF - u) + np.concatenate((ZEROS, "
              "np.cumsum(sp.log_expit(OFF - u), axis=-1)[..., :-1]), axis=-1))")
_STICK_INVERSE = ("sp.logit(x[..., :-1] / np.flip(np.cumsum(np.flip(x, -1), axis=-1), -1)[..., :-1])"
                  " + OFF")
_PD_FORWARD = "np.matmul(L, np.swapaxes(L, -1, -2))"
_PD_LOWER = "np.reshape(np.matmul(np.where(DIAG, np.exp(u), u), SCATTER), SHAPE)"
_PD_JAC = "P_LOG2 + np.sum(WEIGHTS * u)"
_PD_INVERSE = ("np.where(DIAG, np.log(np.where(DIAG, np.linalg.cholesky(x)[..., ROWS, COLS], 1.0)),"
               " np.linalg.cholesky(x)[..., ROWS, COLS])")


def event_shape(g, part) -> tuple:
    shapes = {i.target_shape for i in part.instances}
    if len(shapes) != 1:
        raise g.error("the blocks of a multivariate statement differ in size", part.statement.ast)
    return shapes.pop()


def unconstrained_size(support: str, event: tuple) -> int:
    k = int(np.prod(event))
    if support == "simplex":
        return k - 1
    if support == "pd":
        return event[0] * (event[0] + 1) // 2
    return k


def _shape(part, event):
    return ((len(part.instances),) if part.statement.loops else ()) + tuple(event)


def stochastic_multivariate(gen, part, fam, ex, size):
    """Emit a multivariate part for ``gen.mode``; the same roles as ``_Gen.stochastic``."""
    em, st, mode = gen.em, part.statement.ast, gen.mode
    if size is None and part.statement.loops:
        raise gen.g.error("a multivariate statement inside a loop that cannot be vectorised is "
                          "not supported", st)
    event = event_shape(gen.g, part)
    shape = _shape(part, event)
    params = dict(zip(fam.params, [em.simple(ex(a)) for a in st.dist.args]))
    target = f"p{part.id}"
    batch = shape[:len(shape) - len(event)]
    ku = unconstrained_size(fam.support, event)
    tup = ast.Tuple([ast.Constant(int(s)) for s in shape], ast.Load())
    if part.role == "observed":
        if mode in ("constrain", "unconstrain"):
            return
        if mode == "simulate":
            mark = len(em.body)
            draw = em.template(fam.sample, dict(params, rng=name("rng"), SHAPE=tup))
            inner = em.body[mark:] + [ast.Assign([name(target, True)],
                                                 attr_call("np", "ravel", draw))]
            del em.body[mark:]
            em.body.append(ast.If(name("observed"), inner, []))
            gen._observed.append(part.id)
            return
        values = np.concatenate([np.ravel(gen.g.nodes[i.node].value) for i in part.instances])
        x = em.const(values.reshape(shape))
    elif mode == "simulate":
        draw = em.simple(em.template(fam.sample, dict(params, rng=name("rng"), SHAPE=tup)))
        fixed = ast.Subscript(name("fixed"), ast.Constant(gen.slot_of[part.id]), ast.Load())
        em.assign(target, ast.Call(name("_merge"), [attr_call("np", "ravel", draw), fixed,
                                                    ast.Constant(None)], []))
        return
    elif mode in ("joint", "unconstrain"):
        flat = ast.Subscript(name("vals"), ast.Constant(gen.slot_of[part.id]), ast.Load())
        x = em.simple(attr_call("np", "reshape", flat, tup))
        if mode == "unconstrain":
            em.assign(target, flat)
            if not fam.discrete:
                gen.thetas.append(em.simple(attr_call("np", "ravel", _inverse(em, fam, x, event, ku))))
            return
    else:
        slot = gen.slots[gen.slot_of[part.id]]
        src = name("disc" if fam.discrete else "theta")
        flat = ast.Subscript(src, ast.Slice(ast.Constant(slot.start), ast.Constant(slot.stop)),
                             ast.Load())
        if fam.discrete:
            x = em.simple(attr_call("np", "reshape", flat, tup))
        else:
            utup = ast.Tuple([ast.Constant(int(s)) for s in batch + (ku,)], ast.Load())
            u = em.simple(attr_call("np", "reshape", flat, utup))
            x = em.simple(_forward(gen, em, fam, u, event, batch, shape))
    if part.role != "observed":
        em.assign(target, attr_call("np", "ravel", x))
    if mode in ("density", "joint"):
        gen.add_lp(attr_call("np", "sum", em.template(fam.logpdf, dict(params, x=x))))


def _forward(gen, em, fam, u, event, batch, shape):
    if fam.support == "simplex":
        k = event[0]
        consts = {"u": u, "OFF": em.const(np.log(np.arange(k - 1, 0, -1, dtype=float))),
                  "ZEROS": em.const(np.zeros(batch + (1,)))}
        gen.jacobian(em.template(_STICK_JAC, consts))
        head = em.simple(em.template(_STICK_FORWARD, consts))
        last = em.simple(em.template(_STICK_LAST, consts))
        return attr_call("np", "concatenate", ast.Tuple([head, last], ast.Load()),
                         axis=ast.Constant(-1))
    if fam.support == "pd":
        p = event[0]
        rows, cols = np.tril_indices(p)
        scatter = np.zeros((len(rows), p * p))
        scatter[np.arange(len(rows)), rows * p + cols] = 1.0
        consts = {"u": u, "DIAG": em.const(rows == cols), "SCATTER": em.const(scatter),
                  "SHAPE": ast.Tuple([ast.Constant(int(s)) for s in shape], ast.Load()),
                  "WEIGHTS": em.const((p - rows + 1.0) * (rows == cols)),
                  "P_LOG2": ast.Constant(float(p * np.log(2.0) * max(1, int(np.prod(batch)))))}
        gen.jacobian(em.template(_PD_JAC, consts))
        lower = em.simple(em.template(_PD_LOWER, consts))
        return em.template(_PD_FORWARD, {"L": lower})
    return u


def _inverse(em, fam, x, event, ku):
    if fam.support == "simplex":
        off = em.const(np.log(np.arange(event[0] - 1, 0, -1, dtype=float)))
        return em.template(_STICK_INVERSE, {"x": x, "OFF": off})
    if fam.support == "pd":
        rows, cols = np.tril_indices(event[0])
        return em.template(_PD_INVERSE, {"x": x, "DIAG": em.const(rows == cols),
                                         "ROWS": em.const(rows), "COLS": em.const(cols)})
    return x

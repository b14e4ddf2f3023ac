"""Generated code for blocks that cannot be vectorised: real loops and straight-line steps.

``loop_block`` handles a ``loop`` block (a self-dependent or fused loop, possibly reversed) as one
Python ``for`` over its iterations in execution order. Every value the block reads lives in a
*frame* list ``F``: first the outside values it needs (gathered once before the loop), then each
node it computes, appended as it is computed (``F = F + [v]``: no container is mutated, so the
compiled gradient replay applies); each read is ``F[K[t]]`` with ``K`` a constant table
of frame positions per iteration, so the loop body does not depend on the number of iterations.
After the loop each part's values are gathered from ``F`` in instance order. Blocks reading vectors
(ranges) or defining blocks of nodes fall back to ``straight_line``: one statement per instance.
"""
from __future__ import annotations

import ast

import numpy as np

from . import syntax as S
from .emit import attr_call, name

__all__ = ["loop_block", "straight_line"]


def _sub(src, index):
    return ast.Subscript(src, index, ast.Load())


def _append(lst, value):
    """``lst = lst + [value]``: a new list, not ``lst.append(value)``, so that the traced program
    mutates no container and ``dcgraph.grad`` keeps its compiled replay (which refuses mutation)."""
    return ast.Assign([name(lst, True)], ast.BinOp(name(lst), ast.Add(), ast.List([value], ast.Load())))


def loop_block(gen, block, keep) -> bool:
    """Emit ``block`` as a loop; False (nothing emitted) when it needs the straight-line form."""
    em, g = gen.em, gen.g
    parts = [p for p in block.parts if p.id in keep]
    if any(len(i.target) > 1 or i.dynamic for p in parts for i in p.instances) or any(
            shape != () for p in parts for i in p.instances for _, shape in i.refs):
        return False
    steps = [(p, i) for p, i in block.steps if p.id in keep]
    n_iter = len(steps) // len(parts)
    computed = [(p, i) for p, i in steps if p.role != "observed"]
    internal = {i.node: k for k, (_, i) in enumerate(computed)}
    # outside values read by the block, in a fixed order
    outside, where = [], {}
    for p, i in steps:
        for k, var in enumerate(p.statement.refs):
            offsets = i.refs[k][0]
            if offsets is None:
                continue
            nid = g.node_at.get((var.name, int(offsets[0])))
            if nid in internal:
                continue
            key = (var.name, int(offsets[0]))
            if key not in where:
                where[key] = len(outside)
                outside.append(key)
    frame = em.fresh("F")
    items = [em._one(*em.element(var, off, {})) for var, off in outside]
    em.assign(frame, ast.List(items, ast.Load()))
    base = len(outside)
    t = name("t")
    by_part = {p.id: [i for q, i in steps if q is p] for p in parts}
    gen.start_loop()
    outer = em.body
    em.body = []
    lists = {}
    for p in parts:
        insts = by_part[p.id]
        refs = {id(v): k for k, v in enumerate(p.statement.refs)}
        tables = {}
        for k, var in enumerate(p.statement.refs):
            if insts[0].refs[k][0] is None:
                tables[k] = em.const(np.array([i.env[var.name] for i in insts], dtype=float))
                continue
            idx = []
            for i in insts:
                nid = g.node_at.get((var.name, int(i.refs[k][0][0])))
                idx.append(base + internal[nid] if nid in internal
                           else where[(var.name, int(i.refs[k][0][0]))])
            tables[k] = em.const(np.array(idx, dtype=np.int64))

        def ex(e, refs=refs, tables=tables, p=p):
            return _expr(em, e, refs, tables, frame, t, p)
        value = em.fresh("v")
        positions = em.const(np.array([gen.position[id(i)] for i in insts], dtype=np.int64))
        if p.role == "logical":
            st = p.statement.ast
            v = ex(st.expr)
            if st.link is not None:
                v = em.link_inverse(st.link, v)
            em.assign(value, v)
        else:
            if p.role == "observed":
                obs = np.array([float(np.ravel(g.nodes[i.node].value)[0]) for i in insts])
                gen.loop_observed[p.id] = _sub(em.const(obs), t)
            before = (len(gen.thetas), len(gen._observed))
            gen.stochastic(p, ex, None, _sub(positions, t), value, None)
            gen.loop_observed.pop(p.id, None)
            if len(gen.thetas) > before[0]:                 # unconstrain: per-element values
                lst = lists.setdefault(("u", p.id), em.fresh("U"))
                em.body.append(_append(lst, gen.thetas.pop()))
            if len(gen._observed) > before[1]:              # simulate with observed=True
                lst = lists.setdefault(("o", p.id), em.fresh("O"))
                em.body[-1].body.append(_append(lst, name(value)))
        if p.role != "observed":
            em.body.append(_append(frame, name(value)))
    body = em.body
    em.body = outer
    gen.in_loop = False
    for lst in lists.values():
        em.assign(lst, ast.List([], ast.Load()))
    em.body.append(ast.For(ast.Name("t", ast.Store()), ast.Call(name("_range"),
                   [ast.Constant(n_iter)], []), body, []))
    # each part's values, in instance order
    whole = None
    for p in parts:
        exec_order = by_part[p.id]
        perm = np.argsort([gen.position[id(i)] for i in exec_order])
        if p.role != "observed":
            whole = whole or em.temp(attr_call("np", "array", name(frame)))
            frame_pos = np.array([base + internal[i.node] for i in exec_order])[perm]
            gen.em.sizes[p.id] = len(p.instances)
            em.assign(f"p{p.id}", _sub(whole, em.const(frame_pos.astype(np.int64))))
            if gen.mode in ("simulate", "constrain"):
                gen._made.add(p.id)
        if ("u", p.id) in lists:
            gen.thetas.append(_sub(attr_call("np", "array", name(lists[("u", p.id)])),
                                   em.const(perm.astype(np.int64))))
        if ("o", p.id) in lists:
            em.body.append(ast.If(name("observed"), [ast.Assign(
                [name(f"p{p.id}", True)], _sub(attr_call("np", "array", name(lists[("o", p.id)])),
                                                em.const(perm.astype(np.int64))))], []))
    return True


def _expr(em, e, refs, tables, frame, t, part):
    """A BUGS expression for one iteration: every read is ``F[K[t]]``."""
    if isinstance(e, S.Number):
        return em.expr(e, part.instances[:1], refs, None, True)
    if isinstance(e, S.Var):
        k = refs[id(e)]
        table = _sub(tables[k], t)
        if part.instances[0].refs[k][0] is None:
            return table
        return _sub(name(frame), table)
    if isinstance(e, S.Unary):
        inner = _expr(em, e.operand, refs, tables, frame, t, part)
        return ast.UnaryOp(ast.USub() if e.op == "-" else ast.UAdd(), inner)
    if isinstance(e, S.Binary):
        from .emit import _OPS
        return ast.BinOp(_expr(em, e.left, refs, tables, frame, t, part), _OPS[e.op](),
                         _expr(em, e.right, refs, tables, frame, t, part))
    from .functions import FUNCTIONS
    args = [em.simple(_expr(em, a, refs, tables, frame, t, part)) for a in e.args]
    params, body, _ = FUNCTIONS[e.name].form(len(args))
    return em.template(body, dict(zip(params, args)))


def straight_line(gen, block, keep, steps):
    """One statement per instance in execution order (the unrolled last resort)."""
    em = gen.em
    local = {}
    for part, inst in steps:
        if part.id not in keep:
            continue
        if len(inst.target) > 1:
            raise gen.g.error("a block of nodes (vector or matrix) in a loop that cannot be "
                              "vectorised is not supported", part.statement.ast)
        refs = {id(v): k for k, v in enumerate(part.statement.refs)}
        st = part.statement.ast

        def ex(e, inst=inst, refs=refs):
            return em.expr(e, [inst], refs, local, True)
        ident = f"n{inst.node}"
        if part.role == "logical":
            value = ex(st.expr)
            if st.link is not None:
                value = em.link_inverse(st.link, value)
            em.assign(ident, value)
        elif part.role == "observed" and gen.mode == "simulate":
            gen.stochastic(part, ex, None, gen.position[id(inst)], ident, None)   # if observed
            continue
        else:
            gen.stochastic(part, ex, None, gen.position[id(inst)], ident, inst)
            if part.role == "observed":
                continue
        local[inst.node] = name(ident)
    for part in block.parts:
        if part.id not in keep:
            continue
        if part.role == "observed":
            if gen.mode == "simulate":                   # prior predictive draws, when asked
                items = [name(f"n{i.node}") for i in part.instances]
                em.body.append(ast.If(name("observed"), [ast.Assign(
                    [name(f"p{part.id}", True)], items[0] if not part.statement.loops else
                    attr_call("np", "array", ast.List(items, ast.Load())))], []))
            continue
        if gen.mode in ("simulate", "constrain"):
            gen._made.add(part.id)
        em.sizes[part.id] = len(part.instances)
        items = [name(f"n{i.node}") for i in part.instances]
        em.assign(f"p{part.id}", items[0] if not part.statement.loops else
                  attr_call("np", "array", ast.List(items, ast.Load())))

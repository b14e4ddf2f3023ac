"""VJP rules for products and linear algebra: ``dot``, ``matmul`` (and ``@``), ``einsum``,
``inner``, ``outer``, ``tensordot``, ``linalg.inv``/``det``/``slogdet``/``solve``/``eigvalsh``.
"""
from __future__ import annotations

import operator

import numpy as np

from .registry import defnode, defvjp
from .values import Sparse, unbroadcast


def _arr(x):
    return x if type(x) is np.ndarray else np.asarray(x)


# -- matmul / dot -----------------------------------------------------------------------------
def matmul_vjp_0(g, ans, a, b, **kw):
    A, B, G = _arr(a), _arr(b), np.asarray(g)
    if A.ndim == 1 and B.ndim == 1:
        return unbroadcast(a, G * B)
    if B.ndim == 1:
        return unbroadcast(a, G[..., None] * B)
    if A.ndim == 1:
        return unbroadcast(a, (G[..., None, :] @ np.swapaxes(B, -1, -2))[..., 0, :])
    return unbroadcast(a, G @ np.swapaxes(B, -1, -2))


def matmul_vjp_1(g, ans, a, b, **kw):
    A, B, G = _arr(a), _arr(b), np.asarray(g)
    if A.ndim == 1 and B.ndim == 1:
        return unbroadcast(b, G * A)
    if A.ndim == 1:
        return unbroadcast(b, A[:, None] * G[..., None, :])
    if B.ndim == 1:
        return unbroadcast(b, (np.swapaxes(A, -1, -2) @ G[..., None])[..., 0])
    return unbroadcast(b, np.swapaxes(A, -1, -2) @ G)


def _dot_axes(A, B):
    """dot(A, B) as tensordot(A, B, axes) for N-D operands."""
    return ([A.ndim - 1], [max(B.ndim - 2, 0)])


def dot_vjp_0(g, ans, a, b, **kw):
    A, B = _arr(a), _arr(b)
    if A.ndim == 0 or B.ndim == 0:
        return unbroadcast(a, np.asarray(g) * B)
    if A.ndim <= 2 and B.ndim <= 2:
        return matmul_vjp_0(g, ans, a, b)
    return unbroadcast(a, tensordot_vjp_0(g, ans, A, B, _dot_axes(A, B)))


def dot_vjp_1(g, ans, a, b, **kw):
    A, B = _arr(a), _arr(b)
    if A.ndim == 0 or B.ndim == 0:
        return unbroadcast(b, np.asarray(g) * A)
    if A.ndim <= 2 and B.ndim <= 2:
        return matmul_vjp_1(g, ans, a, b)
    return unbroadcast(b, tensordot_vjp_1(g, ans, A, B, _dot_axes(A, B)))


def inner_vjp_0(g, ans, a, b):
    if np.ndim(a) <= 1 and np.ndim(b) <= 1:
        return unbroadcast(a, np.asarray(g) * _arr(b))
    return unbroadcast(a, np.tensordot(g, _arr(b), axes=(list(range(np.ndim(a) - 1, np.ndim(g))),
                                                          list(range(np.ndim(b) - 1)))))


def inner_vjp_1(g, ans, a, b):
    if np.ndim(a) <= 1 and np.ndim(b) <= 1:
        return unbroadcast(b, np.asarray(g) * _arr(a))
    return unbroadcast(b, np.tensordot(g, _arr(a), axes=(list(range(np.ndim(a) - 1)),
                                                          list(range(np.ndim(a) - 1)))))


def outer_vjp_0(g, ans, a, b, **kw):
    return np.reshape(np.asarray(g) @ np.ravel(b), np.shape(a))


def outer_vjp_1(g, ans, a, b, **kw):
    return np.reshape(np.ravel(a) @ np.asarray(g), np.shape(b))


def tensordot_vjp_0(g, ans, a, b, axes=2):
    A, B = _arr(a), _arr(b)
    ax_a, ax_b = _tensordot_axes(A.ndim, axes)
    free_a = [i for i in range(A.ndim) if i not in ax_a]
    free_b = [i for i in range(B.ndim) if i not in ax_b]
    # g axes: free_a then free_b; contract g's free_b part with B's free axes
    t = np.tensordot(g, B, axes=(list(range(len(free_a), len(free_a) + len(free_b))), free_b))
    order = free_a + ax_a                    # t's axes correspond to these axes of A
    return np.transpose(t, np.argsort(order))


def tensordot_vjp_1(g, ans, a, b, axes=2):
    A, B = _arr(a), _arr(b)
    ax_a, ax_b = _tensordot_axes(A.ndim, axes)
    free_a = [i for i in range(A.ndim) if i not in ax_a]
    free_b = [i for i in range(B.ndim) if i not in ax_b]
    t = np.tensordot(A, g, axes=(free_a, list(range(len(free_a)))))   # axes: ax_a then free_b
    order = ax_b + free_b
    return np.transpose(t, np.argsort(order))


def _tensordot_axes(ndim_a, axes):
    if isinstance(axes, (int, np.integer)):
        return list(range(ndim_a - axes, ndim_a)), list(range(axes))
    ax_a, ax_b = axes
    ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)
    ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)
    return [i % ndim_a for i in ax_a], ax_b


# -- einsum -----------------------------------------------------------------------------------
def einsum_rule(sweep, node, g):
    """``einsum(subscripts, *operands)``: operand i gets einsum(g and the others -> its own
    subscripts), broadcast over indices that only it carries."""
    if node.kwargs:
        sweep.unsupported(node, g, "einsum keyword arguments")
        return
    spec, *ops = node.args
    if type(spec.value) is not str or "." in spec.value:
        sweep.unsupported(node, g, "einsum with an ellipsis or in operand/sublist form")
        return
    values = [np.asarray(sweep.value(o)) for o in ops]
    ins, out = _parse_einsum(spec.value)
    for i, o in enumerate(ops):
        if not sweep.wants(o):
            continue
        sub = ins[i]
        if len(set(sub)) != len(sub):
            sweep.unsupported(node, g, f"repeated index in einsum operand {sub!r}")
            return
        others = [ins[j] for j in range(len(ops)) if j != i]
        present = set(out).union(*others) if others else set(out)
        target = "".join(c for c in sub if c in present)
        spec_i = ",".join([out] + others) + "->" + target
        grad = np.einsum(spec_i, g, *[values[j] for j in range(len(ops)) if j != i])
        if target != sub:                     # indices summed over within operand i alone
            shape = [values[i].shape[k] if c in target else 1 for k, c in enumerate(sub)]
            grad = np.broadcast_to(grad.reshape(shape), values[i].shape)
        sweep.add(o, unbroadcast(o.value if type(o.value) is np.ndarray else values[i], grad))


def _parse_einsum(spec: str):
    """Input and output subscripts of an explicit or implicit einsum spec (no ellipsis)."""
    spec = spec.replace(" ", "")
    lhs, arrow, rhs = spec.partition("->")
    ins = lhs.split(",")
    if not arrow:
        counts: dict = {}
        for s in ins:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        rhs = "".join(sorted(c for c, n in counts.items() if n == 1))
    return ins, rhs


# -- linalg -----------------------------------------------------------------------------------
def inv_vjp(g, ans, a):
    t = np.swapaxes(ans, -1, -2)
    return -t @ g @ t


def det_vjp(g, ans, a):
    return (np.asarray(g) * ans)[..., None, None] * np.swapaxes(np.linalg.inv(a), -1, -2)


def slogdet_rule(sweep, node, g):
    """``slogdet(a) -> (sign, logabsdet)``: only logabsdet varies."""
    if type(g) is Sparse and 1 in g:
        a = node.args[0]
        inv_t = np.swapaxes(np.linalg.inv(sweep.value(a)), -1, -2)
        sweep.add(a, np.asarray(g[1])[..., None, None] * inv_t)


def solve_vjp_0(g, ans, a, b):
    gb = solve_vjp_1(g, ans, a, b)
    x = np.asarray(ans)
    if x.ndim == np.ndim(a) - 1:
        return -gb[..., :, None] * x[..., None, :]
    return -gb @ np.swapaxes(x, -1, -2)


def solve_vjp_1(g, ans, a, b):
    at = np.swapaxes(a, -1, -2)
    if np.ndim(g) == np.ndim(a) - 1:
        return np.linalg.solve(at, np.asarray(g)[..., None])[..., 0]
    return np.linalg.solve(at, g)


def eigvalsh_vjp(g, ans, a, UPLO="L"):
    """Eigenvalues of a symmetric matrix: ``dw_k = v_k^T dA v_k``, so the adjoint is ``V diag(g) V^T``."""
    _, v = np.linalg.eigh(_arr(a), UPLO=UPLO)
    return (v * np.asarray(g)[..., None, :]) @ np.swapaxes(v, -1, -2)


def vdot_vjp_0(g, ans, a, b):
    """``vdot(a, b)`` of real arrays (flattened, any shapes of one size): ``g * b`` shaped as ``a``."""
    return g * np.reshape(_real(b), np.shape(a))


def vdot_vjp_1(g, ans, a, b):
    return g * np.reshape(_real(a), np.shape(b))


def _real(x):
    if np.asarray(x).dtype.kind == "c":
        raise TypeError("vdot: no rule for complex arrays (it conjugates its first argument)")
    return x


defvjp(operator.matmul, matmul_vjp_0, matmul_vjp_1)
defvjp(operator.imatmul, matmul_vjp_0, matmul_vjp_1)
defvjp(np.matmul, matmul_vjp_0, matmul_vjp_1)
defvjp(np.dot, dot_vjp_0, dot_vjp_1, names=("a", "b"))
defvjp(np.ndarray.dot, dot_vjp_0, dot_vjp_1)
defvjp(np.vdot, vdot_vjp_0, vdot_vjp_1, names=("a", "b"))
defvjp(np.inner, inner_vjp_0, inner_vjp_1)
defvjp(np.outer, outer_vjp_0, outer_vjp_1)
defvjp(np.tensordot, tensordot_vjp_0, tensordot_vjp_1, names=("a", "b", "axes"))
defvjp(np.linalg.inv, inv_vjp)
defvjp(np.linalg.det, det_vjp)
defvjp(np.linalg.solve, solve_vjp_0, solve_vjp_1)
defvjp(np.linalg.eigvalsh, eigvalsh_vjp)
defnode(np.linalg.slogdet, slogdet_rule)
defnode(np.einsum, einsum_rule)

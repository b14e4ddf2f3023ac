"""Render ``dcgraph/ad/README.md`` (API summary and the supported-primitive list).

Regenerate with ``python -m dcgraph.ad.docs > dcgraph/ad/README.md``; a test checks the file is
current.
"""
from __future__ import annotations

from . import supported

_HEADER = """\
# dcgraph.ad: reverse-mode gradients of traced Python

```python
import dcgraph.ad as ad

ad.grad(f, argnums=0)(*args, **kwargs)            # gradient(s) of a real scalar f
ad.value_and_grad(f, argnums=0)(*args, **kwargs)  # (f(...), gradient)
value, pullback = ad.vjp(f, *args)                # pullback(g) -> one gradient per argument
ad.check_grads(f, *args)                          # vs central differences; worst error per argument
ad.backward(tape, seed=1.0)                       # adjoints into node.meta["adjoint"]
ad.supported()                                    # the list below
```

Arguments may be floats, numpy arrays and nested lists/tuples/dicts of them; gradients come
back in the same structure. Integer and boolean values carry no adjoint (their gradient entry
is `None`). Control flow needs no rule: the tape holds the path taken. Element writes
(`a[i] = v`, `a[i] += v`) and reads after them give exact gradients through the tracer's
last-writer versions; a container read before a later write is rebuilt as it was then.

A primitive the gradient depends on without a rule raises `dcgraph.ad.MissingRuleError`
naming it and the line that called it. Register your own rules (named functions):

```python
def my_fn_vjp(g, ans, x, y):        # adjoint of argument 0
    return g * y
ad.defvjp(my_fn, my_fn_vjp, None)   # None: argument 1 is not differentiable
```

## Supported primitives ({count})

Comparisons, predicates, index functions and rounding are listed too: their adjoint is zero
or they return integers/booleans.
"""


def render_readme() -> str:
    names = supported()
    groups: dict = {}
    for name in names:
        head = name.split(".")[0] if "." in name else "builtins"
        if name.startswith(("numpy.ndarray.", "numpy.linalg.", "scipy.special.", "scipy.stats.")):
            head = ".".join(name.split(".")[:2])
        elif name.startswith("dcgraph.tracer.ops."):
            head = "dcgraph.tracer.ops"
        groups.setdefault(head, []).append(name)
    out = [_HEADER.format(count=len(names))]
    for head in sorted(groups):
        out.append(f"\n**{head}**: " + ", ".join(f"`{n}`" for n in groups[head]) + "\n")
    return "".join(out)


if __name__ == "__main__":
    print(render_readme(), end="")

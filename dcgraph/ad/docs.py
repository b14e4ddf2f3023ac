"""Render ``dcgraph/ad/README.md`` (API summary and the supported-primitive list).

Regenerate with ``python -m dcgraph.ad.docs > dcgraph/ad/README.md``; a test checks the file is
current.
"""
from __future__ import annotations

from importlib import import_module

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
ad.hessian(f, argnums=0)(*args)                   # second derivatives (x.shape + x.shape)
ad.hvp(f, argnums=0)(*args, v)                    # Hessian times v
ad.grad(ad.grad(f))(x)                            # gradients nest (reverse over reverse)
ad.supported()                                    # the list below
```

Arguments may be floats, numpy arrays and nested lists/tuples/dicts of them; gradients come
back in the same structure. Integer and boolean values carry no adjoint (their gradient entry
is `None`). Control flow needs no rule: the tape holds the path taken. Element writes
(`a[i] = v`, `a[i] += v`) and reads after them give exact gradients through the tracer's
last-writer versions; a container read before a later write is rebuilt as it was then.

Writes the tracer learns about through calls are differentiated with numpy's own semantics:
repeated fancy indices (`a[idx] = v`: the last writer wins; `a[idx] += v`: once per distinct
index), `np.add.at`/`np.subtract.at`, any `out=`, `a.flat[k] = v`, `np.fill_diagonal`,
`np.put`, `np.place`, `np.putmask`, `np.put_along_axis`, `np.copyto(where=)`. An array handed
to a primitive of unknown effect (outside builtins, numpy, scipy, ...) may have been written:
the gradient passes through only when its contents provably did not change. Operators and
properties of your own classes are differentiated through their Python methods; constructors
and `__call__` are traced. Second derivatives trace the compiled gradient program of the path
(`higher.py`); a path compiled replay refuses (`dcgraph.compiled.why_not`: mutation of
containers other than lists built on the path, exceptions raised by untraced calls) is refused.

A primitive the gradient depends on without a rule raises `dcgraph.ad.MissingRuleError`
naming it and the line that called it, and so does a value that left the numbers and came
back (`float(str(x))`). Register your own rules (named functions):

```python
def my_fn_vjp(g, ans, x, y):        # adjoint of argument 0
    return g * y
ad.defvjp(my_fn, my_fn_vjp, None)   # None: argument 1 is not differentiable
```

## Supported primitives ({count})

Comparisons, predicates, index functions and rounding are listed too: their adjoint is zero
or they return integers/booleans.
"""


#: Packages whose import registers rules of their own (the layers): the list covers them all,
#: whatever was imported before. Gen's gradient rules (its sites, ``param`` and the lowercase
#: families) are registered when gradients are first asked for: ``constructor_rules`` does it.
_RULE_PACKAGES = ("dcgraph.gen", "dcgraph.gen.gradients", "dcgraph.models", "dcgraph.bugs")


def render_readme() -> str:
    for package in _RULE_PACKAGES:
        import_module(package)
    import_module("dcgraph.gen.gradients").constructor_rules()
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

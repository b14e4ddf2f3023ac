"""``KernelCombinator``: a combinator over one kernel, interned per (combinator class, kernel), so
``Map(k)(...) @ addr`` written inline in a ``@gen`` function is the same generative function on
every run (updates then reuse its trace). It pickles and prints as ``Map(kernel)``."""
from __future__ import annotations

from ..generative import GenerativeFunction

__all__ = ["KernelCombinator"]


class KernelCombinator(GenerativeFunction):
    _made: dict = {}          # (class, kernel) -> the combinator; filled on first use

    def __new__(cls, kernel: GenerativeFunction):
        if not isinstance(kernel, GenerativeFunction):
            raise TypeError(f"{cls.__name__} needs a generative function, got {type(kernel).__name__}")
        made = KernelCombinator._made.get((cls, kernel))
        if made is None:
            made = KernelCombinator._made[cls, kernel] = super().__new__(cls)
            made.kernel = kernel
        return made

    def __reduce__(self):
        return type(self), (self.kernel,)

    def __repr__(self):
        return f"{type(self).__name__}({self.kernel!r})"

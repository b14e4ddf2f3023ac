"""Reverse-mode differentiation of traced tapes (issue #5).

``grad(f, argnums=0)``, ``value_and_grad(f, argnums=0)``, ``vjp(f, *args) -> (value,
pullback)``, ``check_grads(f, *args)`` (reverse mode against central finite differences) and
``backward(tape, seed=1.0)`` (adjoints into ``node.meta["adjoint"]``); second derivatives:
``hessian(f)``, ``hvp(f)`` and nested ``grad(grad(f))`` (``higher``).

The tape already holds the path a run took, so control flow needs no rule: branches carry no
adjoint, phis pass theirs along the recorded edge, nested calls route adjoints through their
child tapes. Primitives are pulled back through VJP rules kept as data (``registry``; add your
own with ``defvjp``/``defnode``; compiled replay also takes ``defjoint`` rules, one call for
a primitive and the call among its arguments, and ``defscatter`` rules, adjoints added in place
at one key of an array; the scipy rules load on first need, so importing this package
does not import scipy.stats); ``supported()`` lists them, and ``README.md`` beside this file
shows that list. A primitive the gradient depends on without a rule raises
``MissingRuleError`` naming it and the line that called it.
"""
from . import (rules_containers, rules_iteration, rules_linalg, rules_math,  # noqa: F401
               rules_memory, rules_methods, rules_numpy, rules_numpy_shape, rules_operator)
from . import rules_numpy_scalar  # noqa: F401,E402  (after the ndarray rules it copies)
from .api import backward, grad, value_and_grad, vjp
from .check import GradCheck, GradientCheckError, check_grads
from .higher import hessian, hvp
from .core import Sweep
from .registry import (MissingRuleError, defdispatch, definplace, defjoint, defnode,
                       defscatter, defvjp, defzero, supported)
from .values import RESULT, Sparse
from .versions import StaleValueError

__all__ = ["grad", "value_and_grad", "vjp", "backward", "check_grads", "hessian", "hvp",
           "GradCheck",
           "GradientCheckError", "supported", "defvjp", "defjoint", "defscatter", "defnode", "definplace", "defzero",
           "defdispatch", "MissingRuleError", "StaleValueError", "Sparse", "RESULT", "Sweep"]

"""Gen's programmable inference in plain Python (see ``README.md`` beside this file).

``@gen`` functions make addressed random choices with ``dist(...) @ "addr"``, call each other
with ``gf(...) @ "addr"`` and read parameters with ``param("w")``; the generative function
interface (``simulate``, ``generate``, ``update``, ``regenerate``, ``assess``, ``propose``,
``project``, ``choice_gradients``, ``accumulate_param_gradients``) runs them under handlers
and returns traces that keep the dcgraph tape of the run.
"""
from .address import Address, AddressError
from .choicemap import EMPTY as EMPTY_CHOICEMAP
from .choicemap import ChoiceMap, ChoiceMapError, choicemap
from .distributions import *  # noqa: F401,F403
from .distributions import __all__ as _DIST_NAMES
from .generative import GenerativeFunction, GenFunction, Invocation, default_rng, gen, seed
from .handlers import Message, Messenger, block, condition, record, replay, scale
from .interface import *  # noqa: F401,F403
from .interface import __all__ as _GFI_NAMES
from .params import (ParameterStore, default_store, get_param, get_param_grad, init_param,
                     param, set_param, zero_param_grads)
from .runtime import GenError
from .selection import (AllSelection, ComplementSelection, Selection, StaticSelection,
                        all_selection, complement, select)
from .trace import ChoiceRecord, DynamicTrace, Trace
from .combinators import Map, Production, Recurse, Switch, Unfold, VectorDiff
from .mixture import HeterogeneousMixture, HomogeneousMixture
from .optimizers import ADAM, FixedStepGradientDescent, GradientDescent, apply_update
from .params import PrivateAccumulator
from .train import train
from . import inference

__all__ = ["Address", "AddressError", "ChoiceMap", "ChoiceMapError", "choicemap",
           "EMPTY_CHOICEMAP", "GenerativeFunction", "GenFunction", "Invocation", "gen", "seed",
           "default_rng", "Messenger", "Message", "block", "condition", "record", "replay",
           "scale", "ParameterStore", "default_store", "param", "init_param", "get_param",
           "get_param_grad", "set_param", "zero_param_grads", "GenError", "Selection",
           "StaticSelection", "AllSelection", "ComplementSelection", "select", "all_selection",
           "complement", "Trace", "DynamicTrace", "ChoiceRecord", *_DIST_NAMES, *_GFI_NAMES,
           "Map", "Unfold", "Switch", "Recurse", "Production", "VectorDiff",
           "HeterogeneousMixture", "HomogeneousMixture", "ADAM", "FixedStepGradientDescent",
           "GradientDescent", "apply_update", "PrivateAccumulator", "train", "inference"]


def __getattr__(name):
    """Constructors of ``dcgraph.dist`` families added after this module was written."""
    from .distributions import GEN_NAMES
    try:
        return GEN_NAMES[name]
    except KeyError:
        raise AttributeError(f"module 'dcgraph.gen' has no attribute {name!r}") from None

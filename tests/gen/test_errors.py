"""Every error of the gen layer, with its message (address and line named)."""
import random
import re

import numpy as np
import pytest

from dcgraph.dist import Normal
from dcgraph.gen import (AddressError, ChoiceMapError, GenError, assess, choicemap, gen,
                         generate, normal, param, simulate, update)

HERE = __file__


@gen
def twice():
    normal(0.0, 1.0) @ "x"
    normal(0.0, 1.0) @ "x"          # line of the error


@gen
def uses_random():
    return random.random()


@gen
def uses_numpy_random():
    return np.random.normal()


@gen
def uses_generator(rng):
    return rng.normal()


@gen
def uses_bare_sample(rng):
    return Normal(0.0, 1.0).sample(rng)


def helper(rng):
    return rng.uniform()


@gen
def random_in_helper(rng):
    return helper(rng)


@gen
def one():
    return normal(0.0, 1.0) @ "x"


@gen
def needs_param():
    return param("w")


def line_of(text):
    with open(HERE) as fh:
        for i, line in enumerate(fh, 1):
            if text in line:
                return i
    raise AssertionError(text)


def test_address_used_twice_names_address_and_line():
    with pytest.raises(GenError, match=re.escape(
            f"address 'x' is used twice in one run of <gen twice> (at {HERE}:"
            f"{line_of('# line of the error')}: normal(0.0, 1.0) @ \"x\"")):
        simulate(twice, ())


@pytest.mark.parametrize("gf, args, name, source", [
    (uses_random, (), "Random.random", "return random.random()"),
    (uses_numpy_random, (), "RandomState.normal", "return np.random.normal()"),
    (uses_generator, (np.random.default_rng(0),), "Generator.normal", "return rng.normal()"),
    (uses_bare_sample, (np.random.default_rng(0),), "Distribution.sample",
     "return Normal(0.0, 1.0).sample(rng)"),
    (random_in_helper, (np.random.default_rng(0),), "Generator.uniform", "return rng.uniform()"),
])
def test_undeclared_randomness_names_the_line(gf, args, name, source):
    with pytest.raises(GenError) as info:
        simulate(gf, args)
    assert str(info.value) == (
        f"undeclared randomness: {name} called inside a generative function at "
        f"{HERE}:{line_of(source)}: {source}; make it a choice: dist(...) @ 'addr'")


def test_constraint_never_visited():
    with pytest.raises(GenError, match=re.escape(
            "generate(<gen one>): the constraint at address 'y' was not visited by the run")):
        generate(one, (), {"y": 1.0})
    tr = simulate(one, ())
    with pytest.raises(GenError, match=re.escape(
            "update(<gen one>): the constraint at address 'z' => 1 was not visited")):
        update(tr, (), (), choicemap({("z", 1): 0.0}))


def test_assess_needs_every_choice():
    with pytest.raises(GenError, match=re.escape(
            "assess(<gen one>): the choice at address 'x' is not in the given choices")):
        assess(one, (), {})


def test_choice_and_call_outside_a_generative_function():
    with pytest.raises(GenError, match=r"normal\(\.\.\.\) @ .x. outside a generative function"):
        normal(0.0, 1.0) @ "x"
    with pytest.raises(GenError, match=r"<gen one>\(\.\.\.\) @ 'c' outside a generative"):
        one() @ "c"


def test_parameter_not_initialised():
    with pytest.raises(GenError, match=re.escape(
            "parameter 'w' of <gen needs_param> is not initialised: call "
            "init_param(<gen needs_param>, 'w', value) (at ")):
        simulate(needs_param, ())


def test_bad_arguments_addresses_and_choice_maps():
    with pytest.raises(TypeError, match=r"arguments must be a tuple, got int"):
        simulate(one, 3)
    with pytest.raises(AddressError, match=r"keys are str or int, got float"):
        choicemap({("a", 1.5): 0.0})
    cm = choicemap({"a": 1.0})
    with pytest.raises(ChoiceMapError, match=r"address 'a' holds a value; it cannot have a "
                                             r"sub-map at 'a' => 'b'"):
        cm.set_value(("a", "b"), 2.0)
    with pytest.raises(ChoiceMapError, match=r"no value at address 'q'"):
        cm.get_value("q")
    with pytest.raises(ChoiceMapError, match=r"merge: address 'a' is in both choice maps"):
        cm.merge(choicemap({"a": 2.0}))
    with pytest.raises(TypeError, match=r"@gen applied twice"):
        gen(one)

"""The contract a non-@gen generative function (a combinator) relies on: a hand-written
generative function called with ``@`` from a @gen function, through every GFI operation."""
import math

import numpy as np
import pytest

from dcgraph.gen import (ChoiceMap, GenerativeFunction, Trace, UnknownChange, assess,
                         choice_gradients, choicemap, gen, generate, normal, project, select,
                         simulate, update)
from dcgraph.gen.runtime import prefixed


def lognormal(x, mu):
    return -0.5 * math.log(2 * math.pi) - 0.5 * (x - mu) ** 2


class IIDTrace(Trace):
    def __init__(self, gf, args, xs):
        self.gf, self.args, self.xs = gf, args, list(xs)

    def get_args(self):
        return self.args

    def get_retval(self):
        return sum(self.xs)

    def get_gen_fn(self):
        return self.gf

    def get_score(self):
        mu, _ = self.args
        return sum(lognormal(x, mu) for x in self.xs)

    def get_choices(self):
        return choicemap({i: x for i, x in enumerate(self.xs)})

    def project(self, selection):
        mu, _ = self.args
        return sum(lognormal(x, mu) for i, x in enumerate(self.xs) if i in selection)


class IIDNormal(GenerativeFunction):
    """``(mu, n)``: n independent normal(mu, 1) choices at addresses 0..n-1; returns their sum."""

    def generate(self, args, constraints, rng=None, store=None):
        mu, n = args
        xs, weight = [], 0.0
        for i in range(n):
            with prefixed(i):
                if constraints.has_value(i):
                    xs.append(constraints[i])
                    weight += lognormal(xs[-1], mu)
                else:
                    xs.append(float(rng.normal(mu, 1.0)))
        return IIDTrace(self, args, xs), weight

    def simulate(self, args, rng=None, store=None):
        return self.generate(args, ChoiceMap(), rng)[0]

    def update(self, trace, args, argdiffs, constraints, rng=None):
        mu, n = args
        xs, discard = list(trace.xs[:n]), ChoiceMap()
        for i in range(len(xs), n):
            xs.append(float(rng.normal(mu, 1.0)))
        for i, x in constraints.items():
            discard.set_value(i, xs[i[0]])
            xs[i[0]] = x
        new = IIDTrace(self, args, xs)
        fresh = sum(lognormal(x, mu) for x in xs[len(trace.xs):])
        return new, new.get_score() - trace.get_score() - fresh, UnknownChange, discard

    def regenerate(self, trace, args, argdiffs, selection, rng=None):
        raise NotImplementedError

    def choice_gradients(self, trace, selection, retgrad):
        mu, _ = trace.args
        values, grads = ChoiceMap(), ChoiceMap()
        for i, x in enumerate(trace.xs):
            if i in selection:
                values.set_value(i, x)
                grads.set_value(i, -(x - mu) + (retgrad or 0.0))
        return (sum(x - mu for x in trace.xs), None), values, grads

    def accumulate_param_gradients(self, trace, retgrad, scale=1.0):
        return self.choice_gradients(trace, select(), retgrad)[0]


iid = IIDNormal()


@gen
def parent(mu):
    total = iid(mu, 3) @ "xs"
    return normal(total, 1.0) @ "obs"


CHOICES = {"xs": {0: 0.5, 1: -0.2, 2: 1.0}, "obs": 2.0}


def test_custom_generative_function_through_the_gfi():
    tr, w = generate(parent, (0.1,), CHOICES)
    expected = sum(lognormal(x, 0.1) for x in (0.5, -0.2, 1.0)) + lognormal(2.0, 1.3)
    assert w == pytest.approx(expected, abs=1e-12)
    assert tr[("xs", 1)] == -0.2 and tr["xs"] == pytest.approx(1.3)
    assert assess(parent, (0.1,), CHOICES)[0] == pytest.approx(expected, abs=1e-12)
    assert project(tr, select(("xs", 0))) == pytest.approx(lognormal(0.5, 0.1), abs=1e-12)
    new, w, _, discard = update(tr, (0.1,), (UnknownChange,), choicemap({("xs", 2): 0.0}))
    assert w == pytest.approx(lognormal(0.0, 0.1) - lognormal(1.0, 0.1)
                              + lognormal(2.0, 0.3) - lognormal(2.0, 1.3), abs=1e-12)
    assert discard.to_dict() == {"xs": {2: 1.0}}
    full = parent.full_update(tr, (0.1,), choicemap({("xs", 2): 0.0}))
    assert full[1] == w and full[0].get_choices() == new.get_choices()
    tr2 = simulate(parent, (0.1,), rng=np.random.default_rng(0))
    assert set(tr2.get_choices().get_submap("xs").to_dict()) == {0, 1, 2}


def test_gradients_flow_through_a_custom_generative_function():
    tr, _ = generate(parent, (0.1,), CHOICES)
    arg_grads, values, grads = choice_gradients(tr, select(("xs", 1), "obs"))
    # obs ~ N(sum xs, 1): d/dx1 = -(x1 - mu) + (obs - sum); d/dmu = sum(x - mu)
    assert grads[("xs", 1)] == pytest.approx(-(-0.2 - 0.1) + (2.0 - 1.3), abs=1e-12)
    assert grads["obs"] == pytest.approx(-(2.0 - 1.3), abs=1e-12)
    assert arg_grads[0] == pytest.approx((0.5 - 0.1) + (-0.2 - 0.1) + (1.0 - 0.1), abs=1e-12)
    assert values.to_dict() == {"xs": {1: -0.2}, "obs": 2.0}

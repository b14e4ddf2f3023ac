"""Effect handlers: the built-in messengers and two written by users in a few lines."""
import math

import numpy as np
import pytest

from dcgraph.gen import (ChoiceMap, Messenger, block, choicemap, condition, gen, generate,
                         normal, record, replay, scale, select, simulate, update)

from gen_models import normal_normal, top


def lognormal(x, mu, sd):
    return -0.5 * math.log(2 * math.pi) - math.log(sd) - 0.5 * ((x - mu) / sd) ** 2


class RecordProposal(Messenger):
    """A user handler: keep a proposal's choices and their log density."""

    def __init__(self):
        self.choices, self.logq = ChoiceMap(), 0.0

    def postprocess(self, msg):
        if msg.kind == "choice":
            self.choices.set_value(msg.address, msg.value)
            self.logq += msg.logpdf


class Temper(Messenger):
    """A user handler: raise the likelihood of the selected choices to the power beta."""

    def __init__(self, beta, observed):
        self.beta, self.observed = beta, observed

    def process(self, msg):
        if msg.kind == "choice" and msg.address in self.observed:
            msg.scale *= self.beta


@gen
def proposal(mu):
    return normal(mu, 0.5) @ "x"


def test_user_handler_records_a_proposals_choices():
    with RecordProposal() as rec:
        tr = simulate(proposal, (1.0,), rng=np.random.default_rng(0))
    assert rec.choices == tr.get_choices()
    assert rec.logq == pytest.approx(lognormal(tr["x"], 1.0, 0.5), abs=1e-12)
    # the recorded choices constrain the model: weight log p(x, y) with y observed
    cm = rec.choices.merge(choicemap({"y": 2.0}))
    _, w = generate(normal_normal, (), cm)
    assert w == pytest.approx(lognormal(tr["x"], 0, 1) + lognormal(2.0, tr["x"], 1), abs=1e-12)


def test_user_handler_tempers_the_likelihood():
    rng = np.random.default_rng(1)
    with Temper(0.25, select("y")):
        tr, w = generate(normal_normal, (), {"y": 2.0}, rng=rng)
    x = tr["x"]
    assert w == pytest.approx(0.25 * lognormal(2.0, x, 1), abs=1e-12)
    assert tr.get_score() == pytest.approx(lognormal(x, 0, 1) + w, abs=1e-12)
    # an update under the same handler keeps tempering (the incremental path steps aside)
    with Temper(0.25, select("y")):
        new, w2, _, _ = update(tr, (), (), choicemap({"x": 0.0}))
    assert w2 == pytest.approx(lognormal(0, 0, 1) + 0.25 * lognormal(2.0, 0, 1)
                               - lognormal(x, 0, 1) - 0.25 * lognormal(2.0, x, 1), abs=1e-12)


def test_condition_replay_block_scale_record():
    rng = np.random.default_rng(2)
    with condition({"y": 2.0}):
        tr, w = generate(normal_normal, (), rng=rng)
    assert tr["y"] == 2.0 and w == pytest.approx(lognormal(2.0, tr["x"], 1), abs=1e-12)
    with replay(tr):
        again, w = generate(normal_normal, (), rng=rng)
    assert again.get_choices() == tr.get_choices() and w == 0.0
    with record() as outer:
        with block(select("x")):
            simulate(normal_normal, (), rng=rng)
    assert outer.choices.addresses() == [("y",)]
    with scale(2.0):
        tr2, w = generate(normal_normal, (), {"x": 0.0, "y": 0.0})
    assert tr2.get_score() == pytest.approx(2 * (lognormal(0, 0, 1) + lognormal(0, 0, 1)))


def test_messengers_see_full_addresses_through_sub_calls():
    with record() as rec:
        tr = simulate(top, (0.0,), rng=np.random.default_rng(3))
    assert [m.address for m in rec.log] == [("m", "l", "v"), ("m", "l"),
                                            ("m", "r", "v"), ("m", "r"), ("m",), ("obs",)]
    assert rec.choices == tr.get_choices()
    assert [m.kind for m in rec.log] == ["choice", "call", "choice", "call", "call", "choice"]


def test_handlers_must_exit_in_order():
    a, b = record(), record()
    a.__enter__()
    b.__enter__()
    with pytest.raises(RuntimeError, match="exited in reverse order"):
        a.__exit__(None, None, None)
    b.__exit__(None, None, None)
    a.__exit__(None, None, None)

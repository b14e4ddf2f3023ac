"""Map, Unfold and Switch: Gen.jl's known answers (../shared/gen-known-answers.json), updates
equal to scoring the same choices from scratch, O(1) chain extension, gradients vs finite
differences."""
import math

import numpy as np
import pytest

from dcgraph.gen import (GenError, GenerativeFunction, NoChange, UnknownChange, assess, bernoulli,
                         choice_gradients, choicemap, gen, generate, normal, project, regenerate,
                         select, simulate, update)
from dcgraph.gen.combinators import Map, Switch, Unfold, VectorDiff

UC, NC = UnknownChange, NoChange


@gen
def foo(x, y):
    return normal(x + y, 1.0) @ "z"


@gen
def kernel(t, x_prev, alpha, beta):
    return normal(x_prev * alpha + beta, 1.0) @ "x"


@gen
def bang0(x, y):
    return normal(x + y, 3.0) @ "z"


@gen
def fuzz0(x, y):
    return normal(x + 2 * y, 3.0) @ "z"


XS, YS = [1.0, 2.0, 3.0, 4.0], [3.0, 4.0, 5.0, 6.0]
BAR = Map(foo)
UNFOLD = Unfold(kernel)


def lognormal_pdf(x, mu, sd):
    return -0.5 * math.log(2 * math.pi) - math.log(sd) - 0.5 * ((x - mu) / sd) ** 2


def map_base():
    return generate(BAR, (XS[:2], YS[:2]), {(1, "z"): 1.1, (2, "z"): 2.2})


def test_map_known_answers():
    tr, w = map_base()
    assert w == pytest.approx(-13.262877066409345, abs=1e-12)
    assert assess(BAR, (XS[:2], YS[:2]), {(1, "z"): 1.1, (2, "z"): 2.2})[0] == \
        pytest.approx(-13.262877066409345, abs=1e-12)
    _, w = generate(BAR, (XS[:2], YS[:2]), {(1, "z"): 1.1})
    assert w == pytest.approx(-5.123938533204672, abs=1e-12)
    new, w, _, discard = update(tr, (XS[:1], YS[:1]), (UC, UC), {(1, "z"): 3.3})
    assert w == pytest.approx(12.098938533204672, abs=1e-12)
    assert discard.to_dict() == {1: {"z": 1.1}, 2: {"z": 2.2}}
    _, w, _, _ = update(tr, (XS[:3], YS[:3]), (UC, UC), {(2, "z"): 3.3, (3, "z"): 4.4})
    assert w == pytest.approx(-3.8239385332046716, abs=1e-12)
    new, w, _, _ = update(tr, (XS, YS), (UC, UC), {(4, "z"): 4.4})
    assert w == pytest.approx(-16.59893853320467, abs=1e-12)
    assert len(new.get_retval()) == 4 and new[(4, "z")] == 4.4
    _, w, rd, _ = update(tr, (XS[:2], YS[:2]), (NC, NC), {})
    assert w == 0.0 and rd is NC
    _, w, _, discard = update(tr, (XS[:2], YS[:2]), (NC, NC), {(2, "z"): 3.3})
    assert w == pytest.approx(3.5749999999999993, abs=1e-12)
    assert discard.to_dict() == {2: {"z": 2.2}}
    _, w, rd, _ = update(tr, ([-1.0, 2.0], YS[:2]), (VectorDiff(2, 2, {1: UC}), NC), {})
    assert w == pytest.approx(3.8, abs=1e-12)
    assert isinstance(rd, VectorDiff) and set(rd.updated) == {1}
    for sel in (select((1, "z")), select(1, 2)):
        _, w, _ = regenerate(tr, (XS[:2], YS[:2]), (NC, NC), sel)
        assert w == 0.0
    _, w, _ = regenerate(tr, (XS[:3], YS[:3]), (UC, UC), select())
    assert w == 0.0


def test_unfold_known_answers():
    c3 = {(1, "x"): 1.1, (2, "x"): 1.2, (3, "x"): 1.3}
    assert assess(UNFOLD, (3, 0.1, 0.2, 0.3), c3)[0] == pytest.approx(-3.581015599614018,
                                                                     abs=1e-12)
    tr, _ = generate(UNFOLD, (2, 0.1, 0.2, 0.3), {(1, "x"): 1.1, (2, "x"): 1.2})
    _, w, _, _ = update(tr, (1, 0.1, 0.5, 0.3), (UC, NC, UC, NC), {(1, "x"): 1.3})
    assert w == pytest.approx(1.0030885332046726, abs=1e-12)
    new, w, _, _ = update(tr, (3, 0.1, 0.5, 0.3), (UC, NC, UC, NC),
                          {(2, "x"): 1.3, (3, "x"): 1.4})
    assert w == pytest.approx(-0.8672885332046729, abs=1e-12)
    assert new.get_score() == pytest.approx(-3.240565599614018, abs=1e-12)
    _, w, _, discard = update(tr, (2, 0.1, 0.2, 0.3), (NC,) * 4, {(2, "x"): 3.3})
    assert w == pytest.approx(-3.633, abs=1e-12)
    assert discard.to_dict() == {2: {"x": 1.2}}


def test_switch_known_answer_and_branch_change():
    sw = Switch(bang0, fuzz0)                      # 0-based: Gen.jl's branch 2 is index 1
    tr, w = generate(sw, (1, 5.0, 3.0), {"z": 5.0})
    assert w == pytest.approx(-4.017550821872782, abs=1e-12)
    assert tr.get_choices().to_dict() == {"z": 5.0}
    new, w, _, discard = update(tr, (0, 5.0, 3.0), (UC, NC, NC), {"z": 2.0})
    assert discard.to_dict() == {"z": 5.0}
    assert w == pytest.approx(lognormal_pdf(2.0, 8.0, 3.0) - lognormal_pdf(5.0, 11.0, 3.0))
    assert new.index == 0 and new.get_score() == pytest.approx(lognormal_pdf(2.0, 8.0, 3.0))
    same, w, _, discard = update(tr, (1, 5.0, 3.0), (NC, NC, NC), {"z": 6.0})
    assert w == pytest.approx(lognormal_pdf(6.0, 11.0, 3.0) - lognormal_pdf(5.0, 11.0, 3.0))
    _, w, _ = regenerate(tr, (0, 5.0, 3.0), (UC, NC, NC), select())
    assert w == 0.0
    with pytest.raises(GenError, match="branch index 2"):
        simulate(sw, (2, 1.0, 1.0))


def _rescored(gf, trace):
    return assess(gf, trace.get_args(), trace.get_choices())[0]


@pytest.mark.parametrize("new_args,diffs,cons", [
    ((XS[:2], YS[:2]), (NC, NC), {}),
    ((XS[:2], YS[:2]), (NC, NC), {(1, "z"): 0.5}),
    (([7.0, 2.0], YS[:2]), (UC, NC), {}),
    ((XS[:3], YS[:3]), (UC, UC), {(3, "z"): 1.0}),
    ((XS[:1], YS[:1]), (UC, UC), {}),
])
def test_map_update_equals_scoring_from_scratch(new_args, diffs, cons):
    tr, _ = map_base()
    new, w, _, discard = update(tr, new_args, diffs, cons)
    assert new.get_score() == pytest.approx(_rescored(BAR, new), abs=1e-12)
    # weight = new score - old score - log density of the newly sampled choices
    sampled = sum(new.subtraces[i - 1].get_score() for i in range(3, len(new) + 1)
                  if (i, "z") not in choicemap(cons))
    assert w == pytest.approx(new.get_score() - tr.get_score() - sampled, abs=1e-12)


@pytest.mark.parametrize("new_args,diffs,cons", [
    ((3, 0.1, 0.2, 0.3), (NC,) * 4, {}),
    ((3, 0.1, 0.2, 0.3), (NC,) * 4, {(2, "x"): -0.4}),
    ((3, 0.7, 0.2, 0.3), (NC, UC, NC, NC), {}),
    ((3, 0.1, 0.9, 0.3), (NC, NC, UC, NC), {(3, "x"): 2.0}),
    ((5, 0.1, 0.2, 0.3), (UC, NC, NC, NC), {(4, "x"): 1.0, (5, "x"): 1.5}),
    ((1, 0.1, 0.2, 0.3), (UC, NC, NC, NC), {}),
])
def test_unfold_update_equals_scoring_from_scratch(new_args, diffs, cons):
    tr, _ = generate(UNFOLD, (3, 0.1, 0.2, 0.3), {(1, "x"): 1.1, (2, "x"): 1.2, (3, "x"): 1.3})
    new, w, _, _ = update(tr, new_args, diffs, cons)
    assert new.get_score() == pytest.approx(_rescored(UNFOLD, new), abs=1e-12)
    assert w == pytest.approx(new.get_score() - tr.get_score(), abs=1e-12)
    assert new.get_retval() == [new[(t, "x")] for t in range(1, new_args[0] + 1)]


class Counting(GenerativeFunction):
    """Delegates to ``inner`` and counts the kernel calls."""

    def __init__(self, inner):
        self.inner, self.calls = inner, 0

    def simulate(self, args, rng=None, store=None):
        self.calls += 1
        return self.inner.simulate(args, rng=rng, store=store)

    def generate(self, args, constraints, rng=None, store=None):
        self.calls += 1
        return self.inner.generate(args, constraints, rng=rng, store=store)

    def update(self, trace, args, argdiffs, constraints, rng=None):
        self.calls += 1
        return self.inner.update(trace, args, argdiffs, constraints, rng)

    def regenerate(self, trace, args, argdiffs, selection, rng=None):
        self.calls += 1
        return self.inner.regenerate(trace, args, argdiffs, selection, rng)


def test_unfold_extend_and_last_step_update_cost_one_kernel_call():
    k = Counting(kernel)
    uf = Unfold(k)
    tr = simulate(uf, (200, 0.0, 0.5, 0.1))
    k.calls = 0
    ext, _, _, _ = update(tr, (201, 0.0, 0.5, 0.1), (UC, NC, NC, NC), {(201, "x"): 0.3})
    assert k.calls == 1 and len(ext) == 201
    k.calls = 0
    last, _, _, _ = update(tr, (200, 0.0, 0.5, 0.1), (NC,) * 4, {(200, "x"): 0.3})
    assert k.calls == 1
    k.calls = 0
    mid, _, _, _ = update(tr, (200, 0.0, 0.5, 0.1), (NC,) * 4, {(100, "x"): 0.3})
    assert k.calls == 2       # step 100, and 101 (its state changed; its own x did not)
    assert mid.get_score() == pytest.approx(_rescored(uf, mid), abs=1e-9)
    k.calls = 0
    update(tr, (200, 0.0, 0.9, 0.1), (NC, NC, UC, NC), {})
    assert k.calls == 200     # a parameter changed: every step
    k.calls = 0
    _, w, _ = regenerate(tr, (200, 0.0, 0.5, 0.1), (NC,) * 4, select((199, "x")))
    assert k.calls == 2


def test_unfold_gradients_match_finite_differences():
    cons = {(1, "x"): 0.4, (2, "x"): -0.3, (3, "x"): 0.8}
    args = (3, 0.1, 0.6, 0.3)
    tr, _ = generate(UNFOLD, args, cons)
    arg_grads, values, grads = choice_gradients(tr, select((2, "x")), [0.0, 1.0, 0.5])

    def objective(init, alpha, beta, x2):
        c = dict(cons)
        c[(2, "x")] = x2
        w, ret = assess(UNFOLD, (3, init, alpha, beta), c)
        return w + ret[1] + 0.5 * ret[2]

    base = [0.1, 0.6, 0.3, -0.3]
    h = 1e-6
    fd = []
    for j in range(4):
        up, dn = list(base), list(base)
        up[j] += h
        dn[j] -= h
        fd.append((objective(*up) - objective(*dn)) / (2 * h))
    assert arg_grads[0] is None
    np.testing.assert_allclose([arg_grads[1], arg_grads[2], arg_grads[3]], fd[:3], atol=1e-6)
    assert values.to_dict() == {2: {"x": -0.3}}
    assert grads[(2, "x")] == pytest.approx(fd[3], abs=1e-6)


@gen
def hierarchical(xs):
    mu = normal(0.0, 1.0) @ "mu"
    ys = Map(point)(xs, [mu] * len(xs)) @ "pts"
    return sum(ys)


@gen
def point(x, mu):
    return normal(mu * x, 0.5) @ "y"


def test_map_inside_gen_function_update_and_project():
    xs = [1.0, 2.0, 3.0]
    obs = {("pts", i, "y"): v for i, v in zip((1, 2, 3), (0.9, 2.2, 2.7))}
    tr, w = generate(hierarchical, (xs,), {"mu": 1.0, **obs})
    expect = lognormal_pdf(1.0, 0, 1) + sum(lognormal_pdf(v, x, 0.5) for x, v in
                                             zip(xs, (0.9, 2.2, 2.7)))
    assert w == pytest.approx(expect, abs=1e-12) and tr.get_score() == pytest.approx(expect)
    tr.tape.lint()
    new, w, _, _ = update(tr, {"mu": 0.5})
    assert new.get_score() == pytest.approx(_rescored(hierarchical, new), abs=1e-12)
    assert w == pytest.approx(new.get_score() - tr.get_score(), abs=1e-12)
    assert project(tr, select("pts")) == pytest.approx(expect - lognormal_pdf(1.0, 0, 1))
    _, values, grads = choice_gradients(tr, select("mu"))
    fd = (assess(hierarchical, (xs,), {"mu": 1.0 + 1e-6, **obs})[0]
          - assess(hierarchical, (xs,), {"mu": 1.0 - 1e-6, **obs})[0]) / 2e-6
    assert grads["mu"] == pytest.approx(fd, abs=1e-5)


def test_map_errors_name_the_problem():
    with pytest.raises(GenError, match="different lengths"):
        simulate(BAR, ([1.0], [1.0, 2.0]))
    with pytest.raises(GenError, match="outside the addresses 1..2"):
        generate(BAR, (XS[:2], YS[:2]), {(5, "z"): 1.0})


def test_map_update_visits_only_changed_elements():
    k = Counting(foo)
    m = Map(k)
    xs, ys = [0.0] * 100, [1.0] * 100
    tr = simulate(m, (xs, ys))
    k.calls = 0
    new_xs = list(xs)
    new_xs[41] = 2.0
    new, w, rd, _ = update(tr, (new_xs, ys), (VectorDiff(100, 100, {42: UC}), NC), {})
    assert k.calls == 1 and set(rd.updated) == {42}
    assert new.get_score() == pytest.approx(_rescored(m, new), abs=1e-9)
    k.calls = 0
    update(tr, (xs, ys), (NC, NC), {(7, "z"): 0.0})
    assert k.calls == 1
    k.calls = 0
    _, w, _ = regenerate(tr, (xs, ys), (NC, NC), select((3, "z"), (9, "z")))
    assert k.calls == 2 and w == 0.0


def test_mixture_logpdf_known_answer_and_sampling():
    from dcgraph.gen import beta, uniform
    from dcgraph.gen.mixture import HeterogeneousMixture, HomogeneousMixture
    mix = HeterogeneousMixture([uniform, beta])

    @gen
    def one():
        return mix([0.4, 0.6], (0.0, 3.4), (2.3, 1.0)) @ "x"

    _, w = generate(one, (), {"x": 0.123})
    assert w == pytest.approx(-1.5694031540256264, abs=1e-12)
    d = mix([0.4, 0.6], (0.0, 3.4), (2.3, 1.0))
    rng = np.random.default_rng(0)
    xs = np.array([d.gen_sample(rng) for _ in range(4000)])
    p = 0.4 * 2.4 / 3.4                                    # only the uniform reaches x > 1
    assert abs(np.mean(xs > 1) - p) < 4 * math.sqrt(p * (1 - p) / 4000)
    two = HomogeneousMixture(normal)([0.3, 0.7], (0.0, 1.0), (2.0, 0.5))
    expect = math.log(0.3 * math.exp(lognormal_pdf(1.2, 0, 1)) +
                      0.7 * math.exp(lognormal_pdf(1.2, 2, 0.5)))
    assert two.logpdf(1.2) == pytest.approx(expect, abs=1e-12)
    with pytest.raises(ValueError, match="sum to 1"):
        HomogeneousMixture(normal)([0.3, 0.3], (0.0, 1.0), (2.0, 0.5))


def test_switch_gradients_and_parent_tape_lint():
    sw = Switch(bang0, fuzz0)

    @gen
    def parent(x):
        k = bernoulli(0.3) @ "k"
        return sw(int(k), x, 2.0) @ "s"

    tr, _ = generate(parent, (1.5,), {"k": True, ("s", "z"): 4.0})
    tr.tape.lint()
    arg_grads, values, grads = choice_gradients(tr, select(("s", "z")))
    # branch 1: log N(z; x + 2*2, 3): d/dz = -(z - x - 4)/9, d/dx = (z - x - 4)/9
    assert grads[("s", "z")] == pytest.approx(-(4.0 - 5.5) / 9, abs=1e-12)
    assert arg_grads[0] == pytest.approx((4.0 - 5.5) / 9, abs=1e-12)
    assert values.to_dict() == {"s": {"z": 4.0}}

"""The vectoriser's output pinned: the generated gradient code of three benchmark shapes
(``benchmarks/bench_grad.py``: the sin loop, the same terms in a list, Rats 30 x 5) must not
change when the pass is made cheaper (its compile time is issue #17's concern). The sin loop's
code is compared as text; the longer two by SHA-256 of their text (pinned on the pass of
commit a25bc21; changed by coldgrad24 for the cost per call: a sum whose terms are an array of
its own adds its initial value into the first term instead of concatenating, a multi-line
sum's unread partial sums are not sliced out, its terms are stacked with one ``np.array``
call (``np.column_stack`` is Python code), scalars are read with ``.item(k)``; the
sin_list code has no run and is unchanged; Rats then re-pinned for compile24, whose only change
is five bound names: the run is built at its extended start directly, so no earlier
construction took ``_vk_item0`` ... ``_vk_item4`` and they lose their ``_1`` suffixes; sin_list
re-pinned for sin25, whose only change drops 101 guard lines: ``if i == 199`` on folded range
steps and the type guard of a list display; Rats re-pinned by rats25: the nested loop is a
two-dimensional run, ``vector_grid``, in both passes; sin25's guards leave its text unchanged;
the sin loop changed by cold25: its sum's terms, the mapped ``sin`` vector nothing else reads,
take the initial value into their first element instead of ``_vx_cat``, the other two
unchanged).
``agrees`` is fixed to False, so the text does not depend on this machine's
calibration of numpy's ``sin`` against ``math.sin``. The regexes the pass reads lines with are
written for speed; they must find what their plain spellings find."""
import hashlib
import math
import random
import re
import sys

import pytest

import dcgraph
from dcgraph.ad.compiled import compile_gradient

from dcgraph.compiled import vector_forms, vector_run
from dcgraph.compiled.vectorise import _NAME
from test_compiled_vectorise import rats, rats_data, sin_loop


def sin_list(x):
    terms = [math.sin(x * i) for i in range(100)]
    for i in range(100, 200):
        try:
            terms.append(math.sin(x * i))
            if i == 199:
                raise StopIteration
        except StopIteration:
            pass
    return sum(terms)


SIN_SOURCE = """\
def compiled(_a, _kw):
    try:
        v0 = _a[0]
        if _globals.get(_key, _builtins.get(_key)) is not range: raise _GF(1)
        if _type(v0) is not _vk_type: raise _GF(5)
        _w0_0 = (v0 * _vk0_0_2)
        _w0_1 = _vx_map(sin, _w0_0)
        _t0_2 = _w0_1
        _t0_2[0] += 0.0
        _w0_2 = _vx_acc(_t0_2)
        v0 = _w0_0.item(199)
        v1002 = _w0_2.item(199)
        g1000 = _cos(v0)
        g0 = g1000 * 199
        _w1_0 = _vx_cos(_w0_0[198::-1])
        _t1_1 = (_w1_0 * _vk1_1_3)
        _t1_1[0] += g0
        _w1_1 = _vx_acc(_t1_1)
        g0 = _w1_1.item(198)
        return v1002, (g0, )
    except StopIteration:           # an iterator ran out early
        raise _GF(-1) from None
"""

# sin_list's try/except is recorded differently from 3.12 on (exception tables)
DIGESTS = {"sin_list": "8ade2edfe1c120044a098088a81c9225c4dd91635e0e8161b327fbdd03325374"
                       if sys.version_info < (3, 12) else
                       "e8dc3e5815bb74738510aaa29b502d78fef4e31c6662f952d88e60e5b9c496f7",
           "rats": "d7ec4c045fd4bb547a7459d8923ae1fa1b9d33fad9ff9106ee05dc6f8d3697fe"}


def generated(f, args) -> str:
    _, tape = dcgraph.track(f, *args)
    tape.lint()
    return compile_gradient(tape, [tape.arguments[0]], args).source


@pytest.fixture
def uncalibrated(monkeypatch):
    monkeypatch.setattr(vector_run, "agrees", lambda fn: False)


def test_sin_loop_code_is_pinned(uncalibrated):
    assert generated(sin_loop, (0.3,)) == SIN_SOURCE


@pytest.mark.parametrize("case", sorted(DIGESTS))
def test_long_codes_are_pinned(uncalibrated, case):
    f, args = {"sin_list": (sin_list, (0.3,)), "rats": (rats, rats_data())}[case]
    text = generated(f, args)
    assert hashlib.sha256(text.encode()).hexdigest() == DIGESTS[case]


def test_fast_patterns_find_what_their_plain_spellings_find():
    operand = re.compile(r"\b[vg]\d+(?:_\d+)?\b|(?<![\w.])\d+(?:\.\d*)?(?:[eE][-+]?\d+)?(?![\w.])")
    name = re.compile(r"\b[vg]\d+(?:_\d+)?\b")
    rng = random.Random(0)
    alphabet = "vg0123456789._eE+-x (\u00e9\n_a"
    for _ in range(20000):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        assert vector_forms._OPERAND.findall(s) == operand.findall(s), s
        assert vector_forms.templates(s) == operand.sub("\x00", s).split("\n"), s
        assert _NAME.findall(s) == name.findall(s), s
        shapes, flat, offsets = vector_forms.templates_and_operands(s)   # one pass for both
        assert shapes == vector_forms.templates(s), s
        assert [flat[a:b] for a, b in zip(offsets, offsets[1:])] == \
            [operand.findall(line) for line in s.split("\n")], s


def test_names_of_dead_ranges_are_counted_as_whole_names():
    from dcgraph.compiled.vectorise import _digit_trie, _name_counts
    rng = random.Random(1)
    for _ in range(300):
        numbers = sorted({str(rng.randint(0, 3000)) for _ in range(rng.randint(1, 30))})
        pattern = re.compile(_digit_trie(numbers) + "$")
        assert all(pattern.match(n) for n in numbers)
        others = [str(rng.randint(0, 4000)) for _ in range(40)]
        assert [bool(pattern.match(n)) for n in others] == [n in numbers for n in others]
    text = "v12 = range(5)\nv123 = iter(v12)\n_v12 = v1 + v12_0 + xv12 + v120\nv12"
    assert _name_counts(text, {"v12", "v123", "v1"}) == {"v12": 3, "v123": 1, "v1": 1}


def test_bodies_without_16_consecutive_candidate_lines_are_left_before_templating():
    from dcgraph.compiled.vectorise import MIN_GROUPS, _may_repeat
    appends = [line for i in range(40) for line in (f"v{2 * i + 1} = sin(v{2 * i})",
                                                    f"v0.append(v{2 * i + 1})")]
    adjoints = [f"g{i} = None" for i in range(40)]
    assigned = [f"v{i + 1} = v{i} * 2.0" for i in range(MIN_GROUPS)]
    guards = [f"if _type(v{i}) is not float: raise _GF({i})" for i in range(MIN_GROUPS)]
    assert not _may_repeat(appends) and not _may_repeat(adjoints)
    assert not _may_repeat(assigned[1:]) and _may_repeat(assigned) and _may_repeat(guards)
    assert not _may_repeat(assigned[:8] + ["    v3 = v2"] + assigned[8:])


def test_a_run_found_mid_iteration_is_built_at_the_iteration_boundary_next(monkeypatch):
    """Rats' unrolled outer loop is first tried from a start inside an iteration; the failure
    names the first clean cut (no value of a group read across the cut, chains aside), so the
    second start is the run the pass keeps, as a two-dimensional run (rats25): at the first
    start the candidate inner blocks (at most ``MAX_BLOCKS``) and the one-dimensional run are
    tried once each, at the second the first 2-D construction is kept (compile time)."""
    from dcgraph.compiled.vector_blocks import MAX_BLOCKS
    built = []
    init = vector_run.Run.__init__

    def counted(self, ctx, start, period, groups, number):
        built.append((type(self).__name__, start, period, groups))
        init(self, ctx, start, period, groups, number)

    monkeypatch.setattr(vector_run.Run, "__init__", counted)
    text = generated(rats, rats_data())
    forward = [b for b in built if b[2] == built[0][2]]
    starts = sorted({b[1] for b in forward})
    assert len(starts) == 2 and starts[1] - starts[0] < forward[0][2]
    assert forward[-1][:2] == ("GridRun", starts[1]) and len(forward) <= MAX_BLOCKS + 2
    assert [b[0] for b in forward].count("Run") == 1
    assert "_w0_" in text and "_w1_" in text     # both runs kept (forward and backward)

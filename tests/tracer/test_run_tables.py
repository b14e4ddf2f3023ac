"""``run.Run``'s tables made on first use: a run whose hook never decides has no memo and no
``unsupported`` table; the memo is made at the first decision (shared by every level when no
answer depends on the depth, with the root's entry); a run frees all of it when its tape goes,
without the cycle collector."""
import math
import weakref

import pytest

import dcgraph
from dcgraph.tracer import recorder, roots
from dcgraph.tracer import run as run_module
from dcgraph.tracer.current_run import _state
from dcgraph.tracer.inline_calls import NO_SITE_ENTRY
from dcgraph.tracer.run import new_run
from tracer_watch import at_close, collector_off, run_of

def quiet_root(x):                      # (globals the operator scan decides by identity:
    return math.sqrt(x) + 1             # remembered by ``roots``)


def helper(x):
    return x * 2


def calls_helper(x):
    return helper(x) + 1


def countdown(n):
    return n if n <= 0 else countdown(n - 1)


def _tables_at_close(monkeypatch):
    """(root level's memo, shared memo, unsupported) of each run as it closes."""
    return at_close(monkeypatch, lambda run: (run.root_level.memo, run.shared_memo,
                                              run.unsupported))


def test_a_run_whose_hook_never_decides_makes_no_memo_nor_unsupported(monkeypatch):
    seen = _tables_at_close(monkeypatch)
    dcgraph.track(quiet_root, 4.0)      # decided (``Run.root`` makes the memo), remembered
    assert roots.known(quiet_root, dcgraph.Context()) is not None
    memo = seen[0][0]
    assert seen[0][1] is memo and memo[quiet_root][:2] == (quiet_root, memo[quiet_root][1])
    for _ in range(2):                  # taken as decided: ``math.sqrt`` at its method
        result, tape = dcgraph.track(quiet_root, 4.0)   # site, nothing asks the memo
        assert result == 3.0
        tape.lint()
        assert seen[-1] == (None, None, None)
        assert tape.untraced is type(tape).untraced     # the shared empty mapping


def test_the_memo_is_made_at_the_first_decision_with_the_roots_entry(monkeypatch):
    seen = _tables_at_close(monkeypatch)
    result, tape = dcgraph.track(calls_helper, 4)
    assert result == 9
    tape.lint()
    memo = seen[-1][0]
    assert seen[-1][1] is memo and memo[helper][0] is helper
    entry = memo[calls_helper]          # the root's entry, as ``Run.root`` decided it
    assert entry[0] is calls_helper and entry[2] is calls_helper.__code__
    assert [n.fn for n in tape.nodes if n.kind == "NestedCall"] == [helper]


def test_a_remembered_root_calling_itself_nowhere_gets_its_memo_entry(monkeypatch):
    # ``traced_call`` stores ``rooted`` itself for such a root (``took_root`` inline): the
    # memo, made at the first decision (``helper``), starts with the root's entry
    seen = _tables_at_close(monkeypatch)
    dcgraph.track(calls_helper, 4)
    tail = roots.known(calls_helper, dcgraph.Context())
    assert tail is not None and tail[4] == ()          # no self sites
    result, tape = dcgraph.track(calls_helper, 5)
    assert result == 11
    run = run_of(tape)
    assert run.rooted == (calls_helper, tail)
    memo = seen[-1][0]
    assert memo[calls_helper] == (calls_helper,) + tail and memo[helper][0] is helper
    tape.lint()
    assert [n.fn for n in tape.nodes if n.kind == "NestedCall"] == [helper]


def test_a_remembered_root_seen_by_the_hook_first_is_taken_from_its_entry(monkeypatch):
    countdown(1)
    dcgraph.track(countdown, 2)
    tail = roots.known(countdown, dcgraph.Context())
    assert tail is not None
    asked = []
    decide = run_module.Run.decide
    monkeypatch.setattr(run_module.Run, "decide",
                        lambda run, f, level: asked.append(f) or decide(run, f, level))
    monkeypatch.setattr(dcgraph.Context, "is_primitive",
                        lambda *a: pytest.fail("the remembered root was decided again"))
    run = new_run(dcgraph.Context())
    run.took_root(countdown, tail)
    root = run.root_level
    assert root.memo is None
    assert root.hook(countdown) is tail[0]          # (a call from no site: the hook's)
    assert asked == [countdown] and root.memo[countdown][1] is tail[0]
    assert root.hook(countdown) is tail[0] and asked == [countdown]     # the memo's now
    run.close()


def test_a_shared_memo_is_given_to_every_level_made_before_it():
    run = new_run(dcgraph.Context())
    root = run.root_level
    assert root.memo is None and root.memo_get is recorder.NO_MEMO_GET
    memo = run.memo_of(root)
    assert run.shared_memo is memo and root.memo is memo and root.memo_get == memo.get
    assert run.levels == [root]
    run.close()
    assert run.levels == [] and run.shared_memo is None


def test_each_level_of_a_depth_limited_run_makes_its_own_memo():
    result, tape = dcgraph.track(countdown, 4, ctx=dcgraph.DepthLimitContext(3))
    assert result == 0
    tape.lint()
    run = new_run(dcgraph.DepthLimitContext(3))
    root = run.root_level
    assert root.child is None and run.memo_of(root) is root.memo and run.shared_memo is None
    run.close()


def test_a_remembered_root_under_a_plain_context_marked_depth_dependent():
    """A plain ``Context`` whose instance says ``depth_dependent`` (its ``is_primitive`` still
    reads no depth, so ``roots`` knows its roots): each level makes its own memo, without the
    root's entry, and the root's recursion is decided by the hook as on a first run."""
    ctx = dcgraph.Context()
    ctx.depth_dependent = True
    assert dcgraph.track(countdown, 3)[0] == 0              # remembered
    for _ in range(2):
        result, tape = dcgraph.track(countdown, 3, ctx=ctx)
        assert result == 0
        tape.lint()
        assert [n.kind for n in tape.nodes].count("NestedCall") == 1
        assert str(tape) == str(dcgraph.track(countdown, 3)[1])


def test_guards_switched_on_drop_the_roots_pending_entry():
    countdown(1)
    for _ in range(2):
        dcgraph.track(countdown, 2)
    tail = roots.known(countdown, dcgraph.Context())
    assert tail is not None
    run = new_run(dcgraph.Context())
    run.took_root(countdown, tail)
    assert run.rooted == (countdown, tail)
    assert all(site.entry[0] is run.root_level.pair[1] for site in tail[4])
    run.guard_operators()               # the plain copy's decision is forgotten
    assert run.rooted is None and all(site.entry is NO_SITE_ENTRY for site in tail[4])
    assert countdown not in run.memo_of(run.root_level)
    run.close()


def test_a_run_with_its_tables_made_is_freed_without_the_cycle_collector():
    class Box:
        def __init__(self, x):
            self.x = x

        def get(self):
            return self.x

    def with_tables(x):                 # a memo, a constructor, a bound method
        return helper(x) + countdown(2) + Box(x).get()

    with collector_off():
        for ctx in (dcgraph.Context(), dcgraph.DepthLimitContext(5)):
            result, tape = dcgraph.track(with_tables, 1, ctx=ctx)
            assert result == 2 + 0 + 1
            run = weakref.ref(run_of(tape))
            assert run().levels == [] and run().shared_memo is None     # dropped at close
            del tape                    # (not built, as below)
            assert run() is None


def deep(n, leaf):
    return leaf(n) if n <= 0 else deep(n - 1, leaf)


def test_levels_and_their_memos_go_with_the_run():
    with collector_off():
        def leaf(n):
            return n + 1

        result, tape = dcgraph.track(deep, 3, leaf, ctx=dcgraph.DepthLimitContext(6))
        assert result == 1              # (not built: built nodes and tapes refer to each
        run = weakref.ref(run_of(tape))             # other, for the collector to free)
        gone = weakref.ref(leaf)        # held by the deepest level's memo and by the log
        del leaf, tape
        assert run() is None and gone() is None

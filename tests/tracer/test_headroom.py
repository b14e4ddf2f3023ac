"""``tracer.headroom``: the counted raise of the recursion limit during traced runs, changed
under a claim (mutual exclusion) that threads and interrupts leave exact."""
import random
import signal
import sys
import threading

import pytest

from dcgraph.tracer.headroom import IDLE, _Headroom, narrowed, widened, with_room


class Run:
    """A stand-in for ``recorder.Run``: runs are keyed by identity."""


def test_the_limit_is_the_users_plus_the_largest_active_extra_and_then_the_users():
    room, base = _Headroom(), sys.getrecursionlimit()
    a, b, c = Run(), Run(), Run()
    try:
        widened(a, 3, room)
        assert sys.getrecursionlimit() == base + 3
        widened(b, 5, room)
        widened(c, 3, room)
        assert sys.getrecursionlimit() == base + 5
        narrowed(b, room)
        assert sys.getrecursionlimit() == base + 3
        narrowed(a, room)
        narrowed(a, room)                        # ended twice: harmless
        narrowed(Run(), room)                    # never started (interrupted): harmless
        assert sys.getrecursionlimit() == base + 3
        narrowed(c, room)
        assert sys.getrecursionlimit() == base
        assert room.active == {} and room.applied == 0
    finally:
        sys.setrecursionlimit(base)


def test_a_limit_set_during_runs_is_the_users_new_limit():
    room, base = _Headroom(), sys.getrecursionlimit()
    a, b = Run(), Run()
    try:
        widened(a, 3, room)
        sys.setrecursionlimit(base + 100)        # the program's own setting
        widened(b, 4, room)
        assert sys.getrecursionlimit() == base + 104
        narrowed(b, room)
        narrowed(a, room)
        assert sys.getrecursionlimit() == base + 100
    finally:
        sys.setrecursionlimit(base)


def test_a_lone_run_takes_a_limit_the_user_set_before_or_during_it_as_theirs():
    """The short form (one run active): a limit set between runs is the base of the next
    bump; one set during the run stays once it ends."""
    room, base = _Headroom(), sys.getrecursionlimit()
    a, b = Run(), Run()
    try:
        widened(a, 3, room)
        assert room.solo is a and sys.getrecursionlimit() == base + 3
        narrowed(a, room)
        assert room.solo is IDLE and sys.getrecursionlimit() == base
        sys.setrecursionlimit(base + 50)         # between runs
        widened(b, 3, room)
        assert sys.getrecursionlimit() == base + 53
        sys.setrecursionlimit(base + 100)        # during the run
        narrowed(b, room)
        assert sys.getrecursionlimit() == base + 100
        assert room.solo is IDLE and room.active == {} and room.applied == 0
        widened(a, 4, room)                      # and the next run counts from there
        assert sys.getrecursionlimit() == base + 104
        narrowed(a, room)
        assert sys.getrecursionlimit() == base + 100
    finally:
        sys.setrecursionlimit(base)


@pytest.mark.parametrize("first", ["lone run", "second run"])
def test_a_lone_run_joined_by_another_is_counted_whichever_ends_first(first):
    room, base = _Headroom(), sys.getrecursionlimit()
    a, b = Run(), Run()
    try:
        widened(a, 5, room)
        widened(b, 3, room)                      # ``a`` moves into ``active``
        assert room.active == {a: 5, b: 3} and sys.getrecursionlimit() == base + 5
        ends = (a, b) if first == "lone run" else (b, a)
        narrowed(ends[0], room)
        assert sys.getrecursionlimit() == base + (3 if first == "lone run" else 5)
        sys.setrecursionlimit(base + 20)         # the user's, during the other run
        narrowed(ends[1], room)
        assert sys.getrecursionlimit() == base + 20
        assert room.solo is IDLE and room.active == {} and room.applied == 0
    finally:
        sys.setrecursionlimit(base)


def _at_depth(n, then):
    return then() if n == 0 else _at_depth(n - 1, then)


def test_a_lowering_refused_deep_is_made_by_the_next_run_to_end():
    room, base = _Headroom(), sys.getrecursionlimit()
    a, b = Run(), Run()
    try:
        widened(a, 60, room)
        depth = 0
        frame = sys._getframe()
        while frame is not None:
            frame, depth = frame.f_back, depth + 1
        _at_depth(base - depth + 20, lambda: narrowed(a, room))   # deeper than the user's
        assert sys.getrecursionlimit() == base + 60                 # limit: refused, kept
        widened(b, 3, room)
        narrowed(b, room)
        assert sys.getrecursionlimit() == base
    finally:
        sys.setrecursionlimit(base)


def test_runs_overlapping_in_threads_never_ratchet_the_limit():
    room, base = _Headroom(), sys.getrecursionlimit()
    seen, stop, short = set(), threading.Event(), []

    def watch():
        while not stop.is_set():
            seen.add(sys.getrecursionlimit())

    def runs(seed):
        rng = random.Random(seed)
        for _ in range(2000):
            nested = [(Run(), rng.choice((3, 4, 7))) for _ in range(rng.randint(1, 3))]
            for run, extra in nested:            # ended in reverse order
                widened(run, extra, room)
            if sys.getrecursionlimit() < base + max(e for _, e in nested):
                short.append(nested)
            for run, _ in reversed(nested):
                narrowed(run, room)

    watcher = threading.Thread(target=watch)
    workers = [threading.Thread(target=runs, args=(k,)) for k in range(6)]
    try:
        watcher.start()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    finally:
        stop.set()
        watcher.join()
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(base)
    assert limit == base and room.active == {} and room.applied == 0
    assert seen <= {base, base + 3, base + 4, base + 7} and short == []


def test_with_room_raises_the_limit_for_the_call_only_counted_with_the_runs():
    room, base = _Headroom(), sys.getrecursionlimit()
    a = Run()
    try:
        widened(a, 3, room)
        seen = with_room(sys.getrecursionlimit, frames=50, room=room)
        assert seen == base + 53                 # on top of the run's bump
        assert sys.getrecursionlimit() == base + 3 and list(room.active) == [a]
        with pytest.raises(ValueError):          # raised inside: restored all the same
            with_room(int, "x", frames=50, room=room)
        assert sys.getrecursionlimit() == base + 3 and list(room.active) == [a]
        narrowed(a, room)
        assert sys.getrecursionlimit() == base and room.active == {}
    finally:
        sys.setrecursionlimit(base)


def test_with_room_changes_nothing_where_it_could_not_lower_the_limit_back():
    """Near the limit the interpreter refuses a limit at or below the current depth, so a
    raise made there would stay: there ``with_room`` raises ``RecursionError`` before raising
    the limit; a little further from it, it works. Either way the limit is the user's after."""
    room, base = _Headroom(), sys.getrecursionlimit()
    outcomes = {}

    def called_at(below_the_deepest, n=0):   # with_room called that many frames below it
        try:
            below = called_at(below_the_deepest, n + 1)
        except RecursionError:
            return 0                         # this frame is the deepest
        if below == below_the_deepest:
            try:
                outcomes[below] = with_room(sys.getrecursionlimit, frames=50, room=room)
            except RecursionError:
                outcomes[below] = "refused"
        return below + 1

    try:
        for k in range(6):
            called_at(k)
            assert sys.getrecursionlimit() == base and room.active == {} and room.applied == 0
        assert set(outcomes.values()) == {"refused", base + 50}
        assert outcomes[5] == base + 50 and outcomes[0] == "refused"
    finally:
        sys.setrecursionlimit(base)


def test_a_held_claim_makes_a_change_wait_until_it_is_given_back():
    room, base = _Headroom(), sys.getrecursionlimit()
    holder, a = Run(), Run()
    room.claims.append(holder)                   # another thread's change under way
    waiting = threading.Thread(target=widened, args=(a, 3, room))
    try:
        waiting.start()
        waiting.join(0.05)
        assert waiting.is_alive() and sys.getrecursionlimit() == base and room.active == {}
        room.claims.remove(holder)               # given back
        waiting.join()
        assert sys.getrecursionlimit() == base + 3 and room.claims == []
        narrowed(a, room)
        assert sys.getrecursionlimit() == base and room.claims == []
    finally:
        room.claims.clear()
        sys.setrecursionlimit(base)


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signals are delivered to the main thread")
def test_interrupts_anywhere_in_a_change_leave_the_claim_free_and_the_limit_exact():
    """A KeyboardInterrupt lands wherever a timer fires in a loop of runs starting and ending
    (and ``with_room`` calls): the claim is always given back, and once the interrupted
    run is ended (as ``track``'s exception path does) the limit is the user's again, never a
    ratchet (nor one changed without ``applied`` following it)."""
    room, base = _Headroom(), sys.getrecursionlimit()
    armed, landed = [False], []

    def interrupt(signum, frame):
        if armed[0]:
            landed.append(frame.f_code.co_name)
            raise KeyboardInterrupt

    rng = random.Random(11)
    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        for _ in range(300):
            runs = []
            try:
                armed[0] = True
                signal.setitimer(signal.ITIMER_REAL, rng.uniform(2e-5, 4e-4))
                for k in range(100_000):             # bounded if the timer is missed
                    run = Run()
                    runs.append(run)
                    widened(run, 3 + k % 5, room)
                    with_room(abs, -1, frames=7, room=room)
                    narrowed(run, room)
            except KeyboardInterrupt:
                pass
            finally:
                armed[0] = False
                signal.setitimer(signal.ITIMER_REAL, 0)
            assert room.claims == []
            for run in runs[-1:]:
                narrowed(run, room)
            assert room.active == {} and room.applied == 0 and room.claims == []
            assert room.solo is IDLE
            assert sys.getrecursionlimit() == base
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        sys.setrecursionlimit(base)
    inside = [name for name in landed if name in ("widened", "narrowed", "with_room", "_wait")]
    assert len(landed) >= 250 and len(inside) >= 50

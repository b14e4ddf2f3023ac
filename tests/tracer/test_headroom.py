"""``tracer.headroom``: the counted, locked raise of the recursion limit during traced runs."""
import random
import sys
import threading

from dcgraph.tracer.headroom import _Headroom, narrowed, widened


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

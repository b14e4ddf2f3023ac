"""``tracer.headroom``: the counted, locked raise of the recursion limit during traced runs."""
import random
import sys
import threading

from dcgraph.tracer.headroom import _Headroom, narrowed, widened


def test_the_limit_is_the_users_plus_the_largest_active_extra_and_then_the_users():
    room, base = _Headroom(), sys.getrecursionlimit()
    try:
        widened(3, room)
        assert sys.getrecursionlimit() == base + 3
        widened(5, room)
        widened(3, room)
        assert sys.getrecursionlimit() == base + 5
        narrowed(5, room)
        assert sys.getrecursionlimit() == base + 3
        narrowed(3, room)
        assert sys.getrecursionlimit() == base + 3
        narrowed(3, room)
        assert sys.getrecursionlimit() == base
        assert room.active == {} and room.applied == 0
    finally:
        sys.setrecursionlimit(base)


def test_a_limit_set_during_runs_is_the_users_new_limit():
    room, base = _Headroom(), sys.getrecursionlimit()
    try:
        widened(3, room)
        sys.setrecursionlimit(base + 100)        # the program's own setting
        widened(4, room)
        assert sys.getrecursionlimit() == base + 104
        narrowed(4, room)
        narrowed(3, room)
        assert sys.getrecursionlimit() == base + 100
    finally:
        sys.setrecursionlimit(base)


def _at_depth(n, then):
    return then() if n == 0 else _at_depth(n - 1, then)


def test_a_lowering_refused_deep_is_made_by_the_next_run_to_end():
    room, base = _Headroom(), sys.getrecursionlimit()
    try:
        widened(60, room)
        depth = 0
        frame = sys._getframe()
        while frame is not None:
            frame, depth = frame.f_back, depth + 1
        _at_depth(base - depth + 20, lambda: narrowed(60, room))   # deeper than the user's
        assert sys.getrecursionlimit() == base + 60                  # limit: refused, kept
        widened(3, room)
        narrowed(3, room)
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
            extras = [rng.choice((3, 4, 7)) for _ in range(rng.randint(1, 3))]
            for e in extras:                 # nested runs: ended in reverse order
                widened(e, room)
            if sys.getrecursionlimit() < base + max(extras):
                short.append(extras)
            for e in reversed(extras):
                narrowed(e, room)

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

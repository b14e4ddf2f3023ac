"""Tapes built in several threads at once: no process-wide change, no half-built tape."""
import sys
import threading

import dcgraph


def loop(n):
    total = 0.0
    for k in range(n):
        total = total + k * 0.5
    return total


def countdown(n):
    return 0 if n == 0 else 1 + countdown(n - 1)


def test_concurrent_builds_leave_the_recursion_limit_alone():
    """While runs are active the limit is the user's plus one run's headroom (``track``'s and
    ``traced_call``'s frames and the hook's, ``tracer.headroom``), never more however many
    overlap; afterwards exactly the user's."""
    limit = sys.getrecursionlimit()
    seen, stop, errors, tapes = set(), threading.Event(), [], []

    def watch():
        while not stop.is_set():
            seen.add(sys.getrecursionlimit())

    def work():
        try:
            for _ in range(3):
                for f, n in ((loop, 2000), (countdown, 300)):
                    result, tape = dcgraph.track(f, n)
                    len(tape)
                    tapes.append((f, n, result, tape))
        except BaseException as exc:    # noqa: BLE001 - reported below
            errors.append(exc)

    watcher = threading.Thread(target=watch)
    watcher.start()
    workers = [threading.Thread(target=work) for _ in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    stop.set()
    watcher.join()
    assert errors == []
    assert sys.getrecursionlimit() == limit
    assert seen <= {limit, limit + 3}
    assert len(tapes) == 8 * 3 * 2
    for f, n, result, tape in tapes:
        assert result == (sum(k * 0.5 for k in range(n)) if f is loop else n)
        tape.lint()


def test_replay_depth_does_not_depend_on_the_recursion_limit():
    depth = sys.getrecursionlimit() - 60
    result, tape = dcgraph.track(countdown, depth)
    assert result == depth
    tape.lint()
    levels, t = 0, tape
    while True:
        calls = t.find(kind="NestedCall")
        if not calls or calls[0].tape is not t:
            break
        t, levels = calls[0].child, levels + 1
    assert levels == depth


def test_a_tape_read_by_two_threads_is_complete_in_both():
    for _ in range(5):
        result, tape = dcgraph.track(loop, 20_000)
        sizes, barrier = [], threading.Barrier(2)

        def read():
            barrier.wait()
            sizes.append(len(tape.nodes))

        readers = [threading.Thread(target=read) for _ in range(2)]
        for r in readers:
            r.start()
        for r in readers:
            r.join()
        assert sizes[0] == sizes[1] == len(tape) > 20_000
        tape.lint()


def test_an_interrupted_build_is_built_again_on_next_access():
    class Interrupting(dcgraph.Context):
        calls = 0

        def annotates(self):
            return True

        def annotate(self, node):
            Interrupting.calls += 1
            if Interrupting.calls == 5:
                raise KeyboardInterrupt

    result, tape = dcgraph.track(loop, 10, ctx=Interrupting())
    try:
        len(tape)
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the annotation hook did not interrupt the build")
    assert len(tape) == len(dcgraph.track(loop, 10)[1])
    tape.lint()

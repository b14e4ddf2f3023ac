"""Generator corners the tracer must not break: every way a generator frame is made, resumed,
interleaved, sent into, thrown into, closed or left unfinished (used by test_generators)."""
import asyncio
import itertools

import numpy as np


def squares(n):
    for i in range(n):
        yield i * i


def counted(n):
    total = 0
    for i in range(n):
        total += i
        yield total
    return total


def echo():
    got = yield "ready"
    while got is not None:
        got = yield got * 2
    return "done"


def genexpr_sum(xs):
    return sum(x * 3 for x in xs)


def genexpr_list(xs):
    return list(x + 1 for x in xs if x % 2)


def listcomp_over_genexpr(xs):
    return [y * 2 for y in (x - 1 for x in xs)]


def for_over_generator(n):
    out = []
    for v in squares(n):
        if v % 2:
            continue
        out.append(v)
    return out


def next_then_list(n):
    g = counted(n)
    first = next(g)
    return first, list(g)


def zip_two_generators(n):
    return list(zip(squares(n), counted(n + 2)))


def traced_zip_loop(n):
    total = 0
    for a, b in zip(squares(n), (k * 10 for k in range(n))):
        total += a + b
    return total


def enumerate_generator(n):
    return [(i, v) for i, v in enumerate(squares(n))]


def nested_genexprs(xs):
    return sum(y for y in (x * x for x in xs) if y > 2)


def _scale(x, k):
    return x * k


def generator_calls_traced(xs):
    return list(_scale(x, 2) for x in xs)


def stop_iteration_value(n):
    g = counted(n)
    while True:
        try:
            next(g)
        except StopIteration as stop:
            return stop.value


def send_values():
    g = echo()
    out = [next(g), g.send(3), g.send(5)]
    try:
        g.send(None)
    except StopIteration as stop:
        out.append(stop.value)
    return out


def throw_at_plain_yield(n):
    g = squares(n)
    first = next(g)
    try:
        g.throw(KeyError("thrown"))
    except KeyError as exc:
        return first, str(exc), list(g)


def close_suspended(n):
    g = squares(n)
    a = next(g)
    g.close()
    return a, list(g)


def unfinished_generator(n):
    g = counted(n)
    return next(g), next(g)


def exhausted_then_next(n):
    g = squares(n)
    items = list(g)
    return items, next(g, "empty")


def closure_generator(k):
    scale = k * 2

    def gen(n):
        for i in range(n):
            yield i * scale
    return list(gen(3))


class Walker:
    def __init__(self, items):
        self.items = items

    def pairs(self):
        for i in range(len(self.items) - 1):
            yield self.items[i], self.items[i + 1]


def generator_method(xs):
    return list(Walker(xs).pairs())


def star_generator(*args, **kwargs):
    for a in args:
        yield a
    for k in sorted(kwargs):
        yield k, kwargs[k]


def star_arguments():
    return list(star_generator(1, 2, x=3, y=4))


def defaults_generator(n, step=2, *, start=1):
    v = start
    while v < n:
        yield v
        v += step


def default_arguments(n):
    return list(defaults_generator(n)), list(defaults_generator(n, 3, start=0))


def naturals():
    k = 0
    while True:
        yield k
        k += 1


def infinite_islice(n):
    return list(itertools.islice(naturals(), n))


def raising_generator(xs):
    for x in xs:
        if x < 0:
            raise ValueError(f"negative {x}")
        yield x


def raise_inside_caught(xs):
    got = []
    try:
        for v in raising_generator(xs):
            got.append(v)
    except ValueError as exc:
        got.append(str(exc))
    return got


def sorted_min_max(xs):
    return sorted(x % 5 for x in xs), min(x * 2 for x in xs), max(-x for x in xs)


def dict_and_join(words):
    return dict((w, len(w)) for w in words), "-".join(w.upper() for w in words)


def any_all_short_circuit(xs):
    return any(x > 2 for x in xs), all(x < 3 for x in xs)


def _consume(it):
    total = 0
    for v in it:
        total += v
    return total


def consumed_by_traced_function(n):
    return _consume(squares(n)), _consume(x * 2 for x in range(n))


def tree(n):
    if n > 0:
        for x in tree(n - 1):
            yield x
        yield n
        for x in tree(n - 1):
            yield -x


def recursive_generator(n):
    return list(tree(n))


def two_instances_interleaved(n):
    a, b = squares(n), squares(n + 1)
    out = []
    for _ in range(n):
        out.append(next(a) - next(b))
    return out, list(b)


def branching_generator(n):
    k = 0
    while k < n:
        if k % 3 == 0:
            yield "fizz"
        elif k % 3 == 1:
            yield k
        else:
            yield -k
        k += 1


def branches(n):
    return list(branching_generator(n))


def delegating(n):
    yield from squares(n)
    yield -1


def yield_from_untraced(n):
    return list(delegating(n))


def guarded(n):
    try:
        for i in range(n):
            yield i
    finally:
        pass


def try_generator_mixed(n):
    return list(guarded(n)), sum(squares(n))


async def _double(x):
    await asyncio.sleep(0)
    return x * 2


async def _gather(xs):
    return [await _double(x) for x in xs]


def async_run(xs):
    return asyncio.run(_gather(xs))


def map_over_generator(n):
    return list(map(lambda v: v + 1, squares(n)))


def unpack_generator(n):
    a, b, c = squares(n)
    return a, b, c


def contains_generator(n):
    return 4 in squares(n), 5 in squares(n)


def numpy_arrays(n):
    rows = (np.arange(3.0) * k for k in range(n))
    return sum(rows).tolist()


ALL = [
    (genexpr_sum, ([1, 2, 3],)), (genexpr_list, ([1, 2, 3, 4, 5],)),
    (listcomp_over_genexpr, ([4, 5],)), (for_over_generator, (6,)), (next_then_list, (4,)),
    (zip_two_generators, (3,)), (traced_zip_loop, (4,)), (enumerate_generator, (3,)),
    (nested_genexprs, ([1, 2, 3],)), (generator_calls_traced, ([1.5, 2.5],)),
    (stop_iteration_value, (4,)), (send_values, ()), (throw_at_plain_yield, (3,)),
    (close_suspended, (3,)), (unfinished_generator, (5,)), (exhausted_then_next, (2,)),
    (closure_generator, (3,)), (generator_method, ([1, 4, 9],)), (star_arguments, ()),
    (default_arguments, (7,)), (infinite_islice, (4,)), (raise_inside_caught, ([1, 2, -3, 4],)),
    (sorted_min_max, ([7, 3, 9],)), (dict_and_join, (["ab", "c"],)),
    (any_all_short_circuit, ([1, 3, 2],)), (consumed_by_traced_function, (4,)),
    (recursive_generator, (3,)), (two_instances_interleaved, (3,)), (branches, (5,)),
    (yield_from_untraced, (3,)), (try_generator_mixed, (3,)), (async_run, ([1, 2],)),
    (map_over_generator, (3,)), (unpack_generator, (3,)), (contains_generator, (4,)),
    (numpy_arrays, (3,)),
]


def catching():
    total = 0
    while True:
        try:
            got = yield total
        except ValueError as exc:
            total += 100
            got = len(str(exc))
        finally:
            total += 1
        if got is None:
            return total
        total += got


def throw_caught_inside():
    g = catching()
    out = [next(g), g.send(2), g.throw(ValueError("abc")), g.send(1)]
    try:
        g.send(None)
    except StopIteration as stop:
        out.append(stop.value)
    return out


def resource(log):
    log.append("open")
    try:
        for i in range(10):
            yield i
    finally:
        log.append("closed")


def close_runs_finally():
    log = []
    g = resource(log)
    first = [next(g), next(g)]
    g.close()
    return first, log, list(g)


def with_block_generator(n):
    import contextlib
    log = []

    @contextlib.contextmanager
    def scope():
        log.append("enter")
        yield n
        log.append("exit")

    def gen():
        with scope() as k:
            for i in range(k):
                yield i * k
    return list(gen()), log


def throw_uncaught_with_finally():
    log = []
    g = resource(log)
    next(g)
    try:
        g.throw(KeyError("boom"))
    except KeyError as exc:
        return str(exc), log


ALL += [(throw_caught_inside, ()), (close_runs_finally, ()), (with_block_generator, (3,)),
        (throw_uncaught_with_finally, ())]


def consumed_in_another_thread(n):
    import threading
    g = counted(n)
    first = next(g)
    rest = []
    worker = threading.Thread(target=lambda: rest.extend(g))
    worker.start()
    worker.join()
    return first, rest


def resumed_in_a_nested_track(n):
    import dcgraph
    g = counted(n)
    first = next(g)
    inner, tape = dcgraph.track(list, g)
    tape.lint()
    return first, inner


ALL += [(consumed_in_another_thread, (4,)), (resumed_in_a_nested_track, (4,))]

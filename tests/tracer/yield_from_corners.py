"""``yield from`` corner cases: each function runs a delegating generator and returns what a
plain run returns (compared by ``test_yield_from``)."""


def inner(n):
    total = 0
    for i in range(n):
        sent = yield i * 2
        total += i if sent is None else sent
    return total


def outer(n):
    r = yield from inner(n)
    yield r
    yield from range(2)
    yield from [10, 20]


def delegate_to_generator(n):
    return list(outer(n))


def delegate_in_traced_for(n):
    out = []
    for v in outer(n):
        out.append(v + 1)
    return out


def _returns(n):
    r = yield from inner(n)
    return r * 10


def return_value_through_two_levels(n):
    def top():
        v = yield from _returns(n)
        yield v
    return list(top())


def send_through(w):
    g = _returns(3)
    got = [next(g), g.send(w), g.send(w + 1)]
    try:
        g.send(None)
    except StopIteration as stop:
        got.append(stop.value)
    return got


def _catching():
    seen = []
    while True:
        try:
            x = yield len(seen)
        except KeyError as exc:
            seen.append(str(exc))
            if len(seen) > 1:
                return seen
        else:
            seen.append(x)


def _delegating_catcher():
    r = yield from _catching()
    yield ("returned", r)
    yield "after"


def throw_caught_by_sub_generator():
    g = _delegating_catcher()
    a = next(g)
    b = g.throw(KeyError("one"))          # the sub-generator catches and yields again
    c = g.throw(KeyError("two"))          # ... and returns: the delegator resumes
    d = next(g)
    return a, b, c, d


def throw_uncaught_by_sub_generator():
    def outer_catches():
        try:
            yield from inner(5)
        except ValueError as exc:
            yield "caught " + str(exc)
    g = outer_catches()
    first = next(g)
    second = g.throw(ValueError("bad"))
    return first, second, list(g)


def _finally_inner(log):
    try:
        yield 1
        yield 2
    finally:
        log.append("inner closed")


def close_while_delegating():
    log = []

    def outer_():
        try:
            yield from _finally_inner(log)
        finally:
            log.append("outer closed")
    g = outer_()
    next(g)
    g.close()
    return log


class _Echo:
    """An iterator with send and throw (not a generator): delegated to through the relay."""

    def __init__(self):
        self.k = 0

    def __iter__(self):
        return self

    def __next__(self):
        return self.send(None)

    def send(self, v):
        self.k += 1
        if self.k > 4:
            raise StopIteration("echo done")
        return (self.k, v)

    def throw(self, exc):
        if isinstance(exc, KeyError):
            return ("threw", str(exc))
        raise exc


def delegate_to_iterator_object():
    def outer_():
        r = yield from _Echo()
        yield r
    g = outer_()
    got = [next(g), g.send("x"), g.throw(KeyError("k")), g.send(None)]
    return got + list(g)


def sub_generator_raises(n):
    def bad():
        yield 1
        raise ValueError("from sub")

    def outer_():
        try:
            yield from bad()
        except ValueError as exc:
            yield str(exc)
    return list(outer_())


def delegate_to_exhausted_and_empty():
    def empty():
        return "nothing"
        yield

    def outer_(g):
        a = yield from g
        b = yield from empty()
        c = yield from []
        yield (a, b, c)
    g = inner(1)
    list(g)
    return list(outer_(g))


def delegate_to_untraced_generator(n):
    import itertools
    g = (i for i in itertools.count())      # a genexpr: traced, so delegated to directly
    def outer_():
        yield from itertools.islice(g, n)   # a C iterator: relayed
        yield from map(abs, [-1, -2])
    return list(outer_())


def recursive_delegation(depth):
    def tree(d):
        if d == 0:
            yield "leaf"
            return
        yield d
        yield from tree(d - 1)
        yield from tree(d - 1)
    return list(tree(depth))


def unfinished_delegator():
    g = outer(4)
    return next(g), next(g)


ALL = [(delegate_to_generator, (3,)), (delegate_in_traced_for, (3,)),
       (return_value_through_two_levels, (3,)), (send_through, (5,)),
       (throw_caught_by_sub_generator, ()), (throw_uncaught_by_sub_generator, ()),
       (close_while_delegating, ()), (delegate_to_iterator_object, ()),
       (sub_generator_raises, (1,)), (delegate_to_exhausted_and_empty, ()),
       (delegate_to_untraced_generator, (3,)), (recursive_delegation, (2,)),
       (unfinished_delegator, ())]


def echo():
    x = yield 1.0
    while True:
        x = yield x * 2.0


def delegate():
    return (yield from echo())


def sender(w):
    g = delegate()
    next(g)
    a = g.send(w)
    return a + g.send(a + 1.0)


ALL.append((sender, (2.0,)))


def iterable_coroutine_awaits_a_coroutine():
    import types

    async def leaf(x):
        return x * 3

    @types.coroutine
    def bridge(x):
        got = yield from leaf(x)        # a coroutine object: relayed by send
        yield got
        return got + 1

    g = bridge(2)                       # a generator (flagged iterable coroutine): traced
    first = g.send(None)
    try:
        g.send(None)
    except StopIteration as stop:
        return first, stop.value


ALL.append((iterable_coroutine_awaits_a_coroutine, ()))

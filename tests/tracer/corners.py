"""Functions exercising the language corners the tracer must not break (used by tests)."""
import dataclasses
import functools
import math

COUNTER = 0


def loops(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        if i > 7:
            break
        total += i
    else:
        total = -1
    k = 0
    while k < n:
        k += 2
        if k == 6:
            break
    else:
        k = -k
    return total, k


def while_else(n):
    i = 0
    while i < n:
        i += 1
    else:
        i *= 10
    return i


def recursion(n):
    return 1 if n <= 1 else n * recursion(n - 1)


def is_even(n):
    return True if n == 0 else is_odd(n - 1)


def is_odd(n):
    return False if n == 0 else is_even(n - 1)


def comprehensions(xs):
    a = [x * x for x in xs if x % 2]
    b = {x: x + 1 for x in xs}
    c = {x % 3 for x in xs}
    d = sum(x for x in xs)
    e = [[i * j for j in range(i)] for i in range(4)]
    return a, b, c, d, e


def gen(n):
    for i in range(n):
        got = yield i
        if got:
            yield got * 10


def generators(n):
    g = gen(n)
    out = [next(g), g.send(5), next(g), next(g)]
    return out + list(gen(3))


def exceptions(x):
    out = []
    try:
        out.append(1 / x)
    except ZeroDivisionError as e:
        out.append(str(e))
    finally:
        out.append("finally")
    try:
        try:
            raise ValueError("inner")
        except TypeError:
            out.append("wrong")
    except ValueError as e:
        out.append(repr(e))
    try:
        {}["k"]
    except (KeyError, IndexError):
        out.append("key")
    return out


class Resource:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, *exc):
        self.log.append(("exit", exc[0].__name__ if exc[0] else None))
        return exc[0] is KeyError


def with_statements():
    log = []
    with Resource(log) as r:
        r.log.append("body")
    with Resource(log):
        raise KeyError("swallowed")
    try:
        with Resource(log):
            raise ValueError("kept")
    except ValueError:
        log.append("caught")
    return log


def matching(v):
    match v:
        case 0:
            return "zero"
        case [x, y]:
            return f"pair {x} {y}"
        case {"k": k}:
            return f"map {k}"
        case Point(x=0, y=y):
            return f"on y axis {y}"
        case str() as s if len(s) > 2:
            return "long str"
        case _:
            return "other"


@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0

    def norm(self):
        return math.hypot(self.x, self.y)

    @property
    def swapped(self):
        return Point(self.y, self.x)


class Base:
    def __init__(self, v):
        self.v = v

    def describe(self):
        return f"Base({self.v})"

    @classmethod
    def make(cls, v):
        return cls(v)

    @staticmethod
    def twice(v):
        return 2 * v


class Derived(Base):
    def __init__(self, v, w=1):
        super().__init__(v)
        self.w = w

    def describe(self):
        return "Derived/" + super().describe()


def methods():
    p = Point(3.0, 4.0)
    d = Derived.make(5)
    return p.norm(), p.swapped, d.describe(), Base.twice(4), d.w, dataclasses.astuple(p)


def args_and_kwargs(a, b=2, *rest, c, d=4, **extra):
    return a, b, rest, c, d, sorted(extra.items())


def calls():
    f = args_and_kwargs
    r1 = f(1, c=3)
    r2 = f(1, 2, 3, 4, c=5, d=6, e=7)
    args, kw = (1, 2, 3), {"c": 9, "z": 0}
    r3 = f(*args, **kw)
    r4 = f(*[10], 20, *(30,), c=1, **{"y": 2})
    return r1, r2, r3, r4


def make_counter(start):
    count = start

    def bump(k=1):
        nonlocal count
        count += k
        return count

    return bump


def closures():
    bump = make_counter(10)
    bump()
    bump(5)
    adders = [lambda x, i=i: x + i for i in range(3)]
    scale = 3
    mul = lambda x: x * scale  # noqa: E731
    return bump(), [a(1) for a in adders], mul(2)


def decorator(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return ("wrapped", fn(*args, **kwargs))
    return wrapper


@decorator
def decorated(x, y=1):
    return x + y


def globals_and_del():
    global COUNTER
    COUNTER += 1
    x = [1, 2, 3]
    del x[0]
    y = 5
    del y
    d = {"a": 1, "b": 2}
    del d["a"]
    return COUNTER > 0, x, d


def fstrings(x, name):
    return f"{name!r}: {x:.3f} {x!s:>8} {{lit}} {name.upper()}"


def unpacking(seq):
    a, b, *rest = seq
    (c, d), e = (1, 2), 3
    first, *_, last = range(10)
    return a, b, rest, c, d, e, first, last


def boolean_logic(a, b):
    x = a and b
    y = a or b
    z = not a
    w = a if b else -1
    chained = 0 < a < 10
    return x, y, z, w, chained, a is None, b is not None, a in (1, 2, 3)


def containers(n):
    xs = []
    for i in range(n):
        xs.append(i * i)
    xs[0] = 100
    xs[1:3] = [7, 8]
    d = {}
    d["k"] = xs[0] + xs[-1]
    d.update(z=1)
    s = set()
    s.add(3)
    xs.sort(reverse=True)
    return xs, d, s, xs.pop(), len(xs)


def star_expressions(a, b):
    merged = [*a, *b]
    both = {**{"x": 1}, **{"y": 2}}
    t = (*a, 0)
    return merged, both, t


def slicing(xs):
    return xs[1:], xs[::-1], xs[1:4:2], xs[-2]


def nested_functions(x):
    def inner(y):
        def innermost(z):
            return x + y + z
        return innermost(y * 2)
    return inner(x + 1)


def chained_exceptions():
    try:
        try:
            raise KeyError("a")
        except KeyError as e:
            raise ValueError("b") from e
    except ValueError as e:
        return type(e.__cause__).__name__, str(e)


def raise_uncaught(x):
    if x > 0:
        helper_raises(x)
    return x


def helper_raises(x):
    y = x * 2
    raise ValueError(f"bad {y}")


def assertions(x):
    try:
        assert x < 0, "x must be negative"
    except AssertionError as e:
        return str(e)
    return "ok"


def imports_inside():
    import json
    from os import path
    return json.dumps([1, 2]), path.join("a", "b")


def string_ops(s):
    parts = s.split(",")
    return "-".join(p.strip().title() for p in parts), s.count(","), s[::-1]


def walrus(xs):
    out = []
    if (n := len(xs)) > 2:
        out.append(n)
    while (k := n - 1) > 0:
        n = k
        out.append(k)
    return out


def mutual_recursion(n):
    return is_even(n), is_odd(n)


def default_mutation(x, acc=None):
    acc = [] if acc is None else acc
    acc.append(x)
    return acc


def class_inside():
    class Local:
        def __init__(self, a):
            self.a = a

        def get(self):
            return self.a * 2
    return Local(21).get()


def try_in_loop(xs):
    total = 0
    for x in xs:
        try:
            total += 10 / x
        except ZeroDivisionError:
            total -= 1
            continue
        finally:
            total += 0.5
    return total


def return_in_finally(x):
    try:
        if x:
            return "try"
    finally:
        x = "changed"
    return x


def nested_with_and_loops(n):
    log = []
    for i in range(n):
        with Resource(log):
            if i == 1:
                continue
            log.append(i)
    return log


def iterators(xs):
    it = iter(xs)
    first = next(it)
    rest = list(it)
    z = list(zip(xs, reversed(xs)))
    e = list(enumerate(xs, start=1))
    m = list(map(lambda v: v + 1, xs))
    f = list(filter(None, xs))
    return first, rest, z, e, m, f, sorted(xs, key=lambda v: -v), max(xs), min(xs)


ALL = [
    (loops, (12,)), (loops, (2,)), (while_else, (5,)), (recursion, (6,)), (mutual_recursion, (7,)),
    (comprehensions, ([1, 2, 3, 4, 5],)), (generators, (4,)), (exceptions, (0,)),
    (exceptions, (2,)), (with_statements, ()), (matching, (0,)), (matching, ([1, 2],)),
    (matching, ({"k": 5},)), (matching, (Point(0, 3),)), (matching, ("abcd",)), (matching, (3.5,)),
    (methods, ()), (calls, ()), (closures, ()), (decorated, (3,)), (globals_and_del, ()),
    (fstrings, (3.14159, "pi")), (unpacking, ([1, 2, 3, 4],)), (boolean_logic, (0, 5)),
    (boolean_logic, (3, None)), (containers, (6,)), (star_expressions, ([1, 2], (3,))),
    (slicing, ([1, 2, 3, 4, 5],)), (nested_functions, (3,)), (chained_exceptions, ()),
    (assertions, (1,)), (imports_inside, ()), (string_ops, ("a, bb ,c",)), (walrus, ([1, 2, 3],)),
    (default_mutation, (1,)), (class_inside, ()), (try_in_loop, ([1, 0, 2],)),
    (return_in_finally, (1,)), (return_in_finally, (0,)), (nested_with_and_loops, (3,)),
    (iterators, ([3, 1, 2],)),
]


def introspection(a, b=2):
    import sys
    c = a + b
    names = sorted(locals())
    frame_names = sorted(sys._getframe().f_locals)
    return names, frame_names, sorted(vars())


class WithCall:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return x * self.k


def callable_objects():
    double = WithCall(2)
    return double(21), list(map(double, [1, 2]))


ALL += [(introspection, (1,)), (callable_objects, ())]

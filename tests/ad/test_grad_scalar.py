"""Gradients of scalar Python code (math, branches, loops, recursion, closures, keyword
arguments, list and dict building) against central finite differences."""
import math

import pytest

from dcgraph import ad


def poly(x):
    return 3.0 * x ** 3 - 2.0 * x ** 2 + x - 7.0


def trig(x, y):
    return math.sin(x) * math.cos(y) + math.tan(x * y) - math.atan2(y, x)


def hyperbolic(x):
    return math.sinh(x) + math.cosh(x) * math.tanh(x) + math.asinh(x) + math.atanh(x / 2)


def inverse_trig(x):
    return math.asin(x) + math.acos(x / 2) + math.atan(x) + math.acosh(1.0 + x * x)


def exp_log(x, y):
    return (math.exp(x) + math.expm1(y) + math.log(x + 2) + math.log(y, 3.0) + math.log2(y)
            + math.log10(x + 1) + math.log1p(x) + math.exp2(y))


def roots_and_powers(x, y):
    return math.sqrt(x) + math.cbrt(y) + math.pow(x, y) + x ** y + pow(y, 2.5) + math.hypot(x, y)


def special_math(x):
    return math.erf(x) + math.erfc(x / 2) + math.gamma(x + 1) + math.lgamma(x + 3)


def misc_math(x, y):
    return (math.fabs(x - 1) + math.copysign(x, -1.0) + math.fmod(x * 7, y)
            + math.degrees(x) + math.radians(y) + math.ldexp(x, 3) + abs(y - 5) + float(x))


def division(x, y):
    return x / y + (x % y) + (x // y) * y - 1.0 / (x * y)


def branches(x, y):
    if x > y:
        z = x * y
    elif x > 0:
        z = x - y
    else:
        z = -x
    return z if z > 1 else z * z


def while_loop(x):
    s, k = x, 0
    while s < 50.0:
        s = s * 1.7 + k
        k += 1
    return s


def nested_loops(x, y):
    acc = 0.0
    for i in range(3):
        for j in range(4):
            if (i + j) % 2:
                acc += x * i - y * j
            else:
                acc -= math.sin(x * y + i)
    return acc


def loop_break(x):
    s = 0.0
    for i in range(100):
        s += x / (i + 1)
        if s > 3 * x:
            break
    return s


def fact_like(x, n):
    if n == 0:
        return 1.0
    return x * fact_like(x - 0.1, n - 1)


def fib_like(x, n):
    if n < 2:
        return x
    return fib_like(x, n - 1) + 0.5 * fib_like(x * 1.1, n - 2)


def helper_kw(a, b=2.0, *, c=3.0):
    return a * b + c * a * a


def kwargs_calls(x, y):
    return helper_kw(x, c=y) + helper_kw(y, b=x) + helper_kw(a=x, b=y, c=x)


def star_helper(*xs, **kw):
    return sum(xs) * kw["k"] + kw.get("m", 1.0)


def star_calls(x, y):
    args = (x, y, x * y)
    return star_helper(*args, k=y, m=x) + star_helper(x, k=2.0)


def closures(x, y):
    scale = y * 2

    def inner(u):
        return u * scale + x

    def outer(v):
        return inner(v) * inner(x)
    return outer(y)


def make_adder(k):
    def add(v):
        return v + k * k
    return add


def closure_factory(x, y):
    f = make_adder(x)
    return f(y) * f(2.0)


def list_building(x, y):
    out = []
    for i in range(5):
        out.append(x * i + y)
    out.insert(1, y * y)
    out.extend([x, y])
    last = out.pop()
    return sum(out) + last * out[-1] + out[0] * out[1]


def list_index_ops(x, y):
    vals = [x, y, x * y, x + y]
    vals.reverse()
    a, b, *rest = vals
    return a * b + sum(rest) + vals[-1] * vals[1:3][0] + max(vals) + min(x, y)


def element_writes(x, y):
    a = [0.0] * 4
    for i in range(4):
        a[i] = x * i + y
    a[2] += x * x
    a[0] *= y
    a[-1] = a[1] * a[2]
    return a[0] + a[1] * a[2] + a[3]


def dict_building(x, y):
    d = {"a": x, "b": y}
    d["c"] = d["a"] * d["b"]
    d["a"] += 1.5 * y
    d.update({"b": x * 3})
    total = 0.0
    for k, v in d.items():
        total += v * len(k)
    return total + d.get("c", 0.0) + sum(d.values())


def tuple_returns(x, y):
    def pair(u, v):
        return u * v, u + v
    p, q = pair(x, y)
    r, s = pair(p, q)
    return r - s * p


def zip_enumerate(x, y):
    xs = [x, y, x * y]
    ws = [0.5, 1.5, 2.5]
    s = 0.0
    for i, (a, w) in enumerate(zip(xs, ws)):
        s += a * w * (i + 1)
    for a in reversed(xs):
        s = s * 0.5 + a
    return s


def sorting(x, y):
    vals = sorted([x * y, x + y, x - y, y])
    vals2 = [y, x, x * 2]
    vals2.sort()
    return vals[0] * 1 + vals[1] * 2 + vals[3] * 3 + vals2[0] * vals2[2]


def nested_structures(p):
    s = 0.0
    for layer in p["layers"]:
        s += layer["w"] * layer["b"][0] - layer["b"][1]
    return s * p["scale"][0]


def int_mixing(x, n):
    total = 0.0
    for i in range(n):
        total += x ** i / math.factorial(i)
    return total + float(round(x)) + (n % 2)


def fsum_prod(x, y):
    vals = [x, y, x * y]
    return math.fsum(vals) + math.prod(vals) + math.dist([x, y], [y, 1.0])


def comprehensions(x, y):
    a = [x * k for k in range(3)]
    b = {k: v * y for k, v in zip("abc", a)}
    c = [[x * i + j for j in range(2)] for i in range(2)]
    return sum(a) + b["c"] * c[1][1]


def walrus_try(x):
    s = 0.0
    for i in range(3):
        try:
            if (y := x * i) > 2.0:
                raise ValueError
            s += y
        except ValueError:
            s -= x
    return s


class Accumulator:
    def __init__(self):
        self.total = 0.0

    def add(self, v):
        self.total = self.total + v
        return self


def objects_and_lambdas(x):
    acc = Accumulator()
    acc.add(x).add(x * x)
    f = lambda u: u * x  # noqa: E731
    return acc.total + f(2.0) + sorted([x, 1.0], key=lambda v: -v)[0]


def math_tuples(x, y):
    frac, whole = math.modf(x * 3)
    m, e = math.frexp(y * 5)
    return frac * whole + m * e + math.remainder(x * 7, y) + math.hypot(x, y, x * y)


def globals_and_constants(x):
    return x * math.pi + math.e ** x + SCALE * x


SCALE = 0.75

CASES = [
    (poly, (1.3,)),
    (trig, (0.4, 0.7)),
    (hyperbolic, (0.3,)),
    (inverse_trig, (0.3,)),
    (exp_log, (0.8, 1.9)),
    (roots_and_powers, (1.4, 2.2)),
    (special_math, (0.7,)),
    (misc_math, (1.9, 2.3)),
    (division, (5.3, 1.7)),
    (branches, (2.0, 1.0)),
    (branches, (0.5, 1.0)),
    (branches, (-0.8, 1.0)),
    (while_loop, (1.3,)),
    (nested_loops, (0.7, 1.3)),
    (loop_break, (0.9,)),
    (fact_like, (1.5, 5)),
    (fib_like, (0.9, 6)),
    (kwargs_calls, (1.2, 0.7)),
    (star_calls, (1.2, 0.7)),
    (closures, (1.1, 0.6)),
    (closure_factory, (1.1, 0.6)),
    (list_building, (1.1, 0.6)),
    (list_index_ops, (1.1, 0.6)),
    (element_writes, (1.1, 0.6)),
    (dict_building, (1.1, 0.6)),
    (tuple_returns, (1.1, 0.6)),
    (zip_enumerate, (1.1, 0.6)),
    (sorting, (1.1, 0.6)),
    (int_mixing, (1.3, 5)),
    (fsum_prod, (1.3, 0.4)),
    (globals_and_constants, (0.4,)),
    (comprehensions, (1.3, 0.7)),
    (math_tuples, (1.3, 0.7)),
    (walrus_try, (1.3,)),
    (objects_and_lambdas, (1.3,)),
]


@pytest.mark.parametrize("f, args", CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(CASES)])
def test_scalar_code_matches_finite_differences(check, f, args):
    report = check(f, *args)
    assert report.errors and report.worst < 1e-6


def test_nested_structure_argument(check):
    p = {"layers": [{"w": 1.5, "b": [0.5, -0.2]}, {"w": -0.7, "b": (2.0, 0.1)}], "scale": [1.3]}
    check(nested_structures, p)
    g = ad.grad(nested_structures)(p)
    assert g["layers"][0]["w"] == pytest.approx(0.5 * 1.3)
    assert isinstance(g["layers"][1]["b"], tuple) and g["layers"][1]["b"][1] == pytest.approx(-1.3)
    assert g["scale"][0] == pytest.approx(1.5 * 0.5 + 0.2 - 0.7 * 2.0 - 0.1)


def test_integer_arguments_carry_no_adjoint():
    g = ad.grad(int_mixing, argnums=(0, 1))(1.3, 5)
    assert g[1] is None
    assert g[0] == pytest.approx(sum(1.3 ** (i - 1) / math.factorial(i - 1) for i in range(1, 5)))


def test_branch_path_is_the_one_taken():
    assert ad.grad(branches)(2.0, 1.0) == pytest.approx(1.0)   # z = x*y > 1: dz/dx = y
    assert ad.grad(branches)(0.5, 1.0) == pytest.approx(2 * (0.5 - 1.0))    # z = x-y <= 1: z*z

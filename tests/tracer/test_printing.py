"""Exact expected printouts of small tapes (the dump format is part of the API)."""
import textwrap

import numpy as np

import dcgraph


def geom(n, beta, rng):
    return n if rng.random() < beta else geom(n + 1, beta, rng)


def running_sum(xs):
    s = 0
    for x in xs:
        s = s + x
    return s


def first_over(xs, limit):
    i = 0
    while i < len(xs):
        if xs[i] > limit:
            break
        i += 1
    return i


def fails(x):
    return 10 // x


def safe(x):
    try:
        return fails(x)
    except ZeroDivisionError:
        return -1


def dump(fn, *args):
    result, tape = dcgraph.track(fn, *args)
    tape.lint()
    return result, str(tape)


def expect(text, **newer):
    """The expected text; ``py312="..."`` gives the text from 3.12 on, where the compiler lays
    out the same code differently (a return duplicated into each branch, a loop test repeated at
    the loop's end), so blocks, phis and node numbers differ."""
    import sys                   # imported here: the functions above keep their line numbers
    if sys.version_info >= (3, 12) and "py312" in newer:
        text = newer["py312"]
    return textwrap.dedent(text).strip("\n")


def test_geometric_with_seeded_generator():
    result, text = dump(geom, 0, 0.3, np.random.default_rng(1))
    assert result == 2
    assert text == expect("""
        @0: Argument n = 0
        @1: Argument beta = 0.3
        @2: Argument rng = Generator(PCG64)
        @3: [L10] @2.random() = 0.5118
        @4: goto §2 since @3 < @1 == False
        @5: [L10] @0 + 1 = 1
        @6: [L10] geom(@5, @1, @2) = 2
            @0: Argument n = 1
            @1: Argument beta = 0.3
            @2: Argument rng = Generator(PCG64)
            @3: [L10] @2.random() = 0.9505
            @4: goto §2 since @3 < @1 == False
            @5: [L10] @0 + 1 = 2
            @6: [L10] geom(@5, @1, @2) = 2
                @0: Argument n = 2
                @1: Argument beta = 0.3
                @2: Argument rng = Generator(PCG64)
                @3: [L10] @2.random() = 0.1442
                @4: goto §1 since @3 < @1 == True
                @5: φ stack[0] = @0 (from §1)
                @6: return @5 = 2
            @7: φ stack[0] = @6 (from §2)
            @8: return @7 = 2
        @7: φ stack[0] = @6 (from §2)
        @8: return @7 = 2
        """, py312="""
        @0: Argument n = 0
        @1: Argument beta = 0.3
        @2: Argument rng = Generator(PCG64)
        @3: [L10] @2.random() = 0.5118
        @4: goto §2 since @3 < @1 == False
        @5: [L10] @0 + 1 = 1
        @6: [L10] geom(@5, @1, @2) = 2
            @0: Argument n = 1
            @1: Argument beta = 0.3
            @2: Argument rng = Generator(PCG64)
            @3: [L10] @2.random() = 0.9505
            @4: goto §2 since @3 < @1 == False
            @5: [L10] @0 + 1 = 2
            @6: [L10] geom(@5, @1, @2) = 2
                @0: Argument n = 2
                @1: Argument beta = 0.3
                @2: Argument rng = Generator(PCG64)
                @3: [L10] @2.random() = 0.1442
                @4: goto §1 since @3 < @1 == True
                @5: return @0 = 2
            @7: return @6 = 2
        @7: return @6 = 2
        """)


def test_loop_with_phi():
    result, text = dump(running_sum, [1.5, 2.0])
    assert result == 3.5
    assert text == expect("""
        @0: Argument xs = [1.5, 2.0]
        @1: [L15] iter(@0) = <list_iterator object>
        @2: φ s = 0 (from §0)
        @3: [L15] x = next_item(@1, 0) = 1.5
        @4: [L16] s = @2 + @3 = 1.5
        @5: φ s = @4 (from §2)
        @6: [L15] x = next_item(@1, 1) = 2.0
        @7: [L16] s = @5 + @6 = 3.5
        @8: φ s = @7 (from §2)
        @9: goto §3 since @1 exhausted
        @10: return @8 = 3.5
        """)


def test_while_with_break():
    result, text = dump(first_over, [1, 5, 9], 4)
    assert result == 1
    assert text == expect("""
        @0: Argument xs = [1, 5, 9]
        @1: Argument limit = 4
        @2: [L22] len(@0) = 3
        @3: goto §1 since 0 < @2 == True
        @4: φ i = 0 (from §0)
        @5: [L23] @0[@4] = 1
        @6: goto §3 since @5 > @1 == False
        @7: [L25] i = @4 += 1 = 1
        @8: [L22] len(@0) = 3
        @9: goto §1 since @7 < @8 == True
        @10: φ i = @7 (from §3)
        @11: [L23] @0[@10] = 5
        @12: goto §2 since @11 > @1 == True
        @13: φ i = @10 (from §2)
        @14: return @13 = 1
        """, py312="""
        @0: Argument xs = [1, 5, 9]
        @1: Argument limit = 4
        @2: [L22] len(@0) = 3
        @3: goto §1 since 0 < @2 == True
        @4: φ i = 0 (from §0)
        @5: [L23] @0[@4] = 1
        @6: goto §3 since @5 > @1 == False
        @7: [L25] i = @4 += 1 = 1
        @8: [L22] len(@0) = 3
        @9: goto §4 since @7 < @8 == True
        @10: φ i = @7 (from §4)
        @11: [L23] @0[@10] = 5
        @12: goto §2 since @11 > @1 == True
        @13: return @10 = 1
        """)


def test_exception_caught_in_caller():
    result, text = dump(safe, 0)
    assert result == -1
    assert text == expect("""
        @0: Argument x = 0
        @1: [L35] fails(@0) raised ZeroDivisionError('integer division or modulo...)
            @0: Argument x = 0
            @1: [L30] raise ZeroDivisionError('integer division or modulo...)
        @2: [L35] Constant exception = ZeroDivisionError('integer division or modulo...)
        @3: [L36] Constant ZeroDivisionError = <class 'ZeroDivisionError'>
        @4: goto §2 since @2 matches @3 == True
        @5: return -1 = -1
        """)

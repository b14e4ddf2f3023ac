"""What the generator test modules share: a call's outcome, warm traced runs checked against it,
and a tape's generator segments."""
import dcgraph
from dcgraph import NestedCall


def outcome(fn, args):
    """``("ok", value)`` or ``("raised", type, message)`` of the plain call ``fn(*args)``."""
    try:
        return ("ok", fn(*args))
    except Exception as exc:
        return ("raised", type(exc), str(exc))


def warm_runs_match(fn, args, runs: int):
    """Track ``fn(*args)`` ``runs`` times, asserting each outcome equals the plain call's, then
    that the plain call is untouched afterwards; returns the last tape, linted. Earlier tapes
    are dropped as soon as they are checked (an event loop's garbage is cyclic: freed young)."""
    expected = outcome(fn, args)
    for k in range(runs):
        result, tape = dcgraph.track(fn, *args)
        assert ("ok", result) == expected
        if k < runs - 1:
            result = tape = None
    tape.lint()
    assert outcome(fn, args) == expected, "instrumented code leaked into a plain call"
    return tape


def segments(tape, name=None, flag=0x20):
    """The segments (nested calls of code whose flags meet ``flag``: generators by default)
    under ``tape``, of the function ``name`` when given."""
    return [n for n in tape.walk() if isinstance(n, NestedCall) and n.child.code is not None
            and n.child.code.co_flags & flag
            and (name is None or n.child.code.co_name == name)]

"""What the generator test modules share: a call's outcome, and a tape's generator segments."""
from dcgraph import NestedCall


def outcome(fn, args):
    """``("ok", value)`` or ``("raised", type, message)`` of the plain call ``fn(*args)``."""
    try:
        return ("ok", fn(*args))
    except Exception as exc:
        return ("raised", type(exc), str(exc))


def segments(tape, name=None):
    """The generator segments (nested calls of generator code) under ``tape``, of the
    generator function ``name`` when given."""
    return [n for n in tape.walk() if isinstance(n, NestedCall) and n.child.code is not None
            and n.child.code.co_flags & 0x20
            and (name is None or n.child.code.co_name == name)]

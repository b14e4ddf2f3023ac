"""User-extensible effect handlers (Pyro poutine style) over the choices of generative functions.

A ``Messenger`` is a context manager that pushes itself on a thread-local stack. Every choice
(``dist @ addr``) and traced call (``gf(args) @ addr``) made while it is active becomes a
``Message`` passed to ``process`` of each messenger, innermost (last entered) first, then to the
base handler of the running GFI operation (``simulate``, ``generate``, ``update``, ...), then to
``postprocess`` of each messenger, outermost first. A messenger may preset ``msg.value`` (with
``msg.constrained`` saying whether it counts in the importance weight, like a constraint),
multiply ``msg.scale`` (the factor on the choice's log density in score and weight), or set
``msg.stop`` so that messengers below it do not see the message. ``msg.address`` is the full
hierarchical address; after the base handler ran, ``msg.value`` and ``msg.logpdf`` are set.
"""
from __future__ import annotations

from .address import as_address
from .choicemap import ChoiceMap
from .runtime import state
from .selection import Selection, all_selection, select

__all__ = ["Messenger", "Message", "condition", "replay", "block", "scale", "record", "dispatch"]

_UNSET = object()


class Message:
    """One choice (``kind == "choice"``, ``fn`` the distribution) or call (``kind == "call"``,
    ``fn`` the generative function, ``args`` its arguments) on its way through the handlers."""

    __slots__ = ("kind", "address", "local", "fn", "args", "value", "constrained", "scale",
                 "stop", "logpdf")

    def __init__(self, kind, address, local, fn, args):
        self.kind, self.address, self.local, self.fn, self.args = kind, address, local, fn, args
        self.value, self.constrained, self.scale, self.stop = _UNSET, False, 1.0, False
        self.logpdf = None

    @property
    def has_value(self) -> bool:
        return self.value is not _UNSET

    def __repr__(self):
        return f"Message({self.kind}, {self.address}, value={self.value!r}, scale={self.scale})"


class Messenger:
    """Base handler: a context manager; override ``process`` and/or ``postprocess``."""

    def __enter__(self):
        state.messengers.append(self)
        return self

    def __exit__(self, *exc):
        stack = state.messengers
        if not stack or stack[-1] is not self:
            raise RuntimeError(f"{type(self).__name__}: handlers must be exited in reverse order")
        stack.pop()

    def process(self, msg: Message) -> None:
        """See the message before the base handler (innermost messenger first)."""

    def postprocess(self, msg: Message) -> None:
        """See the message after the base handler (outermost messenger first)."""


def dispatch(msg: Message, frame):
    """Run ``msg`` through the messengers and the base handler ``frame``; return its value."""
    stack = state.messengers
    seen = []
    for m in reversed(stack):
        seen.append(m)
        m.process(msg)
        if msg.stop:
            break
    if msg.kind == "choice":
        value = frame.choice(msg.local, msg.fn, msg)
    else:
        value = frame.call(msg.local, msg.fn, msg.args, msg)
    msg.value = value
    for m in reversed(seen):
        m.postprocess(msg)
    return value


# -- the built-in messengers -------------------------------------------------------------------
class condition(Messenger):
    """Constrain choices to the values of ``choices`` (a ``ChoiceMap`` or nested dict); they
    count in the importance weight as ``generate``'s constraints do."""

    def __init__(self, choices):
        self.choices = choices if isinstance(choices, ChoiceMap) else ChoiceMap.from_dict(choices)

    def process(self, msg):
        if msg.kind == "choice" and not msg.has_value and self.choices.has_value(msg.address):
            msg.value, msg.constrained = self.choices.get_value(msg.address), True


class replay(Messenger):
    """Reuse the values of ``choices`` (a ``ChoiceMap``, dict or trace) without weighting them."""

    def __init__(self, choices):
        if hasattr(choices, "get_choices"):
            choices = choices.get_choices()
        self.choices = choices if isinstance(choices, ChoiceMap) else ChoiceMap.from_dict(choices)

    def process(self, msg):
        if msg.kind == "choice" and not msg.has_value and self.choices.has_value(msg.address):
            msg.value = self.choices.get_value(msg.address)


class block(Messenger):
    """Hide the selected messages (default: all) from the messengers entered before it."""

    def __init__(self, hide: Selection = all_selection):
        self.hide = hide if isinstance(hide, Selection) else select(*hide)

    def process(self, msg):
        if msg.address in self.hide:
            msg.stop = True


class scale(Messenger):
    """Multiply the log density of the selected choices (default: all) by ``factor``."""

    def __init__(self, factor: float, where: Selection = all_selection):
        self.factor = float(factor)
        self.where = where if isinstance(where, Selection) else select(*where)

    def process(self, msg):
        if msg.kind == "choice" and msg.address in self.where:
            msg.scale *= self.factor


class record(Messenger):
    """Record every choice that passes: ``.choices`` (a ``ChoiceMap`` of full addresses) and
    ``.log`` (the messages, in order)."""

    def __init__(self):
        self.choices = ChoiceMap()
        self.log: list = []

    def postprocess(self, msg):
        self.log.append(msg)
        if msg.kind == "choice":
            self.choices.set_value(as_address(msg.address), msg.value)

"""The running generative function: where ``dist @ addr``, ``gf(args) @ addr`` and ``param``
land, and the errors that name the user's line.

Thread-local state: ``frame`` is the base handler (an ``Execution``) of the innermost running
generative function, ``prefix`` its full address, ``messengers`` the user's handler stack
(``handlers.Messenger``). With no messengers a choice goes straight to the frame.
"""
from __future__ import annotations

import os
import sys
import threading

from .address import Address, as_address

__all__ = ["GenError", "choice", "call", "param", "user_location", "state"]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class GenError(Exception):
    """A generative function did something Gen forbids; the message names address and line."""


class _State(threading.local):
    def __init__(self):
        self.frame = None
        self.prefix = Address()
        self.messengers: list = []


state = _State()


def user_location(skip: int = 1) -> str:
    """``file:line: source`` of the innermost frame outside the dcgraph package."""
    f = sys._getframe(skip)
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE_DIR):
        f = f.f_back
    if f is None:
        return "<unknown location>"
    import linecache
    src = linecache.getline(f.f_code.co_filename, f.f_lineno).strip()
    return f"{f.f_code.co_filename}:{f.f_lineno}: {src}"


def _frame(what: str):
    frame = state.frame
    if frame is None:
        raise GenError(f"{what} outside a generative function (at {user_location(3)}); "
                       f"run it with simulate/generate/... of a @gen function")
    return frame


def choice(dist, address):
    """``dist @ address``: the random choice at ``address`` of the running function."""
    frame = _frame(f"{type(dist).__name__}(...) @ {address!r}")
    addr = as_address(address)
    if state.messengers:
        from .handlers import Message, dispatch
        return dispatch(Message("choice", state.prefix + addr, addr, dist, ()), frame)
    return frame.choice(addr, dist, None)


def call(gen_fn, args: tuple, address):
    """``gen_fn(*args) @ address``: a traced call under the address prefix ``address``."""
    frame = _frame(f"{gen_fn!r}(...) @ {address!r}")
    addr = as_address(address)
    if state.messengers:
        from .handlers import Message, dispatch
        return dispatch(Message("call", state.prefix + addr, addr, gen_fn, args), frame)
    return frame.call(addr, gen_fn, args, None)


def param(name: str):
    """The value of the trainable parameter ``name`` of the running generative function."""
    return _frame(f"param({name!r})").param(name)


class prefixed:
    """Context manager: run a sub-call with the full address prefix extended by ``addr``."""

    __slots__ = ("addr", "saved")

    def __init__(self, addr):
        self.addr = addr

    def __enter__(self):
        self.saved = state.prefix
        state.prefix = self.saved + self.addr

    def __exit__(self, *exc):
        state.prefix = self.saved

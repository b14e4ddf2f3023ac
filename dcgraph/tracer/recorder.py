"""Runtime of a traced run: the event log, frame entry, and the call hook.

Instrumented code appends raw events to one flat list per run (the list itself, kept in a hidden
slot at the bottom of each traced frame's value stack and appended to by ``LIST_APPEND``; in a
summary run the slot holds ``SummaryLog.logged``, called per value: ``instrument.probes.log``; no
extra locals, so ``locals()`` is unchanged). Nodes are built from the log afterwards (``replay``),
which keeps the probes cheap. Events (their types: module ``events``, re-exported here) are: an
``EntryMark`` and the argument values (each apart in listed code, else one tuple:
``CodeInfo.args_apart``) when a traced frame starts, a ``BlockMark`` when a marked block is entered
(a handler's mark is followed by the exception), the callable of each call (logged by the hook or
the site), and the values of probed instructions (see ``instrument.py311``). Traced generators add
a ``MadeMark`` and the frame object when made (``resumable.starter``), and a ``ResumeMark``, the
frame object and the arguments or the value sent in when started or resumed (``enter_generator``,
``resumed``; see ``generators``).

The hook (``Level``) decides, per call, whether to recurse (what it cannot decide from its memo
it asks the run, ``run.Run.decide``): it returns the callable itself (primitive) or
an instrumented copy (traced). The user's call still runs in the user's frame.
"""
from __future__ import annotations

import types

from .copies import _COPIES_BOUND, _copies  # noqa: F401 (re-exported)
from .headroom import with_room
from .inline_calls import NO_SITE_ENTRY, PLAIN_METHODS
from .method_sites import MethodSite, filled
from .events import BlockMark, EntryMark, MadeMark, MARK_TYPES, Missing, ResumeMark  # noqa: F401
from .current_run import Sink, _identity, _state, idle_pair  # noqa: F401

__all__ = ["BlockMark", "EntryMark", "MadeMark", "ResumeMark", "Level", "entry_pair", "Missing"]


_TOO_DEEP = ("first called at the recursion limit (no frame left to decide it): recorded as a "
             "primitive")
_TOO_DEEP_BOUND = "called as a method at the recursion limit: that call recorded as a primitive"
_UNBOUND = (None, None, None)
_FUNCTION, _METHOD = types.FunctionType, types.MethodType

# callables that are always primitive (functions and methods written in C)
_BUILTIN_CALLABLES = frozenset({types.BuiltinFunctionType, types.MethodWrapperType,
                                types.WrapperDescriptorType, types.MethodDescriptorType,
                                types.ClassMethodDescriptorType})


def _no_entry(_key):
    """A level's ``memo_get`` once its run closed."""
    return None


# a level's ``memo_get`` while it has no memo (``run.Run.memo_of``): finds nothing, and is a
# C call the hook may make at the recursion limit (a Python function there would fail)
NO_MEMO_GET = {}.get


# a traced entry's last field when f's code takes no keyword-only parameter: its calls never
# read ``__kwdefaults__``, so the hook skips that attribute (about 30 ns a call)
ANY_KWDEFAULTS = object()


class Level:
    """Decisions for calls made from traced frames at one call depth.

    The hook calls no Python code on its common path (it makes the next level and binds
    methods inline), and a traced frame's prologue takes ``run.pending``, the pair ``(log,
    hook)`` the hook left for the callee (``log``: the run's list, or ``logged`` in a summary
    run), and logs into it (on 3.12+ through ``entry_pair``), so tracing takes no recursion
    depth beyond the hook's frame, which stands where the callee's will and which ``headroom``
    gives back."""

    # Made without ``__init__`` (a class call then its fields: ``new_run`` makes the root's, the
    # hook the next one down). ``memo``: decisions (``run._remember``), None until the first
    # (``memo_get`` then ``NO_MEMO_GET``); ``pair``: ``(log, hook)`` (see ``hook``), ``hook``
    # the one bound method handed to every frame; ``bound``: the last (object, copy, copy
    # bound to it); ``child``: the level of the calls its frames make (itself when no answer
    # depends on the depth; ``run.Run.close`` walks the levels down it); ``sites``: a list
    # of the ``SiteCache``s it filled (``forget_sites``), None until the first.
    __slots__ = ("run", "depth", "child_depth", "memo", "memo_get", "log", "append",
                 "pair", "child", "bound", "sites")

    def hook(self, f, site=None):
        """Log the callable; return it (primitive) or its instrumented copy (traced). ``site``:
        the calling site's ``inline_calls.SiteCache`` (listed code), filled where the answer
        holds for the site's next calls of ``f`` (kept in ``sites`` for ``forget_sites``); or
        a method site's ``method_sites.MethodSite`` not filled yet, with a C method the site
        would have taken itself (filled here, ``method_sites.filled``).

        Its frame stands where the callee's will; its common path makes no C call that 3.11
        counts against the recursion limit (``list.append`` called as a method, ``dict.get``,
        ``type``; functions are memoised under themselves, not ``id``), so a program's deepest
        frame can call through it wherever it could call untraced (``headroom``)."""
        self.log.append(f)
        kind = type(f)
        func = f
        if kind is _FUNCTION:            # first: the traced path most calls take
            entry = self.memo_get(f)
            if type(entry) is tuple:     # traced (``_remember``), memoised under f itself
                if entry[2] is f.__code__ and entry[3] is f.__defaults__ and (
                        entry[4] is ANY_KWDEFAULTS or entry[4] is f.__kwdefaults__):
                    child = self.child
                    if child is self:    # one level for every depth: ``run.pending`` is
                        if site is not None and entry[4] is ANY_KWDEFAULTS and (
                                site.positional is None     # already its pair (nothing
                                or site.positional == entry[2].co_argcount):   # else sets
                            # it); the site takes f's next calls (one that tests no
                            # defaults, f's that bind every positional parameter there)
                            hook = self.pair[1]
                            if site.entry[0] is not hook:   # not listed yet (this level
                                sites = self.sites          # lists a site it fills again
                                if sites is None:           # only after another run's hook
                                    self.sites = [site]     # has filled it in between)
                                else:                       # (``forget_sites`` empties them)
                                    sites.append(site)
                            site.entry = (hook, f, entry[2], entry[3], entry[1])
                        return entry[1]
                    if child is not None:
                        self.run.pending = child.pair   # taken by the copy's prologue
                        return entry[1]
            elif entry is f:
                return f                 # a primitive
        elif kind is _METHOD:            # a new object per call: the memo holds its function
            func = f.__func__
            if type(func) is _FUNCTION:
                entry = self.memo_get(func)
            elif (type(f.__self__), type(func)) in PLAIN_METHODS:
                if type(site) is MethodSite and site.owner is None:
                    try:                 # a method site's first: it takes the next ones
                        filled(site, f)
                    except RecursionError:   # (no room here: a later call fills it)
                        pass
                return f                 # ``rng.random`` (``plain_c_method``): not memoised
            else:
                entry = self.memo_get(id(func))
            if entry is func:
                return f
        elif kind in _BUILTIN_CALLABLES:
            if type(site) is MethodSite and site.owner is None:
                try:                     # (as above)
                    filled(site, f)
                except RecursionError:
                    pass
            return f                     # always primitive; bound ones are new objects per call
        else:
            entry = self.memo_get(id(f))
            if entry is f:
                return f                 # a primitive
        run = self.run
        child = self.child
        if child is None:                # Level(run, depth + 1), spelled out: no deeper frame
            if run.closed:
                return f                 # a generator of this run resumed after it ended
            child = run.level_class()   # (linked last: ``Run.close`` walks the links)
            child.run, child.depth, child.child_depth, child.child = \
                run, self.child_depth, self.child_depth + 1, None
            memo = child.memo = run.shared_memo     # (None: made at its first decision)
            child.memo_get = memo.get if memo is not None else NO_MEMO_GET
            child.append, child.log = self.append, self.log
            child.pair = (child.append if run.summary else child.log, child.hook)
            child.bound, child.sites = _UNBOUND, None
            self.child = child
        run.pending = child.pair         # taken by the callee's prologue if it is traced
        if type(entry) is tuple and entry[0] is func:
            copy = entry[1]
            if entry[2] is func.__code__ and entry[3] is func.__defaults__ and (
                    entry[4] is ANY_KWDEFAULTS or entry[4] is func.__kwdefaults__):
                if func is f:
                    return copy
                obj, bound = f.__self__, self.bound     # inline: no frame above this one
                if bound[0] is obj and bound[1] is copy:
                    return bound[2]      # the last copy bound, to the same object
                try:                     # a call 3.11 counts: with no room for it, this
                    bound = types.MethodType(copy, obj)   # call (the deepest) runs untraced
                except RecursionError:
                    table = run.unsupported     # (None until its first entry; no
                    if table is None:           # call here)
                        table = run.unsupported = {}
                    table[func.__code__] = _TOO_DEEP_BOUND
                    return f
                self.bound = (obj, copy, bound)
                return bound
        try:                             # first call, or f's code or defaults were replaced
            return run.decide(f, self)
        except RecursionError:           # deciding needs frames the program has not got
            pass
        try:                             # decided with the limit raised for it (the call
            return with_room(run.decide, f, self)       # runs under the run's limit)
        except RecursionError:           # no room even for that: this call runs untraced,
            if type(func) is types.FunctionType:    # unmemoised
                table = run.unsupported         # (inline, as above)
                if table is None:
                    table = run.unsupported = {}
                table[func.__code__] = _TOO_DEEP
            return f

    def forget_sites(self) -> None:
        """Empty the site entries this level filled (the run closes or forgets its decisions;
        an entry another run has refilled since is emptied too: that site calls the hook)."""
        sites, self.sites = self.sites, None
        if sites:                       # (a list: a generator's hook in another thread may
            for site in sites:          # still append to it, which the loop then covers)
                site.entry = NO_SITE_ENTRY


class SubstitutingLevel(Level):
    """A level whose context may substitute a callable per call (``Context.substitute``)."""

    __slots__ = ()

    def hook(self, f, site=None):
        decided = Level.hook(self, f)
        replacement = self.run.ctx.substitute(f, self.depth + 1)
        return decided if replacement is None else replacement


def entry_pair() -> tuple:
    """The ``(log, hook)`` pair a traced frame's prologue takes (``run.pending``), read
    through a call on 3.12 and later (``instrument``'s ``ENTRY_CALLS``): there the Python-level
    recursion limit counts Python frames only, and this call's frame, one level above the new
    frame, fails exactly when the program would have no room for that frame untraced (with the
    limit raised by ``headroom``); the error is raised in the new frame. On 3.11 the prologue's
    first log, a call of the list's bound ``append`` (a C call that counts), does the same."""
    return _state.run.pending


def __getattr__(name: str):
    """``Run`` and ``new_run``, which live in ``run`` (it imports this module), by their old
    names here."""
    if name in ("Run", "new_run"):
        from . import run
        return getattr(run, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""``Run``: one ``track`` call's state (its log, context, levels, tables) and the decisions
that take more than the hook's memo: the root's (``root``, or ``took_root`` for a root
``roots`` remembered), a first call's (``decide``), and switching the operator guards on.
``new_run`` makes one with its root level; ``close`` ends it. (Split from ``recorder``, which
keeps the hook, ``Level``, and re-exports ``Run`` and ``new_run``.)
"""
from __future__ import annotations

import collections
import inspect
import types

from .classes import traced_target
from .context import Context as _CONTEXT
from .copies import instrumented_copy
from .current_run import _CLOSED_PAIR
from .inline_calls import NO_SITE_ENTRY, substitution_ended
from .operator_guards import GUARDING, guards_operators, plain_c_method, sees_operators
from .recorder import ANY_KWDEFAULTS, NO_MEMO_GET, Level, SubstitutingLevel, _UNBOUND, \
    _no_entry
from .resumable import release_finished
from .roots import remember as remember_root

__all__ = ["Run", "new_run"]

_DROPPED = collections.deque(maxlen=0)     # a log that keeps nothing
CO_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
_PRIMITIVE = object()   # memo value: the callable runs as it is
_FUNCTION, _METHOD = types.FunctionType, types.MethodType
_HEAPTYPE = 1 << 9      # Py_TPFLAGS_HEAPTYPE: a class made by a class statement (builtin and C
                        # extension types have none: their construction and calls run in C)
# callables that are never a class or an object with a Python ``__call__``
_C_CALLABLES = frozenset({types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                          types.MethodWrapperType, types.WrapperDescriptorType,
                          types.MethodDescriptorType, types.ClassMethodDescriptorType})


def _remember(memo: dict, f, decision) -> None:
    """Memoise by identity (never ``__hash__``/``__eq__``: a proxy equal to the function it
    wraps is a callable of its own): a Python function under itself (its hash and equality
    are its identity), anything else under its ``id`` (the entry keeps ``f`` alive, so its id
    stays unique). A primitive's entry is ``f`` itself (one identity test in the hook), a
    traced function's the tuple ``(f, copy, code, defaults, kwdefaults)``: the copy serves
    while ``f`` keeps that code and those defaults (the copy's own; ``ANY_KWDEFAULTS`` for a
    code without keyword-only parameters; a root ``roots`` remembered has a sixth field, its
    self sites, which the hook ignores)."""
    if decision is _PRIMITIVE:
        memo[f if type(f) is _FUNCTION else id(f)] = f
    else:
        code = f.__code__
        memo[f] = (f, decision, code, decision.__defaults__,
                   decision.__kwdefaults__ if code.co_kwonlyargcount else ANY_KWDEFAULTS)


class Run:
    """One ``track`` call: its log, context and per-depth decisions (made by ``new_run``)."""

    __slots__ = ("ctx", "summary", "shared_memo", "level_class", "log", "root_level",
                 "rooted", "pending", "unsupported", "generators", "live_generators", "closed",
                 "log_end", "constructors", "operators", "dispatch", "guard_token", "frames",
                 "reached", "__weakref__")

    @property
    def levels(self) -> list:
        """The run's levels, the root's first (each level's ``child`` is the next; the last
        has None, or is its own child when no answer depends on the depth); [] once closed."""
        levels, level = [], self.root_level
        while level is not None and level not in levels:
            levels.append(level)
            level = level.child
        return levels

    def close(self) -> None:
        """The run is over: drop the levels, which refer back to the run, so the run is freed
        without the cycle collector. A generator frame of this run resumed later still holds
        its level's hook and ``append``: it decides every call primitive, and the replay
        ignores what it logs past ``log_end``."""
        self.closed = True
        self.log_end = len(self.log)
        if self.level_class is not Level:
            substitution_ended(self)    # call sites may decide C callables inline again
        if self.summary:                # the hook's raw entries summarised; what hooks log
            self.log.settle()           # from now on (a generator resumed later) is dropped
            level = self.root_level
            while level is not None:    # (``levels`` inline: no list made)
                level.log = _DROPPED
                child = level.child
                level = child if child is not level else None
        if self.operators:
            self.operators = False
            GUARDING.remove(self.guard_token)
        rooted = self.rooted
        if rooted is not None and rooted[1][4]:     # the root's self sites (``took_root``)
            for site in rooted[1][4]:
                site.entry = NO_SITE_ENTRY
        level, self.root_level = self.root_level, None     # the levels, down their ``child``
        while level is not None:
            sites = level.sites
            if sites is not None:       # ``Level.forget_sites`` inline (a call less)
                level.sites = None
                for site in sites:
                    site.entry = NO_SITE_ENTRY
            child = level.child
            level.pair = level.child = None
            if level.memo is not None:  # (a level that never decided has no memo)
                level.memo_get = _no_entry
            level.bound = _UNBOUND
            level = child if child is not level else None
        self.pending = _CLOSED_PAIR     # (no frame takes it: a closed run is never current)
        # (the memo and the tables keep the callables they saw alive)
        if self.shared_memo is not None:
            self.shared_memo = None
        if self.constructors is not None or self.dispatch is not None or self.reached:
            self.constructors = self.dispatch = self.reached = None
        if self.generators is not None or self.live_generators is not None:
            live = self.live_generators     # (their pairs hold the levels' hooks; none
            self.generators = self.live_generators = None   # logs now: ``resumable``)
            if live:
                release_finished(live)

    def guard_operators(self) -> None:
        """From now on, calls run the guarded variant of their code (``instrument.guards``)
        and the frames already running take the guarded path at their switched sites, until
        ``close``. The decisions made so far are forgotten: they chose the plain variant."""
        if not self.operators:
            self.operators = True
            self.guard_token = object()
            GUARDING.append(self.guard_token)
            rooted, self.rooted = self.rooted, None     # (its entry is not made, ``memo_of``)
            if rooted is not None:      # the root's self sites (``took_root``)
                for site in rooted[1][4]:
                    site.entry = NO_SITE_ENTRY
            for level in self.levels:
                if level.memo is not None:
                    level.memo.clear()
                level.forget_sites()

    def root(self, target):
        """The instrumented copy ``track`` runs for the root's function ``target`` (``f``,
        or its function when ``f`` is a bound method), or None to run it as it is: it is not
        a Python function, or is a generator or coroutine function (its body would run after
        ``track``), or the context keeps it primitive, or it cannot be instrumented. Where no
        answer depends on the depth, its calls inside the run (a recursion) find it decided.
        The decision is remembered for later runs where it can be (``roots``; ``track`` asks
        ``roots`` first and then calls ``took_root`` instead)."""
        if type(target) is not _FUNCTION or target.__code__.co_flags & CO_RESUMABLE \
                or self.ctx.is_primitive(target, 0):
            return None
        copy = self.instrumented_function(target)
        if copy is None:
            return None
        code = target.__code__
        # ``tail``: the memo entry (``_remember``) less its key (``roots`` keeps no strong
        # reference to ``target``)
        tail = (copy, code, copy.__defaults__, copy.__kwdefaults__
                if code.co_kwonlyargcount else ANY_KWDEFAULTS)
        if not self.operators and not self.summary:
            remember_root(target, self.ctx, tail)
        if not self.ctx.depth_dependent and (not self.summary or _long_lived(target)):
            memo = self.shared_memo             # (``memo_of`` inline: no level but the
            if memo is None:                    # root's exists yet, no call was made)
                memo = self.shared_memo = {}
                root = self.root_level
                root.memo, root.memo_get = memo, memo.get
            memo[target] = (target,) + tail                            # ``_remember``
        return copy

    def took_root(self, target, tail: tuple) -> None:
        """The run's root ``target`` was remembered (``roots.known`` gave ``tail``, the memo
        entry less its key, plus the copy's calls of ``target`` itself): memoise it as
        ``root`` would, and fill those calls' sites as ``Level.hook`` would fill each at its
        first call, so that a recursion's first call skips the hook too (emptied from
        ``rooted`` when the run closes or switches its guards on: the root level's ``sites``
        keeps only those the hook fills)."""
        # memoised as the memo is made (``memo_of``; the entry's sixth field is ignored; a
        # root with no self sites: ``track.traced_call`` stores ``rooted`` itself);
        # ``roots`` knows roots under a plain ``Context`` only: no answer depends on the depth
        self.rooted = (target, tail)
        sites = tail[4]
        if sites:                       # (most roots call themselves nowhere)
            root = self.root_level
            if root.child is root:
                entry = (root.pair[1], target, tail[1], tail[2], tail[0])     # its hook
                for site in sites:      # (no copy of them in ``root.sites``: a list
                    site.entry = entry      # made per run)

    def decide(self, f, level: Level):
        """Decide and memoise per level (a bound method: its function; the hook rebinds it)."""
        if self.closed:
            return f                     # a generator of this run resumed after it ended
        rooted = self.rooted            # (a depth-dependent run's memos never hold it)
        if rooted is not None and rooted[0] is f and level.memo is None \
                and not self.ctx.depth_dependent:
            entry = self.memo_of(level)[f]  # the root, before the memo was made: as the
            if entry[2] is f.__code__ and entry[3] is f.__defaults__ and (   # hook's test
                    entry[4] is ANY_KWDEFAULTS or entry[4] is f.__kwdefaults__):
                return entry[1]
        if type(f) is _METHOD and type(f.__func__) is not _FUNCTION \
                and plain_c_method(f):   # a C object's C method (``rng.random``): decided
            return f                     # once per pair of classes (``PLAIN_METHODS``), and
                                         # never memoised: a memo entry for its function would
                                         # decide it bound to a class with operators as well
        target = f.__func__ if type(f) is types.MethodType else f
        if target is not f and not self.operators and sees_operators(f, self.ctx):
            self.guard_operators()              # a method of an object with operators
        if type(target) is types.FunctionType and not self.ctx.is_primitive(target, level.depth + 1):
            traced = self.instrumented_function(target)
            if traced is not None:
                if not self.summary or _long_lived(target):
                    _remember(self.memo_of(level), target, traced)
                return traced if target is f else types.MethodType(traced, f.__self__)
        elif type(f) not in _C_CALLABLES and (f if isinstance(f, type) else type(f)).__flags__ \
                & _HEAPTYPE:                             # a user class or a callable object
            if not self.operators and sees_operators(f, self.ctx):
                self.guard_operators()
            traced = self.traced_object_call(f, level)
            if traced is not None:
                return traced                            # not memoised: decided per call
        if target is not f and type(target) is not types.FunctionType \
                and traced_target(target, self.constructor_table()) is not None:
            target = f               # a callable object called directly would be traced
        if not self.summary or _long_lived(target):
            _remember(self.memo_of(level), target, _PRIMITIVE)   # a bound method: its function
        return f

    def memo_of(self, level: Level) -> dict:
        """``level``'s memo, made at its first decision (a level that never decides has none,
        and its ``memo_get`` finds nothing): shared by every level when no answer depends on
        the depth (``shared_memo``), with the root's entry (``rooted``) if it has one."""
        memo = level.memo
        if memo is not None:
            return memo
        memo = {}
        if self.ctx.depth_dependent:
            level.memo, level.memo_get = memo, memo.get
            return memo
        if self.rooted is not None:
            target, tail = self.rooted
            memo[target] = (target,) + tail                            # ``_remember``
        self.shared_memo = memo
        level = self.root_level
        while level is not None:        # (``levels`` inline: no list made)
            level.memo, level.memo_get = memo, memo.get
            child = level.child
            level = child if child is not level else None
        return memo

    def reach_table(self) -> dict | None:
        """Objects found clear of operators (``operator_reach``), kept alive so that their ids
        stay theirs, made on first use (most runs never walk an object); None in a summary
        run, which must not keep the program's objects alive."""
        table = self.reached
        if table is None and not self.summary:
            table = self.reached = {}
        return table

    def constructor_table(self) -> dict | None:
        """class -> its constructor (``classes.constructor``), made on first use; None in a
        summary run (constructors made per call, none kept: they hold their classes)."""
        table = self.constructors
        if table is None and not self.summary:
            table = self.constructors = {}
        return table

    def traced_object_call(self, f, level: Level):
        """Trace a user class's construction or a callable object's ``__call__``
        (``classes.traced_target``), or None (primitive)."""
        fn = traced_target(f, self.constructor_table())
        if fn is None or self.ctx.is_primitive(fn, level.depth + 1):
            return None
        traced = self.instrumented_function(fn)
        if traced is None:
            return None
        return traced if isinstance(f, type) else types.MethodType(traced, f)

    def instrumented_function(self, fn: types.FunctionType):
        """A copy of ``fn`` running instrumented code, or None when it cannot be traced. A
        generator stays primitive under a depth-dependent context (its frames run at the depth
        of whatever resumes them, not of the call that made it) and in a summary run (its
        frame is its identity in the log, which a summary log must not keep alive); so do
        coroutines and async generators, for the same reasons."""
        if not self.operators and guards_operators(fn, self.ctx, self.reach_table()):
            self.guard_operators()
        table = self.unsupported        # (made by its first writer)
        if table is None:
            table = self.unsupported = {}
        copy = instrumented_copy(fn, table, self.operators, not self.summary)
        if copy is not None and fn.__code__.co_flags & CO_RESUMABLE and (
                self.ctx.depth_dependent or self.summary):
            return None
        return copy


def new_run(ctx, log: list | None = None) -> Run:
    """A run under ``ctx`` logging into a new list (``log`` None: values kept) or into ``log``
    (a ``summary.SummaryLog``), with its root level made. (A function, not ``Run.__init__``:
    a class call that runs Python ``__init__`` costs about 40 ns more, per ``track``.)"""
    run = Run()
    run.ctx = ctx
    # a ``summary.SummaryLog`` (``summary``: memoise long-lived callables only) is logged
    # to through its ``logged``; the hook appends to ``log`` itself. ``reached``
    # (``reach_table``): None until first used
    run.reached = None
    if log is None:
        run.summary = False
        run.log = log = []
        append = log.append
    else:
        run.summary = True
        run.log, append = log, log.logged
    # (a plain ``Context`` substitutes nothing: no call asks it)
    kind = run.level_class = Level if type(ctx) is _CONTEXT or not ctx.substitutes() \
        else SubstitutingLevel
    root = run.root_level = kind()  # the root's level, always needed
    root.run, root.depth, root.child_depth = run, 0, 1
    # one level for every depth (no answer depends on it, nothing substituted), else a
    # level per depth, made by the hook (``Level.child``); the memo (``shared_memo`` when
    # no answer depends on the depth) is made at the first decision (``Run.memo_of``)
    root.child = root if kind is Level and not ctx.depth_dependent else None
    root.memo, root.memo_get, root.log, root.append = None, NO_MEMO_GET, log, append
    # the root frame's (log, hook): the list (listed code, ``probes.log``), or ``logged``;
    # ``hook`` the one bound method handed to every frame of the level
    root.pair = run.pending = (append if run.summary else log, root.hook)
    root.bound, root.sites = _UNBOUND, None
    # made on first use (None until then): ``unsupported`` (by its first writer), code ->
    # why it was not instrumented; ``generators``, generator frame (by identity: no ``id``
    # call, which 3.11 counts, ``headroom``) -> the (log, hook) pair of its level and the
    # generator; ``live_generators``, frame -> its generator, started here and logging;
    # ``dispatch``, ``operators``' decisions; ``constructors`` (``constructor_table``);
    # ``shared_memo``. ``rooted``: the root's ``(target, tail)`` for the memo. ``log_end``:
    # len(log) at close (a generator resumed later logs past it). ``operators``: guards on.
    run.unsupported = run.generators = run.live_generators = run.dispatch = \
        run.constructors = run.shared_memo = run.rooted = run.log_end = None
    run.closed = run.operators = False
    return run


def _long_lived(f) -> bool:
    from .summary import long_lived
    return long_lived(f)

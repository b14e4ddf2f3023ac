"""The inserted probe sequences: each a list of instructions, stack-neutral, placed by
``rewrite`` between complete instructions. ``HIDDEN`` values lie at the bottom of the value
stack (the run's hook and ``list.append``, pushed by ``prologue``), reached with ``COPY``.
"""
from __future__ import annotations

import types
from typing import TYPE_CHECKING

from bytecode import Instr, Label

from ..recorder import _state, entry_pair
from ..resumable import enter_generator, resumed
from ..delegation import delegated
from ..inline_calls import SITE_KINDS, SITE_OWNERS, SITE_PRIMITIVES, SiteCache
from ..current_run import ENTRY_COUNT
from ..events import CALL_MARK
from ..counted_loops import listed_items, logged_items
from .versions import opcode_table

if TYPE_CHECKING:
    from .analysis import Structure
    from .rewrite import CodeInfo

ops = opcode_table()     # the running interpreter's opcode tables

__all__ = ["HIDDEN", "after", "counted_iteration", "delegation", "dropped_slots", "hook_site",
           "landing", "log", "method_site", "prologue", "push_callable", "resume"]

HIDDEN = 2          # stack slots under the frame's own values: hook, and the log's list
                    # (or ``append``: see ``log``)


def log(depth: int, load: list, loc, *, listed: bool) -> list:
    """Log <the value built by ``load``> at original stack depth ``depth``. ``load`` is written
    for two slots pushed above the frame's values (the call layout), its ``COPY``s reaching
    below them. In listed code (``listed``: ``CodeInfo.listed``, a run that keeps values) the
    hidden slot is the run's list, appended to by ``LIST_APPEND``: no call (about 15 ns less a
    value); else it is a callable (``SummaryLog.logged``), called with the value."""
    if listed:
        seq = [Instr("COPY", ins.arg - 2, location=ins.location) if ins.name == "COPY" else ins
               for ins in load]
        return seq + [Instr("LIST_APPEND", depth + 1, location=loc)]
    if ops.NULL_FIRST:
        seq = [Instr("PUSH_NULL", location=loc), Instr("COPY", depth + HIDDEN, location=loc)]
    else:
        seq = [Instr("COPY", depth + 1, location=loc), Instr("PUSH_NULL", location=loc)]
    seq += load
    seq += ops.call_instrs(1, loc) + [Instr("POP_TOP", location=loc)]
    return seq


def hook_site(depth: int, below: int, loc, expected=None, method=None,
              python_first: bool = False, cache: SiteCache | None = None, *,
              listed: bool) -> list:
    """Replace the callable ``below`` slots under the top by hook(callable). A callable whose
    type is in ``inline_calls.INLINE_PRIMITIVES`` (C code the hook would return unchanged), or
    a bound method whose object's class is in ``inline_calls.INLINE_OWNERS`` and function's
    class in ``inline_calls.INLINE_KINDS``, is instead
    logged with ``append`` and kept, without a Python call. ``expected``: the C
    callable the site's callee load gave when instrumented (``CodeInfo.expected``); when the
    callable *is* it and ``INLINE_PRIMITIVES`` is non-empty (no substituting run active), the
    site logs nothing (the replay knows the callable); otherwise it logs ``CALL_MARK`` first,
    then decides as any site. A Python function the site's ``SiteCache`` holds for the
    frame's hook is taken by the site as well (``_cached_call``). (The sets are loaded as
    constants: ``inline_calls.SiteConst`` stands for each until ``rewrite`` puts it in place.)

    Layout (every version): no jump target directly follows the hook's call (3.12.1's
    ``sys.settrace`` reports a line event at a jump target reached by falling through from a
    call of Python code; ``py312``), so the slow path jumps over the inline one.

    ``method``: the ``method_sites.MethodSite`` of a method site's deciding path
    (``method_site``): while its ``owner`` is None, a callable it would take inline goes to
    ``hook(callable, method)`` instead, which fills it.
    ``python_first``: the site's callee load gave a Python function when instrumented
    (``CodeInfo.python_callees``): the site tests its ``SiteCache`` at once, and else calls
    the hook (no C callable is taken inline there; the hook returns one as it is).
    ``cache``: the site's ``SiteCache`` when made by its owner (``CodeInfo.site_caches``),
    else a new one. ``listed``: the code's ``CodeInfo.listed`` (see ``log``)."""
    fast, join, done = Label(), Label(), Label()
    seq = []
    if python_first:
        swap = [Instr("SWAP", below + 1, location=loc)] if below else []
        return [*swap, *_cached_call(depth, loc, join, cache, listed=listed),
                Instr("JUMP_FORWARD", join, location=loc),
                join, *swap]
    if expected is not None:            # [callable, <below>] tested where it lies
        other = Label()
        seq += [Instr("COPY", below + 1, location=loc), Instr("LOAD_CONST", expected, location=loc),
                Instr("IS_OP", 0, location=loc), Instr(ops.GUARD_JUMPS["false"], other, location=loc),
                Instr("LOAD_CONST", SITE_PRIMITIVES, location=loc),
                *[Instr(name, location=loc) for name in ops.GUARD_SWITCH_TEST],
                Instr(ops.GUARD_JUMPS["true"], done, location=loc), other,
                *log(depth, [Instr("LOAD_CONST", CALL_MARK, location=loc)], loc, listed=listed)]
    if below:
        seq.append(Instr("SWAP", below + 1, location=loc))
    known, hook, fill = Label(), Label(), Label()
    seq += [*push_callable(type, loc), Instr("COPY", 3, location=loc), *ops.call_instrs(1, loc),
            Instr("COPY", 1, location=loc), Instr("LOAD_CONST", SITE_PRIMITIVES, location=loc),
            Instr("CONTAINS_OP", 0, location=loc), Instr(ops.GUARD_JUMPS["true"], known, location=loc),
            Instr("LOAD_CONST", types.MethodType, location=loc), Instr("IS_OP", 0, location=loc),
            Instr(ops.GUARD_JUMPS["false"], hook, location=loc),
            *_method_class(loc, "__self__"), Instr("LOAD_CONST", SITE_OWNERS, location=loc),
            Instr("CONTAINS_OP", 0, location=loc), Instr(ops.GUARD_JUMPS["false"], hook, location=loc),
            *_method_class(loc, "__func__"), Instr("LOAD_CONST", SITE_KINDS, location=loc),
            Instr("CONTAINS_OP", 0, location=loc), Instr(ops.GUARD_JUMPS["true"], fast, location=loc),
            hook, *_cached_call(depth, loc, join, cache, listed=listed),
            Instr("JUMP_FORWARD", join, location=loc),
            known, Instr("POP_TOP", location=loc),      # the callable's type
            fast, *_unfilled(method, loc, fill),
            *log(depth, [Instr("COPY", 3, location=loc)], loc, listed=listed),
            *_fill(method, depth, loc, fill, join), join]
    if below:
        seq.append(Instr("SWAP", below + 1, location=loc))
    return seq + [done]


def _fill(site, depth: int, loc, fill: Label, join: Label) -> list:
    """After the inline path (which jumps to ``join`` over it), at ``fill`` (a method site's
    first callable taken inline, on top): call ``hook(callable, site)``, which logs it,
    returns it and fills ``site`` (in the hook, which has the room: ``Level.hook``), then go
    to ``join``. Nothing without a site."""
    if site is None:
        return []
    return [Instr("JUMP_FORWARD", join, location=loc), fill,
            *_call_hook(depth, loc, [Instr("LOAD_CONST", site, location=loc)]),
            Instr("JUMP_FORWARD", join, location=loc)]


def _unfilled(site, loc, fill: Label) -> list:
    """To ``fill`` while ``site.owner`` is None (nothing without a site)."""
    if site is None:
        return []
    return [Instr("LOAD_CONST", site, location=loc),
            Instr("LOAD_ATTR", ops.attr_arg("owner"), location=loc),
            Instr("LOAD_CONST", None, location=loc), Instr("IS_OP", 0, location=loc),
            Instr(ops.GUARD_JUMPS["true"], fill, location=loc)]


def method_site(site, depth: int, depth_call: int, args: list, loc) -> list:
    """A 3.11 ``LOAD_METHOD`` (``depth`` values, the object on top) and the plain loads of
    its call's ``args``, up to the call's ``PRECALL`` (``depth_call`` values before it; the
    caller emits it): while ``type(obj) is site.owner`` and no substituting run is active, the
    plain ``LOAD_METHOD`` and the loads, logging nothing (``method_sites``); else a
    ``CALL_MARK`` (first: the attribute may raise), the object's attribute (a bound method,
    NULL below it), the loads and the deciding sequence of ``hook_site``, which fills
    ``site``. (Listed code only: ``rewrite._method_sites``.)"""
    slow, call = Label(), Label()
    load = Instr("LOAD_METHOD", site.name, location=loc)
    seq = [*push_callable(type, loc), Instr("COPY", 3, location=loc), *ops.call_instrs(1, loc),
           Instr("LOAD_CONST", site, location=loc),
           Instr("LOAD_ATTR", ops.attr_arg("owner"), location=loc),
           Instr("IS_OP", 0, location=loc), Instr(ops.GUARD_JUMPS["false"], slow, location=loc),
           Instr("LOAD_CONST", SITE_PRIMITIVES, location=loc),
           *[Instr(name, location=loc) for name in ops.GUARD_SWITCH_TEST],
           Instr(ops.GUARD_JUMPS["false"], slow, location=loc),
           load, *[_copy_of(ins) for ins in args], Instr("JUMP_FORWARD", call, location=loc),
           slow, *log(depth, [Instr("LOAD_CONST", CALL_MARK, location=loc)], loc, listed=True),
           *ops.rewrite(load, loc), *args,
           *hook_site(depth_call, len(args), loc, None, site, listed=True),
           call]
    return seq


def _copy_of(ins: Instr) -> Instr:
    return Instr(ins.name, ins.arg, location=ins.location)


def _method_class(loc, name: str) -> list:
    """Push ``type(m.<name>)`` for the bound method ``m`` on top."""
    return [*push_callable(type, loc), Instr("COPY", 3, location=loc),
            Instr("LOAD_ATTR", ops.attr_arg(name), location=loc), *ops.call_instrs(1, loc)]


def counted_iteration(depth: int, loc, *, listed: bool) -> list:
    """``GET_ITER`` of a counted loop (``counted_loops``; ``depth`` values, the iterable on
    top) and its probe: when the iterable is exactly a ``range``, the plain ``GET_ITER`` and
    its probe; else the iterator is logged and replaced by ``logged_items(iterator, append)``.
    Stack effect: ``GET_ITER``'s."""
    private, done = Label(), Label()
    iterate = [Instr("GET_ITER", location=loc) for _ in range(2)]
    return [*push_callable(type, loc), Instr("COPY", 3, location=loc), *ops.call_instrs(1, loc),
            Instr("LOAD_CONST", range, location=loc), Instr("IS_OP", 0, location=loc),
            Instr(ops.GUARD_JUMPS["true"], private, location=loc),
            iterate[0], *log(depth, [Instr("COPY", 3, location=loc)], loc, listed=listed),
            *push_callable(listed_items if listed else logged_items, loc),
            Instr("COPY", 3, location=loc),
            Instr("COPY", depth + 4, location=loc), *ops.call_instrs(2, loc),    # append
            Instr("SWAP", 2, location=loc), Instr("POP_TOP", location=loc),
            Instr("JUMP_FORWARD", done, location=loc),
            private, iterate[1], *log(depth, [Instr("COPY", 3, location=loc)], loc, listed=listed),
            done]


def _cached_call(depth: int, loc, join: Label, cache: SiteCache | None = None, *,
                 listed: bool) -> list:
    """Replace the callable ``f`` on top by hook(f), in listed code first trying the site's
    ``inline_calls.SiteCache``: when its entry is ``(hook, f, f.__code__, f.__defaults__,
    copy)`` for the frame's hook, log ``f`` and take ``copy`` (what the hook would do, without
    its frame) and go to ``join``; else call ``hook(f, cache)``, which may fill it. ``cache``:
    the site's cache (None: a new one); one with ``positional`` set skips the defaults test
    (``SiteCache``)."""
    if not listed:
        return _call_hook(depth, loc)
    miss = Label()
    if cache is None:
        cache = SiteCache()

    def field(k: int) -> list:       # [.., f, entry] -> [.., f, entry, entry[k]]
        return [Instr("COPY", 1, location=loc), Instr("LOAD_CONST", k, location=loc),
                Instr("BINARY_SUBSCR", location=loc)]

    def same(load: list) -> list:    # ... entry[k] is <load>, else to ``miss``
        return [*load, Instr("IS_OP", 0, location=loc),
                Instr(ops.GUARD_JUMPS["false"], miss, location=loc)]

    def attr(name: str) -> list:     # f.<name> (f under entry and entry[k])
        return [Instr("COPY", 3, location=loc), Instr("LOAD_ATTR", ops.attr_arg(name), location=loc)]

    seq = [Instr("LOAD_CONST", cache, location=loc),
           Instr("LOAD_ATTR", ops.attr_arg("entry"), location=loc),
           *field(1), *same([Instr("COPY", 3, location=loc)]),
           *field(0), *same([Instr("COPY", depth + 4, location=loc)]),      # the frame's hook
           *field(2), *same(attr("__code__")),
           *([] if cache.positional is not None else [*field(3), *same(attr("__defaults__"))]),
           Instr("LOAD_CONST", 4, location=loc), Instr("BINARY_SUBSCR", location=loc),
           Instr("SWAP", 2, location=loc), Instr("LIST_APPEND", depth + 1, location=loc),
           Instr("JUMP_FORWARD", join, location=loc),
           miss, Instr("POP_TOP", location=loc)]
    return seq + _call_hook(depth, loc, [Instr("LOAD_CONST", cache, location=loc)])


def _call_hook(depth: int, loc, extra: list = ()) -> list:
    """Replace the callable on top by hook(callable, <extra>) (``extra``: loads of further
    arguments)."""
    if ops.NULL_FIRST:        # [NULL, hook, callable]
        seq = [Instr("PUSH_NULL", location=loc), Instr("SWAP", 2, location=loc),
               Instr("COPY", depth + HIDDEN + 1, location=loc), Instr("SWAP", 2, location=loc)]
    else:                     # [hook, NULL, callable]
        seq = [Instr("COPY", depth + HIDDEN, location=loc), Instr("SWAP", 2, location=loc),
               Instr("PUSH_NULL", location=loc), Instr("SWAP", 2, location=loc)]
    return seq + list(extra) + ops.call_instrs(1 + len(extra), loc)


def after(info: CodeInfo, s: Structure, i: int, ins: Instr, kind: str) -> list:
    pops, pushes = ops.stack_io(ins, jump=False)
    depth = s.depth_before[i] - pops + pushes
    loc = ins.location
    if kind in ("value", "call"):
        return log(depth, [Instr("COPY", 3 + ops.value_depth(ins), location=loc)], loc,
                   listed=info.listed)
    if kind == "multi":
        count = ops.multi_count(ins)
        load = [Instr("COPY", 3 + 2 * k, location=loc) for k in range(count)]
        return log(depth, load + [Instr("BUILD_TUPLE", count, location=loc)], loc,
                   listed=info.listed)
    if kind == "cell":
        load = [Instr(ops.LOAD_CLOSURE, ins.arg, location=loc), Instr("COPY", 4, location=loc),
                Instr("BUILD_TUPLE", 2, location=loc)]
        return log(depth, load, loc, listed=info.listed)
    if kind == "store":
        if ins.name == "LOAD_CLOSURE":     # the cell is on the stack: log a copy of it
            return log(depth, [Instr("COPY", 3, location=loc)], loc, listed=info.listed)
        return log(depth, [Instr(ops.LOAD_CLOSURE, ins.arg, location=loc)], loc, listed=info.listed)
    if kind == "done":
        return log(depth, [Instr("LOAD_CONST", None, location=loc)], loc, listed=info.listed)
    raise AssertionError(kind)


def resume(depth: int, info: CodeInfo, loc) -> list:
    """After a generator's RESUME (``depth`` >= 1: the value sent in is on top): call
    ``resumable.resumed(mark, frame, sent, hook)`` and put the (append, hook) it returns into
    the hidden slots (the frame object lies under them). Stack-neutral."""
    seq = [*push_callable(resumed, loc), Instr("LOAD_CONST", info.resume_mark, location=loc),
           Instr("COPY", depth + 6, location=loc),      # the frame object
           Instr("COPY", 5, location=loc),              # the value sent in
           Instr("COPY", depth + 7, location=loc),      # the hook the frame holds
           *ops.call_instrs(4, loc), Instr("UNPACK_SEQUENCE", 2, location=loc),
           # [.., values, hook', append'] -> swap each into its hidden slot
           Instr("SWAP", depth + 3, location=loc), Instr("POP_TOP", location=loc),
           Instr("SWAP", depth + 3, location=loc), Instr("POP_TOP", location=loc)]
    return seq


def dropped_slots(hidden: int, values: int, loc) -> list:
    """Before a return taking ``values`` (0 or 1) off the stack: drop the ``hidden`` slots
    under it. A finished frame whose frame object lives on (a traceback's, a later frame's
    ``f_back``) then holds neither the hook nor the log, which would make a cycle with the run
    only the collector frees. (Not in a generator's code, where 3.12's bytecode finds a
    negative stack size for it: the run clears its finished generator frames as it ends,
    ``resumable.release_finished``.)"""
    return [Instr("SWAP", hidden + 1, location=loc)] * values + \
        [Instr("POP_TOP", location=loc) for _ in range(hidden)]


def push_callable(fn, loc) -> list:
    """Push ``fn`` and the NULL beside it, in the version's call layout (two slots)."""
    load = Instr("LOAD_CONST", fn, location=loc)
    null = Instr("PUSH_NULL", location=loc)
    return [null, load] if ops.NULL_FIRST else [load, null]


def delegation(depth: int, loc) -> list:
    """After GET_YIELD_FROM_ITER or GET_AWAITABLE (the iterator on top, ``depth`` values in all): replace it by
    ``delegation.delegated(iterator, frame, hook)``. Stack-neutral."""
    return [*push_callable(delegated, loc), Instr("COPY", 3, location=loc),    # the iterator
            Instr("COPY", depth + 6, location=loc),      # the frame object
            Instr("COPY", depth + 6, location=loc),      # the hook the frame holds
            *ops.call_instrs(3, loc), Instr("SWAP", 2, location=loc),
            Instr("POP_TOP", location=loc)]


def landing(info: CodeInfo, depth: int, loc) -> list:
    """At the target of a ``yield from``'s SEND (the returned value on top): log the land
    mark, the frame object and the value."""
    listed = info.listed
    return (log(depth, [Instr("LOAD_CONST", info.land_mark, location=loc)], loc, listed=listed)
            + log(depth, [Instr("COPY", depth + 5, location=loc)], loc, listed=listed)
            + log(depth, [Instr("COPY", 3, location=loc)], loc, listed=listed))


def prologue(info: CodeInfo, loc) -> list:
    """Push the run's hook and ``append`` (``_state.run.pending``, left by the hook that let
    this call in) into the hidden slots, then log the entry mark and the arguments (in listed
    code each value apart, ``CodeInfo.args_apart``; else one tuple of them). Where the
    version's ``ENTRY_CALLS`` says so (3.12+) the pair comes from ``recorder.entry_pair``,
    whose frame fails where the program has no room for this frame (see ``headroom``).
    A generator's frame instead calls ``resumable.enter_generator`` (it runs later, at whatever
    depth resumes it), which also pushes the frame object under the hidden slots."""
    code = info.code
    from bytecode import CellVar
    load = []
    for p in info.params:
        if p in code.co_cellvars:
            load.append(Instr("LOAD_DEREF", CellVar(p), location=loc))
        else:
            load.append(Instr("LOAD_FAST", p, location=loc))
    for p in info.cell_params:
        load.append(Instr(ops.LOAD_CLOSURE, CellVar(p), location=loc))
    load.append(Instr("BUILD_TUPLE", len(info.params) + len(info.cell_params), location=loc))
    if info.generator:
        seq = [Instr("LOAD_CONST", enter_generator, location=loc)]
        seq.insert(0 if ops.NULL_FIRST else 1, Instr("PUSH_NULL", location=loc))
        return seq + [Instr("LOAD_CONST", info.resume_mark, location=loc), *load,
                      *ops.call_instrs(2, loc), Instr("UNPACK_SEQUENCE", info.hidden, location=loc)]
    if ops.ENTRY_CALLS:       # a frame one level up, as deep as this frame's first call
        seq = [*push_callable(entry_pair, loc), *ops.call_instrs(0, loc),
               Instr("UNPACK_SEQUENCE", 2, location=loc)]
    else:
        seq = [Instr("LOAD_CONST", _state, location=loc),
               Instr("LOAD_ATTR", ops.attr_arg("run"), location=loc),
               Instr("LOAD_ATTR", ops.attr_arg("pending"), location=loc),
               Instr("UNPACK_SEQUENCE", 2, location=loc)]
    mark = [Instr("LOAD_CONST", info.entry_mark, location=loc)]
    listed = info.listed
    if listed and not ops.ENTRY_CALLS:
        # 3.11: before the first log, a C call that counts against the recursion limit (see
        # ``recorder.entry_pair``): ``current_run.ENTRY_COUNT(mark)``, a constant builtin
        # method (3.11 counts such calls), so a frame with no room fails there, having
        # logged nothing; no bound ``append`` made per frame
        assert ops.NULL_FIRST                # (3.11's layout: [NULL, callable, argument])
        seq += [*push_callable(ENTRY_COUNT, loc), *mark, *ops.call_instrs(1, loc),
                Instr("POP_TOP", location=loc)]
    seq += log(0, mark, loc, listed=listed)
    if listed:              # each value apart (``CodeInfo.args_apart``): no tuple per frame
        for ins in load[:-1]:
            seq += log(0, [ins], loc, listed=True)
        return seq
    return seq + log(0, load, loc, listed=False)

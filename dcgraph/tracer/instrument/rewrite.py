"""Probe insertion: an instrumented copy of a code object, and what the replay needs to read
its event log (``CodeInfo``). Instrumented code is cached per code object (thread-safe) and only
ever runs through the hook of an active ``track``.

Every inserted sequence is stack-neutral and sits between complete instructions, never between
``KW_NAMES``/``PRECALL``/``CALL`` nor between a compare and the jump it feeds. Two hidden values
at the bottom of the value stack hold the run's hook and ``list.append`` (pushed by the
prologue), so probes reach them with ``COPY`` and no locals are added.
"""
from __future__ import annotations

import threading
import types

from bytecode import Bytecode, Instr, TryBegin
from bytecode.instr import InstrLocation

from ..recorder import BlockMark, EntryMark, MadeMark, ResumeMark
from ..delegation import LandMark
from ..counted_loops import counted_loops
from ..inline_calls import SiteCache, always_primitive, placed_sets
from ...tape.nodes import Constant, Location
from .analysis import Structure, Unsupported, analyse
from .guards import guarded_site, static_callees, switch_sites
from .probes import HIDDEN as _HIDDEN
from .probes import after as _probe_after, delegation as _delegated, hook_site as _hook
from .probes import counted_iteration as _counted, dropped_slots as _dropped
from .probes import method_site as _method_site
from ..method_sites import MethodSite
from .probes import landing as _landed, log as _log, prologue as _prologue, resume as _resumed
from .versions import opcode_table, semantics

ops = opcode_table()     # the running interpreter's opcode tables

__all__ = ["CodeInfo", "instrument", "Op"]


class Op:
    """A plain copy of one original instruction for the replay (bytecode's ``Instr`` reads
    its fields through properties, too slow for the replay's inner loop)."""

    __slots__ = ("name", "arg", "handler", "loc")

    def __init__(self, ins: Instr, handler, loc: Location):
        self.name, self.arg, self.handler, self.loc = ins.name, ins.arg, handler, loc

    def __repr__(self):
        return f"{self.name} {self.arg!r}"

# the prologue has no line: a user's ``sys.settrace`` sees no line event for it (a line would
# be the ``def`` line, which the untraced frame never reports)
_NO_LINE = InstrLocation(None, None, None, None)
_lock = threading.Lock()
_cache: dict = {}     # id(code) -> CodeInfo, oldest first
_CACHE_BOUND = 4096   # entries kept (an evicted code object is analysed again if it recurs)


class CodeInfo:
    """An instrumented code object and the static facts the replay reads."""

    def __init__(self, code: types.CodeType):
        self.code = code
        self.new_code: types.CodeType | None = None
        self.error: str | None = None
        self.transient = False           # the error may not recur (RecursionError): not cached
        self.structure: Structure | None = None
        self.probe: list = []            # per instruction: probe kind or None
        self.folded: set = set()         # tests folded into the following branch
        self.callee_producer: set = set()  # loads whose value is only a call's callable
        self.owner_producer: set = set()   # globals whose value only serves such a load
        self.entry_mark = EntryMark(self)
        self.marks: list = []            # per block: BlockMark or None
        self.literals: dict = {}         # instruction index -> shared literal Constant
        self.offsets: list = []
        self.params: tuple = ()
        self.cell_params: tuple = ()
        self.ops: list[Op] = []          # the replay's view of the original instructions
        self.replay_blocks = None        # the replay's steps per block (``frame_replay``)
        self.generator = bool(code.co_flags & ops.TRACED_GENERATOR_FLAGS)
        self.hidden = _HIDDEN + self.generator   # a generator's frame object lies under them
        self.resume_mark = ResumeMark(self) if self.generator else None
        self.made_mark = MadeMark(self) if self.generator else None
        self.listed = True               # the log slot holds a list (``instrument``)
        # the entry logs each argument value apart, not one tuple of them (listed code, not a
        # generator: ``probes.prologue``; 10-15 ns a frame, no tuple kept per frame)
        self.args_apart = False
        self.land_mark = LandMark(self) if self.generator else None
        self.guarded = False             # every operator site guarded (``instrument.guards``)
        self.switched: set = set()       # else: the sites that test the switch first
        # call index -> the C callable the site expects: when it is the callable (and no
        # substituting run is active) the site logs nothing, else a ``CallMark`` first
        self.expected: dict = {}
        # call index -> the method name of a method site (``method_sites``): when the next
        # event is not a ``CALL_MARK`` the site logged nothing, its callable was
        # ``getattr(obj, name)``
        self.method_sites: dict = {}
        # calls whose callee load gave a Python function when instrumented: their sites test
        # the ``SiteCache`` first (``probes.hook_site``)
        self.python_callees: frozenset = frozenset()
        # call index -> the ``SiteCache`` of a site whose callee load gave the function of
        # this very code (a recursion; listed code): a run whose root is remembered
        # (``roots``) fills them at its start (``Run.took_root``), so even its first
        # recursive call skips the hook
        self.self_sites: dict = {}
        # call index -> the ``SiteCache`` of every such site (listed code; ``positional`` set
        # where the call binds every positional parameter of the function it saw)
        self.site_caches: dict = {}
        self.counted_loops: frozenset = frozenset()   # FOR_ITER indices (``counted_loops``)

    def __repr__(self):
        return f"<CodeInfo {self.code.co_qualname}{' (unsupported)' if self.error else ''}>"


def instrument(code: types.CodeType, guarded: bool = False, scope: dict | None = None,
               listed: bool = True) -> CodeInfo:
    """The cached CodeInfo of ``code``; ``info.error`` says why it could not be instrumented.
    Operator instructions the version's table lists (``GUARDED_OPERATORS``) are guarded for
    operands of the user's classes (``instrument.guards``): all of them (``guarded``), or those
    a call that may switch guards on precedes, judged with the globals ``scope`` (None: any
    call may). ``listed``: the frame's hidden log slot holds the run's list, appended to by
    ``LIST_APPEND`` (a run that keeps values); else a callable, called per value (a summary
    run's ``SummaryLog.logged``; ``probes.log``).

    Cached by identity: code objects compare equal across files (equality ignores
    ``co_filename``), and an equal code object must still keep its own file and lines."""
    key = (id(code), True, listed) if guarded else (id(code), False, id(scope), listed)
    info = _cache.get(key)
    if info is not None and info.code is code:
        return info
    with _lock:
        info = _cache.get(key)
        if info is None or info.code is not code:
            info = _build(code, guarded, scope, listed)
            if info.transient:
                return info
            while len(_cache) >= _CACHE_BOUND:
                del _cache[next(iter(_cache))]      # the oldest entry
            _cache[key] = info          # the entry keeps ``code`` alive: its id stays unique
    return info


def _build(code: types.CodeType, guarded: bool = False, scope: dict | None = None,
           listed: bool = True) -> CodeInfo:
    info = CodeInfo(code)
    info.guarded = guarded
    info.listed = listed                # (each probe builder is given it: ``probes.log``)
    info.args_apart = listed and not info.generator
    if code.co_flags & ops.GENERATOR_FLAGS and not info.generator:
        info.error = ("async generators are recorded as primitive calls" if
                      code.co_flags & 0x200 else "generators are recorded as primitive calls on"
                      " this Python" if code.co_flags & 0x20 else "coroutines are recorded as"
                      " primitive calls on this Python")
        return info
    try:
        bc = Bytecode.from_code(code)
        s = analyse(bc, code)
        _plan(info, s)
        if not guarded and ops.GUARDED_OPERATORS:
            info.switched = switch_sites(s, scope)
        info.expected = static_callees(s, scope, always_primitive)
        python = static_callees(s, scope, _python_function)
        info.python_callees = frozenset(python)
        if listed:
            info.site_caches = {c: SiteCache(_all_positional(s, c, f.__code__))
                                for c, f in python.items()}
            info.self_sites = {c: info.site_caches[c] for c, f in python.items()
                               if f.__code__ is code}
        if not info.generator:           # (a generator may resume in another run: its
            # ``logged_items`` would log to the run that started the loop)
            info.counted_loops = counted_loops(s.instrs, info.expected, ops.CALLS)
        for k in info.counted_loops:
            info.probe[k] = None         # the replay counts the items (``counted_loops``)
        out = _emit(info, s, bc, info.expected)
        new = Bytecode(out)
        new._copy_attr_from(bc)
        # Handler depths come from the original exception table, shifted by the hidden slots:
        # bytecode's own computation takes the depth where a TryBegin stands, which is wrong
        # for a try range reopened inside a handler.
        info.new_code = placed_sets(new.to_code(compute_exception_stack_depths=False))
    except Unsupported as exc:
        info.error = str(exc)
    except (RecursionError, MemoryError) as exc:   # the caller's state, not the code's
        info.error = f"instrumentation failed: {type(exc).__name__}: {exc}"
        info.transient = True
    except Exception as exc:  # the bytecode library refused: trace the call as a primitive
        info.error = f"instrumentation failed: {type(exc).__name__}: {exc}"
    return info


def _plan(info: CodeInfo, s: Structure) -> None:
    info.structure = s
    n = len(s.instrs)
    info.offsets = s.offsets
    code = info.code
    nparams = code.co_argcount + code.co_kwonlyargcount
    nparams += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
    info.params = tuple(code.co_varnames[:nparams])
    info.cell_params = tuple(p for p in info.params if p in code.co_cellvars)
    info.marks = [BlockMark(info, b.index, b.handler is not None) if b.marked else None
                  for b in s.blocks]
    probe = [ops.probe_kind(ins, s.cells) for ins in s.instrs]
    for i, ins in enumerate(s.instrs):
        if ins.name in ops.FOLDABLE_TESTS and i + 1 < n and s.block_of[i + 1] == s.block_of[i] \
                and s.instrs[i + 1].name in ops.FOLDING_JUMPS:
            probe[i] = None
            info.folded.add(i)
        elif ins.name in ops.CALLABLE_PRODUCERS and _only_callee(s, i):
            probe[i] = None
            info.callee_producer.add(i)
        elif ins.name in ops.LITERAL_LOADS:
            info.literals[i] = Constant(None, ins.arg)
        elif i in s.maybe_unbound:
            probe[i] = "done"            # may raise UnboundLocalError: log that it did not
    for i, ins in enumerate(s.instrs):
        if ins.name == "LOAD_GLOBAL" and probe[i] is not None:
            # ``module.f(...)`` / ``obj.method(...)``: the global only serves a callee load; a
            # bound method's __self__ tells its value (a module's needs no node)
            j, null = ops.global_slots(ins)
            uses = s.consumers.get((i, j), ())
            null_ok = null is None or all(
                isinstance(u, tuple) and u[0] == "callee" for u in s.consumers.get((i, null), ()))
            if len(uses) == 1 and next(iter(uses)) in info.callee_producer and null_ok:
                probe[i] = None
                info.owner_producer.add(i)
    info.probe = probe
    HANDLERS = semantics().HANDLERS
    info.ops = [Op(ins, HANDLERS[ins.name], Location(info.code, s.offsets[k], ins.lineno))
                for k, ins in enumerate(s.instrs)]


def _only_callee(s: Structure, i: int) -> bool:
    _, pushes = ops.stack_io(s.instrs[i])
    roles = set()
    for j in range(pushes):
        uses = s.consumers.get((i, j))
        if not uses:
            return False
        roles |= uses
    return len(roles) == 1 and isinstance(next(iter(roles)), tuple) and next(iter(roles))[0] == "callee"


def _emit(info: CodeInfo, s: Structure, bc: Bytecode, callees: dict) -> list:
    """The instrumented instructions; ``callees``: call index -> the C callable its callee
    load gave when instrumented (``guards.static_callees``), tested first by identity."""
    out: list = []
    i = -1
    resumed = False
    items = list(bc)
    sites = _method_sites(info, s, items, callees)   # bc position -> (call index, arguments)
    taken: set = set()        # PRECALL indices whose site a method site emitted
    copied = 0                # argument loads a method site emitted: skipped here
    deferred: list = []       # try ranges opened before the prologue
    pending_mark = None       # [instructions still to emit before it, the mark's probe]
    for at, item in enumerate(items):
        if copied:
            copied -= 1
            i += 1
            continue
        if isinstance(item, TryBegin):
            depth, lasti = s.blocks[s.label_block[id(item.target)]].handler
            item.stack_depth, item.push_lasti = depth + info.hidden, lasti
            if not resumed:   # 3.12's generator body handler: its range starts after the
                deferred.append(item)   # prologue has pushed the hidden slots
                continue
        if not isinstance(item, Instr):
            out.append(item)
            continue
        i += 1
        ins = item
        loc = ins.location
        block = s.blocks[s.block_of[i]]
        if block.depth < 0:           # unreachable: never runs, so needs no probes
            out.append(ins)
            continue
        if block.start == i and info.marks[block.index] is not None:
            mark = info.marks[block.index]
            skip = ops.FOR_ITER_SKIP if _for_iter_target(s, block) else 0
            if skip:    # the interpreter jumps past these: the mark goes after them
                pending_mark = [skip, _log(s.depth_before[i + skip],
                                           [Instr("LOAD_CONST", mark, location=loc)], loc,
                                           listed=info.listed)]
            else:
                out += _log(block.depth, [Instr("LOAD_CONST", mark, location=loc)], loc,
                            listed=info.listed)
            if block.handler is not None:
                if info.generator:      # which generator frame caught it (it may be thrown in)
                    out += _log(block.depth, [Instr("COPY", block.depth + 5, location=loc)],
                                loc, listed=info.listed)
                out += _log(block.depth, [Instr("COPY", 3, location=loc)], loc,
                            listed=info.listed)
        if block.start == i and info.generator and _send_target(s, block):
            out += _landed(info, block.depth, loc)
        site = sites.get(at)
        if site is not None:          # a method site: the load, its arguments, its decision
            call, args = site
            name = ins.arg
            info.method_sites[call] = name
            out += _method_site(MethodSite(name), s.depth_before[i], s.depth_before[call - 1],
                                args, loc)
            taken.add(call - 1)
            copied = len(args)
            continue
        call = ops.hook_site(s.instrs, i) if i not in taken else None
        if call is not None:
            below = ops.callee_below(s.instrs[call], call in s.self_layout)
            out += _hook(s.depth_before[i], below, loc, callees.get(call), None,
                         call in info.python_callees, info.site_caches.get(call),
                         listed=info.listed)
        kind = info.probe[i]
        guarded = ops.guarded_operator(ins) if kind == "value" and (
            info.guarded or i in info.switched) else None
        replaced = ops.rewrite(ins, loc)
        if i + 1 in info.counted_loops:  # GET_ITER of a counted loop, with its probe
            out += _counted(s.depth_before[i], loc, listed=info.listed)
            kind = None
        elif guarded is not None:
            out += guarded_site(s, i, guarded, [ins] + _probe_after(info, s, i, ins, "value"),
                                not info.guarded, _HIDDEN)
            kind = None                  # the probe is part of the guarded sequence
        elif replaced is not None:
            out += replaced
        else:
            if ins.name in ops.RETURNS and s.depth_before[i] == ops.RETURNS[ins.name] \
                    and not info.generator:     # (see ``probes.dropped_slots``)
                out += _dropped(info.hidden, s.depth_before[i], loc)
            out.append(ins)
        if pending_mark is not None:
            pending_mark[0] -= 1
            if pending_mark[0] == 0:
                out += pending_mark[1]
                pending_mark = None
        name = ins.name
        if name == "RESUME" and not resumed:
            resumed = True
            out += _prologue(info, _NO_LINE) + deferred
        elif name == "RESUME" and info.generator:
            out += _resumed(s.depth_before[i], info, loc)
        elif name in ops.DELEGATING_ITERS:      # GET_ANEXT keeps the async iterator under it
            pops, pushes = ops.stack_io(ins)
            out += _delegated(s.depth_before[i] - pops + pushes, loc)
        if kind is not None:
            out += _probe_after(info, s, i, ins, kind)
    if not resumed:
        raise Unsupported("no RESUME instruction")
    return out


def _method_sites(info: CodeInfo, s: Structure, items: list, callees: dict) -> dict:
    """Position in ``items`` of each ``LOAD_METHOD`` that becomes a method site
    (``method_sites``; listed code where the version has them): its call takes plain loads
    (``METHOD_SITE_ARGS``, unprobed, in the same block) and no keywords, expects no callable,
    and the object comes from a load the replay knows the value of (a local, or a logged
    value), so that it can take ``getattr(obj, name)``. Value: (call index, the loads)."""
    if not ops.METHOD_SITES or not info.listed:
        return {}
    found = {}
    i = -1
    for at, item in enumerate(items):
        if not isinstance(item, Instr):
            continue
        i += 1
        if item.name != "LOAD_METHOD" or i == 0 or s.blocks[s.block_of[i]].depth < 0:
            continue
        prev, block = s.instrs[i - 1], s.block_of[i]
        if s.block_of[i - 1] != block or s.blocks[block].start == i or i - 1 in \
                info.owner_producer or (prev.name != "LOAD_FAST" and info.probe[i - 1] is None):
            continue
        args = []
        for k in range(1, len(items) - at):
            later, j = items[at + k], i + k
            if not isinstance(later, Instr) or s.block_of[j] != block:
                break
            if later.name == "PRECALL":
                if later.arg == len(args) and j + 1 not in callees \
                        and s.instrs[j + 1].name == "CALL":
                    found[at] = (j + 1, args)
                break
            if later.name not in ops.METHOD_SITE_ARGS or info.probe[j] is not None:
                break
            args.append(later)
    return found


def _python_function(value) -> bool:
    return type(value) is types.FunctionType


def _send_target(s: Structure, block) -> bool:
    """Is ``block`` where a ``yield from`` loop's SEND jumps when the sub-iterator returns?"""
    return any(s.instrs[s.blocks[p].end - 1].name in ops.DELEGATING_JUMPS
               and s.blocks[p].jump == block.index for p in block.preds)


def _for_iter_target(s: Structure, block) -> bool:
    """Is ``block`` where an exhausted FOR_ITER jumps to?"""
    return any(s.instrs[s.blocks[p].end - 1].name == "FOR_ITER" and s.blocks[p].jump == block.index
               for p in block.preds)


def _all_positional(s: Structure, call: int, code: types.CodeType) -> int | None:
    """``SiteCache.positional`` of the call at ``call``, whose callee load gave a function
    of ``code``: its positional argument count where that always binds every positional
    parameter of ``code`` (no keywords, no unpacking, no keyword-only parameter), else
    None."""
    n = ops.positional_args(s.instrs, call, call in s.self_layout)
    return n if n == code.co_argcount and not code.co_kwonlyargcount else None

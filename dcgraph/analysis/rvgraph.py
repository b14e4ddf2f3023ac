"""The random-variable graph of one run: ``random_variables(tape)``.

Every registered random call that ran (``dcgraph.analysis.random_primitives``) is a ``RandomChoice``
with an address (``addresses``; a layer may give its own name in ``node.meta['address']``),
its distribution when the registry knows it (or ``node.meta['distribution']``), its parameter
nodes, its value and whether it was observed (``node.meta['observed']``, or the ``observed``
argument). Edges come from ``Dependence``: ``data`` when a choice's parameters were computed from
another choice, ``control`` when a branch depending on another choice decided that it ran.
"""
from __future__ import annotations

from typing import Iterable, Iterator

import numpy as np

from . import random_primitives as registry
from ..tape import Node, PrimitiveCall, Tape
from ..tracer.summary import require_values
from .addresses import Addresser, callable_name, site_of_node
from .dependence import Dependence, walk_skipping_sources

__all__ = ["RandomChoice", "RandomVariables", "random_variables", "choice_parameters", "choice_sites"]

DATA, CONTROL = "data", "control"
_MUTABLE = (list, dict, set, bytearray, np.ndarray)


def choice_parameters(node: Node) -> tuple | None:
    """The parameter nodes of a random call (arguments that are not random-number generators),
    or None when ``node`` is not a call of a registered random callable."""
    if not isinstance(node, PrimitiveCall) or registry.lookup(node.fn) is None:
        return None
    return tuple(a for a in (*node.args, *node.kwargs.values())
                 if not registry.is_random_state(a.value))


class RandomChoice:
    """One random choice that ran (see the module docstring)."""

    __slots__ = ("address", "site", "node", "index", "distribution", "distribution_error",
                 "params", "value", "observed")

    def __init__(self, address, site, node, index, distribution, error, params, value, observed):
        self.address, self.site, self.node, self.index = address, site, node, index
        self.distribution, self.distribution_error = distribution, error
        self.params, self.value, self.observed = params, value, observed

    @property
    def name(self) -> str:
        """The random callable's name (``normal``, ``choice``, ``random``, ...)."""
        return callable_name(self.node.fn)

    def logpdf(self):
        """Log density of the value under the distribution (None when it is unknown)."""
        return None if self.distribution is None else float(self.distribution.logpdf(self.value))

    def __repr__(self):
        dist = self.distribution if self.distribution is not None else "?"
        obs = " observed" if self.observed else ""
        return f"<RandomChoice {self.address} ~ {dist} = {_short(self.value)}{obs}>"


class RandomVariables:
    """The random choices of a run, in execution order, and the edges between them."""

    def __init__(self, choices: list[RandomChoice], parents: list[dict]):
        self._choices = choices
        self._parents = parents                       # index -> {parent index: {kinds}}
        self._children: list[dict] = [{} for _ in choices]
        for k, ps in enumerate(parents):
            for j, kinds in ps.items():
                self._children[j][k] = kinds
        self._by_address = {c.address: c for c in choices}
        for c in choices:
            self._by_address.setdefault(c.site, c)

    # -- access ------------------------------------------------------------------------------
    def __iter__(self) -> Iterator[RandomChoice]:
        return iter(self._choices)

    def __len__(self):
        return len(self._choices)

    def __contains__(self, address) -> bool:
        return isinstance(address, str) and address in self._by_address

    def __getitem__(self, address: str) -> RandomChoice:
        return self._resolve(address)

    @property
    def addresses(self) -> list[str]:
        return [c.address for c in self._choices]

    def _resolve(self, a) -> RandomChoice:
        if isinstance(a, RandomChoice):
            return a
        try:
            return self._by_address[a]
        except (KeyError, TypeError):
            known = ", ".join(self.addresses[:8])
            more = " ..." if len(self) > 8 else ""
            raise KeyError(f"no random choice at address {a!r} (known: {known}{more})") from None

    # -- graph ---------------------------------------------------------------------------------
    def _select(self, table: dict, kind) -> list[str]:
        if kind not in (None, DATA, CONTROL):
            raise ValueError(f"kind must be None, 'data' or 'control', got {kind!r}")
        return [self._choices[j].address for j in sorted(table)
                if kind is None or kind in table[j]]

    def parents(self, a, kind: str | None = None) -> list[str]:
        """Addresses of the choices ``a`` depends on (``kind``: 'data', 'control' or both)."""
        return self._select(self._parents[self._resolve(a).index], kind)

    def children(self, a, kind: str | None = None) -> list[str]:
        """Addresses of the choices that depend on ``a``."""
        return self._select(self._children[self._resolve(a).index], kind)

    def edges(self, kind: str | None = None) -> list[tuple[str, str, str]]:
        """``(parent, child, kind)`` for every edge, children in execution order."""
        out = []
        for k, ps in enumerate(self._parents):
            for j in sorted(ps):
                for kd in sorted(ps[j]):
                    if kind is None or kd == kind:
                        out.append((self._choices[j].address, self._choices[k].address, kd))
        return out

    def markov_blanket(self, a) -> list[str]:
        """Parents, children and the children's other parents of ``a`` (edges of both kinds),
        in execution order."""
        k = self._resolve(a).index
        blanket = set(self._parents[k]) | set(self._children[k])
        for child in self._children[k]:
            blanket |= set(self._parents[child])
        blanket.discard(k)
        return [self._choices[j].address for j in sorted(blanket)]

    # -- rendering -----------------------------------------------------------------------------
    def graph(self):
        """A ``graphviz.Digraph``: choices as nodes (observed ones filled), data edges solid,
        control edges dashed."""
        import graphviz
        g = graphviz.Digraph("random_variables", graph_attr={"rankdir": "TB"},
                             node_attr={"shape": "ellipse", "fontname": "Helvetica",
                                        "fontsize": "10"})
        for c in self._choices:
            dist = c.distribution.name if c.distribution is not None else "?"
            label = f"{c.address}\n{dist} = {_short(c.value)}"
            attrs = {"style": "filled", "fillcolor": "lightgrey"} if c.observed else {}
            g.node(f"c{c.index}", label, **attrs)
        implied = self._implied_control()
        for k, ps in enumerate(self._parents):
            for j in sorted(ps):
                for kd in sorted(ps[j]):
                    if kd == CONTROL and (j, k) in implied:
                        continue
                    g.edge(f"c{j}", f"c{k}", style="solid" if kd == DATA else "dashed",
                           label=kd if kd == CONTROL else "")
        return g

    def _implied_control(self) -> set:
        """Control edges ``(j, k)`` the drawing leaves out: ``k`` has another control parent
        ``m`` that ``j`` reaches, so ``j -> ... -> m -> k`` shows it (only direct ones drawn)."""
        ancestors: list[set] = []
        for ps in self._parents:           # parents come earlier in execution order
            anc = set(ps)
            for j in ps:
                anc |= ancestors[j]
            ancestors.append(anc)
        implied = set()
        for k, ps in enumerate(self._parents):
            controls = [m for m in ps if CONTROL in ps[m]]
            for j in controls:
                if any(m != j and j in ancestors[m] for m in controls):
                    implied.add((j, k))
        return implied

    def to_dot(self) -> str:
        """Graphviz DOT source of ``graph()``."""
        return self.graph().source

    def to_svg(self) -> str:
        """SVG text of ``graph()`` (needs Graphviz's ``dot`` program)."""
        return self.graph().pipe(format="svg").decode("utf-8")

    def __repr__(self):
        lines = [f"<RandomVariables: {len(self)} choices"]
        for c in self._choices:
            ps = ", ".join(f"{p}({'/'.join(sorted(self._parents[c.index][self._by_address[p].index]))})"
                           for p in self.parents(c))
            lines.append(f"  {c.address} ~ {c.distribution if c.distribution is not None else '?'}"
                         f" = {_short(c.value)}{' observed' if c.observed else ''}"
                         f"{'  <- ' + ps if ps else ''}")
        return "\n".join(lines) + ">"


def random_variables(tape: Tape, observed: Iterable[str] = ()) -> RandomVariables:
    """The random choices that ran in ``tape`` and their data/control dependences.

    Trace with ``ctx=dcgraph.analysis.RandomContext()`` so Python-level random functions
    (``random.gauss``, ``random.choice``) are recorded as single calls; a tape traced with the
    default context also works (their nested calls are read as one choice each). ``observed``
    lists addresses to mark observed (besides ``node.meta['observed']``).
    """
    require_values(tape, "random_variables")
    observed = set(observed)
    dep = Dependence(tape, choice_parameters)
    addresser = Addresser()
    choices: list[RandomChoice] = []
    for k, node in enumerate(dep.sources):
        site = addresser(site_of_node(node))
        meta = node.meta if node.has_meta else {}
        address = meta.get("address", site)
        dist, error = _distribution(node, meta, dep)
        choices.append(RandomChoice(address, site, node, k, dist, error, choice_parameters(node),
                                    node.value, bool(meta.get("observed")) or address in observed
                                    or site in observed))
    unknown = observed - {c.address for c in choices} - {c.site for c in choices}
    if unknown:
        raise KeyError(f"random_variables: no random choice at observed address(es) "
                       f"{sorted(unknown)}")
    parents: list[dict] = []
    for k, node in enumerate(dep.sources):
        ps: dict = {}
        for j in dep.parameter_data(node):
            if j != k:
                ps.setdefault(j, set()).add(DATA)
        for j in dep.control(node):
            if j != k:
                ps.setdefault(j, set()).add(CONTROL)
        parents.append(ps)
    return RandomVariables(choices, parents)


def choice_sites(tape: Tape) -> list[str]:
    """The (counted, structural) addresses of the random choices of ``tape`` in execution order,
    without the dependence analysis."""
    addresser = Addresser()
    return [addresser(site_of_node(n)) for n in walk_skipping_sources(tape, choice_parameters)
            if choice_parameters(n) is not None]


def _distribution(node, meta: dict, dep: Dependence):
    """The distribution of a random call from its recorded arguments (or its metadata)."""
    if "distribution" in meta:
        return meta["distribution"], None
    entry = registry.lookup(node.fn)
    if entry is None or entry.distribution_of_args is None:
        return None, "no distribution registered"
    when = node.order_key()
    for a in (*node.args, *node.kwargs.values()):
        chain = dep.containers.chains.get(id(a.value))
        if chain and isinstance(a.value, _MUTABLE) and chain[-1].order_key() > when:
            return None, "an argument was mutated after the call (values are recorded by reference)"
    args = tuple(a.value for a in node.args)
    kwargs = {k: v.value for k, v in node.kwargs.items()}
    try:
        return entry.distribution(args, kwargs), None
    except Exception as exc:         # the registry's function refused these arguments
        return None, f"{type(exc).__name__}: {exc}"


def _short(v, width: int = 24) -> str:
    text = repr(v)
    return text if len(text) <= width else text[: width - 3] + "..."

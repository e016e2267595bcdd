"""setools 4.4.1's ``setools.dta``: domain transition analysis.

The graph and its queries are the engine's (``arbiter_analysis::dta``, the one behind
``arbiter dta``, which prints what sedta prints byte for byte): the transitions out of (or,
reversed, into) a domain, the one shortest path networkx's ``shortest_path`` picks, all paths
up to a length and all shortest paths come in networkx's order, each step a
``DomainTransition`` whose rule lists hold the rule objects ``TERuleQuery`` yields, in
setools' order. A step's entrypoints are sorted by type name (setools 4.4.1 gathers them in
a Python set, an order that changes with the hash seed; the engine sorts them as setools 4.7
does).

The graph is built once per analysis object (on its native handle's thread) and the
working view once per direction and set of excluded types, as setools rebuilds only its
subgraph when a setting changes.
"""

import logging
from typing import List, NamedTuple

from .. import _native
from ._analysis import GraphAnalysis
from .policyrep import Type, _te_rules

__all__ = ["DomainTransitionAnalysis", "DomainTransition", "DomainEntrypoint"]


class DomainEntrypoint(NamedTuple):
    """Entrypoint list entry named tuple output format."""

    name: Type
    entrypoint: List
    execute: List
    type_transition: List


class DomainTransition(NamedTuple):
    """Transition step output named tuple format."""

    source: Type
    target: Type
    transition: List
    entrypoints: List[DomainEntrypoint]
    setexec: List
    dyntransition: List
    setcurrent: List


class DomainTransitionAnalysis(GraphAnalysis):
    """Domain transition analysis."""

    def __init__(self, policy, reverse=False, exclude=None):
        self.log = logging.getLogger("setools.dta")
        self.policy = policy
        self.exclude = exclude
        self.reverse = reverse
        self._native = None

    @property
    def reverse(self):
        return self._reverse

    @reverse.setter
    def reverse(self, direction):
        self._reverse = bool(direction)

    def _handle(self):
        if self._native is None:
            self._native = _native.Dta(self.policy._db)
        return self._native

    def _query(self, kind, source, target=None, maxlen=0):
        return self._handle().query(kind, str(source), None if target is None else str(target),
                                    maxlen, self.reverse, [str(t) for t in self.exclude])

    def _steps(self, path):
        tv = self.policy._type_by_value
        p = self.policy

        def rules(res):
            return list(_te_rules(p, res))

        for s, t, trans, entries, setexec, dyn, setcur in path:
            yield DomainTransition(
                tv[s], tv[t], rules(trans),
                [DomainEntrypoint(tv[e], rules(a), rules(b), rules(c)) for e, a, b, c in entries],
                rules(setexec), rules(dyn), rules(setcur))

    def shortest_path(self, source, target):
        """The one shortest transition path networkx's ``shortest_path`` finds (none, or
        one generator of ``DomainTransition``)."""
        s, t = self._endpoints(source, target)
        self.log.info("Generating one domain transition path from {0} to {1}...".format(s, t))
        for path in self._query("shortest_path", s, t):
            yield self._steps(path)

    def all_paths(self, source, target, maxlen=2):
        """All transition paths of 1 to ``maxlen`` steps, each a generator of
        ``DomainTransition``."""
        s, t = self._endpoints(source, target, maxlen)
        self.log.info("Generating all domain transition paths from {0} to {1}, max length {2}..."
                      .format(s, t, maxlen))
        for path in self._query("all_paths", s, t, maxlen):
            yield self._steps(path)

    def all_shortest_paths(self, source, target):
        """Every shortest transition path, each a generator of ``DomainTransition``."""
        s, t = self._endpoints(source, target)
        self.log.info("Generating all shortest domain transition paths from {0} to {1}..."
                      .format(s, t))
        for path in self._query("all_shortest_paths", s, t):
            yield self._steps(path)

    def transitions(self, type_):
        """The transitions out of a domain (into it, reversed), each a
        ``DomainTransition`` in its real direction."""
        s = self.policy.lookup_type(type_)
        self.log.info("Generating all domain transitions {1} {0}".format(
            s, "in to" if self.reverse else "out from"))
        for path in self._query("transitions", s):
            yield from self._steps(path)

    def get_stats(self):
        """The whole graph's node and edge counts, as setools words them."""
        nodes, edges = self._handle().stats()
        return f"Graph nodes: {nodes}\nGraph edges: {edges}"

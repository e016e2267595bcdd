"""setools 4.4.1's ``setools.infoflow``: information flow analysis.

The graph and its queries are the engine's (``arbiter_analysis::infoflow``, the one behind
``arbiter infoflow``, which prints what seinfoflow prints byte for byte): the flows out of
and into a type, the one shortest path networkx's ``shortest_path`` picks, all paths up to a
length and all shortest paths come in networkx's order (the flows into a type and the
backward half of ``shortest_path`` follow each node's predecessors in the order setools'
subgraph holds them: its node order), and each step's rules are the rule objects
``TERuleQuery`` yields, in setools' order (a rule listed twice on an edge it makes both as a
write and as a read flow, as setools lists it).

The graph is built once per analysis object and permission map (a new map, assigned to
``perm_map``, builds a new one, as in setools) and the working view once per minimum
weight, excluded types and booleans: setools too rebuilds only its subgraph when one of
those changes. One difference remains: setools' boolean filtering edits rule lists its
subgraph shares with its graph, so a later setting on the same setools object starts from
the filtered lists; arbiter filters the whole graph each time.
"""

import logging

from .. import _native
from ._analysis import GraphAnalysis
from .policyrep import SELinuxPolicy  # noqa: F401 - the type setools' signature names

__all__ = ["InfoFlowAnalysis"]


class InfoFlowAnalysis(GraphAnalysis):
    """Information flow analysis."""

    def __init__(self, policy, perm_map, min_weight=1, exclude=None, booleans=None):
        self.log = logging.getLogger("setools.infoflow")
        self.policy = policy
        self.min_weight = min_weight
        self.perm_map = perm_map
        self.exclude = exclude
        self.booleans = booleans
        self._native = None

    @property
    def min_weight(self):
        return self._min_weight

    @min_weight.setter
    def min_weight(self, weight):
        if not 1 <= weight <= 10:
            raise ValueError("Min information flow weight must be an integer 1-10.")
        self._min_weight = weight

    @property
    def perm_map(self):
        return self._perm_map

    @perm_map.setter
    def perm_map(self, perm_map):
        self._perm_map = perm_map
        self._native = None  # rebuilt from the map at the next query, as setools rebuilds

    def _handle(self):
        if self._native is None:
            self.perm_map.map_policy(self.policy)
            self._native = _native.InfoFlow(self.policy._db, str(self.perm_map),
                                            self.perm_map._text(), self.perm_map._excluded())
        return self._native

    def _query(self, kind, source, target=None, maxlen=0):
        booleans = None
        if self.booleans is not None:
            booleans = [(str(k), bool(v)) for k, v in self.booleans.items()]
        return self._handle().query(kind, str(source), None if target is None else str(target),
                                    maxlen, self.min_weight, [str(t) for t in self.exclude],
                                    booleans)

    def _steps(self, path):
        tv = self.policy._type_by_value
        for s, t, w, rules in path:
            yield InfoFlowStep(self.policy, tv[s], tv[t], w, rules)

    def shortest_path(self, source, target):
        """The one shortest flow path networkx's ``shortest_path`` finds (none, or one
        generator of ``InfoFlowStep``)."""
        s, t = self._endpoints(source, target)
        self.log.info("Generating one shortest information flow path from {0} to {1}..."
                      .format(s, t))
        for path in self._query("shortest_path", s, t):
            yield self._steps(path)

    def all_paths(self, source, target, maxlen=2):
        """All flow paths from source to target of 1 to ``maxlen`` steps, each a generator
        of ``InfoFlowStep``."""
        s, t = self._endpoints(source, target, maxlen)
        self.log.info("Generating all information flow paths from {0} to {1}, max length {2}..."
                      .format(s, t, maxlen))
        for path in self._query("all_paths", s, t, maxlen):
            yield self._steps(path)

    def all_shortest_paths(self, source, target):
        """Every shortest flow path from source to target, each a generator of
        ``InfoFlowStep``."""
        s, t = self._endpoints(source, target)
        self.log.info("Generating all shortest information flow paths from {0} to {1}..."
                      .format(s, t))
        for path in self._query("all_shortest_paths", s, t):
            yield self._steps(path)

    def infoflows(self, type_, out=True):
        """The flows out of a type (``out=False``: into it), each an ``InfoFlowStep``."""
        s = self.policy.lookup_type(type_)
        self.log.info("Generating all information flows {0} {1}"
                      .format("out of" if out else "into", s))
        for path in self._query("out" if out else "in", s):
            yield from self._steps(path)

    def get_stats(self):
        """The whole graph's node and edge counts, as setools words them."""
        nodes, edges = self._handle().stats()
        return f"Graph nodes: {nodes}\nGraph edges: {edges}"


class InfoFlowStep:
    """One information flow step: ``source`` -> ``target``, its ``weight`` (the largest of
    its rules') and ``rules``."""

    def __init__(self, policy, source, target, weight, res):
        self.source = source
        self.target = target
        self.weight = weight
        self._policy = policy
        self._res = res
        self._rules = None

    @property
    def rules(self):
        """The rules making this flow, in setools' order."""
        if self._rules is None:
            from .policyrep import _te_rules
            self._rules = list(_te_rules(self._policy, self._res))
        return self._rules

    def __getitem__(self, key):
        if isinstance(key, slice):
            return [self._index_to_item(i) for i in range(*key.indices(2))]
        return self._index_to_item(key)

    def _index_to_item(self, index):
        if index == 0:
            return self.source
        if index == 1:
            return self.target
        raise IndexError("Invalid index (edges only have 2 items): {0}".format(index))

"""``setools.portconquery.PortconQuery``: portcon statements by protocol, port range
(equal, subset, overlap, superset, proper) and context."""

from sys import modules

from .mixins import CONTEXT_DEBUG, MatchContext
from .policyrep import PortconProtocol, PortconRange
from . import query as _query
from .query import PolicyQuery
from .util import enum_lookup


class PortconQuery(MatchContext, PolicyQuery):
    """Query portcon statements."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = (
        "Ports: {0.ports}, overlap: {0.ports_overlap}, subset: {0.ports_subset}, "
        "superset: {0.ports_superset}, proper: {0.ports_proper}",
        "Protocol: {0.protocol!r}",
    ) + CONTEXT_DEBUG

    _protocol = None
    _ports = None
    ports_subset = False
    ports_overlap = False
    ports_superset = False
    ports_proper = False

    @property
    def ports(self):
        """The port range criterion (a ``PortconRange``)."""
        return self._ports

    @ports.setter
    def ports(self, value):
        if value:
            pending_ports = PortconRange(*value)
            if all(pending_ports):
                if pending_ports.low < 1 or pending_ports.high < 1:
                    raise ValueError(
                        "Port numbers must be positive: {0.low}-{0.high}".format(pending_ports))
                if pending_ports.low > pending_ports.high:
                    raise ValueError(
                        "The low port must be smaller than the high port: {0.low}-{0.high}".format(
                            pending_ports))
                self._ports = pending_ports
        else:
            self._ports = None

    @property
    def protocol(self):
        """The protocol criterion (a ``PortconProtocol``)."""
        return self._protocol

    @protocol.setter
    def protocol(self, value):
        if value:
            self._protocol = enum_lookup(PortconProtocol, value)
        else:
            self._protocol = None

    def results(self):
        """The matching statements, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "portcon ")
        policy = self.policy
        cons = policy._labeling("portcons")
        ports = self.ports
        if ports:
            sel = _by_ports(policy, cons, ports, self.ports_subset, self.ports_overlap,
                            self.ports_superset, self.ports_proper)
        else:
            sel = cons
        protocol = self.protocol
        if protocol:
            sel = [p for p in sel if protocol == p.protocol]
        sel = self._filter_context(sel)
        yield from sel


def _port_rows(cons):
    """``(lows, highs, by_low)`` of the policy's portcon statements ``cons``, in order:
    their low and high ports (tuples of the ``PortconRange`` ints the statements hold) and
    ``by_low``, each low port to its statement, or to the tuple of them when several have
    it (a ``tcp`` and a ``udp`` one, often), keyed by the statements' own ints: a key
    combining both ports (``low << 16 | high``) was a new ``int`` per statement, 15 kB of
    the Debian policy's 481 (the columns were 91 kB for the whole run as a dictionary by
    ``(low, high)`` of lists and a list of ``(low, high, statement)`` rows)."""
    lows = tuple(p.ports.low for p in cons)
    highs = tuple(p.ports.high for p in cons)
    by_low = {}
    for lo, p in zip(lows, cons):
        had = by_low.get(lo)
        by_low[lo] = p if had is None else (had + (p,) if type(had) is tuple else (had, p))
    return lows, highs, by_low


def _by_ports(policy, cons, ports, subset, overlap, superset, proper):
    """The statements whose port range matches ``ports`` as ``match_range`` decides
    (same precedence), over the port columns built once per policy (``_port_rows``); an
    exact range is one lookup, by its low port."""
    lo, hi = ports.low, ports.high
    columns = policy._cache.get("query_portcon_rows")
    if columns is None:
        columns = policy._cache["query_portcon_rows"] = _port_rows(cons)
    lows, highs, by_low = columns
    if not (overlap or subset or superset):
        hit = by_low.get(lo, ())
        if type(hit) is not tuple:
            return (hit,) if hit.ports.high == hi else ()
        return tuple(p for p in hit if p.ports.high == hi)
    rows = zip(lows, highs, cons)
    if overlap:
        return [p for l, h, p in rows
                if (l <= lo <= h) or (l <= hi <= h) or (lo <= l and h <= hi)]
    if subset:
        if proper:
            return [p for l, h, p in rows if (l < lo and hi <= h) or (l <= lo and hi < h)]
        return [p for l, h, p in rows if l <= lo and hi <= h]
    if proper:
        return [p for l, h, p in rows if (lo < l and h <= hi) or (lo <= l and h < hi)]
    return [p for l, h, p in rows if lo <= l and h <= hi]

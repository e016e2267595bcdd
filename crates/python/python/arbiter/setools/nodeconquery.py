"""``setools.nodeconquery.NodeconQuery``: nodecon statements by network (equal or
overlapping), IP version and context."""

import ipaddress
from sys import modules

from .mixins import CONTEXT_DEBUG, MatchContext
from .policyrep import NodeconIPVersion
from .query import PolicyQuery, log_results
from .util import enum_lookup


class NodeconQuery(MatchContext, PolicyQuery):
    """Query nodecon statements."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = (
        "Network: {0.network!r}, overlap: {0.network_overlap}",
        "IP Version: {0.ip_version!r}",
    ) + CONTEXT_DEBUG

    _network = None
    network_overlap = False
    _ip_version = None

    @property
    def ip_version(self):
        """The IP version criterion (a ``NodeconIPVersion``)."""
        return self._ip_version

    @ip_version.setter
    def ip_version(self, value):
        if value:
            self._ip_version = enum_lookup(NodeconIPVersion, value)
        else:
            self._ip_version = None

    @property
    def network(self):
        """The network criterion (an ``ipaddress`` network)."""
        return self._network

    @network.setter
    def network(self, value):
        if value:
            self._network = ipaddress.ip_network(value)
        else:
            self._network = None

    def results(self):
        """The matching statements: IPv4 then IPv6, each in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            log_results(self, "nodecon ")
        policy = self.policy
        version = self._ip_version
        # Each family's statements, once per policy (nodecons() chains the two).
        families = policy._table("query_nodecons_by_version", lambda: {
            v: [n for n in policy._labeling("nodecons") if n.ip_version is v]
            for v in NodeconIPVersion})
        if version:
            sel = families[version]
        else:
            sel = families[NodeconIPVersion.ipv4] + families[NodeconIPVersion.ipv6]
        network = self._network
        if network:
            if self.network_overlap:
                sel = [n for n in sel if network.overlaps(n.network)]
            else:
                sel = [n for n in sel if n.network == network]
        sel = self._filter_context(sel)
        yield from sel

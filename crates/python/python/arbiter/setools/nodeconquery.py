"""``setools.nodeconquery.NodeconQuery``: nodecon statements by network (equal or
overlapping), IP version and context."""

from .mixins import CONTEXT_DEBUG, MatchContext
from .policyrep import NodeconIPVersion
from .query import MemoResults, PolicyQuery, policy_table
from .util import enum_lookup


class NodeconQuery(MemoResults, MatchContext, PolicyQuery):
    """Query nodecon statements."""

    _log_what = "nodecon "  # in setools' INFO line (see query.log_results)
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
            # Imported here: a script that never names a network does not load it (0.3 MB
            # resident with its classes and code).
            import ipaddress

            self._network = ipaddress.ip_network(value)
        else:
            self._network = None

    def _matches(self):
        """The matching statements: IPv4 then IPv6, each in the policy's order (see
        ``MemoResults``): a sequence."""
        policy = self.policy
        version = self._ip_version
        # Each family's statements, and both, once per policy (nodecons() chains the two).
        families = policy_table(policy, "query_nodecons_by_version", _by_version)
        sel = families[version]
        network = self._network
        if network:
            if self.network_overlap:
                sel = [n for n in sel if network.overlaps(n.network)]
            else:
                sel = [n for n in sel if n.network == network]
        return self._filter_context(sel)


def _by_version(policy):
    """``NodeconIPVersion`` to its statements (a tuple), and None to IPv4's then IPv6's."""
    families = {v: tuple(n for n in policy._labeling("nodecons") if n.ip_version is v)
                for v in NodeconIPVersion}
    families[None] = families[NodeconIPVersion.ipv4] + families[NodeconIPVersion.ipv6]
    return families

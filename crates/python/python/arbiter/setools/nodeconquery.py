"""``setools.nodeconquery.NodeconQuery``: nodecon statements by network (equal or
overlapping), IP version and context."""

import ipaddress

from .mixins import MatchContext
from .policyrep import NodeconIPVersion
from .query import PolicyQuery


class NodeconQuery(MatchContext, PolicyQuery):
    """Query nodecon statements."""

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
            self._ip_version = NodeconIPVersion.lookup(value)
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
        for nodecon in self.policy.nodecons():
            if self.network:
                if self.network_overlap:
                    if not self.network.overlaps(nodecon.network):
                        continue
                elif not nodecon.network == self.network:
                    continue
            if self.ip_version and self.ip_version != nodecon.ip_version:
                continue
            if not self._match_context(nodecon.context):
                continue
            yield nodecon

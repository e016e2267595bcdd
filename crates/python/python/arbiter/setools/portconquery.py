"""``setools.portconquery.PortconQuery``: portcon statements by protocol, port range
(equal, subset, overlap, superset, proper) and context."""

from .mixins import MatchContext
from .policyrep import PortconProtocol, PortconRange
from .query import PolicyQuery
from .util import match_range


class PortconQuery(MatchContext, PolicyQuery):
    """Query portcon statements."""

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
            self._protocol = PortconProtocol.lookup(value)
        else:
            self._protocol = None

    def results(self):
        """The matching statements, in the policy's order."""
        for portcon in self.policy.portcons():
            if self.ports and not match_range(portcon.ports, self.ports, self.ports_subset,
                                              self.ports_overlap, self.ports_superset,
                                              self.ports_proper):
                continue
            if self.protocol and self.protocol != portcon.protocol:
                continue
            if not self._match_context(portcon.context):
                continue
            yield portcon

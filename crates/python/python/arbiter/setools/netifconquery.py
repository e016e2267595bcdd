"""``setools.netifconquery.NetifconQuery``: netifcon statements by interface name and
context."""

from .mixins import MatchContext, MatchName
from .query import PolicyQuery
from .util import match_regex


class NetifconQuery(MatchContext, MatchName, PolicyQuery):
    """Query netifcon statements."""

    def results(self):
        """The matching statements, in the policy's order."""
        for netif in self.policy.netifcons():
            if self.name and not match_regex(netif.netif, self.name, self.name_regex):
                continue
            if not self._match_context(netif.context):
                continue
            yield netif

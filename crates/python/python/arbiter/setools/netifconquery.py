"""``setools.netifconquery.NetifconQuery``: netifcon statements by interface name and
context."""

from sys import modules

from .mixins import CONTEXT_DEBUG, MatchContext, MatchName, NAME_DEBUG
from .query import PolicyQuery, log_results
from .util import match_regex


class NetifconQuery(MatchContext, MatchName, PolicyQuery):
    """Query netifcon statements."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = NAME_DEBUG + CONTEXT_DEBUG

    def results(self):
        """The matching statements, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            log_results(self, "netifcon ")
        sel = self.policy._labeling("netifcons")
        name = self.name
        if name:
            sel = [n for n in sel if match_regex(n.netif, name, self.name_regex)]
        sel = self._filter_context(sel)
        yield from sel

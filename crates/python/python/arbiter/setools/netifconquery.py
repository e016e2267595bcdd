"""``setools.netifconquery.NetifconQuery``: netifcon statements by interface name and
context."""

from .mixins import CONTEXT_DEBUG, MatchContext, MatchName, NAME_DEBUG
from .query import MemoResults, PolicyQuery, policy_table
from . import util as _util


class NetifconQuery(MemoResults, MatchContext, MatchName, PolicyQuery):
    """Query netifcon statements."""

    _log_what = "netifcon "  # in setools' INFO line (see query.log_results)
    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = NAME_DEBUG + CONTEXT_DEBUG

    def _matches(self):
        """The matching statements, in the policy's order (see ``MemoResults``): a
        sequence."""
        sel = policy_table(self.policy, "query_netifcons", _every_netifcon)
        name = self.name
        if name:
            sel = [n for n in sel if _util.match_regex(n.netif, name, self.name_regex)]
        return self._filter_context(sel)


def _every_netifcon(policy):
    """The policy's netifcon statements, as the tuple ``results()`` keeps."""
    return tuple(policy._labeling("netifcons"))

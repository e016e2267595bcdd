"""``setools.polcapquery.PolCapQuery``: policy capabilities by name."""

from .mixins import NAME_DEBUG
from .query import MemoResults, PolicyQuery, Criterion, filter_names, policy_table


class PolCapQuery(MemoResults, PolicyQuery):
    """Query policy capabilities."""

    _log_what = "policy capability "  # in setools' INFO line (see query.log_results)
    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = NAME_DEBUG

    name = Criterion("name_regex")
    name_regex = False
    alias_deref = False

    def _matches(self):
        """The matching capabilities, in bit order (see ``MemoResults``): a sequence."""
        policy = self.policy
        # The capability objects once per policy (equal by value to those polcaps() makes).
        caps = policy_table(policy, "query_polcaps", _every_polcap)
        if self.name is None:
            return caps
        return filter_names(caps, self.name, self.name_regex, policy, "polcaps")


def _every_polcap(policy):
    """The policy's capabilities, as the tuple ``results()`` keeps."""
    return tuple(policy.polcaps())

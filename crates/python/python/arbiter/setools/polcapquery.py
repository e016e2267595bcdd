"""``setools.polcapquery.PolCapQuery``: policy capabilities by name."""

from sys import modules

from .mixins import NAME_DEBUG
from .query import PolicyQuery, Criterion, filter_names, table, log_results


class PolCapQuery(PolicyQuery):
    """Query policy capabilities."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = NAME_DEBUG

    name = Criterion("name_regex")
    name_regex = False
    alias_deref = False

    def results(self):
        """The matching capabilities, in bit order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            log_results(self, "policy capability ")
        policy = self.policy
        # The capability objects once per policy (equal by value to those polcaps() makes).
        caps = table(policy, "polcaps", policy.polcaps)
        if self.name is None:
            yield from caps
        else:
            yield from filter_names(caps, self.name, self.name_regex, policy, "polcaps")

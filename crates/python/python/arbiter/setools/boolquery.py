"""``setools.boolquery.BoolQuery``: Booleans by name and default state."""

from sys import modules

from .mixins import NAME_DEBUG
from . import query as _query
from .query import PolicyQuery, Criterion, filter_names, table


class BoolQuery(PolicyQuery):
    """Query Booleans. ``default`` None matches any state."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = NAME_DEBUG + (
        "Default: {0.default}",
    )

    name = Criterion("name_regex")
    name_regex = False
    alias_deref = False
    default = None

    def results(self):
        """The matching Booleans, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "Boolean ")
        policy = self.policy
        bools = table(policy, "bools", policy.bools)
        if self.name is not None:
            bools = filter_names(bools, self.name, self.name_regex, policy, "bools")
            if self.default is not None:
                state = bool(self.default)
                bools = [b for b in bools if b.state == state]
        elif self.default is not None:
            # The Booleans of each default state, partitioned once per policy.
            by_state = policy._table(
                "query_bools_by_state",
                lambda: {s: [b for b in bools if b.state == s] for s in (True, False)})
            bools = by_state[bool(self.default)]
        yield from bools

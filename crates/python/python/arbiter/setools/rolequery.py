"""``setools.rolequery.RoleQuery``: roles by name and types."""

from bisect import bisect_left
from sys import modules

from .mixins import NAME_DEBUG
from . import query as _query
from .query import PolicyQuery, Criterion, SetCriterion, filter_names, table


class RoleQuery(PolicyQuery):
    """Query roles."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = NAME_DEBUG + (
        "Types: {0.types!r}, regex: {0.types_regex}, eq: {0.types_equal}",
    )

    name = Criterion("name_regex")
    types = SetCriterion("types_regex", "lookup_type")
    name_regex = False
    alias_deref = False
    types_regex = False
    types_equal = False

    def results(self):
        """The matching roles, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "role ")
        policy = self.policy
        roles = filter_names(table(policy, "roles", policy.roles), self.name, self.name_regex,
                             policy, "roles")
        types = self.types
        if types is None:
            yield from roles
            return
        equal, regex = self.types_equal, self.types_regex
        if not equal and not regex:
            # match_values' intersection, with the criterion's values taken once.
            want = sorted({t._value for t in types})
            yield from [r for r in roles if _has_any(r._types, want)]
            return
        tv = policy._type_by_value
        for r in roles:
            if _query.match_values(r._types, types, equal, regex, tv):
                yield r


def _has_any(values, want):
    """Whether the sorted ``array`` ``values`` (a role's type values) holds one of the
    values ``want``: a binary search each (iterating the array would make an ``int`` per
    element)."""
    n = len(values)
    for v in want:
        i = bisect_left(values, v)
        if i < n and values[i] == v:
            return True
    return False

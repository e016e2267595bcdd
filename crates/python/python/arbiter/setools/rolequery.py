"""``setools.rolequery.RoleQuery``: roles by name and types."""

from .query import PolicyQuery, Criterion, SetCriterion, match_name, match_values


class RoleQuery(PolicyQuery):
    """Query roles."""

    name = Criterion("name_regex")
    types = SetCriterion("types_regex", "lookup_type")
    name_regex = False
    types_regex = False
    types_equal = False

    def results(self):
        """The matching roles, in the policy's order."""
        tv = self.policy._type_by_value
        for r in self.policy.roles():
            if not match_name(r, self.name, self.name_regex):
                continue
            if self.types is not None and not match_values(
                r._types, self.types, self.types_equal, self.types_regex, tv
            ):
                continue
            yield r

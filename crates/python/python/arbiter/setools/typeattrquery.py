"""``setools.typeattrquery.TypeAttributeQuery``: attributes by name and member types."""

from .query import PolicyQuery, Criterion, SetCriterion, match_name, match_values


class TypeAttributeQuery(PolicyQuery):
    """Query type attributes."""

    name = Criterion("name_regex")
    types = SetCriterion("types_regex", "lookup_type")
    name_regex = False
    types_regex = False
    types_equal = False

    def results(self):
        """The matching attributes, in the policy's order."""
        rel = self.policy._type_relations()
        tv = self.policy._type_by_value
        for a in self.policy.typeattributes():
            if not match_name(a, self.name, self.name_regex):
                continue
            if self.types is not None and not match_values(
                rel[a._value - 1], self.types, self.types_equal, self.types_regex, tv
            ):
                continue
            yield a

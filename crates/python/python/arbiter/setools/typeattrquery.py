"""``setools.typeattrquery.TypeAttributeQuery``: attributes by name and member types."""

from sys import modules

from .mixins import NAME_DEBUG
from . import query as _query
from .query import PolicyQuery, Criterion, SetCriterion, filter_names, table


class TypeAttributeQuery(PolicyQuery):
    """Query type attributes."""

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
        """The matching attributes, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "type attribute ")
        policy = self.policy
        all_attrs = table(policy, "attributes", policy.typeattributes)
        if self.name is None:
            attrs = all_attrs
        else:
            attrs = filter_names(all_attrs, self.name, self.name_regex, policy, "attributes")
        types = self.types
        if types is None:
            yield from attrs
            return
        rel = policy._type_relations()
        if not self.types_regex and not self.types_equal:
            # An attribute has a member among the criterion types exactly when it is one
            # of their attributes: the union of those, instead of every attribute's
            # members.
            wanted = set()
            for t in types:
                wanted.update(rel[t._value - 1])
            if attrs is all_attrs:
                # In table order by position, without visiting every attribute.
                pos = policy._table("query_attribute_pos",
                                    lambda: {a._value: i for i, a in enumerate(all_attrs)})
                yield from [all_attrs[i] for i in sorted(pos[v] for v in wanted if v in pos)]
            else:
                yield from [a for a in attrs if a._value in wanted]
            return
        tv = policy._type_by_value
        for a in attrs:
            if _query.match_values(rel[a._value - 1], types, self.types_equal, self.types_regex,
                                   tv):
                yield a

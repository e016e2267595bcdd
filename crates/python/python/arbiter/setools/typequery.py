"""``setools.typequery.TypeQuery``: types by name, alias, attributes and permissiveness."""

from .query import (
    PolicyQuery, Criterion, SetCriterion, filter_names, match_set, match_values,
)


class TypeQuery(PolicyQuery):
    """Query types. ``permissive`` is applied when ``match_permissive`` is true."""

    name = Criterion("name_regex")
    alias = Criterion("alias_regex")
    attrs = SetCriterion("attrs_regex", "lookup_typeattr")
    name_regex = False
    alias_regex = False
    alias_deref = False
    attrs_regex = False
    attrs_equal = False
    permissive = False
    match_permissive = False

    def results(self):
        """The matching types, in the policy's order."""
        rel = self.policy._type_relations()
        tv = self.policy._type_by_value
        members = None
        if self.attrs is not None and not self.attrs_regex and not self.attrs_equal:
            # Intersecting with the criterion attributes is being a member of one of them.
            members = set()
            for a in self.attrs:
                members.update(rel[a._value - 1])
        name, name_regex = self.name, self.name_regex
        types = self.policy.types()
        if members is not None:
            types = [t for t in types if t._value in members]
        if name is not None and not (self.alias_deref and not name_regex):
            # The name filter first, in one pass (see filter_names).
            types = filter_names(types, name, name_regex)
            name = None
        alias, alias_regex = self.alias, self.alias_regex
        attrs = self.attrs if members is None else None
        match_permissive, permissive = self.match_permissive, bool(self.permissive)
        if name is None and alias is None and attrs is None and not match_permissive:
            yield from types
            return
        for t in types:
            if name is not None:
                if not (t == name or any(a == name for a in t.aliases())):
                    continue
            if alias is not None and not match_set(
                t.aliases(), alias if alias_regex else [alias], False, alias_regex,
            ):
                continue
            if attrs is not None and not match_values(
                rel[t._value - 1], attrs, self.attrs_equal, self.attrs_regex, tv
            ):
                continue
            if match_permissive and permissive != t.ispermissive:
                continue
            yield t

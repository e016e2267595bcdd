"""``setools.typequery.TypeQuery``: types by name, alias, attributes and permissiveness."""

from .query import PolicyQuery, Criterion, SetCriterion, match_name, match_set, match_values


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
        for t in self.policy.types():
            if members is not None and t._value not in members:
                continue
            if self.name is not None:
                if self.alias_deref and not self.name_regex:
                    ok = t == self.name or any(a == self.name for a in t.aliases())
                else:
                    ok = match_name(t, self.name, self.name_regex)
                if not ok:
                    continue
            if self.alias is not None and not match_set(
                t.aliases(), self.alias if self.alias_regex else [self.alias], False,
                self.alias_regex,
            ):
                continue
            if members is None and self.attrs is not None and not match_values(
                rel[t._value - 1], self.attrs, self.attrs_equal, self.attrs_regex, tv
            ):
                continue
            if self.match_permissive and bool(self.permissive) != t.ispermissive:
                continue
            yield t

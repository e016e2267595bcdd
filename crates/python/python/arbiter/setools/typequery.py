"""``setools.typequery.TypeQuery``: types by name, alias, attributes and permissiveness."""

from array import array
from sys import modules

from .mixins import ALIAS_DEBUG, NAME_DEBUG
from . import query as _query
from .query import PolicyQuery, Criterion, SetCriterion, filter_names, table


def _type_positions(policy, types):
    """Each value's position in the type table (setools' order), once per policy: an
    array indexed by value, ``-1`` where the value is no type (an attribute). As a dict
    it was about 0.25 MB on a distribution policy (an entry and an ``int`` per type);
    this is 2 bytes a value (4 for a table of more than 32,767 types)."""

    def build():
        top = max((t._value for t in types), default=0)
        pos = array("h" if len(types) < 0x8000 else "i", [-1]) * (top + 1)
        for i, t in enumerate(types):
            pos[t._value] = i
        return pos

    return policy._table("query_type_pos", build)


def _in_order(policy, types, values):
    """The types of ``values``, in the type table's order."""
    pos = _type_positions(policy, types)
    top = len(pos)
    return [types[i] for i in sorted(
        i for i in (pos[v] for v in values if 0 <= v < top) if i >= 0)]


def _members_in_order(policy, types, attr, rel):
    """An attribute's member types in table order, once per policy and attribute (its
    row of the relations ``rel`` read on the first)."""
    cache = policy._table("query_attribute_members", dict)
    hit = cache.get(attr._value)
    if hit is None:
        hit = cache[attr._value] = _in_order(policy, types, rel[attr._value - 1])
    return hit


class TypeQuery(PolicyQuery):
    """Query types. ``permissive`` (None: not matched) keeps the types whose permissive
    state is its truth value, as in setools 4.4.1."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = NAME_DEBUG + ALIAS_DEBUG + (
        "Attrs: {0.attrs!r}, regex: {0.attrs_regex}, eq: {0.attrs_equal}",
        "Permissive: {0.permissive}",
    )

    name = Criterion("name_regex")
    alias = Criterion("alias_regex")
    attrs = SetCriterion("attrs_regex", "lookup_typeattr")
    name_regex = False
    alias_regex = False
    alias_deref = False
    attrs_regex = False
    attrs_equal = False
    _permissive = None

    @property
    def permissive(self):
        """The permissive state to match (None: any)."""
        return self._permissive

    @permissive.setter
    def permissive(self, value):
        self._permissive = None if value is None else bool(value)

    def results(self):
        """The matching types, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "type ")
        policy = self.policy
        rel = policy._type_relations()
        all_types = types = table(policy, "types", policy.types)
        name, name_regex = self.name, self.name_regex
        if name is not None and not (self.alias_deref and not name_regex):
            # The name filter first: natively for a regex, a lookup for a name.
            types = filter_names(types, name, name_regex, policy, "types")
            name = None
        attrs = self.attrs
        if attrs is not None and not self.attrs_regex and not self.attrs_equal:
            # Intersecting with the criterion attributes is being a member of one of them.
            if types is all_types and len(attrs) == 1:
                # One attribute's members in table order (the usual case), kept per
                # policy and attribute: a second query reads no row.
                types = _members_in_order(policy, all_types, next(iter(attrs)), rel)
            else:
                members = set()
                for a in attrs:
                    members.update(rel[a._value - 1])
                if types is all_types:
                    # The members in table order, without visiting every type.
                    types = _in_order(policy, all_types, members)
                else:
                    types = [t for t in types if t._value in members]
            attrs = None
        alias, alias_regex = self.alias, self.alias_regex
        permissive = self._permissive
        match_permissive = permissive is not None
        if name is None and alias is None and attrs is None and not match_permissive:
            yield from types
            return
        tv = policy._type_by_value
        for t in types:
            if name is not None:
                if not (t == name or any(a == name for a in t.aliases())):
                    continue
            if alias is not None and not _query.match_set(
                t.aliases(), alias if alias_regex else [alias], False, alias_regex,
            ):
                continue
            if attrs is not None and not _query.match_values(
                rel[t._value - 1], attrs, self.attrs_equal, self.attrs_regex, tv
            ):
                continue
            if match_permissive and permissive != t.ispermissive:
                continue
            yield t

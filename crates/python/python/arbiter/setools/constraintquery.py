"""``setools.constraintquery.ConstraintQuery``: constraints and validatetrans by rule
type, class, permissions and the users, roles and types their expressions name (roles
and types also through attributes)."""

from itertools import compress
from sys import modules

from .descriptors import CriteriaDescriptor, CriteriaSetDescriptor
from . import exception as _exc
from .mixins import CLASS_DEBUG, MatchObjClass, MatchPermission, PERMS_DEBUG
from .policyrep import ConstraintRuletype, TypeAttribute
from . import query as _query
from .query import PolicyQuery
from . import util as _util


def _expanded(names):
    """The union of the expansions of a constraint's name set (its roles or types), as
    objects: only a regex criterion needs them (a name is matched by value, ``_values``),
    so they are made per query, not kept."""
    obj = set()
    for item in names:
        obj.update(item.expand())
    return obj


def _by_ruletype(policy):
    """Every constraint, and those of each rule type, in the policy's order (once per
    policy): a query by rule type alone is then one list."""

    def build():
        every = list(policy.constraints())
        parts = {rt: [c for c in every if c.ruletype is rt] for rt in ConstraintRuletype}
        return every, parts

    return policy._table("query_constraints_by_ruletype", build)


class ConstraintQuery(MatchObjClass, MatchPermission, PolicyQuery):
    """Query constraints."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = (
        "Ruletypes: {0.ruletype}",
    ) + CLASS_DEBUG + PERMS_DEBUG + (
        "User: {0.user!r}, regex: {0.user_regex}",
        "Role: {0.role!r}, regex: {0.role_regex}",
        "Type: {0.type_!r}, regex: {0.type_regex}",
    )

    ruletype = CriteriaSetDescriptor(enum_class=ConstraintRuletype)
    user = CriteriaDescriptor("user_regex", "lookup_user")
    user_regex = False
    role = CriteriaDescriptor("role_regex", "lookup_role")
    role_regex = False
    role_indirect = True
    type_ = CriteriaDescriptor("type_regex", "lookup_type_or_attr")
    type_regex = False
    type_indirect = True

    def _match_expr(self, expr, criteria, indirect, regex):
        if indirect:
            obj = _expanded(expr)
        else:
            obj = expr
        return _util.match_in_set(obj, criteria, regex)

    def results(self):
        """The matching rules, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "constraint ")
        every, parts = _by_ruletype(self.policy)
        ruletype = self.ruletype
        if ruletype and len(ruletype) == 1:
            rules, ruletype = parts[next(iter(ruletype))], None
        else:
            rules = every
        tclass, perms = self.tclass, self.perms
        role, type_, user = self.role, self.type_, self.user
        # Each criterion's truth once (an attribute's is its member count, a Python call).
        role, type_, user = role or None, type_ or None, user or None
        if not (ruletype or tclass or perms or role or type_ or user):
            yield from rules
            return
        policy = self.policy
        # A name criterion (not a regex) is matched by value against each expression's
        # name set (or its expansion), kept per set and policy: no Python ``__hash__``
        # per constraint. Type and attribute values are distinct, as their objects are.
        role_vals = _criterion_value(role, self.role_regex)
        type_vals = _criterion_value(type_, self.type_regex)
        user_vals = _criterion_value(user, self.user_regex)
        named = [(which, vals, indirect) for which, crit, vals, indirect in (
            ("roles", role, role_vals, self.role_indirect),
            ("types", type_, type_vals, self.type_indirect),
            ("users", user, user_vals, False)) if crit is not None]
        # Each value criterion's byte and bit in the value bitmaps of its kind (all of one
        # length, see ``_values``); a value past them (another policy's symbol) is in none.
        at = {}
        for which, vals, _ in named:
            if vals is not None:
                i = vals >> 3
                if i >= _bitmap_size(policy, which):
                    return
                at[which] = (i, 1 << (vals & 7))
        if not (ruletype or tclass or perms) and len(named) == 1 and named[0][1] is not None:
            # One name criterion by value (the usual case): over the rules' value sets,
            # kept per policy with the rules, without a cache lookup per constraint.
            # The criterion's bit is read once per distinct bitmap (the rules share a few),
            # and the rules are selected in C by their bitmap's position: no Python
            # bytecode per constraint.
            which, vals, indirect = named[0]
            i, bit = at[which]
            bitmaps, positions = _value_rows(policy, rules, which, indirect)
            hits = [b[i] & bit for b in bitmaps]
            yield from list(compress(rules, map(hits.__getitem__, positions)))
            return
        role_i, role_bit = at.get("roles", (0, 0))
        type_i, type_bit = at.get("types", (0, 0))
        user_i, user_bit = at.get("users", (0, 0))
        for c in rules:
            if ruletype and c.ruletype not in ruletype:
                continue
            if tclass and not self._match_object_class(c):
                continue
            if perms:
                try:
                    if not self._match_perms(c):
                        continue
                except _exc.ConstraintUseError:
                    continue
            if role is not None:
                names = c.expression.roles
                if role_vals is not None:
                    if not _values(policy, names, self.role_indirect, "roles")[role_i] & role_bit:
                        continue
                elif not self._match_expr(names, role, self.role_indirect, self.role_regex):
                    continue
            if type_ is not None:
                names = c.expression.types
                if type_vals is not None:
                    if not _values(policy, names, self.type_indirect, "types")[type_i] & type_bit:
                        continue
                elif not self._match_expr(names, type_, self.type_indirect, self.type_regex):
                    continue
            if user is not None:
                names = c.expression.users
                if user_vals is not None:
                    if not _values(policy, names, False, "users")[user_i] & user_bit:
                        continue
                elif not self._match_expr(names, user, False, self.user_regex):
                    continue
            yield c


def _criterion_value(criterion, regex):
    """The value of a symbol criterion matched by value (None: a regex, or no criterion)."""
    if criterion is None or regex:
        return None
    return criterion._value


def _bitmap_size(policy, which):
    """The length in bytes of the value bitmaps of one kind (``roles``, ``types``,
    ``users``): a bit for every value of its table, so that a criterion's byte is in each
    of them (no length test per constraint)."""

    def build():
        if which == "types":
            top = len(policy._type_by_value) - 1
        elif which == "roles":
            top = max(policy._role_by_value, default=0)
        else:
            top = max(policy._user_by_value(), default=0)
        return (top >> 3) + 1

    return policy._table("query_constraint_bitmap_size_" + which, build)


def _values(policy, names, indirect, which):
    """The values of a constraint's name set of kind ``which``, or (``indirect``) of its
    expansion, once per set and policy, as a bitmap (``bytes`` of ``_bitmap_size``, bit
    ``v & 7`` of byte ``v >> 3`` for value ``v``): an expansion's frozenset of ints was 4 kB
    on average, 175 kB for the Debian policy's 44 sets, where a bitmap of its 5,000 type
    values is 0.6 kB. An attribute's members are read from the native type relations (its
    row, by value): the expansion's objects are not made, nor kept (a frozenset of type
    objects per set was 0.34 MB on a distribution policy)."""
    cache = policy._table("query_constraint_values", dict)
    key = (id(names), indirect, which)
    hit = cache.get(key)
    if hit is None or hit[0] is not names:
        values = set()
        rel = None
        for item in names:
            if indirect and isinstance(item, TypeAttribute):
                if rel is None:
                    rel = policy._type_relations()
                values.update(rel[item._value - 1])
            elif indirect:
                values.update(o._value for o in item.expand())
            else:
                values.add(item._value)
        bits = bytearray(_bitmap_size(policy, which))
        for v in values:
            bits[v >> 3] |= 1 << (v & 7)
        hit = cache[key] = (names, bytes(bits))
    return hit[1]


def _value_rows(policy, rules, which, indirect):
    """``(bitmaps, positions)`` for ``rules`` (one of ``_by_ruletype``'s lists), once per
    list, kind and policy: the distinct value bitmaps (``_values``) of the rules'
    expressions' ``which`` name sets (``roles``, ``types``, ``users``) or (``indirect``)
    of their expansions, and for each rule in order the position of its own in
    ``bitmaps`` (the Debian policy's 243 constraints have 44 distinct type sets)."""
    cache = policy._table("query_constraint_rows", dict)
    key = (id(rules), which, indirect)
    hit = cache.get(key)
    if hit is None or hit[0] is not rules:
        at, bitmaps, positions = {}, [], []
        for c in rules:
            bits = _values(policy, getattr(c.expression, which), indirect, which)
            n = at.get(bits)
            if n is None:
                n = at[bits] = len(bitmaps)
                bitmaps.append(bits)
            positions.append(n)
        hit = cache[key] = (rules, (tuple(bitmaps), tuple(positions)))
    return hit[1]

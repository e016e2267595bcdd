"""``setools.constraintquery.ConstraintQuery``: constraints and validatetrans by rule
type, class, permissions and the users, roles and types their expressions name (roles
and types also through attributes)."""

from sys import modules

from .descriptors import CriteriaDescriptor, CriteriaSetDescriptor
from .exception import ConstraintUseError
from .mixins import CLASS_DEBUG, MatchObjClass, MatchPermission, PERMS_DEBUG
from .policyrep import ConstraintRuletype, TypeAttribute
from .query import PolicyQuery, log_results
from .util import match_in_set


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
        return match_in_set(obj, criteria, regex)

    def results(self):
        """The matching rules, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            log_results(self, "constraint ")
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
        if not (ruletype or tclass or perms) and len(named) == 1 and named[0][1] is not None:
            # One name criterion by value (the usual case): over the rules' value sets,
            # kept per policy with the rules, without a cache lookup per constraint.
            which, vals, indirect = named[0]
            i, bit = vals >> 3, 1 << (vals & 7)
            yield from [c for c, bits in _value_rows(policy, rules, which, indirect)
                        if i < len(bits) and bits[i] & bit]
            return
        for c in rules:
            if ruletype and c.ruletype not in ruletype:
                continue
            if tclass and not self._match_object_class(c):
                continue
            if perms:
                try:
                    if not self._match_perms(c):
                        continue
                except ConstraintUseError:
                    continue
            if role is not None:
                names = c.expression.roles
                if role_vals is not None:
                    if not _has(_values(policy, names, self.role_indirect), role_vals):
                        continue
                elif not self._match_expr(names, role, self.role_indirect, self.role_regex):
                    continue
            if type_ is not None:
                names = c.expression.types
                if type_vals is not None:
                    if not _has(_values(policy, names, self.type_indirect), type_vals):
                        continue
                elif not self._match_expr(names, type_, self.type_indirect, self.type_regex):
                    continue
            if user is not None:
                names = c.expression.users
                if user_vals is not None:
                    if not _has(_values(policy, names, False), user_vals):
                        continue
                elif not self._match_expr(names, user, False, self.user_regex):
                    continue
            yield c


def _criterion_value(criterion, regex):
    """The value of a symbol criterion matched by value (None: a regex, or no criterion)."""
    if criterion is None or regex:
        return None
    return criterion._value


def _has(bits, value):
    """Whether ``value`` is in a ``_values`` bitmap."""
    i = value >> 3
    return i < len(bits) and bits[i] & (1 << (value & 7)) != 0


def _values(policy, names, indirect):
    """The values of a constraint's name set, or (``indirect``) of its expansion, once per
    set and policy, as a bitmap (``bytes``, bit ``v & 7`` of byte ``v >> 3`` for value
    ``v``; ``_has`` tests one): an expansion's frozenset of ints was 4 kB on average, 175 kB
    for the Debian policy's 44 sets, where a bitmap of its 5,000 type values is 0.6 kB. An
    attribute's members are read from the native type relations (its row, by value): the
    expansion's objects are not made, nor kept (a frozenset of type objects per set was
    0.34 MB on a distribution policy)."""
    cache = policy._table("query_constraint_values", dict)
    key = (id(names), indirect)
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
        bits = bytearray((max(values) >> 3) + 1 if values else 0)
        for v in values:
            bits[v >> 3] |= 1 << (v & 7)
        hit = cache[key] = (names, bytes(bits))
    return hit[1]


def _value_rows(policy, rules, which, indirect):
    """``(constraint, bitmap)`` for each of ``rules`` (one of ``_by_ruletype``'s lists):
    the values of its expression's ``which`` name set (``roles``, ``types``, ``users``) or
    (``indirect``) of its expansion, once per list, set and policy."""
    cache = policy._table("query_constraint_rows", dict)
    key = (id(rules), which, indirect)
    hit = cache.get(key)
    if hit is None or hit[0] is not rules:
        rows = [(c, _values(policy, getattr(c.expression, which), indirect)) for c in rules]
        hit = cache[key] = (rules, rows)
    return hit[1]

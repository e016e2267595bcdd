"""``setools.constraintquery.ConstraintQuery``: constraints and validatetrans by rule
type, class, permissions and the users, roles and types their expressions name (roles
and types also through attributes)."""

from .descriptors import CriteriaDescriptor, CriteriaSetDescriptor
from .exception import ConstraintUseError
from .mixins import MatchObjClass, MatchPermission
from .policyrep import ConstraintRuletype
from .query import PolicyQuery
from .util import match_in_set


def _expanded(policy, names):
    """The union of the expansions of a constraint's name set (its roles or types),
    computed once per set and policy: every query with an indirect criterion asks for it
    again."""
    cache = policy._table("constraint_expansions", dict)
    key = id(names)
    hit = cache.get(key)
    if hit is None or hit[0] is not names:
        obj = set()
        for item in names:
            obj.update(item.expand())
        hit = cache[key] = (names, frozenset(obj))
    return hit[1]


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
            obj = _expanded(self.policy, expr)
        else:
            obj = expr
        return match_in_set(obj, criteria, regex)

    def results(self):
        """The matching rules, in the policy's order."""
        every, parts = _by_ruletype(self.policy)
        ruletype = self.ruletype
        if ruletype and len(ruletype) == 1:
            rules, ruletype = parts[next(iter(ruletype))], None
        else:
            rules = every
        tclass, perms = self.tclass, self.perms
        role, type_, user = self.role, self.type_, self.user
        if not (ruletype or tclass or perms or role or type_ or user):
            yield from rules
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
            if role and not self._match_expr(c.expression.roles, role,
                                             self.role_indirect, self.role_regex):
                continue
            if type_ and not self._match_expr(c.expression.types, type_,
                                              self.type_indirect, self.type_regex):
                continue
            if user and not self._match_expr(c.expression.users, user, False,
                                             self.user_regex):
                continue
            yield c

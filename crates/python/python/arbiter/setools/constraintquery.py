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
        for c in self.policy.constraints():
            if self.ruletype and c.ruletype not in self.ruletype:
                continue
            if not self._match_object_class(c):
                continue
            try:
                if not self._match_perms(c):
                    continue
            except ConstraintUseError:
                continue
            if self.role and not self._match_expr(c.expression.roles, self.role,
                                                  self.role_indirect, self.role_regex):
                continue
            if self.type_ and not self._match_expr(c.expression.types, self.type_,
                                                   self.type_indirect, self.type_regex):
                continue
            if self.user and not self._match_expr(c.expression.users, self.user, False,
                                                  self.user_regex):
                continue
            yield c

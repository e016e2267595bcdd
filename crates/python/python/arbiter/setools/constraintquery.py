"""``setools.constraintquery.ConstraintQuery``: constraints and validatetrans by rule
type, class, permissions and the users, roles and types their expressions name (roles
and types also through attributes)."""

from .descriptors import CriteriaDescriptor, CriteriaSetDescriptor
from .exception import ConstraintUseError
from .mixins import MatchObjClass, MatchPermission
from .policyrep import ConstraintRuletype
from .query import PolicyQuery
from .util import match_in_set


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
            obj = set()
            for item in expr:
                obj.update(item.expand())
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

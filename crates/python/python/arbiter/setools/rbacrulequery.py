"""``setools.rbacrulequery.RBACRuleQuery``: role allow and role_transition rules."""

from sys import modules

from . import policyrep
from .exception import InvalidType
from .mixins import CLASS_DEBUG
from . import query as _query
from .query import PolicyQuery, Criterion, SetCriterion, _empty


class _RoleOrType(Criterion):
    """The target: a type or attribute, or failing that a role (setools' order)."""

    def _store(self, obj, value):
        if _empty(value) or (self.regex and getattr(obj, self.regex)):
            return super()._store(obj, value)
        try:
            obj.__dict__[self.name] = obj.policy.lookup_type_or_attr(value)
        except InvalidType:
            obj.__dict__[self.name] = obj.policy.lookup_role(value)


class RBACRuleQuery(PolicyQuery):
    """Query the RBAC rules (``allow`` between roles, ``role_transition``)."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = (
        "Ruletypes: {0.ruletype}",
        "Source: {0.source!r}, indirect: {0.source_indirect}, regex: {0.source_regex}",
        "Target: {0.target!r}, indirect: {0.target_indirect}, regex: {0.target_regex}",
    ) + CLASS_DEBUG + (
        "Default: {0.default!r}, regex: {0.default_regex}",
    )

    source = Criterion("source_regex", "lookup_role")
    target = _RoleOrType("target_regex")
    default = Criterion("default_regex", "lookup_role")
    tclass = SetCriterion("tclass_regex", "lookup_class")
    source_regex = False
    source_indirect = True
    target_regex = False
    target_indirect = True
    default_regex = False
    tclass_regex = False

    def __init__(self, policy, **kwargs):
        self._ruletype = None
        super().__init__(policy, **kwargs)

    @property
    def ruletype(self):
        """The rule types to match (a frozenset of ``RBACRuletype``), None for all."""
        return self._ruletype

    @ruletype.setter
    def ruletype(self, value):
        if _empty(value):
            self._ruletype = None
        else:
            self._ruletype = frozenset(policyrep.RBACRuletype.lookup(v) for v in value)

    def _match_role(self, role, crit, regex, indirect):
        if crit is None:
            return True
        names = [role] + (list(role.expand()) if indirect else [])
        if regex:
            return any(crit.search(str(r)) for r in names)
        return any(r == crit for r in names)

    def _match_target(self, target):
        crit = self.target
        if crit is None:
            return True
        if self.target_regex:
            if self.target_indirect and isinstance(target, policyrep.BaseType):
                return any(crit.search(str(t)) for t in target.expand())
            return bool(crit.search(str(target)))
        if self.target_indirect and isinstance(target, policyrep.BaseType) and isinstance(
                crit, policyrep.BaseType):
            return bool(set(target.expand()) & set(crit.expand()))
        return target == crit

    def results(self):
        """The matching rules, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "RBAC rule ")
        for rule in self.policy.rbacrules():
            if self._ruletype is not None and rule.ruletype not in self._ruletype:
                continue
            if not self._match_role(rule.source, self.source, self.source_regex,
                                    self.source_indirect):
                continue
            if not self._match_target(rule.target):
                continue
            if self.tclass is not None:
                if rule.ruletype != policyrep.RBACRuletype.role_transition:
                    continue
                if self.tclass_regex:
                    if not self.tclass.search(str(rule.tclass)):
                        continue
                elif rule.tclass not in self.tclass:
                    continue
            if self.default is not None:
                if rule.ruletype != policyrep.RBACRuletype.role_transition:
                    continue
                if not self._match_role(rule.default, self.default, self.default_regex, False):
                    continue
            yield rule

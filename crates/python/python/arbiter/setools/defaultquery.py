"""``setools.defaultquery.DefaultQuery``: default_* rules by rule type, class, default
and range part."""

from sys import modules

from .descriptors import CriteriaDescriptor, CriteriaSetDescriptor
from .mixins import CLASS_DEBUG, MatchObjClass
from .policyrep import DefaultRangeValue, DefaultRuletype, DefaultValue
from . import query as _query
from .query import PolicyQuery, table


class DefaultQuery(MatchObjClass, PolicyQuery):
    """Query default_* statements."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = (
        "Ruletypes: {0.ruletype!r}",
    ) + CLASS_DEBUG + (
        "Default: {0.default!r}",
        "Range: {0.default_range!r}",
    )

    ruletype = CriteriaSetDescriptor(enum_class=DefaultRuletype)
    default = CriteriaDescriptor(enum_class=DefaultValue)
    default_range = CriteriaDescriptor(enum_class=DefaultRangeValue)

    def results(self):
        """The matching rules, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "default_* ")
        policy = self.policy
        rules = table(policy, "defaults", policy.defaults)
        if not (self.ruletype or self.tclass or self.default or self.default_range):
            yield from rules
            return
        for d in rules:
            if self.ruletype and d.ruletype not in self.ruletype:
                continue
            if not self._match_object_class(d):
                continue
            if self.default and d.default != self.default:
                continue
            if self.default_range:
                try:
                    if d.default_range != self.default_range:
                        continue
                except AttributeError:
                    continue
            yield d

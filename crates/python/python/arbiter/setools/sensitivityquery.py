"""``setools.sensitivityquery.SensitivityQuery``: sensitivities by name, alias and
dominance (``sens`` with ``sens_dom``/``sens_domby``)."""

from .descriptors import CriteriaDescriptor
from .mixins import ALIAS_DEBUG, MatchAlias, MatchName, NAME_DEBUG
from .query import MemoResults, PolicyQuery, policy_results


class SensitivityQuery(MemoResults, MatchAlias, MatchName, PolicyQuery):
    """Query MLS sensitivities."""

    _log_what = "sensitivity "  # in setools' INFO line (see query.log_results)
    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = NAME_DEBUG + ALIAS_DEBUG + (
        "Sens: {0.sens!r}, dom: {0.sens_dom}, domby: {0.sens_domby}",
    )

    sens = CriteriaDescriptor(lookup_function="lookup_sensitivity")
    sens_dom = False
    sens_domby = False

    def _matches(self):
        """The matching sensitivities, in the policy's order (see ``MemoResults``): a
        sequence."""
        policy = self.policy
        sens = self.sens
        if sens and not self.name and not self.alias:
            # One sensitivity's dominance over the whole table: kept per policy for the
            # looked-up sensitivity and the flags (see ``query.policy_results``).
            flags = (bool(self.sens_dom), bool(self.sens_domby))
            return policy_results(policy, "sensitivity", sens, flags,
                                  lambda: self._dominance(policy._sensitivities_all(), sens))
        sel = policy._sensitivities_all()
        if self.name:
            sel = [s for s in sel if self._match_name(s)]
        if self.alias:
            sel = [s for s in sel if self._match_alias(s)]
        if sens:
            sel = self._dominance(sel, sens)
        return sel

    def _dominance(self, sel, sens):
        """setools' ``sens`` test (dominating, dominated by, or equal) over ``sel``."""
        if self.sens_dom:
            return [s for s in sel if not sens < s]
        if self.sens_domby:
            return [s for s in sel if not sens > s]
        return [s for s in sel if not sens != s]

"""``setools.sensitivityquery.SensitivityQuery``: sensitivities by name, alias and
dominance (``sens`` with ``sens_dom``/``sens_domby``)."""

from sys import modules

from .descriptors import CriteriaDescriptor
from .mixins import ALIAS_DEBUG, MatchAlias, MatchName, NAME_DEBUG
from .query import PolicyQuery, log_results


class SensitivityQuery(MatchAlias, MatchName, PolicyQuery):
    """Query MLS sensitivities."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = NAME_DEBUG + ALIAS_DEBUG + (
        "Sens: {0.sens!r}, dom: {0.sens_dom}, domby: {0.sens_domby}",
    )

    sens = CriteriaDescriptor(lookup_function="lookup_sensitivity")
    sens_dom = False
    sens_domby = False

    def results(self):
        """The matching sensitivities, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            log_results(self, "sensitivity ")
        sel = self.policy._sensitivities_all()
        if self.name:
            sel = [s for s in sel if self._match_name(s)]
        if self.alias:
            sel = [s for s in sel if self._match_alias(s)]
        sens = self.sens
        if sens:
            if self.sens_dom:
                sel = [s for s in sel if not sens < s]
            elif self.sens_domby:
                sel = [s for s in sel if not sens > s]
            else:
                sel = [s for s in sel if not sens != s]
        yield from sel

"""``setools.sensitivityquery.SensitivityQuery``: sensitivities by name, alias and
dominance (``sens`` with ``sens_dom``/``sens_domby``)."""

from .descriptors import CriteriaDescriptor
from .mixins import MatchAlias, MatchName
from .query import PolicyQuery


class SensitivityQuery(MatchAlias, MatchName, PolicyQuery):
    """Query MLS sensitivities."""

    sens = CriteriaDescriptor(lookup_function="lookup_sensitivity")
    sens_dom = False
    sens_domby = False

    def results(self):
        """The matching sensitivities, in the policy's order."""
        for s in self.policy.sensitivities():
            if not self._match_name(s):
                continue
            if not self._match_alias(s):
                continue
            if self.sens:
                if self.sens_dom:
                    if self.sens < s:
                        continue
                elif self.sens_domby:
                    if self.sens > s:
                        continue
                elif self.sens != s:
                    continue
            yield s

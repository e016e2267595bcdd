"""``setools.initsidquery.InitialSIDQuery``: initial SIDs by name and context."""

from sys import modules

from .mixins import MatchContext, MatchName
from .query import PolicyQuery, log_results


class InitialSIDQuery(MatchName, MatchContext, PolicyQuery):
    """Query initial SID statements."""

    def results(self):
        """The matching initial SIDs, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            log_results(self, "initial SID ")
        sel = self.policy._labeling("initialsids")
        if self.name:
            sel = [i for i in sel if self._match_name(i)]
        sel = self._filter_context(sel)
        yield from sel

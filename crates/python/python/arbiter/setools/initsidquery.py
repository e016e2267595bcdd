"""``setools.initsidquery.InitialSIDQuery``: initial SIDs by name and context."""

from sys import modules

from .mixins import CONTEXT_DEBUG, MatchContext, MatchName, NAME_DEBUG
from . import query as _query
from .query import PolicyQuery


class InitialSIDQuery(MatchName, MatchContext, PolicyQuery):
    """Query initial SID statements."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = NAME_DEBUG + CONTEXT_DEBUG

    def results(self):
        """The matching initial SIDs, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "initial SID ")
        sel = self.policy._labeling("initialsids")
        if self.name:
            sel = [i for i in sel if self._match_name(i)]
        sel = self._filter_context(sel)
        yield from sel

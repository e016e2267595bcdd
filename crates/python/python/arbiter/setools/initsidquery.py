"""``setools.initsidquery.InitialSIDQuery``: initial SIDs by name and context."""

from .mixins import MatchContext, MatchName
from .query import PolicyQuery


class InitialSIDQuery(MatchName, MatchContext, PolicyQuery):
    """Query initial SID statements."""

    def results(self):
        """The matching initial SIDs, in the policy's order."""
        for i in self.policy.initialsids():
            if not self._match_name(i):
                continue
            if not self._match_context(i.context):
                continue
            yield i

"""``setools.devicetreeconquery.DevicetreeconQuery``: devicetreecon statements by path
(exact) and context."""

from .mixins import MatchContext
from .query import PolicyQuery, log_results


class DevicetreeconQuery(MatchContext, PolicyQuery):
    """Query devicetreecon statements."""

    path = None

    def results(self):
        """The matching statements, in the policy's order."""
        log_results(self, "")
        for con in self.policy.devicetreecons():
            if self.path and self.path != con.path:
                continue
            if not self._match_context(con.context):
                continue
            yield con

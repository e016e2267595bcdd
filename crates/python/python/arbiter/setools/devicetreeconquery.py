"""``setools.devicetreeconquery.DevicetreeconQuery``: devicetreecon statements by path
(exact) and context."""

from sys import modules

from .mixins import CONTEXT_DEBUG, MatchContext
from . import query as _query
from .query import PolicyQuery


class DevicetreeconQuery(MatchContext, PolicyQuery):
    """Query devicetreecon statements."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = (
        "Path: {0.path!r}",
    ) + CONTEXT_DEBUG

    path = None

    def results(self):
        """The matching statements, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "")
        for con in self.policy.devicetreecons():
            if self.path and self.path != con.path:
                continue
            if not self._match_context(con.context):
                continue
            yield con

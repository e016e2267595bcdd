"""``setools.ibendportconquery.IbendportconQuery``: ibendportcon statements by device
name, port and context."""

from sys import modules

from .mixins import CONTEXT_DEBUG, MatchContext, MatchName, NAME_DEBUG
from . import query as _query
from .query import PolicyQuery
from . import util as _util


class IbendportconQuery(MatchContext, MatchName, PolicyQuery):
    """Query ibendportcon statements."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = NAME_DEBUG + (
        "Port: {0.port!r}",
    ) + CONTEXT_DEBUG

    _port = None

    @property
    def port(self):
        """The port criterion (1-255)."""
        return self._port

    @port.setter
    def port(self, value):
        if value:
            pending = int(value)
            if not 0 < pending < 256:
                raise ValueError("Endport value must be 1-255.")
            self._port = pending
        else:
            self._port = None

    def results(self):
        """The matching statements, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "ibendportcon ")
        for endport in self.policy.ibendportcons():
            if self.name and not _util.match_regex(endport.name, self.name, self.name_regex):
                continue
            if self.port is not None and self.port != endport.port:
                continue
            if not self._match_context(endport.context):
                continue
            yield endport

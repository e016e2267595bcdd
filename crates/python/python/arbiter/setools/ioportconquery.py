"""``setools.ioportconquery.IoportconQuery``: ioportcon statements by port range (equal, subset, overlap, superset, proper) and context."""

from sys import modules

from .policyrep import IoportconRange
from .mixins import CONTEXT_DEBUG, MatchContext
from . import query as _query
from .query import PolicyQuery
from . import util as _util


class IoportconQuery(MatchContext, PolicyQuery):
    """Query ioportcon statements."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = (
        "Ports: {0.ports!r}, overlap: {0.ports_overlap}, subset: {0.ports_subset}, "
        "superset: {0.ports_superset}, proper: {0.ports_proper}",
    ) + CONTEXT_DEBUG

    _ports = None
    ports_subset = False
    ports_overlap = False
    ports_superset = False
    ports_proper = False

    @property
    def ports(self):
        """The range criterion (an ``IoportconRange``)."""
        return self._ports

    @ports.setter
    def ports(self, value):
        if value:
            pending = IoportconRange(*value)
            if pending.low < 1 or pending.high < 1:
                raise ValueError("Port numbers must be positive: {0.low}-{0.high}".format(pending))
            if pending.low > pending.high:
                raise ValueError("The low port must be smaller than the high port: {0.low}-{0.high}".format(pending))
            self._ports = pending
        else:
            self._ports = None

    def results(self):
        """The matching statements, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "")
        for con in self.policy.ioportcons():
            if self.ports and not _util.match_range(con.ports, self.ports, self.ports_subset,
                                              self.ports_overlap, self.ports_superset,
                                              self.ports_proper):
                continue
            if not self._match_context(con.context):
                continue
            yield con

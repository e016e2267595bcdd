"""``setools.iomemconquery.IomemconQuery``: iomemcon statements by address range (equal, subset, overlap, superset, proper) and context."""

from sys import modules

from .policyrep import IomemconRange
from .mixins import CONTEXT_DEBUG, MatchContext
from . import query as _query
from .query import PolicyQuery
from . import util as _util


class IomemconQuery(MatchContext, PolicyQuery):
    """Query iomemcon statements."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = (
        "Address: {0.addr!r}, overlap: {0.addr_overlap}, subset: {0.addr_subset}, "
        "superset: {0.addr_superset}, proper: {0.addr_proper}",
    ) + CONTEXT_DEBUG

    _addr = None
    addr_subset = False
    addr_overlap = False
    addr_superset = False
    addr_proper = False

    @property
    def addr(self):
        """The range criterion (an ``IomemconRange``)."""
        return self._addr

    @addr.setter
    def addr(self, value):
        if value:
            pending = IomemconRange(*value)
            if pending.low < 1 or pending.high < 1:
                raise ValueError("Memory address must be positive: {0.low}-{0.high}".format(pending))
            if pending.low > pending.high:
                raise ValueError("The low mem addr must be smaller than the high mem addr: {0.low}-{0.high}".format(pending))
            self._addr = pending
        else:
            self._addr = None

    def results(self):
        """The matching statements, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "")
        for con in self.policy.iomemcons():
            if self.addr and not _util.match_range(con.addr, self.addr, self.addr_subset,
                                              self.addr_overlap, self.addr_superset,
                                              self.addr_proper):
                continue
            if not self._match_context(con.context):
                continue
            yield con

"""``setools.pcideviceconquery.PcideviceconQuery``: pcidevicecon statements by device number and context."""

from sys import modules

from .mixins import CONTEXT_DEBUG, MatchContext
from . import query as _query
from .query import PolicyQuery


class PcideviceconQuery(MatchContext, PolicyQuery):
    """Query pcidevicecon statements."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = (
        "Device ID: {0.device!r}",
    ) + CONTEXT_DEBUG

    _device = None

    @property
    def device(self):
        """The device criterion (a positive number, or None for any)."""
        return self._device

    @device.setter
    def device(self, value):
        if value:
            if value < 1:
                raise ValueError("PCI device ID must be positive: {0}".format(value))
            self._device = value
        else:
            self._device = None

    def results(self):
        """The matching statements, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "")
        for con in self.policy.pcidevicecons():
            if self.device and self.device != con.device:
                continue
            if not self._match_context(con.context):
                continue
            yield con

"""``setools.pirqconquery.PirqconQuery``: pirqcon statements by IRQ number and context."""

from sys import modules

from .mixins import CONTEXT_DEBUG, MatchContext
from . import query as _query
from .query import PolicyQuery


class PirqconQuery(MatchContext, PolicyQuery):
    """Query pirqcon statements."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = (
        "IRQ: {0.irq!r}",
    ) + CONTEXT_DEBUG

    _irq = None

    @property
    def irq(self):
        """The irq criterion (a positive number, or None for any)."""
        return self._irq

    @irq.setter
    def irq(self, value):
        if value:
            if value < 1:
                raise ValueError("The IRQ must be positive: {0}".format(value))
            self._irq = value
        else:
            self._irq = None

    def results(self):
        """The matching statements, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "")
        for con in self.policy.pirqcons():
            if self.irq and self.irq != con.irq:
                continue
            if not self._match_context(con.context):
                continue
            yield con

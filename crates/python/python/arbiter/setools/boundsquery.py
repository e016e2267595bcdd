"""``setools.boundsquery.BoundsQuery``: typebounds statements by parent and child."""

from sys import modules

from . import policyrep
from . import query as _query
from .query import PolicyQuery, Criterion, _empty


class BoundsQuery(PolicyQuery):
    """Query the bounds statements (typebounds)."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = (
        "Ruletypes: {0.ruletype}",
        "Parent: {0.parent!r}, regex: {0.parent_regex}",
        "Child: {0.child!r}, regex: {0.child_regex}",
    )

    parent = Criterion("parent_regex")
    child = Criterion("child_regex")
    parent_regex = False
    child_regex = False

    def __init__(self, policy, **kwargs):
        self._ruletype = None
        super().__init__(policy, **kwargs)

    @property
    def ruletype(self):
        """The rule types to match (a frozenset of ``BoundsRuletype``), None for all."""
        return self._ruletype

    @ruletype.setter
    def ruletype(self, value):
        if _empty(value):
            self._ruletype = None
        else:
            self._ruletype = frozenset(policyrep.BoundsRuletype.lookup(v) for v in value)

    def results(self):
        """The matching statements, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "bounds ")
        for b in self.policy.bounds():
            if self._ruletype is not None and b.ruletype not in self._ruletype:
                continue
            if not _query.match_name(b.parent, self.parent, self.parent_regex):
                continue
            if not _query.match_name(b.child, self.child, self.child_regex):
                continue
            yield b

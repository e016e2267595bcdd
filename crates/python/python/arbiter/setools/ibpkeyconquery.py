"""``setools.ibpkeyconquery.IbpkeyconQuery``: ibpkeycon statements by subnet prefix,
partition key range (equal, subset, overlap, superset, proper) and context."""

from ipaddress import IPv6Address
from sys import modules

from .mixins import CONTEXT_DEBUG, MatchContext
from .policyrep import IbpkeyconRange
from . import query as _query
from .query import PolicyQuery
from . import util as _util


class IbpkeyconQuery(MatchContext, PolicyQuery):
    """Query ibpkeycon statements."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = (
        "Subnet Prefix: {0.subnet_prefix}",
        "Pkeys: {0.pkeys}, overlap: {0.pkeys_overlap}, subset: {0.pkeys_subset}, "
        "superset: {0.pkeys_superset}, proper: {0.pkeys_proper}",
    ) + CONTEXT_DEBUG

    _subnet_prefix = None
    _pkeys = None
    pkeys_subset = False
    pkeys_overlap = False
    pkeys_superset = False
    pkeys_proper = False

    @property
    def pkeys(self):
        """The partition key range criterion (an ``IbpkeyconRange``)."""
        return self._pkeys

    @pkeys.setter
    def pkeys(self, value):
        if value is not None:
            pending = IbpkeyconRange(*value)
            if pending.low < 1 or pending.high < 1:
                raise ValueError("Pkeys must be positive: {0.low:#x}-{0.high:#x}".format(pending))
            if pending.low > 0xffff or pending.high > 0xffff:
                raise ValueError(
                    "Pkeys maximum is 0xffff: {0.low:#x}-{0.high:#x}".format(pending))
            if pending.low > pending.high:
                raise ValueError(
                    "The low pkey must be smaller than the high pkey: {0.low:#x}-{0.high:#x}"
                    .format(pending))
            self._pkeys = pending
        else:
            self._pkeys = None

    @property
    def subnet_prefix(self):
        """The subnet prefix criterion (an ``IPv6Address``)."""
        return self._subnet_prefix

    @subnet_prefix.setter
    def subnet_prefix(self, value):
        if value:
            self._subnet_prefix = IPv6Address(value)
        else:
            self._subnet_prefix = None

    def results(self):
        """The matching statements, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "ibpkeycon ")
        for pk in self.policy.ibpkeycons():
            if self.subnet_prefix is not None and self.subnet_prefix != pk.subnet_prefix:
                continue
            if self.pkeys and not _util.match_range(pk.pkeys, self.pkeys, self.pkeys_subset,
                                              self.pkeys_overlap, self.pkeys_superset,
                                              self.pkeys_proper):
                continue
            if not self._match_context(pk.context):
                continue
            yield pk

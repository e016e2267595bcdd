"""``setools.terulequery.TERuleQuery`` on the native query layer: the criteria are
validated in Python when set (raising setools' exceptions), and ``results()`` is one scan
in Rust that returns only the matching rules, in setools' ``terules()`` order."""

from sys import modules

from . import policyrep
from .descriptors import _compile
from .mixins import CLASS_DEBUG, PERMS_DEBUG
from . import query as _query
from .query import PolicyQuery, Criterion, SetCriterion, _empty, validate_perms


class TERuleQuery(PolicyQuery):
    """Query the TE rules (allow, auditallow, dontaudit, the xperm rules, type_transition,
    type_change, type_member and filename type_transition rules)."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = (
        "Ruletypes: {0.ruletype}",
        "Source: {0.source!r}, indirect: {0.source_indirect}, regex: {0.source_regex}",
        "Target: {0.target!r}, indirect: {0.target_indirect}, regex: {0.target_regex}",
    ) + CLASS_DEBUG + PERMS_DEBUG + (
        "Xperms: {0.xperms!r}, eq: {0.xperms_equal}",
        "Default: {0.default!r}, regex: {0.default_regex}",
        "Boolean: {0.boolean!r}, eq: {0.boolean_equal}, regex: {0.boolean_regex}",
    )

    source = Criterion("source_regex", "lookup_type_or_attr")
    target = Criterion("target_regex", "lookup_type_or_attr")
    default = Criterion("default_regex", "lookup_type_or_attr")
    tclass = SetCriterion("tclass_regex", "lookup_class")
    boolean = SetCriterion("boolean_regex", "lookup_boolean")

    source_regex = False
    source_indirect = True
    target_regex = False
    target_indirect = True
    default_regex = False
    tclass_regex = False
    boolean_regex = False
    boolean_equal = False
    perms_equal = False
    perms_regex = False
    perms_subset = False
    xperms_equal = False

    def __init__(self, policy, **kwargs):
        self._ruletype = None
        self._perms = None
        self._xperms = None
        super().__init__(policy, **kwargs)

    @property
    def ruletype(self):
        """The rule types to match (a frozenset of ``TERuletype``), None for all."""
        return self._ruletype

    @ruletype.setter
    def ruletype(self, value):
        if _empty(value):
            self._ruletype = None
            return
        # An unknown name raises the enum's KeyError, as setools' does.
        self._ruletype = frozenset(policyrep.TERuletype.lookup(v) for v in value)

    @property
    def perms(self):
        """The permissions to match (a frozenset of names)."""
        return self._perms

    @perms.setter
    def perms(self, value):
        if _empty(value):
            self._perms = None
            return
        if self.perms_regex:
            self._perms = _compile(value)
            return
        perms = frozenset(value)
        classes = None if self.tclass_regex else self.tclass
        validate_perms(self.policy, perms, classes)
        self._perms = perms

    @property
    def xperms(self):
        """The extended permissions to match, as setools holds them: an ``IoctlSet`` of
        every number in the ranges given (the ranges are kept for the native scan)."""
        if self._xperms is None:
            return None
        return policyrep.IoctlSet(
            v for low, high in self._xperms for v in range(low, high + 1))

    @xperms.setter
    def xperms(self, value):
        if _empty(value):
            self._xperms = None
            return
        ranges = []
        for low, high in value:
            for v in (low, high):
                if not 0 <= v <= 0xFFFF:
                    raise ValueError("{0:#07x} is not a valid ioctl.".format(v))
            if high < low:
                low, high = high, low
            ranges.append((low, high))
        self._xperms = ranges

    @staticmethod
    def _text(crit, regex):
        if crit is None:
            return None
        return crit.pattern if regex else str(crit)

    @staticmethod
    def _list(crit, regex):
        if crit is None:
            return None
        if regex:
            return crit.pattern
        return ",".join(str(c) for c in crit)

    def results(self):
        """The matching rules, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "TE rule ")
        re = modules.get("re")  # a pattern exists only once `re` was imported
        if re is not None and isinstance(self._perms, re.Pattern):
            # Permission regexes are matched here: the native scan takes names.
            for rule in policyrep._te_rules(self.policy, self._native(None)):
                if rule._row[4] == 0 and any(self._perms.search(p) for p in rule.perms):
                    yield rule
            return
        yield from policyrep._te_rules(self.policy, self._native(self._perms))

    def _native(self, perms):
        xperms = None
        if self._xperms:
            xperms = ",".join("{0:#x}-{1:#x}".format(lo, hi) for lo, hi in self._xperms)
        return self.policy._db.te_query(
            sorted(str(r) for r in self._ruletype) if self._ruletype else [],
            self._text(self.source, self.source_regex),
            bool(self.source_regex),
            bool(self.source_indirect),
            self._text(self.target, self.target_regex),
            bool(self.target_regex),
            bool(self.target_indirect),
            self._list(self.tclass, self.tclass_regex),
            bool(self.tclass_regex),
            ",".join(sorted(perms)) if perms else None,
            bool(self.perms_equal),
            bool(self.perms_subset),
            xperms,
            bool(self.xperms_equal),
            self._text(self.default, self.default_regex),
            bool(self.default_regex),
            self._list(self.boolean, self.boolean_regex),
            bool(self.boolean_regex),
            bool(self.boolean_equal),
        )

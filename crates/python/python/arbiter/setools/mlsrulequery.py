"""``setools.mlsrulequery.MLSRuleQuery``: range_transition rules by rule type, source and
target (direct, regex or through attributes), class and range (equal, subset, overlap,
superset, proper)."""

from .descriptors import CriteriaDescriptor, CriteriaSetDescriptor
from .mixins import CLASS_DEBUG, MatchObjClass
from .policyrep import MLSRuletype
from .query import MemoResults, PolicyQuery, policy_table
from . import util as _util


class MLSRuleQuery(MemoResults, MatchObjClass, PolicyQuery):
    """Query MLS rules."""

    _log_what = "MLS rule "  # in setools' INFO line (see query.log_results)
    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = (
        "Ruletypes: {0.ruletype}",
        "Source: {0.source!r}, indirect: {0.source_indirect}, regex: {0.source_regex}",
        "Target: {0.target!r}, indirect: {0.target_indirect}, regex: {0.target_regex}",
    ) + CLASS_DEBUG + (
        "Default: {0.default!r}, overlap: {0.default_overlap}, subset: {0.default_subset}, "
        "superset: {0.default_superset}, proper: {0.default_proper}",
    )

    ruletype = CriteriaSetDescriptor(enum_class=MLSRuletype)
    source = CriteriaDescriptor("source_regex", "lookup_type_or_attr")
    source_regex = False
    source_indirect = True
    target = CriteriaDescriptor("target_regex", "lookup_type_or_attr")
    target_regex = False
    target_indirect = True
    tclass = CriteriaSetDescriptor("tclass_regex", "lookup_class")
    tclass_regex = False
    default = CriteriaDescriptor(lookup_function="lookup_range")
    default_overlap = False
    default_subset = False
    default_superset = False
    default_proper = False

    def _matches(self):
        """The matching rules, in the policy's order (see ``MemoResults``): a sequence."""
        policy = self.policy
        tclass = self.tclass
        if tclass and not self.tclass_regex:
            # The rules of the criterion classes from an index by class (built once per
            # policy); several classes' rules merged back into the policy's order.
            by_class = policy_table(policy, "query_mlsrules_by_class", _by_class)
            # The criterion's frozenset itself is a key once seen (a one-name criterion
            # is the same frozenset object at every construction, from the lookup memo,
            # so its hash is computed once).
            sel = by_class.get(tclass)
            if sel is None:
                if len(tclass) == 1:
                    for c in tclass:
                        sel = by_class.get(c._value, ())
                else:
                    sel = tuple(r for _, r in sorted(
                        (n, r) for c in tclass for n, r in by_class.get(("at", c._value), ())))
                if len(by_class) < _CLASS_SETS_LIMIT:
                    by_class[tclass] = sel
            tclass = None
        else:
            sel = policy._mlsrules_all()
        ruletype, source, target, default = self.ruletype, self.source, self.target, self.default
        if not (ruletype or source or target or tclass or default):
            return sel
        return [rule for rule in sel if self._match_rule(rule, ruletype, source, target,
                                                          tclass, default)]

    def _match_rule(self, rule, ruletype, source, target, tclass, default):
        """setools' tests of one rule, for the criteria that are set."""
        if ruletype and rule.ruletype not in ruletype:
            return False
        if source and not _util.match_indirect_regex(
                rule.source, source, self.source_indirect, self.source_regex):
            return False
        if target and not _util.match_indirect_regex(
                rule.target, target, self.target_indirect, self.target_regex):
            return False
        if tclass and not self._match_object_class(rule):
            return False
        if default and not _util.match_range(
                rule.default, default, self.default_subset, self.default_overlap,
                self.default_superset, self.default_proper):
            return False
        return True


# How many class sets the per-policy index keeps besides its own entries (see
# ``_matches``), so that memory stays bounded whatever a script asks.
_CLASS_SETS_LIMIT = 1024


def _by_class(policy):
    """Class value to its rules in order (a tuple), and ``("at", value)`` to
    ``(position, rule)`` pairs for merging several classes' rules; ``_matches`` adds
    class criteria (frozensets) and their rules."""
    rules = policy._mlsrules_all()
    out = {}
    for n, r in enumerate(rules):
        out.setdefault(r.tclass._value, []).append(r)
        out.setdefault(("at", r.tclass._value), []).append((n, r))
    return {k: tuple(v) if type(k) is int else v for k, v in out.items()}

"""``setools.commonquery.CommonQuery``: commons by name and permissions."""

from .mixins import NAME_DEBUG, PERMS_DEBUG
from . import query as _query
from .query import (
    PolicyQuery, Criterion, SetCriterion, every_perm, filter_names, table, validate_perms,
    MemoResults, policy_table,
)


class _CheckedPerms(SetCriterion):
    """Permission names, checked against every class when set."""

    def _store(self, obj, value):
        if value and not obj.perms_regex:
            # The usual case in one step: names that every class's permissions hold
            # (kept per policy) are valid; anything else is checked (and reported) by
            # ``validate_perms``, as setools checks it.
            perms = frozenset(value)
            policy = obj.policy
            if not perms <= every_perm(policy):
                validate_perms(policy, value)
            obj.__dict__[self.name] = perms
            return
        super()._store(obj, value)


class CommonQuery(MemoResults, PolicyQuery):
    """Query commons."""

    _log_what = "common "  # in setools' INFO line (see query.log_results)
    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = NAME_DEBUG + PERMS_DEBUG

    name = Criterion("name_regex")
    perms = _CheckedPerms("perms_regex")
    name_regex = False
    alias_deref = False
    perms_regex = False
    perms_equal = False
    perms_subset = False

    def _matches(self):
        """The matching commons, in the policy's order (see ``MemoResults``): a
        sequence."""
        policy = self.policy
        perms = self.perms
        if perms is not None and self.name is None and not self.perms_equal \
                and not self.perms_regex and len(perms) == 1 and not self.perms_subset:
            # The commons with one permission, from a per-policy index.
            by_perm = policy_table(policy, "query_commons_by_perm", _by_perm)
            for perm in perms:
                return by_perm.get(perm, ())
        commons = filter_names(table(policy, "commons", policy.commons), self.name,
                               self.name_regex, policy, "commons")
        if perms is None:
            return commons
        if self.perms_subset:
            # setools' MatchPermission: every criterion permission in the common's.
            return [c for c in commons if c.perms >= perms]
        if not self.perms_equal and not self.perms_regex:
            return [c for c in commons if not perms.isdisjoint(c.perms)]
        equal, regex = self.perms_equal, self.perms_regex
        return [c for c in commons if _query.match_set(c.perms, perms, equal, regex)]


def _by_perm(policy):
    """Permission name to the commons that have it (a tuple), in order."""
    out = {}
    for c in table(policy, "commons", policy.commons):
        for perm in c.perms:
            out.setdefault(perm, []).append(c)
    return {perm: tuple(cs) for perm, cs in out.items()}

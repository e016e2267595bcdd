"""``setools.commonquery.CommonQuery``: commons by name and permissions."""

from sys import modules

from .mixins import NAME_DEBUG, PERMS_DEBUG
from .query import (
    PolicyQuery, Criterion, SetCriterion, every_perm, filter_names, match_set, table,
    validate_perms, log_results,
)


class _CheckedPerms(SetCriterion):
    """Permission names, checked against every class when set."""

    def _store(self, obj, value):
        if value and not obj.perms_regex:
            # The usual case in one step: names that every class's permissions hold
            # (kept per policy) are valid; anything else is checked (and reported) by
            # ``validate_perms``, as setools checks it.
            perms = frozenset(value)
            if not perms <= every_perm(obj.policy):
                validate_perms(obj.policy, value)
            obj.__dict__[self.name] = perms
            return
        super()._store(obj, value)


class CommonQuery(PolicyQuery):
    """Query commons."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = NAME_DEBUG + PERMS_DEBUG

    name = Criterion("name_regex")
    perms = _CheckedPerms("perms_regex")
    name_regex = False
    alias_deref = False
    perms_regex = False
    perms_equal = False
    perms_subset = False

    def results(self):
        """The matching commons, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            log_results(self, "common ")
        policy = self.policy
        perms = self.perms
        if perms is not None and self.name is None and not self.perms_equal \
                and not self.perms_regex and len(perms) == 1 and not self.perms_subset:
            # The commons with one permission, from a per-policy index.
            by_perm = policy._table("query_commons_by_perm", lambda: _by_perm(
                table(policy, "commons", policy.commons)))
            yield from by_perm.get(next(iter(perms)), ())
            return
        commons = filter_names(table(policy, "commons", policy.commons), self.name,
                               self.name_regex, policy, "commons")
        if perms is None:
            yield from commons
        elif self.perms_subset:
            # setools' MatchPermission: every criterion permission in the common's.
            yield from [c for c in commons if c.perms >= perms]
        elif not self.perms_equal and not self.perms_regex:
            yield from [c for c in commons if not perms.isdisjoint(c.perms)]
        else:
            for c in commons:
                if match_set(c.perms, perms, self.perms_equal, self.perms_regex):
                    yield c


def _by_perm(commons):
    """Permission name to the commons that have it, in order."""
    out = {}
    for c in commons:
        for perm in c.perms:
            out.setdefault(perm, []).append(c)
    return out

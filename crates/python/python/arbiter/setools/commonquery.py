"""``setools.commonquery.CommonQuery``: commons by name and permissions."""

from .query import PolicyQuery, Criterion, SetCriterion, match_name, match_set, validate_perms


class _CheckedPerms(SetCriterion):
    """Permission names, checked against every class when set."""

    def _store(self, obj, value):
        if value and not getattr(obj, "perms_regex"):
            validate_perms(obj.policy, value)
        super()._store(obj, value)


class CommonQuery(PolicyQuery):
    """Query commons."""

    name = Criterion("name_regex")
    perms = _CheckedPerms("perms_regex")
    name_regex = False
    perms_regex = False
    perms_equal = False

    def results(self):
        """The matching commons, in the policy's order."""
        for c in self.policy.commons():
            if not match_name(c, self.name, self.name_regex):
                continue
            if not match_set(c.perms, self.perms, self.perms_equal, self.perms_regex):
                continue
            yield c

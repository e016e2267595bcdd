"""``setools.objclassquery.ObjClassQuery``: classes by name, common and permissions."""

from .query import PolicyQuery, Criterion, SetCriterion, match_name, match_set


class ObjClassQuery(PolicyQuery):
    """Query object classes. With ``perms_indirect`` (the default) a class's permissions
    include its common's."""

    name = Criterion("name_regex")
    common = Criterion("common_regex", "lookup_common")
    perms = SetCriterion("perms_regex")
    name_regex = False
    common_regex = False
    perms_regex = False
    perms_equal = False
    perms_indirect = True

    def results(self):
        """The matching classes, in the policy's order."""
        for c in self.policy.classes():
            if not match_name(c, self.name, self.name_regex):
                continue
            if self.common is not None:
                try:
                    com = c.common
                except AttributeError:
                    continue
                if not match_name(com, self.common, self.common_regex):
                    continue
            if self.perms is not None:
                perms = set(c.perms)
                if self.perms_indirect:
                    try:
                        perms |= c.common.perms
                    except AttributeError:
                        pass
                if not match_set(perms, self.perms, self.perms_equal, self.perms_regex):
                    continue
            yield c

"""``setools.objclassquery.ObjClassQuery``: classes by name, common and permissions."""

from .query import PolicyQuery, Criterion, SetCriterion, filter_names, match_name, match_set


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
        common, common_regex = self.common, self.common_regex
        want, indirect = self.perms, self.perms_indirect
        equal, regex = self.perms_equal, self.perms_regex
        for c in filter_names(self.policy.classes(), self.name, self.name_regex):
            # c._common is None exactly where c.common raises NoCommon.
            com = None if c._common is None else c.common
            if common is not None:
                if com is None or not match_name(com, common, common_regex):
                    continue
            if want is not None and not equal and not regex:
                # Intersection without building the union (the common case).
                if want.isdisjoint(c.perms) and not (
                        indirect and com is not None and not want.isdisjoint(com.perms)):
                    continue
            elif want is not None:
                perms = c.perms
                if indirect and com is not None:
                    perms = perms | com.perms
                if not match_set(perms, want, equal, regex):
                    continue
            yield c

"""``setools.objclassquery.ObjClassQuery``: classes by name, common and permissions."""

from sys import modules

from .mixins import NAME_DEBUG
from . import query as _query
from .query import PolicyQuery, Criterion, SetCriterion, filter_names, table


def _has_any(c, perms, indirect):
    """Whether class ``c`` has one of ``perms`` (a set), itself or (``indirect``) through
    its common."""
    if not perms.isdisjoint(c.perms):
        return True
    # c._common is None exactly where c.common raises NoCommon.
    return indirect and c._common is not None and not perms.isdisjoint(c.common.perms)


def _classes_with_perm(policy, classes, perm, indirect):
    """The classes having ``perm`` (with ``indirect``, also through their common), in
    order, once per policy, permission and mode: a scan of the classes on the first
    query (an index of every permission's classes was 37 kB kept for the whole run)."""
    cache = policy._table("query_classes_with_perm", dict)
    key = (perm, indirect)
    hit = cache.get(key)
    if hit is None:
        want = {perm}
        hit = [c for c in classes if _has_any(c, want, indirect)]
        if not hit:
            # No class has it: not kept, so that unknown names cannot grow the cache.
            return hit
        cache[key] = hit
    return hit


class ObjClassQuery(PolicyQuery):
    """Query object classes. With ``perms_indirect`` (the default) a class's permissions
    include its common's."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = NAME_DEBUG + (
        "Common: {0.common!r}, regex: {0.common_regex}",
        "Perms: {0.perms}, regex: {0.perms_regex}, eq: {0.perms_equal}, "
        "indirect: {0.perms_indirect}",
    )

    name = Criterion("name_regex")
    common = Criterion("common_regex", "lookup_common")
    perms = SetCriterion("perms_regex")
    name_regex = False
    alias_deref = False
    common_regex = False
    perms_regex = False
    perms_equal = False
    perms_indirect = True

    def results(self):
        """The matching classes, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "object class ")
        policy = self.policy
        all_classes = table(policy, "classes", policy.classes)
        if self.name is None:
            classes = all_classes
        else:
            classes = filter_names(all_classes, self.name, self.name_regex, policy, "classes")
        common, common_regex = self.common, self.common_regex
        want, indirect = self.perms, self.perms_indirect
        equal, regex = self.perms_equal, self.perms_regex
        if want is not None and not equal and not regex:
            # Intersection: the classes that have one of the permissions, from the index.
            if len(want) == 1 and classes is all_classes:
                # One permission (the usual case): its classes in order, kept per policy.
                classes = _classes_with_perm(policy, all_classes, next(iter(want)),
                                             bool(indirect))
            else:
                classes = [c for c in classes if _has_any(c, want, indirect)]
            want = None
        if common is None and want is None:
            yield from classes
            return
        for c in classes:
            # c._common is None exactly where c.common raises NoCommon.
            com = None if c._common is None else c.common
            if common is not None:
                if com is None or not _query.match_name(com, common, common_regex):
                    continue
            if want is not None:
                perms = c.perms
                if indirect and com is not None:
                    perms = perms | com.perms
                if not _query.match_set(perms, want, equal, regex):
                    continue
            yield c

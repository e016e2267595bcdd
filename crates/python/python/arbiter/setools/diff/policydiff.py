"""``PolicyDifference``: each section computed on first use of one of its attributes (as
setools does), from the two policies' ``arbiter.setools`` objects.

Matching follows setools 4.4.1: symbols are the same when their names are; a modified
symbol is keyed by its left object; added items come from the right policy, removed ones
from the left; "matched" sets hold (left, right) pairs; permission and alias sets are plain
strings. Rules are compared expanded (one source and one target each), by the key setools
compares: role allows by (source, target), role transitions by (source, target, class)
with the default compared, typebounds by child with the parent compared.
"""

from ..exception import MLSDisabled, NoCommon
from ..policyrep import BoundsRuletype, RBACRuletype
from . import labeling_mls, terules
from .labeling_mls import LabelingMLSDifference, expanded, keyed, level_key, range_key
from .records import (
    ModifiedBoolean,
    ModifiedBounds,
    ModifiedCommon,
    ModifiedObjClass,
    ModifiedProperty,
    ModifiedRBACRule,
    ModifiedRole,
    ModifiedType,
    ModifiedTypeAttribute,
    ModifiedUser,
)

def _split(left, right):
    """(added: right items, removed: left items, matched: {(left, right)}) by name."""
    added, removed, matched = keyed(left, right)
    return added, removed, set(matched)


def _split_rules(left, right, key):
    """``keyed`` over expanded rules, compared by ``key``; the first rule of a key wins."""
    return keyed(expanded(left), expanded(right), key)


def _user_mls(user):
    """(level, range, level key, range key), or the MLS-disabled text and no keys."""
    try:
        level, range_ = user.mls_level, user.mls_range
    except MLSDisabled:
        return "None (MLS Disabled)", "None (MLS Disabled)", None, None
    return level, range_, level_key(level), range_key(range_)


class PolicyDifference(LabelingMLSDifference):

    """The differences from ``left`` to ``right`` (two ``SELinuxPolicy``)."""

    # attribute -> the method that computes its section.
    _SECTIONS = {}

    def __init__(self, left_policy, right_policy):
        self._left = left_policy
        self._right = right_policy
        self._results = {}

    @property
    def left_policy(self):
        return self._left

    @left_policy.setter
    def left_policy(self, policy):
        self._left = policy
        self._results = {}

    @property
    def right_policy(self):
        return self._right

    @right_policy.setter
    def right_policy(self, policy):
        self._right = policy
        self._results = {}

    def __getattr__(self, name):
        section = type(self)._SECTIONS.get(name)
        if section is not None:
            results = self.__dict__["_results"]
            if name not in results:
                results.update(section(self))
            return results[name]
        raise AttributeError(
            "'PolicyDifference' object has no attribute '{0}'".format(name))

    # Each section returns its attributes as a dict.

    def _diff_properties(self):
        left, right = self._left, self._right
        modified = []
        for prop, attr in (("handle_unknown", "handle_unknown"), ("MLS", "mls"),
                           ("version", "version")):
            lv, rv = getattr(left, attr), getattr(right, attr)
            if lv != rv:
                modified.append(ModifiedProperty(prop, rv, lv))
        return {"modified_properties": modified}

    def _diff_types(self):
        added, removed, matched = _split(self._left.types(), self._right.types())
        modified = {}
        for lt, rt in matched:
            a_attr, r_attr, m_attr = _split(lt.attributes(), rt.attributes())
            a_alias, r_alias, m_alias = _split(lt.aliases(), rt.aliases())
            lperm, rperm = lt.ispermissive, rt.ispermissive
            if a_attr or r_attr or a_alias or r_alias or lperm != rperm:
                modified[lt] = ModifiedType(a_attr, r_attr, m_attr, lperm != rperm, lperm,
                                            a_alias, r_alias, m_alias)
        return {"added_types": added, "removed_types": removed, "modified_types": modified}

    def _diff_type_attributes(self):
        added, removed, matched = _split(self._left.typeattributes(),
                                         self._right.typeattributes())
        modified = {}
        for la, ra in matched:
            a, r, m = _split(la.expand(), ra.expand())
            if a or r:
                modified[la] = ModifiedTypeAttribute(a, r, m)
        return {"added_type_attributes": added, "removed_type_attributes": removed,
                "modified_type_attributes": modified}

    def _diff_roles(self):
        added, removed, matched = _split(self._left.roles(), self._right.roles())
        modified = {}
        for lr, rr in matched:
            a, r, m = _split(lr.types(), rr.types())
            if a or r:
                modified[lr] = ModifiedRole(a, r, m)
        return {"added_roles": added, "removed_roles": removed, "modified_roles": modified}

    def _diff_users(self):
        added, removed, matched = _split(self._left.users(), self._right.users())
        modified = {}
        for lu, ru in matched:
            a, r, m = _split(lu.roles, ru.roles)
            llevel, lrange, llkey, lrkey = _user_mls(lu)
            rlevel, rrange, rlkey, rrkey = _user_mls(ru)
            added_level, removed_level = (rlevel, llevel) if llkey != rlkey else (None, None)
            added_range, removed_range = (rrange, lrange) if lrkey != rrkey else (None, None)
            if a or r or removed_level or removed_range:
                modified[lu] = ModifiedUser(a, r, m, added_level, removed_level, added_range,
                                            removed_range)
        return {"added_users": added, "removed_users": removed, "modified_users": modified}

    def _diff_booleans(self):
        added, removed, matched = _split(self._left.bools(), self._right.bools())
        modified = {lb: ModifiedBoolean(rb.state, lb.state)
                    for lb, rb in matched if lb.state != rb.state}
        return {"added_booleans": added, "removed_booleans": removed,
                "modified_booleans": modified}

    def _diff_commons(self):
        added, removed, matched = _split(self._left.commons(), self._right.commons())
        modified = {}
        for lc, rc in matched:
            a, r, m = _split(lc.perms, rc.perms)
            if a or r:
                modified[lc] = ModifiedCommon(a, r, m)
        return {"added_commons": added, "removed_commons": removed,
                "modified_commons": modified}

    def _diff_classes(self):
        added, removed, matched = _split(self._left.classes(), self._right.classes())
        modified = {}
        for lc, rc in matched:
            a, r, m = _split(_class_perms(lc), _class_perms(rc))
            if a or r:
                modified[lc] = ModifiedObjClass(a, r, m)
        return {"added_classes": added, "removed_classes": removed,
                "modified_classes": modified}

    def _diff_polcaps(self):
        added, removed, _ = _split(self._left.polcaps(), self._right.polcaps())
        return {"added_polcaps": added, "removed_polcaps": removed}

    def _rbac(self, policy, ruletype):
        return [r for r in policy.rbacrules() if r.ruletype == ruletype]

    def _diff_role_allows(self):
        added, removed, _ = _split_rules(
            self._rbac(self._left, RBACRuletype.allow), self._rbac(self._right, RBACRuletype.allow),
            lambda r: (str(r.source), str(r.target)))
        return {"added_role_allows": added, "removed_role_allows": removed}

    def _diff_role_transitions(self):
        added, removed, matched = _split_rules(
            self._rbac(self._left, RBACRuletype.role_transition),
            self._rbac(self._right, RBACRuletype.role_transition),
            lambda r: (str(r.source), str(r.target), str(r.tclass)))
        modified = [ModifiedRBACRule(lr, rr.default, lr.default)
                    for lr, rr in matched if str(lr.default) != str(rr.default)]
        return {"added_role_transitions": added, "removed_role_transitions": removed,
                "modified_role_transitions": modified}

    def _diff_typebounds(self):
        def bounds(policy):
            return {str(b.child): b for b in policy.bounds()
                    if b.ruletype == BoundsRuletype.typebounds}
        lmap, rmap = bounds(self._left), bounds(self._right)
        added = {rmap[k] for k in rmap.keys() - lmap.keys()}
        removed = {lmap[k] for k in lmap.keys() - rmap.keys()}
        modified = [ModifiedBounds(lmap[k], rmap[k].parent, lmap[k].parent)
                    for k in lmap.keys() & rmap.keys()
                    if str(lmap[k].parent) != str(rmap[k].parent)]
        return {"added_typebounds": added, "removed_typebounds": removed,
                "modified_typebounds": modified}


def _class_perms(cls):
    """A class's permissions with its common's (setools compares them expanded)."""
    perms = set(cls.perms)
    try:
        perms |= set(cls.common.perms)
    except NoCommon:
        pass
    return perms


_ATTRS = {
    "_diff_properties": ["modified_properties"],
    "_diff_types": ["added_types", "removed_types", "modified_types"],
    "_diff_type_attributes": ["added_type_attributes", "removed_type_attributes",
                              "modified_type_attributes"],
    "_diff_roles": ["added_roles", "removed_roles", "modified_roles"],
    "_diff_users": ["added_users", "removed_users", "modified_users"],
    "_diff_booleans": ["added_booleans", "removed_booleans", "modified_booleans"],
    "_diff_commons": ["added_commons", "removed_commons", "modified_commons"],
    "_diff_classes": ["added_classes", "removed_classes", "modified_classes"],
    "_diff_polcaps": ["added_polcaps", "removed_polcaps"],
    "_diff_role_allows": ["added_role_allows", "removed_role_allows"],
    "_diff_role_transitions": ["added_role_transitions", "removed_role_transitions",
                               "modified_role_transitions"],
    "_diff_typebounds": ["added_typebounds", "removed_typebounds", "modified_typebounds"],
}
_ATTRS.update(labeling_mls.SECTIONS)
PolicyDifference._SECTIONS = {
    attr: getattr(PolicyDifference, method) for method, attrs in _ATTRS.items() for attr in attrs
}
for _method, _attrs in terules.section_attrs().items():
    _kind = _method[len("_diff_te_"):]
    for _attr in _attrs:
        PolicyDifference._SECTIONS[_attr] = (
            lambda self, kind=_kind: terules.diff_kind(self, kind))

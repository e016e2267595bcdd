"""``setools.mixins``: the criteria several queries share (name with aliases, context,
object class, permissions), as setools 4.4.1 matches them."""

from operator import attrgetter

from .descriptors import (
    CriteriaDescriptor,
    CriteriaPermissionSetDescriptor,
    CriteriaSetDescriptor,
)
from .policyrep import PolicySymbol, _Deferred
from . import util as _util


# The lines setools' ``_match_*_debug`` methods log at DEBUG (``query.log_results`` formats
# them with the query): the queries' ``_debug_log`` tuples are made of these and their own.
NAME_DEBUG = ("Name: {0.name!r}, regex: {0.name_regex}, deref: {0.alias_deref}",)
ALIAS_DEBUG = ("Alias: {0.alias}, regex: {0.alias_regex}",)
CONTEXT_DEBUG = (
    "User: {0.user!r}, regex: {0.user_regex}",
    "Role: {0.role!r}, regex: {0.role_regex}",
    "Type: {0.type_!r}, regex: {0.type_regex}",
    "Range: {0.range_!r}, subset: {0.range_subset}, overlap: {0.range_overlap}, "
    "superset: {0.range_superset}, proper: {0.range_proper}",
)
CLASS_DEBUG = ("Class: {0.tclass!r}, regex: {0.tclass_regex}",)
PERMS_DEBUG = ("Perms: {0.perms!r}, regex: {0.perms_regex}, eq: {0.perms_equal}, "
               "subset: {0.perms_subset!r}",)


class MatchAlias:
    """Matches an object's aliases."""

    alias = CriteriaDescriptor("alias_regex")
    alias_regex = False

    _match_alias = _Deferred("_mixins_more")


class MatchContext:
    """Matches a context's user, role, type (each by name or regex) and range (equal,
    subset, overlap, superset, proper)."""

    user = CriteriaDescriptor("user_regex", "lookup_user")
    user_regex = False
    role = CriteriaDescriptor("role_regex", "lookup_role")
    role_regex = False
    type_ = CriteriaDescriptor("type_regex", "lookup_type")
    type_regex = False
    range_ = CriteriaDescriptor(lookup_function="lookup_range")
    range_overlap = False
    range_subset = False
    range_superset = False
    range_proper = False

    def _filter_context(self, sel):
        """``[x for x in sel if self._match_context(x.context)]``, in order. With only
        exact user, role or type criteria (the usual case), one filter per criterion
        compares symbol values inline, without ``match_regex`` and ``__eq__`` calls per
        object (most of a labeling query's time)."""
        user, role, type_ = self.user, self.role, self.type_
        if not (user or role or type_ or self.range_):
            return sel
        if self.range_ or self.user_regex or self.role_regex or self.type_regex:
            return [x for x in sel if self._match_context(x.context)]
        for getter, crit in ((_CONTEXT_USER, user), (_CONTEXT_ROLE, role),
                             (_CONTEXT_TYPE, type_)):
            if crit:
                sel = _filter_equal(sel, getter, crit)
        return sel

    _match_context = _Deferred("_mixins_more")


class MatchName:
    """Matches an object's name (and, with ``alias_deref``, its aliases)."""

    name = CriteriaDescriptor("name_regex")
    name_regex = False
    alias_deref = False

    _match_name = _Deferred("_mixins_more")


class MatchObjClass:
    """Matches an object's class (``tclass``)."""

    tclass = CriteriaSetDescriptor("tclass_regex", "lookup_class")
    tclass_regex = False

    _match_object_class = _Deferred("_mixins_more")


class MatchPermission:
    """Matches an object's permissions (intersection, equality, subset or regex)."""

    perms = CriteriaPermissionSetDescriptor(name_regex="perms_regex")
    perms_equal = False
    perms_regex = False
    perms_subset = False

    _match_perms = _Deferred("_mixins_more")


_CONTEXT_USER = attrgetter("context.user")
_CONTEXT_ROLE = attrgetter("context.role")
_CONTEXT_TYPE = attrgetter("context.type_")


def _filter_equal(sel, getter, crit):
    """``[x for x in sel if getter(x) == crit]``: for a symbol criterion, ``==`` between
    two symbols of its class is read inline as ``PolicySymbol.__eq__`` reads it (the same
    policy, the same value); other pairs are compared with ``==``."""
    cls = crit.__class__
    if cls.__eq__ is not PolicySymbol.__eq__:
        return [x for x in sel if getter(x) == crit]
    value, policy = crit._value, crit.policy
    return [x for x in sel
            if ((s := getter(x)).__class__ is cls and s._value == value and s.policy is policy)
            or (s.__class__ is not cls and s == crit)]

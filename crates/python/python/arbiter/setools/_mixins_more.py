"""The per-object matching methods of ``mixins``' classes, which the queries call only
where their criteria are not matched in bulk (a context's fields, a name with its
aliases, a class, permissions, an alias), imported on first use
(``policyrep._Deferred``): a script whose queries filter in bulk does not keep their code.
Each namespace class below gives its methods to the ``mixins`` class of its name."""

from . import util as _util

_PART = "mixins"


class MatchAlias:
    def _match_alias(self, obj):
        if not self.alias:
            return True
        return _util.match_in_set(obj.aliases(), self.alias, self.alias_regex)


class MatchContext:
    def _match_context(self, context):
        if self.user and not _util.match_regex(context.user, self.user, self.user_regex):
            return False
        if self.role and not _util.match_regex(context.role, self.role, self.role_regex):
            return False
        if self.type_ and not _util.match_regex(context.type_, self.type_, self.type_regex):
            return False
        if self.range_ and not _util.match_range(context.range_, self.range_, self.range_subset,
                                           self.range_overlap, self.range_superset,
                                           self.range_proper):
            return False
        return True


class MatchName:
    def _match_name(self, obj):
        if not self.name:
            return True
        if self.alias_deref:
            return _util.match_regex(obj, self.name, self.name_regex) or \
                _util.match_in_set(obj.aliases(), self.name, self.name_regex)
        return _util.match_regex(obj, self.name, self.name_regex)


class MatchObjClass:
    def _match_object_class(self, obj):
        if not self.tclass:
            return True
        if self.tclass_regex:
            return bool(self.tclass.search(str(obj.tclass)))
        return obj.tclass in self.tclass


class MatchPermission:
    def _match_perms(self, obj):
        if not self.perms:
            return True
        if self.perms_subset:
            return obj.perms >= self.perms
        return _util.match_regex_or_set(obj.perms, self.perms, self.perms_equal, self.perms_regex)

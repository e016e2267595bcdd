"""``setools.categoryquery.CategoryQuery``: categories by name and alias."""

from sys import modules

from .mixins import ALIAS_DEBUG, MatchAlias, MatchName, NAME_DEBUG
from . import query as _query
from .query import PolicyQuery, filter_names, table


def _named(policy, criterion):
    """``filter_names`` over the whole table for a regex ``criterion``, by
    ``SELinuxPolicy._categories_named`` (None when it cannot: the same conditions as
    ``filter_names``'s native match)."""
    re = modules.get("re")  # a pattern exists only once `re` was imported
    if re is None or not isinstance(criterion, re.Pattern) or \
            type(criterion.pattern) is not str or criterion.flags != re.UNICODE:
        return None
    return policy._categories_named(criterion.pattern)


class CategoryQuery(MatchAlias, MatchName, PolicyQuery):
    """Query MLS categories."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = NAME_DEBUG + ALIAS_DEBUG

    def results(self):
        """The matching categories, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            _query.log_results(self, "category ")
        policy = self.policy
        name = self.name
        cats = None
        if name and self.name_regex and not self.alias_deref and "categories" not in policy._cache:
            # Only the matching categories made while the whole table is not needed.
            cats = _named(policy, name)
        if cats is None:
            cats = table(policy, "categories", policy.categories)
            if name and not self.alias_deref:
                # The name filter first, natively for a regex (see filter_names).
                cats = filter_names(cats, name, self.name_regex, policy, "categories")
        if not self.alias_deref and not self.alias:
            yield from cats
            return
        for cat in cats:
            if self.alias_deref and not self._match_name(cat):
                continue
            if not self._match_alias(cat):
                continue
            yield cat

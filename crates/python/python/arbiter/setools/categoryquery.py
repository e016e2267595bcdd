"""``setools.categoryquery.CategoryQuery``: categories by name and alias."""

from sys import modules

from .mixins import ALIAS_DEBUG, MatchAlias, MatchName, NAME_DEBUG
from .query import PolicyQuery, filter_names, table, log_results


class CategoryQuery(MatchAlias, MatchName, PolicyQuery):
    """Query MLS categories."""

    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = NAME_DEBUG + ALIAS_DEBUG

    def results(self):
        """The matching categories, in the policy's order."""
        if "logging" in modules:  # setools' INFO line (see query.log_results)
            log_results(self, "category ")
        policy = self.policy
        cats = table(policy, "categories", policy.categories)
        if self.name and not self.alias_deref:
            # The name filter first, natively for a regex (see filter_names).
            cats = filter_names(cats, self.name, self.name_regex, policy, "categories")
        if not self.alias_deref and not self.alias:
            yield from cats
            return
        for cat in cats:
            if self.alias_deref and not self._match_name(cat):
                continue
            if not self._match_alias(cat):
                continue
            yield cat

"""``setools.categoryquery.CategoryQuery``: categories by name and alias."""

from .mixins import MatchAlias, MatchName
from .query import PolicyQuery, filter_names


class CategoryQuery(MatchAlias, MatchName, PolicyQuery):
    """Query MLS categories."""

    def results(self):
        """The matching categories, in the policy's order."""
        cats = self.policy.categories()
        if self.name and not self.alias_deref:
            # The name filter first, in one pass (see filter_names).
            cats = filter_names(cats, self.name, self.name_regex)
        for cat in cats:
            if self.alias_deref and not self._match_name(cat):
                continue
            if not self._match_alias(cat):
                continue
            yield cat

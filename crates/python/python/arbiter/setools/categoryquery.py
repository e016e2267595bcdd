"""``setools.categoryquery.CategoryQuery``: categories by name and alias."""

from .mixins import MatchAlias, MatchName
from .query import PolicyQuery


class CategoryQuery(MatchAlias, MatchName, PolicyQuery):
    """Query MLS categories."""

    def results(self):
        """The matching categories, in the policy's order."""
        for cat in self.policy.categories():
            if not self._match_name(cat):
                continue
            if not self._match_alias(cat):
                continue
            yield cat

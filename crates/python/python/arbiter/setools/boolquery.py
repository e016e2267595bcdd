"""``setools.boolquery.BoolQuery``: Booleans by name and default state."""

from .query import PolicyQuery, Criterion, filter_names


class BoolQuery(PolicyQuery):
    """Query Booleans. ``default`` None matches any state."""

    name = Criterion("name_regex")
    name_regex = False
    default = None

    def results(self):
        """The matching Booleans, in the policy's order."""
        bools = filter_names(self.policy.bools(), self.name, self.name_regex)
        if self.default is not None:
            state = bool(self.default)
            bools = [b for b in bools if b.state == state]
        yield from bools

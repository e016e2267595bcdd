"""``setools.boolquery.BoolQuery``: Booleans by name and default state."""

from .query import PolicyQuery, Criterion, match_name


class BoolQuery(PolicyQuery):
    """Query Booleans. ``default`` None matches any state."""

    name = Criterion("name_regex")
    name_regex = False
    default = None

    def results(self):
        """The matching Booleans, in the policy's order."""
        for b in self.policy.bools():
            if not match_name(b, self.name, self.name_regex):
                continue
            if self.default is not None and b.state != bool(self.default):
                continue
            yield b

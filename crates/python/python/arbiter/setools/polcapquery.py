"""``setools.polcapquery.PolCapQuery``: policy capabilities by name."""

from .query import PolicyQuery, Criterion, match_name


class PolCapQuery(PolicyQuery):
    """Query policy capabilities."""

    name = Criterion("name_regex")
    name_regex = False

    def results(self):
        """The matching capabilities, in bit order."""
        for c in self.policy.polcaps():
            if match_name(c, self.name, self.name_regex):
                yield c

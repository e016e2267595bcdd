"""``setools.userquery.UserQuery``: users by name and roles (the MLS criteria ``level`` and
``range_`` are not implemented yet and raise ``NotImplementedError`` when set)."""

from .query import PolicyQuery, Criterion, SetCriterion, match_name, match_set


class UserQuery(PolicyQuery):
    """Query users."""

    name = Criterion("name_regex")
    roles = SetCriterion("roles_regex", "lookup_role")
    name_regex = False
    roles_regex = False
    roles_equal = False

    def __setattr__(self, name, value):
        if name in ("level", "range_") and value is not None:
            raise NotImplementedError(
                "arbiter.setools: UserQuery.{0} is not implemented yet".format(name)
            )
        super().__setattr__(name, value)

    def results(self):
        """The matching users, in the policy's order."""
        for u in self.policy.users():
            if not match_name(u, self.name, self.name_regex):
                continue
            if self.roles is not None and not match_set(
                u.roles, self.roles, self.roles_equal, self.roles_regex
            ):
                continue
            yield u

"""``setools.userquery.UserQuery``: users by name, roles, default level (equal,
dominating, dominated, incomparable) and range (equal, subset, overlap, superset,
proper)."""

from .descriptors import CriteriaDescriptor
from .mixins import NAME_DEBUG
from . import query as _query
from .query import (
    MemoResults, PolicyQuery, Criterion, SetCriterion, filter_names, policy_results, policy_table,
    table,
)
from ._mls import Level
from . import util as _util
from .util import filter_range_keys


def _level_keys(range_):
    """``(low, high)`` of a range of two ``Level`` objects as ``(sensitivity key,
    sensitivity value, category tokens)`` triples, the parts ``Level``'s comparisons
    read (see ``util.match_range_keys``); None for other levels."""
    low, high = range_.low, range_.high
    if type(low) is not Level or type(high) is not Level:
        return None
    return tuple((lv.sensitivity._key(), lv.sensitivity._value, lv._cats) for lv in (low, high))


def _user_range_keys(policy):
    """Every user's range keys by user value (None if one is not made of ``Level``s)."""
    keys = {u._value: _level_keys(u.mls_range) for u in policy.users()}
    return None if any(k is None for k in keys.values()) else keys


def _users_by_role(policy):
    """Role value to the users that have the role (``User.roles``), in order."""
    out = {}
    for u in table(policy, "users", policy.users):
        for r in u.roles:
            out.setdefault(r._value, []).append(u)
    return out


class UserQuery(MemoResults, PolicyQuery):
    """Query users."""

    _log_what = "user "  # in setools' INFO line (see query.log_results)
    # What setools logs at DEBUG after its INFO line (see query.log_results).
    _debug_log = NAME_DEBUG + (
        "Roles: {0.roles!r}, regex: {0.roles_regex}, eq: {0.roles_equal}",
        "Level: {0.level!r}, dom: {0.level_dom}, domby: {0.level_domby}, incomp: {0.level_incomp}",
        "Range: {0.range_!r}, subset: {0.range_subset}, overlap: {0.range_overlap}, "
        "superset: {0.range_superset}, proper: {0.range_proper}",
    )

    name = Criterion("name_regex")
    roles = SetCriterion("roles_regex", "lookup_role")
    name_regex = False
    alias_deref = False
    roles_regex = False
    roles_equal = False
    level = CriteriaDescriptor(lookup_function="lookup_level")
    level_dom = False
    level_domby = False
    level_incomp = False
    range_ = CriteriaDescriptor(lookup_function="lookup_range")
    range_overlap = False
    range_subset = False
    range_superset = False
    range_proper = False

    def _matches(self):
        """The matching users, in the policy's order (see ``MemoResults``): a sequence,
        taken from a per-policy index or memo where the criteria allow."""
        policy = self.policy
        roles, level, range_ = self.roles, self.level, self.range_
        every = self.name is None  # users: the whole table (in order)
        if every and not level:
            if roles is None:
                if not range_:
                    return table(policy, "users", policy.users)
                if policy.mls:
                    # One range over every user: kept per policy for the range object
                    # and the flags (see ``query.policy_results``).
                    flags = (bool(self.range_subset), bool(self.range_overlap),
                             bool(self.range_superset), bool(self.range_proper))
                    return policy_results(policy, "user range", range_, flags,
                                          lambda: self._filter(policy, every))
            elif not range_ and not self.roles_regex and not self.roles_equal \
                    and len(roles) == 1:
                # The users of one role, from a per-policy index.
                by_role = policy_table(policy, "query_users_by_role", _users_by_role)
                for role in roles:
                    return by_role.get(role._value, ())
        return self._filter(policy, every)

    def _filter(self, policy, every):
        """The matching users, filtered from the table (or from the name's matches)."""
        users = filter_names(table(policy, "users", policy.users), self.name, self.name_regex,
                             policy, "users")
        roles, level, range_ = self.roles, self.level, self.range_
        if roles is None and not level and not range_:
            return users
        if roles is not None and not self.roles_regex:
            # Over role values: each user's (without object_r, as ``User.roles``) built
            # once per policy, instead of a frozenset of roles per user and query.
            role_values = policy._table("query_user_role_values", lambda: {
                u._value: frozenset(r._value for r in u.roles) for u in policy.users()})
            want = frozenset(r._value for r in roles)
            if self.roles_equal:
                users = [u for u in users if role_values[u._value] == want]
            else:
                users = [u for u in users if not want.isdisjoint(role_values[u._value])]
            roles, every = None, False
            if not level and not range_:
                return users
        if range_ and policy.mls:
            crit = _level_keys(range_)
            keys = policy._table("query_user_range_keys", lambda: _user_range_keys(policy))
            if crit is not None and keys is not None:
                # Over each user's range keys (once per policy): no Level comparison.
                flags = (self.range_subset, self.range_overlap, self.range_superset,
                         self.range_proper)
                if every:
                    # Every user: the (user, keys) rows, once per policy.
                    rows = policy._table("query_user_range_rows", lambda: [
                        (u, keys[u._value]) for u in table(policy, "users", policy.users)])
                else:
                    rows = [(u, keys[u._value]) for u in users]
                users = filter_range_keys(rows, crit, *flags)
                range_ = None
        return [u for u in users if self._match_rest(u, roles, level, range_)]

    def _match_rest(self, u, roles, level, range_):
        """The criteria not yet applied by an index (None or empty when applied)."""
        if roles is not None and not _query.match_set(
            u.roles, roles, self.roles_equal, self.roles_regex
        ):
            return False
        if level and not _util.match_level(u.mls_level, level, self.level_dom,
                                     self.level_domby, self.level_incomp):
            return False
        if range_ and not _util.match_range(u.mls_range, range_, self.range_subset,
                                      self.range_overlap, self.range_superset,
                                      self.range_proper):
            return False
        return True

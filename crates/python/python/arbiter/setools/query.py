"""``setools.query``: the protocol every query shares. ``Q(policy, **criteria)`` sets each
keyword as an attribute in reverse-sorted name order (so ``x_regex`` is set before ``x``,
whose setter depends on it); ``results()`` is a generator in the policy's order."""

import re

from .. import _native
from .exception import InvalidPermission


class PolicyQuery:
    """Base class of the queries."""

    def __init__(self, policy, **kwargs):
        # Every criterion's default in the instance ``__dict__`` at once (one C call), so
        # that ``results()`` reads an unset criterion at C speed too, not through the
        # descriptor's ``__get__``; ``policy`` is no criterion: stored directly.
        cls = type(self)
        defaults = cls.__dict__.get("_criteria_defaults")
        if defaults is None:
            defaults = _criteria_defaults(cls)
        d = self.__dict__
        d.update(defaults)
        d["policy"] = policy
        if not kwargs:
            return
        for name in sorted(kwargs, reverse=True):
            if callable(getattr(self, name, None)):
                raise ValueError("Keyword parameter {0} conflicts with a callable.".format(name))
            setattr(self, name, kwargs[name])

    def __setattr__(self, name, value):
        # The criteria are non-data descriptors (no ``__set__``), so that ``results()``
        # reads a set criterion from the instance ``__dict__`` at C speed (a Python
        # ``__get__`` per read was most of a small query's time); an assignment is
        # validated here instead, by the descriptor's ``_store``.
        d = getattr(type(self), name, None)
        store = getattr(d, "_store", None)
        if store is not None:
            store(self, value)
        else:
            object.__setattr__(self, name, value)

    def results(self):
        """The matching objects (a generator)."""
        raise NotImplementedError


def _criteria_defaults(cls):
    """The criteria of ``cls`` (descriptors with ``_store``, the nearest definition of a
    name winning) and their defaults, kept on the class itself."""
    defaults = {}
    for klass in reversed(cls.__mro__):
        for name, attr in vars(klass).items():
            if hasattr(type(attr), "_store") and hasattr(attr, "default_value"):
                defaults[name] = attr.default_value
            else:
                defaults.pop(name, None)
    type.__setattr__(cls, "_criteria_defaults", defaults)
    return defaults


def _empty(value):
    return value is None or (not isinstance(value, bool) and not value and value != 0)


class Criterion:
    """A criterion naming one policy symbol, or a regular expression when the attribute
    ``regex`` of the query is true at assignment. ``lookup`` names the policy method that
    validates a name; None keeps the value as given."""

    def __init__(self, regex=None, lookup=None, default=None):
        self.regex = regex
        self.lookup = lookup
        self.default = self.default_value = default

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, objtype=None):
        # Reached only while the criterion is unset (a set value lives in the instance
        # ``__dict__`` under the same name, which wins over a non-data descriptor).
        if obj is None:
            return self
        return self.default

    def _store(self, obj, value):
        if _empty(value):
            obj.__dict__[self.name] = None
        elif self.regex and getattr(obj, self.regex):
            obj.__dict__[self.name] = re.compile(value)
        elif self.lookup:
            obj.__dict__[self.name] = getattr(obj.policy, self.lookup)(value)
        else:
            obj.__dict__[self.name] = value


class SetCriterion(Criterion):
    """A criterion naming a set of symbols (each looked up), or a regular expression."""

    def _store(self, obj, value):
        if _empty(value):
            obj.__dict__[self.name] = None
        elif self.regex and getattr(obj, self.regex):
            obj.__dict__[self.name] = re.compile(value)
        elif self.lookup:
            obj.__dict__[self.name] = frozenset(map(getattr(obj.policy, self.lookup), value))
        else:
            obj.__dict__[self.name] = frozenset(value)


def match_name(obj, criterion, regex):
    """setools' name match: equality, or ``re.search`` on ``str()``."""
    if criterion is None:
        return True
    if regex:
        return bool(criterion.search(str(obj)))
    return obj == criterion


def match_set(objs, criterion, equal, regex):
    """setools' set match: some element matches the regex; the sets are equal; or they
    intersect."""
    if criterion is None:
        return True
    if regex:
        return any(criterion.search(str(o)) for o in objs)
    objs = set(objs)
    if equal:
        return objs == set(criterion)
    return bool(objs & set(criterion))


def match_values(values, criterion, equal, regex, by_value):
    """``match_set`` over symbol values (ints) instead of symbol objects: the same answer
    without building and hashing an object per element. ``by_value`` maps a value to its
    symbol (for regexes, which match names)."""
    if criterion is None:
        return True
    if regex:
        return any(criterion.search(by_value[v].name) for v in values)
    crit = {c._value for c in criterion}
    if equal:
        return set(values) == crit
    return not crit.isdisjoint(values)


def table(policy, key, items):
    """A symbol table's objects as one list, built once per policy from ``items()`` (the
    policy's iterator): the queries scan and index it without copying it per call."""
    return policy._table("query_" + key, lambda: list(items()))


def _name_index(policy, key, symbols):
    """The native name index of a table (see ``table``), built on its first regex."""
    return policy._table(
        "name_index_" + key, lambda: _native.NameIndex(symbols, [s.name for s in symbols])
    )


def _name_map(policy, key, symbols):
    """Name to object over a table (names are unique in one symbol table)."""
    return policy._table("name_map_" + key, lambda: {s.name: s for s in symbols})


def filter_names(symbols, criterion, regex, policy=None, key=None):
    """``[s for s in symbols if match_name(s, criterion, regex)]`` for named symbols
    (whose ``str()`` is ``.name``). With ``key`` (``symbols`` is then the whole table of
    that name, see ``table``) a regex is matched in Rust over the table's names (Python's
    ``re`` dialect, see ``arbiter._native.NameIndex``; a pattern it cannot translate, or
    one compiled with flags, is matched by ``re`` here) and a name given as text is one
    dictionary lookup. Without a key, one comprehension: the per-symbol function call and
    ``str()`` of the generic path cost more than the regex itself."""
    if criterion is None:
        return list(symbols)
    if regex:
        if key is not None and isinstance(criterion, re.Pattern) \
                and type(criterion.pattern) is str and criterion.flags == re.UNICODE:
            hits = _name_index(policy, key, symbols).search(criterion.pattern)
            if hits is not None:
                return hits
        search = criterion.search
        return [s for s in symbols if search(s.name)]
    if key is not None and type(criterion) is str:
        # A symbol equals a text when its name is that text (PolicyObject.__eq__).
        hit = _name_map(policy, key, symbols).get(criterion)
        return [] if hit is None else [hit]
    return [s for s in symbols if s == criterion]


def _known_perms(classes):
    known = set()
    for c in classes:
        known |= set(c.perms)
        try:
            known |= set(c.common.perms)
        except AttributeError:
            pass
    return known


def validate_perms(policy, perms, classes=None):
    """setools checks permission criteria when they are set: against the given classes
    (their own and common permissions), else against every class. The missing names are
    joined in the set's order, as setools joins them."""
    if classes:
        where = "in the specified classes"
        known = _known_perms(classes)
    else:
        where = "any class"
        # Every class's permissions, once per policy.
        known = policy._table("every_perm", lambda: _known_perms(policy.classes()))
    missing = set(perms) - known
    if missing:
        raise InvalidPermission(
            "Permission(s) do not exist {0}: {1}".format(where, ", ".join(missing))
        )

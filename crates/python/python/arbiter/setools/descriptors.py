"""``setools.descriptors``: the criteria descriptors the queries use. A criterion is
stored per query object; setting it looks the value up in the policy (a symbol, a level,
a range), compiles it (when its ``*_regex`` flag is set) or maps it onto an enum, as
setools 4.4.1 does, so that a bad value raises when it is set."""

from collections.abc import Collection

from . import util as _util
from .util import enum_lookup


def _compile(pattern):
    """``re.compile``, with ``re`` imported on the first regex criterion: a script whose
    criteria are all names does not load the module (about 0.4 MB resident)."""
    import re
    return re.compile(pattern)

# Per policy, how many looked-up texts are kept (then the memo is emptied), so memory
# stays bounded whatever a script asks.
_LOOKUP_MEMO_LIMIT = 1024


def _lookup_memo(policy):
    """The policy's memo of looked-up texts (see ``memo_lookup``), read from its table
    cache without a call once made."""
    memo = policy._cache.get("query_lookup_memo")
    if memo is None:
        memo = policy._table("query_lookup_memo", dict)
    return memo


def memo_lookup(policy, lookup_function, value):
    """``policy.<lookup_function>(value)``, kept per policy by ``(lookup_function, text)``
    for a text: the answer is a pure function of the policy and the text, and the objects
    are immutable, so one dictionary hit stands in for the lookup (a method call and its
    checks, 0.6 us for a symbol, several us to parse and check a level or range). A text
    that fails raises each time, as before; a value that is not text is looked up each
    time."""
    if type(value) is not str:
        return getattr(policy, lookup_function)(value)
    memo = _lookup_memo(policy)
    key = (lookup_function, value)
    hit = memo.get(key)
    if hit is None:
        hit = getattr(policy, lookup_function)(value)
        if len(memo) >= _LOOKUP_MEMO_LIMIT:
            memo.clear()
        memo[key] = hit
    return hit


def lookup_set(policy, lookup_function, values):
    """``frozenset(policy.<lookup_function>(v) for v in values)``. One name in a list
    (``tclass=["file"]``, the usual criterion) is read from the lookup memo (see
    ``memo_lookup``) with its one-element frozenset, kept under the key with a third
    item: building it hashes the symbol through a Python ``__hash__``, and the same
    frozenset object at every construction keeps its hash for the queries that index by
    it."""
    if type(values) is list and len(values) == 1 and type(values[0]) is str:
        memo = policy._cache.get("query_lookup_memo") or _lookup_memo(policy)
        name = values[0]
        one = memo.get((lookup_function, name, 1))
        if one is not None:
            return one
        one = frozenset((memo_lookup(policy, lookup_function, name),))
        if len(memo) >= _LOOKUP_MEMO_LIMIT:
            memo.clear()
        memo[(lookup_function, name, 1)] = one
        return one
    return frozenset([memo_lookup(policy, lookup_function, v) for v in values])


def _lookup(obj, lookup_function, value):
    """A criterion value looked up: a policy method by name (kept, see ``memo_lookup``)
    or a callable."""
    if type(lookup_function) is str:
        return memo_lookup(obj.policy, lookup_function, value)
    return lookup_function(value)


class CriteriaDescriptor:
    """A single-valued criterion: ``name_regex`` names the query's regex flag,
    ``lookup_function`` the policy method (or a callable) that validates a value,
    ``enum_class`` an enum whose ``lookup`` maps it."""

    def __init__(self, name_regex=None, lookup_function=None, default_value=None,
                 enum_class=None):
        assert name_regex or lookup_function or enum_class, \
            "A simple attribute should be used if there is no regex, lookup function, or enum."
        assert not (lookup_function and enum_class), \
            "Lookup functions and enum classes are mutually exclusive."
        self.regex = name_regex
        self.default_value = default_value
        self.lookup_function = lookup_function
        self.enum_class = enum_class
        self.name = ""

    def __set_name__(self, owner, name):
        self.name = name

    # Not a data descriptor: a set value lives in the query's ``__dict__`` under the
    # criterion's name (read at C speed, where a Python ``__get__`` per read cost most of
    # a small query's time); ``PolicyQuery.__setattr__`` calls ``_store`` on assignment.
    # ``__get__`` is reached only while the criterion is unset.
    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return self.default_value

    def _store(self, obj, value):
        if not value:
            obj.__dict__[self.name] = self.default_value
        elif self.regex and getattr(obj, self.regex, False):
            obj.__dict__[self.name] = _compile(value)
        elif self.lookup_function:
            lookup_function = self.lookup_function
            if type(lookup_function) is str and type(value) is str:
                # A name already looked up: its memo read here (see ``memo_lookup``).
                memo = obj.policy._cache.get("query_lookup_memo")
                hit = None if memo is None else memo.get((lookup_function, value))
                if hit is not None:
                    obj.__dict__[self.name] = hit
                    return
            obj.__dict__[self.name] = _lookup(obj, lookup_function, value)
        elif self.enum_class:
            obj.__dict__[self.name] = enum_lookup(self.enum_class, value)
        else:
            obj.__dict__[self.name] = value


class CriteriaSetDescriptor(CriteriaDescriptor):
    """A criterion that is a set of values (each looked up), or one regex."""

    def _store(self, obj, value):
        if not value:
            obj.__dict__[self.name] = self.default_value
        elif self.regex and getattr(obj, self.regex, False):
            obj.__dict__[self.name] = _compile(value)
        elif self.lookup_function:
            lookup_function = self.lookup_function
            if type(lookup_function) is str:
                obj.__dict__[self.name] = lookup_set(obj.policy, lookup_function, value)
            else:
                obj.__dict__[self.name] = frozenset([lookup_function(v) for v in value])
        elif self.enum_class:
            obj.__dict__[self.name] = frozenset(enum_lookup(self.enum_class, v) for v in value)
        else:
            obj.__dict__[self.name] = frozenset(value)


class CriteriaPermissionSetDescriptor(CriteriaDescriptor):
    """A permission set criterion, checked against the query's classes (or every class)."""

    def __init__(self, name_regex=None, default_value=None):
        self.regex = name_regex
        self.default_value = default_value
        self.name = ""

    def _store(self, obj, value):
        if not value:
            obj.__dict__[self.name] = self.default_value
        elif self.regex and getattr(obj, self.regex, False):
            obj.__dict__[self.name] = _compile(value)
        else:
            perms = frozenset(v for v in value)
            if getattr(obj, "tclass_regex", False):
                tclass = None
            else:
                tclass = getattr(obj, "tclass", None)
            if tclass and not isinstance(tclass, Collection):
                tclass = frozenset((tclass,))
            _util.validate_perms_any(perms, tclass=tclass, policy=obj.policy)
            obj.__dict__[self.name] = perms

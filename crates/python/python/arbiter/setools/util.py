"""``setools.util``: the matching helpers the queries share (names, sets, ranges,
levels) and the permission validation, with setools 4.4.1's semantics."""

import importlib


def enum_lookup(cls, value):
    """``cls.lookup(value)`` (a member, its value or its name) without raising and
    catching a ``ValueError`` for a name: a text that is no member's value is looked up
    by name directly, as ``lookup`` ends up doing (3 us a criterion otherwise). The
    member of a text is kept (the enums are constants; a text that is no member raises
    each time)."""
    if type(value) is str:
        key = (cls, value)
        hit = _ENUM_TEXTS.get(key)
        if hit is None:
            hit = cls[value] if value not in cls._value2member_map_ else cls.lookup(value)
            if len(_ENUM_TEXTS) < _ENUM_TEXTS_LIMIT:
                _ENUM_TEXTS[key] = hit
        return hit
    return cls.lookup(value)


# The members of enum texts (see ``enum_lookup``): a few dozen texts in practice; past the
# limit new texts are looked up each time, so memory stays bounded.
_ENUM_TEXTS = {}
_ENUM_TEXTS_LIMIT = 256


def filter_range_keys(rows, criteria, subset, overlap, superset, proper):
    """The objects of ``rows`` (``(object, (low keys, high keys))`` pairs, see
    ``match_range_keys``) whose range matches ``criteria``'s keys, in order: equality,
    subset and superset (not proper) tested inline, without a call per object; the other
    tests through ``match_range_keys``."""
    (c_key, c_sens, c_cats), (d_key, d_sens, d_cats) = criteria
    if overlap or proper:
        from ._util_more import match_range_keys

        return [o for o, k in rows
                if match_range_keys(k, criteria, subset, overlap, superset, proper)]
    if subset:
        # low <= criteria.low and criteria.high <= high
        return [o for o, ((_, ls, lc), (_, hs, hc)) in rows
                if ls <= c_sens and lc <= c_cats and d_sens <= hs and d_cats <= hc]
    if superset:
        # criteria.low <= low and high <= criteria.high
        return [o for o, ((_, ls, lc), (_, hs, hc)) in rows
                if c_sens <= ls and c_cats <= lc and hs <= d_sens and hc <= d_cats]
    return [o for o, ((lk, _, lc), (hk, _, hc)) in rows
            if lk == c_key and lc == c_cats and hk == d_key and hc == d_cats]


# The helpers the queries call only for rarer criteria (regular expressions over sets,
# ranges and levels, permission validation, xperm parsing) are in ``_util_more``, imported
# on first use: a script whose queries never reach them does not keep their code. Asked
# for here (``util.match_range``, ``from .util import match_range``), they are served by
# ``__getattr__`` (PEP 562) and kept in this module, named as its own.
_MORE = frozenset((
    "_le", "_lt", "match_in_set", "match_indirect_regex", "match_level", "match_range",
    "match_range_keys", "match_regex", "match_regex_or_set", "match_set",
    "validate_perms_any", "xperm_str_to_tuple_ranges"))


def __getattr__(name):
    if name in _MORE:
        more = importlib.import_module(__package__ + "._util_more")
        for n in _MORE:
            fn = getattr(more, n)
            fn.__module__ = __name__
            globals().setdefault(n, fn)
        return globals()[name]
    raise AttributeError("module {!r} has no attribute {!r}".format(__name__, name))


def __dir__():
    return sorted(set(globals()) | _MORE)

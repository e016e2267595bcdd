"""``setools.util``: the matching helpers the queries share (names, sets, ranges,
levels) and the permission validation, with setools 4.4.1's semantics."""

from contextlib import suppress

from . import exception as _exc


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


def match_regex(obj, criteria, regex):
    """``criteria`` equals ``obj``, or (``regex``) matches its text."""
    if regex:
        return bool(criteria.search(str(obj)))
    return obj == criteria


def match_set(obj, criteria, equal):
    """The sets are equal (``equal``) or intersect."""
    if equal:
        return obj == criteria
    return bool(obj.intersection(criteria))


def match_in_set(obj, criteria, regex):
    """``criteria`` is in ``obj``, or (``regex``) matches one of its members."""
    if regex:
        return bool([m for m in obj if criteria.search(str(m))])
    return criteria in obj


def match_indirect_regex(obj, criteria, indirect, regex):
    """As ``match_regex``; with ``indirect``, over the expansions of both."""
    if indirect:
        if regex:
            return bool([o for o in obj.expand() if criteria.search(str(o))])
        return bool(set(criteria.expand()).intersection(obj.expand()))
    return match_regex(obj, criteria, regex)


def match_regex_or_set(obj, criteria, equal, regex):
    """A regex over the members of ``obj``, else ``match_set``."""
    if regex:
        return bool([m for m in obj if criteria.search(str(m))])
    return match_set(obj, set(criteria), equal)


def match_range(obj, criteria, subset, overlap, superset, proper):
    """Ranges (anything with ``low``/``high``): overlap, subset, superset (``proper``:
    strict) or equality, in setools' order of precedence."""
    if overlap:
        return ((obj.low <= criteria.low <= obj.high) or (
            obj.low <= criteria.high <= obj.high) or (
            criteria.low <= obj.low and obj.high <= criteria.high))
    if subset:
        if proper:
            return ((obj.low < criteria.low and criteria.high <= obj.high) or (
                obj.low <= criteria.low and criteria.high < obj.high))
        return obj.low <= criteria.low and criteria.high <= obj.high
    if superset:
        if proper:
            return ((criteria.low < obj.low and obj.high <= criteria.high) or (
                criteria.low <= obj.low and obj.high < criteria.high))
        return criteria.low <= obj.low and obj.high <= criteria.high
    return criteria.low == obj.low and obj.high == criteria.high


def _le(a, b):
    # Level.__le__: dominated by (sensitivity value, then category subset).
    return a[1] <= b[1] and a[2] <= b[2]


def _lt(a, b):
    # Level.__lt__.
    return (a[1] < b[1] and a[2] <= b[2]) or (a[1] <= b[1] and a[2] < b[2])


def match_range_keys(obj, criteria, subset, overlap, superset, proper):
    """``match_range`` over the level keys of both ranges (``(sensitivity key,
    sensitivity value, category tokens)`` per level, see ``userquery._level_keys``), the same tests in the same
    order of precedence (equality is ``Level.__eq__``: the sensitivity datum and the
    categories)."""
    olo, ohi = obj
    clo, chi = criteria
    if overlap:
        return ((_le(olo, clo) and _le(clo, ohi)) or (_le(olo, chi) and _le(chi, ohi))
                or (_le(clo, olo) and _le(ohi, chi)))
    if subset:
        if proper:
            return (_lt(olo, clo) and _le(chi, ohi)) or (_le(olo, clo) and _lt(chi, ohi))
        return _le(olo, clo) and _le(chi, ohi)
    if superset:
        if proper:
            return (_lt(clo, olo) and _le(ohi, chi)) or (_le(clo, olo) and _lt(ohi, chi))
        return _le(clo, olo) and _le(ohi, chi)
    return (clo[0] == olo[0] and clo[2] == olo[2]) and (ohi[0] == chi[0] and ohi[2] == chi[2])


def filter_range_keys(rows, criteria, subset, overlap, superset, proper):
    """The objects of ``rows`` (``(object, (low keys, high keys))`` pairs, see
    ``match_range_keys``) whose range matches ``criteria``'s keys, in order: equality,
    subset and superset (not proper) tested inline, without a call per object; the other
    tests through ``match_range_keys``."""
    (c_key, c_sens, c_cats), (d_key, d_sens, d_cats) = criteria
    if overlap or proper:
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


def match_level(obj, criteria, dom, domby, incomp):
    """MLS levels: ``criteria`` dominates, is dominated by, is incomparable to, or equals
    ``obj``."""
    if dom:
        return criteria >= obj
    if domby:
        return criteria <= obj
    if incomp:
        return criteria ^ obj
    return criteria == obj


def validate_perms_any(perms, tclass=None, policy=None):
    """Every permission of ``perms`` exists in one of ``tclass`` (or of the policy's
    classes): else ``InvalidPermission`` naming the missing ones."""
    if not perms:
        raise ValueError("No permissions specified.")
    if tclass:
        selected_classes = set(c for c in tclass)
    elif policy:
        selected_classes = set(policy.classes())
    else:
        raise ValueError("No object class(es) or policy specified.")
    invalid = set(p for p in perms)
    for c in selected_classes:
        invalid -= c.perms
        with suppress(_exc.NoCommon):
            invalid -= c.common.perms
        if not invalid:
            break
    else:
        if tclass:
            raise _exc.InvalidPermission(
                "Permission(s) do not exist in the specified classes: {}".format(
                    ", ".join(invalid)))
        raise _exc.InvalidPermission(
            "Permission(s) do not exist any class: {}".format(", ".join(invalid)))


def xperm_str_to_tuple_ranges(perms, separator=","):
    """``"0x08,0x30-0x40"`` as ``[(8, 8), (48, 64)]``."""
    xperms = []
    for item in perms.split(separator):
        rng = item.split("-")
        if len(rng) == 2:
            xperms.append((int(rng[0], base=16), int(rng[1], base=16)))
        elif len(rng) == 1:
            xperms.append((int(rng[0], base=16), int(rng[0], base=16)))
        else:
            raise ValueError("Unable to parse \"{}\" for xperms.".format(item))
    return xperms

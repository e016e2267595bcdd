"""The matching helpers of ``util`` that only rarer criteria reach (regular expressions
over sets, ranges and levels), the permission validation and the xperm parsing, imported
on first use (``util.__getattr__``), which serves them as ``util``'s own."""

from contextlib import suppress

from . import exception as _exc


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

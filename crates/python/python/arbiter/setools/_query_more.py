"""The matching helpers of ``query`` that only rarer criteria reach and setools' logging
of ``results()``, imported on first use (``query.__getattr__``, which serves them as
``query``'s own)."""

from .query import _DEBUG


def _logger(cls):
    """The logger setools' query ``cls`` (or the setools query it derives from) uses: named
    for its module under ``setools``."""
    import logging

    for klass in cls.__mro__:
        module = klass.__module__
        if module.startswith("arbiter.setools."):
            return logging.getLogger("setools." + module.rsplit(".", 1)[1])
    return logging.getLogger("setools.query")


def log_results(query, what):
    """setools' first line of every ``results()``: ``Generating <what>results from
    <policy>`` at INFO on the query's logger (what ``sesearch -v`` prints). The queries
    call it only once ``logging`` is imported (``"logging" in sys.modules``, tested
    inline: a call per ``results()`` costs 0.1 us, 5% of the smallest queries): before
    that no logger can be configured, so nothing would be printed. The criteria lines
    setools logs at DEBUG follow (``_debug_log``)."""
    log = query.log
    log.info("Generating {0}results from {1}".format(what, query.policy))
    # Then the criteria at DEBUG, as setools' ``results()`` logs them (``sesearch --debug``):
    # the class's format strings, each formatted with the query (``_debug_log``).
    if log.isEnabledFor(_DEBUG):
        for line in query._debug_log:
            log.debug(line.format(query))


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

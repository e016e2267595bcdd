"""``setools.query``: the protocol every query shares. ``Q(policy, **criteria)`` sets each
keyword as an attribute in reverse-sorted name order (so ``x_regex`` is set before ``x``,
whose setter depends on it); ``results()`` is a generator in the policy's order."""

import gc
from keyword import iskeyword
from sys import modules

from .. import _native
from .descriptors import _compile, lookup_set, memo_lookup
from . import exception as _exc

_DEBUG = 10  # logging.DEBUG, without importing logging


class _QueryLog:
    """``query.log``: setools' logger of the query's module (``setools.typequery`` and the
    like), which setools assigns in every query's ``__init__``. Made on first read
    (importing ``logging`` costs a megabyte) and then kept in the instance, which an
    assignment replaces (a non-data descriptor)."""

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        from ._query_more import _logger

        log = obj.__dict__["log"] = _logger(type(obj))
        return log


class PolicyQuery(_native.QueryBase):
    """Base class of the queries."""

    log = _QueryLog()
    # The format strings of what ``results()`` logs at DEBUG (see ``log_results``).
    _debug_log = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # arbiter's own query classes get a keyword-bound ``__init__`` (see
        # ``_keyword_init``); a script's subclass keeps the generic protocol below, and
        # so does a class whose ``__init__`` (its own or inherited) does more than it.
        inherited = cls.__init__
        if cls.__module__.startswith("arbiter.setools.") and "__init__" not in cls.__dict__ \
                and (inherited is PolicyQuery.__init__
                     or getattr(inherited, "__wrapped__", None) is PolicyQuery.__init__):
            init = _keyword_init(cls)
            if init is not None:
                _install_init(cls, init)

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
        if cls.__setattr__ is not PolicyQuery.__setattr__:
            # A script's own ``__setattr__`` sees what setools assigns, in its order:
            # ``policy``, the keywords, then ``log``.
            self.policy = policy
            self._set_keywords(kwargs, {})
            from ._query_more import _logger

            self.log = _logger(cls)
            return
        d["policy"] = policy
        if not kwargs:
            return
        plan = cls.__dict__.get("_criteria_plan")
        if plan is None:
            plan = _criteria_plan(cls)
        if len(kwargs) == 1:
            # One keyword (the usual query): no sort, and no method call when the plan
            # knows the name and it needs no check (see ``_set_keywords``).
            for name, value in kwargs.items():
                how = plan.get(name)
                if how is not None and not how[0]:
                    if how[1] is None:
                        d[name] = value
                    else:
                        how[1](self, value)
                    return
        self._set_keywords(kwargs, plan)

    def _set_keywords(self, kwargs, plan):
        """setools' keyword protocol: reverse-sorted names (so that ``x_regex`` is set
        before ``x``), a name that reads as a callable refused, each value assigned."""
        d = self.__dict__
        for name in sorted(kwargs, reverse=True):
            how = plan.get(name)
            if how is None or how[0]:
                # setools' check (a property's getter may return anything).
                if callable(getattr(self, name, None)):
                    raise ValueError(
                        "Keyword parameter {0} conflicts with a callable.".format(name))
            if how is None:
                setattr(self, name, kwargs[name])
            elif how[1] is None:
                d[name] = kwargs[name]
            else:
                how[1](self, kwargs[name])

    def __setattr__(self, name, value):
        # The criteria are non-data descriptors (no ``__set__``), so that ``results()``
        # reads a set criterion from the instance ``__dict__`` at C speed (a Python
        # ``__get__`` per read was most of a small query's time); an assignment is
        # validated here instead, by the descriptor's ``_store``. The class's plan (see
        # ``_criteria_plan``) says how, without looking for ``_store`` on every value
        # (a missing attribute costs an exception raised and caught).
        # Any assignment may change the answer: the results kept by ``MemoResults``
        # are dropped (the criteria themselves are immutable once stored).
        self.__dict__.pop("_results_memo", None)
        cls = type(self)
        plan = cls.__dict__.get("_criteria_plan")
        if plan is None:
            plan = _criteria_plan(cls)
        how = plan.get(name)
        if how is not None:
            if how[1] is None:
                self.__dict__[name] = value
            else:
                how[1](self, value)
            return
        d = getattr(cls, name, None)
        store = getattr(d, "_store", None)
        if store is not None:
            store(self, value)
        else:
            object.__setattr__(self, name, value)

    def results(self):
        """The matching objects (a generator)."""
        raise NotImplementedError


class MemoResults:
    """``results()`` over the matches kept in the query: ``_matches()`` (the class's
    matches in the policy's order, as a sequence) runs on the first call and its tuple is
    kept in the instance; a later call is an iterator over it (native:
    ``QueryBase.memo_results``, see ``_memo_results`` for the first call). The answer is
    a function of the policy and the criteria only (both immutable: a symbol table never
    changes, a stored criterion is a looked-up symbol, a frozenset, a compiled pattern or a
    flag), and every assignment to the query goes through ``PolicyQuery.__setattr__``,
    which drops the tuple. A subclass with its own ``__setattr__`` could write around
    that, so its results are never kept (``_keeps_results``). While ``logging`` is
    imported, ``results()`` is a generator that logs setools' lines on its first step, as
    setools' generator does. A query constructed from kept criteria (see
    ``_install_init``) starts with the tuple of its first twin that answered."""

    _results_memo = None
    _keeps_results = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._keeps_results = cls.__setattr__ is PolicyQuery.__setattr__

    results = _native.QueryBase.memo_results

    def _logged_results(self, memo):
        from ._query_more import log_results

        log_results(self, self._log_what)
        if type(memo) is not tuple:
            memo = _keep_results(self, memo, tuple(self._matches()))
        yield from memo


class _Pending:
    """The ``_results_memo`` of a query constructed from kept criteria (see
    ``_install_init``) whose twins have not answered yet: its first ``results()`` keeps the
    tuple for them too (``_keep_results``). An assignment to the query drops it with the
    tuple slot (``PolicyQuery.__setattr__``), so only a query still holding the criteria
    it was constructed with gives its answer to the key."""

    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key


def _memo_results(query):
    """``MemoResults.results()`` where the native one does not answer alone: the first
    call (the matches computed and kept) and any call while ``logging`` is imported
    (setools' INFO line, see ``log_results``)."""
    memo = query._results_memo
    if "logging" in modules:
        return query._logged_results(memo)
    if type(memo) is not tuple:
        matches = query._matches()
        memo = _keep_results(query, memo, matches if type(matches) is tuple else tuple(matches))
    return iter(memo)


def _keep_results(query, pending, memo):
    """Keeps ``memo`` (the query's results) in the query, and in the kept construction
    its ``_Pending`` marker names (see ``_install_init``); returns it."""
    if query._keeps_results:
        query.__dict__["_results_memo"] = memo
        if type(pending) is _Pending:
            kept = getattr(query.policy, "_cache", {}).get("query_kept_init")
            snapshot = None if kept is None else kept.get(pending.key)
            if snapshot is not None and snapshot.get("_results_memo") is pending:
                snapshot["_results_memo"] = memo
    return memo


# Per policy, how many criteria's results ``policy_results`` keeps (then the memo is
# emptied), so memory stays bounded whatever a script asks.
_RESULTS_MEMO_LIMIT = 256


def policy_table(policy, key, build):
    """``policy._table(key, build)``, read from the policy's table cache without a call
    (nor a ``build`` closure made by the caller's ``lambda``) once built: the smallest
    queries read a table or two per construction, and those two calls were a tenth of
    their time. ``build`` is a function of the policy."""
    t = policy._cache.get(key)
    if t is None:
        t = policy._table(key, lambda: build(policy))
    return t


def policy_results(policy, kind, criterion, flags, compute):
    """``tuple(compute())``, kept per policy for one looked-up criterion object and the
    flags that qualify it: the answer is a function of the policy, the object and the
    flags (a looked-up level or range is the same object for the same text, see
    ``descriptors.memo_lookup``), so a new query with the same criterion reads it in one
    dictionary hit instead of filtering the table again. Keyed by the object's ``id``
    (hashing a level or range is a Python call); the entry holds the object itself,
    which keeps that ``id`` from being reused while the entry lives, and is checked to be
    the same object."""
    memo = policy._table("query_results_memo", dict)
    key = (kind, id(criterion), flags)
    hit = memo.get(key)
    if hit is not None and hit[0] is criterion:
        return hit[1]
    out = tuple(compute())
    if len(memo) >= _RESULTS_MEMO_LIMIT:
        memo.clear()
    memo[key] = (criterion, out)
    return out


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


def _criteria_plan(cls):
    """How an assignment to each name of ``cls`` is done, without setools' generic
    protocol (about 1 us a keyword in ``__init__``: a ``callable`` check through the
    instance, ``setattr``, then looking for a ``_store`` on the class attribute): name to
    ``(check, store)``. ``store`` is None for a plain class attribute (a flag such as
    ``name_regex``: the value goes to the instance ``__dict__``, as ``setattr`` puts it),
    the criterion's ``_store`` for a criterion descriptor (what ``__setattr__`` calls), a
    data descriptor's ``__set__`` (a property: what ``object.__setattr__`` calls);
    ``check`` says whether ``__init__`` must still make setools' ``callable`` check (a
    property's getter may return anything; a plain flag or a criterion's default is known
    not to be callable). Anything else (a method, a name the class does not define, a
    subclass with its own ``__setattr__``) is left out and takes the generic protocol, so
    that its conflicts and assignments behave as in setools. Kept on the class, like
    ``_criteria_defaults``."""
    plan = {}
    if cls.__setattr__ is PolicyQuery.__setattr__:
        for klass in reversed(cls.__mro__):
            for name, attr in vars(klass).items():
                kind = type(attr)
                if name.startswith("__"):
                    plan.pop(name, None)
                elif kind in _PLAIN:
                    plan[name] = (False, None)
                elif hasattr(kind, "_store") and hasattr(attr, "default_value") \
                        and not callable(attr.default_value):
                    plan[name] = (False, attr._store)
                elif hasattr(kind, "__set__"):
                    plan[name] = (True, attr.__set__)
                else:
                    plan.pop(name, None)
    type.__setattr__(cls, "_criteria_plan", plan)
    return plan


# Per policy, how many constructions ``_native_init_miss`` keeps (then the memo is
# emptied), so memory stays bounded whatever a script asks.
_KEPT_INIT_LIMIT = 256

# Types a kept construction may not hold (see ``_keep_construction``): a container the
# caller could change after the query stored it as given.
_MUTABLE = (list, dict, set, bytearray)


def _install_init(cls, init):
    """Gives ``cls`` (an arbiter query class with a keyword-bound ``__init__``, see
    ``_keyword_init``) the native construction of ``QueryBase`` while ``cls.__init__``
    stays ``init``. CPython calls a class's ``tp_init`` slot, which it sets from the
    ``__init__`` found when the attribute is assigned: a Python function there costs a
    frame per construction (a third of the smallest queries). So the native slot
    wrapper is assigned first (the slot becomes ``QueryBase.__init__``'s C function),
    then ``init`` is written into the class dictionary directly, and the type's lookup
    caches are reset by an ordinary assignment. ``QueryBase.__init__`` copies in the kept
    instance dictionary of an earlier construction with the same keywords, else calls
    ``init`` (``_native_init_miss``). What a script sees is unchanged: ``cls.__init__``,
    ``super().__init__`` and ``inspect.signature`` find ``init``, and a script's subclass
    (whose slot CPython sets from ``init``) runs ``init`` itself. Where the class
    dictionary cannot be reached (another Python implementation), ``init`` is simply
    assigned."""
    native = _native.QueryBase.__init__
    type.__setattr__(cls, "__init__", native)
    mapping = [r for r in gc.get_referents(cls.__dict__) if type(r) is dict]
    if len(mapping) != 1 or mapping[0].get("__init__") is not native:
        type.__setattr__(cls, "__init__", init)
        return
    mapping[0]["__init__"] = init
    type.__setattr__(cls, "_python_init", init)  # resets the type's lookup caches


def _native_init_miss(query, args, kwargs, key):
    """``QueryBase.__init__`` without a kept construction: the class's own ``__init__``
    (setools' protocol, its errors included), then the construction kept under ``key``
    (None: its keywords are not compared by value) for the next one."""
    init = type(query).__init__
    if init is _native.QueryBase.__init__:
        raise TypeError("arbiter._native.QueryBase is the base of setools' queries, "
                        "not a query")
    if kwargs is None:
        init(query, *args)
    else:
        init(query, *args, **kwargs)
    if key is not None:
        _keep_construction(query, kwargs, key)


def _keep_construction(query, kwargs, key):
    """Keeps ``query``'s instance dictionary, just constructed, in its policy's
    ``_cache["query_kept_init"]`` under ``key``, from the second construction with that
    key on: the criteria as stored are a function of the policy, the class and the
    keywords' values (the key), and are immutable (looked-up symbols, frozensets,
    patterns, flags), so a later construction copies them (``QueryBase.__init__``). Not
    kept: a dictionary holding a mutable container (one stored as given could change
    under the next query), or a policy without the cache.
    The kept dictionary holds None for ``policy`` (the constructing call puts its own in)
    and, for a ``MemoResults`` class, a ``_Pending`` marker the first ``results()``
    replaces with the answer."""
    d = query.__dict__
    cache = getattr(d.get("policy"), "_cache", None)
    if type(cache) is not dict:
        return
    kept = cache.get("query_kept_init")
    if kept is None:
        kept = cache["query_kept_init"] = {}
    elif len(kept) >= _KEPT_INIT_LIMIT:
        kept.clear()
    if key not in kept:
        # Seen once: kept from its second construction on (a script that constructs each
        # query once pays a dictionary entry, not a copy).
        kept[key] = None
        return
    for value in d.values():
        if isinstance(value, _MUTABLE):
            return
    if isinstance(query, MemoResults) and query._keeps_results \
            and "_results_memo" not in d:
        d["_results_memo"] = _Pending(key)
    # Made presized (``fromkeys``), so that copying it into an empty instance dictionary
    # is one block copy rather than an insertion per entry.
    snapshot = dict.fromkeys(d)
    snapshot.update(d)
    snapshot["policy"] = None
    kept[key] = snapshot


_native.QueryBase._install(_native_init_miss, _memo_results, modules)


# An argument not given to a keyword-bound ``__init__`` (see ``_keyword_init``).
_UNSET = object()


def _keyword_init(cls):
    """A ``cls.__init__`` whose keywords are parameters, built from the class's plan (see
    ``_criteria_plan``), doing what the generic ``PolicyQuery.__init__`` does for them
    without its per-keyword work (the ``**kwargs`` dict, the sort, a plan lookup and a
    call per keyword, 0.5-1 us of a small query's 3-5): the criteria's defaults into the
    instance ``__dict__``, ``policy``, then each keyword given, in setools' reverse-sorted
    order: a flag into the ``__dict__``, a criterion through its ``_store``, a property
    through its setter after setools' ``callable`` check. Every parameter defaults to
    ``_UNSET``, so that a value given (even None) is assigned as setools assigns it.
    A keyword the class does not know (a method, a misspelling), or an instance of a
    subclass (whose plan may differ), takes the generic protocol with the same keywords.
    The source is generated (as ``dataclasses`` generates ``__init__``): one line per
    criterion, no loop. None for a class the generic protocol must serve (its own
    ``__setattr__``, or a name that cannot be a parameter)."""
    if cls.__setattr__ is not PolicyQuery.__setattr__:
        return None
    plan = _criteria_plan(cls)
    names = sorted((n for n in plan if not n.startswith("_")), reverse=True)
    if any(not n.isidentifier() or iskeyword(n) or n in ("self", "policy") for n in names):
        return None
    env = {"_UNSET": _UNSET, "_CLS": cls, "_DEFAULTS": _criteria_defaults(cls),
           "_generic": PolicyQuery.__init__}
    body = []
    for n in names:
        check, store = plan[n]
        if store is None:
            body.append("    if {0} is not _UNSET:\n        d[{0!r}] = {0}".format(n))
            continue
        env["_store_" + n] = store
        if check:
            body.append(
                "    if {0} is not _UNSET:\n"
                "        if callable(getattr(self, {0!r}, None)):\n"
                "            raise ValueError('Keyword parameter {0} conflicts with a "
                "callable.')\n"
                "        _store_{0}(self, {0})".format(n))
        else:
            body.append("    if {0} is not _UNSET:\n        _store_{0}(self, {0})".format(n))
    params = "".join(", {0}=_UNSET".format(n) for n in names)
    source = [
        "def __init__(self, policy{0}, **_other):".format(", *" + params if names else ""),
        "    if _other or type(self) is not _CLS:",
        # The generic protocol, with the keywords given (an unknown one among them).
    ] + ["        if {0} is not _UNSET:\n            _other[{0!r}] = {0}".format(n)
         for n in names] + [
        "        return _generic(self, policy, **_other)",
        "    d = self.__dict__",
        "    d.update(_DEFAULTS)",
        "    d['policy'] = policy",
    ] + body
    # Compiled natively: ``compile()`` would build CPython's AST classes (see
    # ``_native.compile_source``).
    name = "<{0}.__init__>".format(cls.__qualname__)
    exec(_native.compile_source(("\n".join(source) + "\n").encode(), name.encode()), env)
    init = env["__init__"]
    init.__qualname__ = cls.__qualname__ + ".__init__"
    init.__module__ = cls.__module__
    init.__doc__ = "``{0}(policy, **criteria)``: see ``PolicyQuery``.".format(cls.__name__)
    # ``inspect.signature`` and ``help()`` show the call setools documents,
    # ``(policy, **kwargs)``, rather than the generated keyword-only parameters.
    init.__wrapped__ = PolicyQuery.__init__
    return init


# The types of a class attribute that ``setattr`` on an instance simply shadows (no
# descriptor protocol, never callable).
_PLAIN = frozenset((bool, int, float, str, type(None)))


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
            obj.__dict__[self.name] = _compile(value)
        elif self.lookup:
            obj.__dict__[self.name] = memo_lookup(obj.policy, self.lookup, value)
        else:
            obj.__dict__[self.name] = value


class SetCriterion(Criterion):
    """A criterion naming a set of symbols (each looked up), or a regular expression."""

    def _store(self, obj, value):
        if _empty(value):
            obj.__dict__[self.name] = None
        elif self.regex and getattr(obj, self.regex):
            obj.__dict__[self.name] = _compile(value)
        elif self.lookup:
            obj.__dict__[self.name] = lookup_set(obj.policy, self.lookup, value)
        else:
            obj.__dict__[self.name] = frozenset(value)


# The lists the policy keeps behind its iterators, by ``table`` key: read in place (no
# query changes them) rather than copied once more (the Debian policy's types alone were
# 31 kB a copy).
_POLICY_LISTS = {
    "types": "_types_only",
    "attributes": "_attributes_only",
    "roles": "_roles_all",
    "users": "_users_all",
    "bools": "_bools_all",
    "classes": "_classes_all",
    "commons": "_commons_all",
    "categories": "_categories_all",
}


def table(policy, key, items):
    """A symbol table's objects as one list, built once per policy from ``items()`` (the
    policy's iterator), or the policy's own list behind that iterator where it keeps one:
    the queries scan and index it without copying it per call, and never change it."""
    own = _POLICY_LISTS.get(key)
    if own is not None:
        return getattr(policy, own)()
    return policy._table("query_" + key, lambda: list(items()))


def _name_index(policy, key, symbols):
    """The native name index of a table (see ``table``), built on its first regex."""
    return policy._table(
        "name_index_" + key, lambda: _native.NameIndex(symbols, [s.name for s in symbols])
    )


# The tables of type objects (see ``filter_names``), with the class of their objects.
_TYPE_TABLES = {"types": "Type", "attributes": "TypeAttribute"}


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
        if not symbols:
            # setools calls ``criterion.search`` per symbol: none, so no error either
            # (a text criterion whose regex flag was set after it).
            return []
        re = modules.get("re")  # a pattern exists only once `re` was imported
        if key is not None and re is not None and isinstance(criterion, re.Pattern) \
                and type(criterion.pattern) is str and criterion.flags == re.UNICODE:
            hits = _name_index(policy, key, symbols).search(criterion.pattern)
            if hits is not None:
                return hits
        search = criterion.search
        return [s for s in symbols if search(s.name)]
    if key is not None and type(criterion) is str:
        # A symbol equals a text when its name is that text (PolicyObject.__eq__).
        kind = _TYPE_TABLES.get(key)
        if kind is not None:
            # The policy's native name lookup: the type objects hold no names.
            hit, alias = policy._type_named(criterion)
            return [hit] if type(hit).__name__ == kind and not alias else []
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


def every_perm(policy):
    """Every class's permissions (their own and their common's), once per policy (read
    from the policy's table cache without a call once built: a permission criterion
    checks against it at every construction)."""
    known = policy._cache.get("every_perm")
    if known is None:
        known = policy._table("every_perm", lambda: _known_perms(policy.classes()))
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
        known = every_perm(policy)
    missing = set(perms) - known
    if missing:
        raise _exc.InvalidPermission(
            "Permission(s) do not exist {0}: {1}".format(where, ", ".join(missing))
        )



# The matching helpers only rarer criteria reach (a name, a set or symbol values matched
# one object at a time) and setools' logging (used once ``logging`` is imported) are in
# ``_query_more``, imported on first use: a script whose queries never reach them does not
# keep their code. Asked for here (``query.log_results``, ``from .query import
# match_set``), they are served by ``__getattr__`` (PEP 562) and kept in this module,
# named as its own.
_MORE = frozenset(("_logger", "log_results", "match_name", "match_set", "match_values"))


def __getattr__(name):
    if name in _MORE:
        from . import _query_more as more

        for n in _MORE:
            fn = getattr(more, n)
            fn.__module__ = __name__
            globals().setdefault(n, fn)
        return globals()[name]
    raise AttributeError("module {!r} has no attribute {!r}".format(__name__, name))


def __dir__():
    return sorted(set(globals()) | _MORE)

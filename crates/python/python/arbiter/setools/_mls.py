"""MLS symbols and rules of ``setools.policyrep`` on arbiter: ``Sensitivity``,
``Category``, ``LevelDecl``, ``Level``, ``Range`` and ``MLSRule``, with setools 4.4.1's
attributes, ``str()``, comparisons (dominance) and exceptions, and the ``SELinuxPolicy``
methods that list and look them up (``_MLSPolicy``, mixed into ``SELinuxPolicy``).

Levels hold their sensitivity and the *values* of their categories; the ``Category``
objects are made only when asked for (``categories()``), so a range over 1024 categories
costs two small sets instead of two thousand objects. The tables come from the native
``sensitivity_table``/``category_table``/``range_transitions`` in setools' orders.
"""

from .. import _native
from . import exception as _exc
from .policyrep import (
    MLSRuletype, PolicyObject, PolicyRule, _Deferred, _NamedSymbol, _pickling_getattr,
)


class Listing:
    """An iterator over a policy table that also has ``len()`` (the whole table's, as
    setools' table iterators have), for the iterators setools gives a length."""

    __slots__ = ("_items", "_it")

    def __init__(self, items):
        self._items = items
        self._it = iter(items)

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._it)

    def __len__(self):
        return len(self._items)


class _Datum:
    """Identity of sensitivities and categories: setools compares them by libsepol datum,
    and the one it makes from a bitmap is the datum of the last alias in table order when
    an alias comes after the name (``alias_wins``): equal in name and value, yet unequal.
    ``_ident`` is 0 for the name's datum, 1 for that alias's."""

    __slots__ = ()

    def _key(self):
        return (self._value, self._ident)

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return self.policy is other.policy and self._key() == other._key()
        return PolicyObject.__eq__(self, other)

    __ne__ = _Deferred("_mls_more")


class Category(_Datum, _NamedSymbol):
    """An MLS category."""

    __slots__ = ("_aliases", "_alias_wins", "_ident")

    def __init__(self, policy, value, name, aliases, alias_wins, ident=0):
        super().__init__(policy, value, name)
        # One shared empty tuple for the categories without aliases (nearly all: an empty
        # list each was 56 bytes, 57 kB for the 1,024 categories of a distribution policy).
        self._aliases = aliases or ()
        self._alias_wins = alias_wins
        self._ident = ident

    _token = _Deferred("_mls_more")

    __hash__ = _Deferred("_mls_more")

    __lt__ = _Deferred("_mls_more")

    aliases = _Deferred("_mls_more")

    statement = _Deferred("_mls_more")

    __reduce__ = _Deferred("_mls_pickling")


class Sensitivity(_Datum, _NamedSymbol):
    """An MLS sensitivity; ordered by value (its dominance order)."""

    __slots__ = ("_aliases", "_cats", "_alias_wins", "_ident")

    def __init__(self, policy, value, name, aliases, cats, alias_wins, ident=0):
        super().__init__(policy, value, name)
        self._aliases = aliases or ()  # shared when empty, as a category's
        self._cats = tuple(cats)
        self._alias_wins = alias_wins
        self._ident = ident

    def __hash__(self):
        return hash(self.name)

    def __ge__(self, other):
        return self._value >= other._value

    __gt__ = _Deferred("_mls_more")

    __le__ = _Deferred("_mls_more")

    def __lt__(self, other):
        return self._value < other._value

    aliases = _Deferred("_mls_more")

    def level_decl(self):
        """The level declaration of this sensitivity."""
        return self.policy._leveldecl(self)

    statement = _Deferred("_mls_more")

    __reduce__ = _Deferred("_mls_pickling")


class BaseMLSLevel(PolicyObject):
    """A sensitivity and a set of categories (held as category values)."""

    __slots__ = ("policy", "sensitivity", "_cats")

    def __init__(self, policy, sensitivity, cats):
        self.policy = policy
        self.sensitivity = sensitivity
        self._cats = frozenset(cats)

    _key = _Deferred("_mls_more")

    __str__ = _Deferred("_mls_more")
    categories = _Deferred("_mls_more")

    __reduce__ = _Deferred("_mls_pickling")


def _other_cats(level, other):
    """The category values of ``other`` (a level of any kind), for the dominance tests."""
    if isinstance(other, BaseMLSLevel):
        return other._cats
    return frozenset(c._token for c in other.categories())


class LevelDecl(BaseMLSLevel):
    """A level declaration (``level s7:c0.c1023;``): compared by sensitivity only."""

    __slots__ = ()

    __hash__ = _Deferred("_mls_more")
    __eq__ = _Deferred("_mls_more")
    __ge__ = _Deferred("_mls_more")
    __gt__ = _Deferred("_mls_more")
    __le__ = _Deferred("_mls_more")
    __lt__ = _Deferred("_mls_more")
    statement = _Deferred("_mls_more")


class Level(BaseMLSLevel):
    """An MLS level of a context or rule. ``>=`` is dominance, ``<=`` dominated-by, ``^``
    incomparability."""

    __slots__ = ()

    __hash__ = _Deferred("_mls_more")
    __eq__ = _Deferred("_mls_more")
    __ne__ = _Deferred("_mls_more")

    def __ge__(self, other):
        othercats = _other_cats(self, other)
        return self.sensitivity >= other.sensitivity and self._cats >= othercats

    def __gt__(self, other):
        othercats = _other_cats(self, other)
        return (self.sensitivity > other.sensitivity and self._cats >= othercats) or (
            self.sensitivity >= other.sensitivity and self._cats > othercats
        )

    def __le__(self, other):
        othercats = _other_cats(self, other)
        return self.sensitivity <= other.sensitivity and self._cats <= othercats

    def __lt__(self, other):
        othercats = _other_cats(self, other)
        return (self.sensitivity < other.sensitivity and self._cats <= othercats) or (
            self.sensitivity <= other.sensitivity and self._cats < othercats
        )

    __xor__ = _Deferred("_mls_more")
    statement = _Deferred("_mls_more")


class Range(PolicyObject):
    """An MLS range: ``low`` and ``high`` levels. ``level in range`` tests containment."""

    __slots__ = ("policy", "low", "high")

    def __init__(self, policy, low, high):
        self.policy = policy
        self.low = low
        self.high = high

    _key = _Deferred("_mls_more")
    __str__ = _Deferred("_mls_more")
    __hash__ = _Deferred("_mls_more")
    __eq__ = _Deferred("_mls_more")
    __ne__ = _Deferred("_mls_more")
    __contains__ = _Deferred("_mls_more")
    statement = _Deferred("_mls_more")

    __reduce__ = _Deferred("_mls_pickling")


class MLSRule(PolicyRule):
    """``range_transition SOURCE TARGET:CLASS RANGE;``"""

    __slots__ = ("_n", "tclass", "_range")

    def __init__(self, policy, n, source, target, tclass, range_, origin=None):
        self.policy = policy
        self._n = n
        self.ruletype = MLSRuletype.range_transition
        self.source = source
        self.target = target
        self.tclass = tclass
        self._range = range_
        self.origin = origin

    _key = _Deferred("_mls_more")
    __hash__ = _Deferred("_mls_more")

    default = _Deferred("_mls_more")

    expand = _Deferred("_mls_more")
    statement = _Deferred("_mls_more")

    __reduce__ = _Deferred("_mls_pickling")


# How many distinct category sets ``_cat_tokens`` shares before it starts again.
_CAT_SETS_KEPT = 4096
# The regex answers ``_categories_named`` keeps (lists of categories already made).
_NAMED_ANSWERS_KEPT = 64


class _MLSPolicy:
    """The MLS part of ``SELinuxPolicy``: iterators, lookups and counts."""

    def _sensitivities_all(self):
        def build():
            # The rows hold a new list of category values per sensitivity; equal lists
            # become one tuple, and every tuple's values one ``int`` each, shared by all
            # the sensitivities (the Debian MLS policy's 16 sensitivities each have
            # c0.c1023: 16 copies of 1,024 values, 0.5 MB, kept for the whole run).
            tuples, ints = {}, {}
            out = []
            for value, name, aliases, cats, alias_wins in _native.sensitivity_table(self._db):
                key = tuple(cats)
                shared = tuples.get(key)
                if shared is None:
                    shared = tuples[key] = tuple([ints.setdefault(v, v) for v in key])
                out.append(Sensitivity(self, value, name, aliases, shared, alias_wins))
            return out

        return self._table("sensitivities", build)

    def _sens_by_value(self):
        return self._table(
            "sens_by_value", lambda: {s._value: s for s in self._sensitivities_all()}
        )

    def _sens_of_bitmap(self, value):
        """The sensitivity setools makes for a value read from a level (see ``_Datum``)."""
        s = self._sens_by_value()[value]
        if not s._alias_wins:
            return s
        alias = self._table("sens_alias_datums", dict)
        if value not in alias:
            alias[value] = Sensitivity(self, s._value, s.name, s._aliases, s._cats, True, 1)
        return alias[value]

    def _leveldecl(self, sens):
        """The level declaration of a sensitivity (one per datum)."""
        decls = self._table("leveldecls", dict)
        key = sens._key()
        if key not in decls:
            decls[key] = LevelDecl(self, sens, self._cat_tokens(sens._cats))
        return decls[key]

    _categories_all = _Deferred("_mls_more")

    def _categories_named(self, pattern):
        """The categories whose name ``re.search(pattern, name)`` matches, in setools'
        order, making only those (and keeping them, see ``_categories_all``) until the
        whole table is made: a regex is matched natively over the names (an index of the
        values, 1,024 ints on a distribution policy, instead of every ``Category``:
        about 0.14 MB for a query matching an eighth of them). None when the pattern has
        no native translation (the caller matches the whole table)."""
        def build():
            # Two columns, not the table's rows (see _native.category_table).
            return _native.NameIndex(*_native.category_names(self._db))

        index = self._table("category_value_index", build)
        # The answers kept by pattern (``_NAMED_ANSWERS_KEPT``, then emptied): mapping the
        # values to the objects made a query 1.2x the whole table's (35 us against 29).
        answers = self._table("categories_named_answers", dict)
        hit = answers.get(pattern)
        if hit is not None:
            return hit
        values = index.search(pattern)
        if values is None:
            return None
        made = self._table("categories_made", dict)
        wanted = {v for v in values if v not in made}
        if wanted:
            full = self._cache.get("categories")
            if full is not None:
                made.update((c._value, c) for c in full if c._value in wanted)
            else:
                made.update((row[0], Category(self, *row))
                            for row in _native.category_table(self._db, wanted))
        if len(answers) >= _NAMED_ANSWERS_KEPT:
            answers.clear()
        hit = answers[pattern] = [made[v] for v in values]
        return hit

    _category_by_value = _Deferred("_mls_more")

    def _cat_tokens(self, values):
        """Level tokens of category values read from a bitmap (see ``_Datum``): one shared
        ``frozenset`` per distinct sequence of values (the levels of users, contexts and
        rules repeat a few category sets: the Debian policy's c0.c1023 alone is about 50 kB
        a copy, with its ints). Keyed by the sequence, not the set, so that a shared set
        iterates as a new one built from the same values would. Levels parsed from a
        script's text come here too, so the table is emptied when it reaches
        ``_CAT_SETS_KEPT`` sets (sharing is for memory only: sets compare by content)."""
        key = tuple(values)
        shared = self._table("cat_token_sets", dict)
        s = shared.get(key)
        if s is None:
            if len(shared) >= _CAT_SETS_KEPT:
                shared.clear()
            # Read from the rows, not the categories: a range query needs no ``Category``.
            wins = self._table(
                "cat_alias_wins",
                lambda: frozenset(_native.category_alias_wins(self._db)))
            s = shared[key] = (frozenset(key) if not wins
                               else frozenset(-v if v in wins else v for v in key))
        return s

    _category_of_token = _Deferred("_mls_more")

    def _level(self, row):
        """A ``Level`` from the native ``(sensitivity value, category values)``."""
        if not self.mls:
            raise _exc.MLSDisabled
        return Level(self, self._sens_of_bitmap(row[0]), self._cat_tokens(row[1]))

    def _range(self, row):
        """A ``Range`` from the native ``(low, high)``: one object per distinct range
        (the labeling statements and range_transition rules of a policy repeat a few,
        ``s0`` and ``s0 - s15:c0.c1023``: 0.1 MB of levels and ranges in the Debian MLS
        policy's). A range is a value (compared, hashed and pickled by content, never
        changed), so a shared one differs from a new one only by ``is``, which setools'
        objects (made anew on each access) do not promise either. Emptied at
        ``_CAT_SETS_KEPT`` ranges, as the category sets are."""
        low, high = self._level(row[0]), self._level(row[1])
        # The sensitivities compare by datum and the category sets are ``_cat_tokens``'
        # shared ones (their hash computed once).
        key = (low.sensitivity, low._cats, high.sensitivity, high._cats)
        shared = self._table("shared_ranges", dict)
        r = shared.get(key)
        if r is None:
            if len(shared) >= _CAT_SETS_KEPT:
                shared.clear()
            r = shared[key] = Range(self, low, high)
        return r

    def _user_mls(self, value):
        """A user's ``(Level, Range)``."""
        rows = self._table(
            "user_mls", lambda: {v: (lv, rg) for v, lv, rg in _native.user_levels(self._db)}
        )
        # Built once per user (a query over users' ranges built 3 levels per user and call).
        built = self._table("user_mls_built", dict)
        pair = built.get(value)
        if pair is None:
            lv, rg = rows[value]
            pair = built[value] = (self._level(lv), self._range(rg))
            # A user's rows are read once: dropped when its objects are built.
            del rows[value]
        return pair

    sensitivities = _Deferred("_mls_more")

    categories = _Deferred("_mls_more")

    levels = _Deferred("_mls_more")

    def lookup_sensitivity(self, name, deref=True):
        """A sensitivity by name (or, with ``deref``, alias)."""
        for s in self._sensitivities_all():
            if s == name or (deref and name in s._aliases):
                return s
        raise _exc.InvalidSensitivity("{0} is not a valid sensitivity".format(name))

    lookup_category = _Deferred("_mls_more")

    def lookup_level(self, level):
        """A ``Level`` from its text (``s0:c0.c3,c5``), checked against the policy's
        level declarations."""
        if not self.mls:
            raise _exc.MLSDisabled
        parts = level.split(":")
        sens = parts[0]
        try:
            s = self.lookup_sensitivity(sens)
        except _exc.InvalidSensitivity as ex:
            raise _exc.InvalidLevel(
                "{0} is not a valid level ({1} is not a valid sensitivity)".format(level, sens)
            ) from ex
        cats = set()
        if len(parts) > 1:
            for group in parts[1].split(","):
                catrange = group.split(".")
                if len(catrange) == 2:
                    try:
                        low = self.lookup_category(catrange[0])
                        high = self.lookup_category(catrange[1])
                    except _exc.InvalidCategory as ex:
                        raise _exc.InvalidLevel(
                            "{0} is not a valid level ({1} is not a valid category range)".format(
                                level, group)
                        ) from ex
                    # setools' expand_cat_range: both ends as looked up, and the values
                    # after the low one up to the high one as read from a bitmap.
                    cats.update((low._value, high._value))
                    cats.update(self._cat_tokens(range(low._value + 1, high._value + 1)))
                elif len(catrange) == 1:
                    try:
                        cats.add(self.lookup_category(catrange[0])._value)
                    except _exc.InvalidCategory as ex:
                        raise _exc.InvalidLevel(
                            "{0} is not a valid level ({1} is not a valid category)".format(
                                level, group)
                        ) from ex
                else:
                    raise _exc.InvalidLevel(
                        "{0} is not a valid level (level parsing error)".format(level)
                    )
        lv = Level(self, s, cats)
        if not lv._cats <= s.level_decl()._cats:
            raise _exc.InvalidLevel(
                "{0} is not a valid level (one or more categories are not associated with the "
                "sensitivity)".format(level)
            )
        return lv

    def lookup_range(self, range_):
        """A ``Range`` from its text (``low - high`` or one level)."""
        if not self.mls:
            raise _exc.MLSDisabled
        levels = range_.split("-")
        try:
            low = self.lookup_level(levels[0].strip())
        except _exc.InvalidLevel as ex:
            raise _exc.InvalidRange("{0} is not a valid range ({1}).".format(range_, ex)) from ex
        try:
            high = self.lookup_level(levels[1].strip())
        except _exc.InvalidLevel as ex:
            raise _exc.InvalidRange("{0} is not a valid range ({1}).".format(range_, ex)) from ex
        except IndexError:
            high = low
        r = Range(self, low, high)
        if not r.high >= r.low:
            raise _exc.InvalidRange(
                "{0} is not a valid range ({1.low} is not dominated by {1.high})".format(range_, r)
            )
        return r

    def _mlsrules_all(self):
        def build():
            tv, cv = self._type_by_value, self._class_by_value
            return [
                MLSRule(self, n, tv[s], tv[t], cv[c], self._range(rg))
                for n, (s, t, c, rg) in enumerate(_native.range_transitions(self._db))
            ]

        return self._table("mlsrules", build)

    mlsrules = _Deferred("_mls_more")


# The pickling of this part's objects is in ``_mls_pickling`` (``policyrep._Deferred`` gives
# the ``__reduce__`` methods on first use); pickles name its rebuilding functions as this
# module's, which serves them here.
__getattr__ = _pickling_getattr(globals(), "_mls_pickling", frozenset((
    "_symbol_at",
    "_level_at",
    "_mlsrule_at",
    "_expanded_mlsrule")))

"""The methods of ``_mls``'s objects that a script rarely calls (a level's ``str()`` and
comparisons, a range's, the rules' expansion and statements, the symbols' aliases,
ordering and hashing, the policy's MLS listings and category tables and
``lookup_category``), imported on the first call
of one (``policyrep._Deferred``): a script that only queries the MLS tables does not keep
their code. Each namespace class below gives its methods to the ``_mls`` class of its
name."""

import itertools

from .. import _native
from . import exception as _exc
from . import _mls
from ._mls import Listing, _other_cats

_PART = "_mls"
_NOT_LEVELS = "Levels cannot be compared to level declarations"


class BaseMLSLevel:
    def __str__(self):
        lvl = self.sensitivity.name
        if not self._cats:
            return lvl
        by_value = self.policy._category_by_value()
        runs = []
        for _, group in itertools.groupby(
            sorted(abs(t) for t in self._cats), key=lambda v, c=itertools.count(): v - next(c)
        ):
            group = list(group)
            if len(group) > 1:
                runs.append("{0}.{1}".format(by_value[group[0]], by_value[group[-1]]))
            else:
                runs.append(by_value[group[0]].name)
        return lvl + ":" + ",".join(runs)

    def categories(self):
        """Every category of the level (not a compact notation), as a set's iterator."""
        obj = self.policy._category_of_token
        return iter({obj(t) for t in self._cats})

    def _key(self):
        return (self.sensitivity._value, self._cats)


class LevelDecl:
    def __hash__(self):
        return hash(self.sensitivity)

    def __eq__(self, other):
        assert not isinstance(other, _mls.Level), _NOT_LEVELS
        try:
            return self.sensitivity == other.sensitivity
        except AttributeError:
            return str(self) == str(other)

    def __ge__(self, other):
        assert not isinstance(other, _mls.Level), _NOT_LEVELS
        return self.sensitivity >= other.sensitivity

    def __gt__(self, other):
        assert not isinstance(other, _mls.Level), _NOT_LEVELS
        return self.sensitivity > other.sensitivity

    def __le__(self, other):
        assert not isinstance(other, _mls.Level), _NOT_LEVELS
        return self.sensitivity <= other.sensitivity

    def __lt__(self, other):
        assert not isinstance(other, _mls.Level), _NOT_LEVELS
        return self.sensitivity < other.sensitivity

    def statement(self):
        return "level {0};".format(self)


class Level:
    def __hash__(self):
        return hash(str(self))

    def __eq__(self, other):
        try:
            othercats = _other_cats(self, other)
        except AttributeError:
            return str(self) == str(other)
        return self.sensitivity == other.sensitivity and self._cats == othercats

    def __ne__(self, other):
        return not self == other

    def __xor__(self, other):
        return not (self >= other or self <= other)

    def statement(self):
        raise _exc.NoStatement


class Range:
    def _key(self):
        return (self.low._key(), self.high._key())

    def __str__(self):
        if self.high == self.low:
            return str(self.low)
        return "{0.low} - {0.high}".format(self)

    def __hash__(self):
        return hash(str(self))

    def __eq__(self, other):
        try:
            return self.low == other.low and self.high == other.high
        except AttributeError:
            return str(self).replace(" ", "") == str(other).replace(" ", "")

    def __ne__(self, other):
        return not self == other

    def __contains__(self, other):
        return self.low <= other <= self.high

    def statement(self):
        raise _exc.NoStatement


class MLSRule:
    def _key(self):
        return ("range_transition", self._n)

    def __hash__(self):
        return hash("{0.ruletype}|{0.source}|{0.target}|{0.tclass}|None|None".format(self))

    def expand(self):
        """One rule per (source type, target type) of the rule's attributes."""
        if self.origin is not None:
            yield self
            return
        for s, t in itertools.product(self.source.expand(), self.target.expand()):
            yield _mls.MLSRule(self.policy, self._n, s, t, self.tclass, self._range, origin=self)

    def statement(self):
        return "{0.ruletype} {0.source} {0.target}:{0.tclass} {0.default};".format(self)

    @property
    def default(self):
        """The range the transition sets."""
        return self._range


class Category:
    def statement(self):
        return "category {0}{1};".format(self.name, _alias_text(self._aliases))

    @property
    def _token(self):
        """The category in a level's set: its value, negated for the alias's datum."""
        return -self._value if self._ident else self._value

    def __hash__(self):
        return hash(self.name)

    def __lt__(self, other):
        # By value (declaration order), not by name.
        return self._value < other._value

    def aliases(self):
        """The category's aliases."""
        return iter(self._aliases)


class Sensitivity:
    def statement(self):
        return "sensitivity {0}{1};".format(self.name, _alias_text(self._aliases))

    def __gt__(self, other):
        return self._value > other._value

    def __le__(self, other):
        return self._value <= other._value

    def aliases(self):
        """The sensitivity's aliases."""
        return iter(self._aliases)


def _alias_text(aliases):
    if len(aliases) > 1:
        return " alias {{ {0} }}".format(" ".join(aliases))
    if aliases:
        return " alias {0}".format(aliases[0])
    return ""


class _Datum:
    def __ne__(self, other):
        return not self == other


class _MLSPolicy:
    def _categories_all(self):
        def build():
            # The categories a name query made before (``_categories_named``) are these.
            made = self._cache.get("categories_made", {})
            return [
                made.get(row[0]) or _mls.Category(self, *row)
                for row in _native.category_table(self._db)
            ]

        return self._table("categories", build)

    def _category_by_value(self):
        return self._table(
            "category_by_value", lambda: {c._value: c for c in self._categories_all()}
        )

    def _category_of_token(self, token):
        """The ``Category`` a level token stands for."""
        c = self._category_by_value()[abs(token)]
        if token > 0:
            return c
        alias = self._table("cat_alias_datums", dict)
        if c._value not in alias:
            alias[c._value] = _mls.Category(self, c._value, c.name, c._aliases, True, 1)
        return alias[c._value]

    def sensitivities(self):
        """Every sensitivity, in setools' order."""
        return Listing(self._sensitivities_all())

    def categories(self):
        """Every category, in setools' order."""
        return Listing(self._categories_all())

    def levels(self):
        """Every level declaration, in the sensitivities' order."""
        return Listing([self._leveldecl(s) for s in self._sensitivities_all()])

    def lookup_category(self, name, deref=True):
        """A category by name (or, with ``deref``, alias)."""
        table = self._table(
            "category_names",
            lambda: ({c.name: c for c in self._categories_all()},
                     {a: c for c in self._categories_all() for a in c._aliases}),
        )
        c = table[0].get(name) if isinstance(name, str) else None
        if c is None and not isinstance(name, str):
            c = next((x for x in self._categories_all() if x == name), None)
        if c is None and deref:
            c = table[1].get(name)
        if c is None:
            raise _exc.InvalidCategory("{0} is not a valid category".format(name))
        return c

    def mlsrules(self):
        """Every range_transition rule, in setools' order."""
        return Listing(self._mlsrules_all())

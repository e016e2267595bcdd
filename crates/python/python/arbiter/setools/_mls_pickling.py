"""The pickling of ``_mls``'s objects: their ``__reduce__`` methods and the functions
that rebuild them in the unpickled policy, imported on the first pickling or
unpickling (``policyrep._Deferred``, and ``_mls``'s module ``__getattr__``, which
serves the functions under their old names: a pickle reads
``arbiter.setools._mls._symbol_at`` as before). Each namespace class below gives
its ``__reduce__`` to the ``_mls`` class of its name."""

_PART = "_mls"


class Category:
    def __reduce__(self):
        return (_symbol_at, (self.policy, "lookup_category", self.name, self._ident))


class Sensitivity:
    def __reduce__(self):
        return (_symbol_at, (self.policy, "lookup_sensitivity", self.name, self._ident))


class BaseMLSLevel:
    def __reduce__(self):
        return (_level_at, (self.policy, type(self).__name__, str(self)))


class Range:
    def __reduce__(self):
        return (_level_at, (self.policy, "Range", str(self)))


class MLSRule:
    def __reduce__(self):
        if self.origin is not None:
            return (_expanded_mlsrule, (self.origin, str(self.source), str(self.target)))
        return (_mlsrule_at, (self.policy, self._n))


def _symbol_at(policy, kind, name, ident=0):
    """Rebuilds a pickled sensitivity or category (and which datum it was, see
    ``_Datum``) in its (unpickled) policy."""
    sym = getattr(policy, kind)(name, deref=False)
    if not ident:
        return sym
    if kind == "lookup_category":
        return policy._category_of_token(-sym._value)
    return policy._sens_of_bitmap(sym._value)


def _level_at(policy, kind, text):
    """Rebuilds a pickled level, level declaration or range in its policy."""
    if kind == "LevelDecl":
        return policy.lookup_sensitivity(text.split(":")[0]).level_decl()
    if kind == "Range":
        return policy.lookup_range(text)
    return policy.lookup_level(text)


def _mlsrule_at(policy, n):
    """Rebuilds a pickled range_transition rule (its position in the policy)."""
    return policy._mlsrules_all()[n]


def _expanded_mlsrule(origin, source, target):
    for r in origin.expand():
        if str(r.source) == source and str(r.target) == target:
            return r
    raise ValueError("no expanded rule {} {} of {}".format(source, target, origin))


# Named as ``_mls``'s: pickle records a function by its module and name, and checks that
# the name finds it there.
for _f in (_symbol_at, _level_at, _mlsrule_at, _expanded_mlsrule):
    _f.__module__ = __package__ + "._mls"
del _f

"""The pickling of ``_labeling``'s objects: their ``__reduce__`` methods and the functions
that rebuild them in the unpickled policy, imported on the first pickling or
unpickling (``policyrep._Deferred``, and ``_labeling``'s module ``__getattr__``, which
serves the functions under their old names: a pickle reads
``arbiter.setools._labeling._context_at`` as before). Each namespace class below gives
its ``__reduce__`` to the ``_labeling`` class of its name."""

_PART = "_labeling"


class Context:
    def __reduce__(self):
        return (_context_at, (self.policy, _context_ident(self)))


class Ocontext:
    def __reduce__(self):
        table = self.policy._labeling(self._kind)
        n = next(n for n, o in enumerate(table) if o is self)
        return (_ocontext_at, (self.policy, (self._kind, n)))


def _context_at(policy, ident):
    """Rebuilds a pickled context from the labeling statement it belongs to."""
    owner = policy._labeling(ident[0])[ident[1]]
    return owner.packet if ident[2:] == ("packet",) else owner.context


def _context_ident(context):
    """``(kind, position)`` of the statement whose context ``context`` is, with
    ``"packet"`` after them for a netifcon's packet context: searched in the tables
    built (a context exists only once its table is)."""
    for key, table in list(context.policy._cache.items()):
        if isinstance(key, str) and key.startswith("labeling_"):
            for n, owner in enumerate(table):
                if owner.context is context:
                    return (key[len("labeling_"):], n)
                if getattr(owner, "packet", None) is context:
                    return (key[len("labeling_"):], n, "packet")
    raise ValueError("a context of no labeling statement of its policy")


def _ocontext_at(policy, ident):
    """Rebuilds a pickled labeling statement (its table and position)."""
    kind, n = ident
    return policy._labeling(kind)[n]


# Named as ``_labeling``'s: pickle records a function by its module and name, and checks that
# the name finds it there.
for _f in (_context_at, _context_ident, _ocontext_at):
    _f.__module__ = __package__ + "._labeling"
del _f

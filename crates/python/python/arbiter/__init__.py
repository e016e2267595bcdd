"""arbiter: offline SELinux access decisions (security server, access vector cache and
policy reading), from a compiled binary policy.

The engine is the extension module ``arbiter._native``; this package re-exports its public
names and holds the pure-Python layers built on it (``arbiter.setools``: setools 4.4.1's
API on arbiter's query layer).
"""

from . import _native

# Read as attributes, not by ``from ._native import ...``: a ``from`` import first asks
# the module for ``__path__``, which would run the extension's ``__getattr__`` (below).
ContextError = _native.ContextError
Error = _native.Error
PolicyError = _native.PolicyError
UnknownNameError = _native.UnknownNameError
__version__ = _native.__version__

# The engine's classes are made by the extension on first use (``arbiter._native``'s
# ``__getattr__``), and are fetched from it here the same way (PEP 562): a script that only
# uses ``arbiter.setools`` never builds them.
_LAZY = frozenset(
    "AvDecision Avc Explanation Policy Server Verdict _panic_for_tests".split()
)


def __getattr__(name):
    if name in _LAZY:
        value = getattr(_native, name)
        globals()[name] = value
        return value
    raise AttributeError("module 'arbiter' has no attribute '{0}'".format(name))


def __dir__():
    return sorted(set(globals()) | _LAZY)

"""arbiter: offline SELinux access decisions (security server, access vector cache and
policy reading), from a compiled binary policy.

The engine is the extension module ``arbiter._native``; this package re-exports its public
names and holds the pure-Python layers built on it (``arbiter.setools``: setools 4.4.1's
API on arbiter's query layer).
"""

from ._native import ContextError, Error, PolicyError, UnknownNameError, __version__  # noqa: F401

# The engine's classes are made by the extension on first use (``arbiter._native``'s
# ``__getattr__``), and are fetched from it here the same way (PEP 562): a script that only
# uses ``arbiter.setools`` never builds them.
_LAZY = frozenset(
    "AvDecision Avc Explanation Policy Server Verdict _panic_for_tests".split()
)


def __getattr__(name):
    if name in _LAZY:
        from . import _native

        value = getattr(_native, name)
        globals()[name] = value
        return value
    raise AttributeError("module 'arbiter' has no attribute '{0}'".format(name))


def __dir__():
    return sorted(set(globals()) | _LAZY)

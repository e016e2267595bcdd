"""arbiter: offline SELinux access decisions (security server, access vector cache and
policy reading), from a compiled binary policy.

The engine is the extension module ``arbiter._native``; this package re-exports its public
names and holds the pure-Python layers built on it (``arbiter.setools``: setools 4.4.1's
API on arbiter's query layer).
"""

from ._native import (  # noqa: F401
    AvDecision,
    Avc,
    ContextError,
    Error,
    Explanation,
    Policy,
    PolicyError,
    Server,
    UnknownNameError,
    Verdict,
    __version__,
    _panic_for_tests,
)

"""arbiter: offline SELinux access decisions (security server, access vector cache and
policy reading), from a compiled binary policy.

    import arbiter
    srv = arbiter.Server(arbiter.Policy.open("/etc/selinux/default/policy/policy.33"))
    v = srv.check("system_u:system_r:httpd_t:s0",
                  "system_u:object_r:httpd_sys_content_t:s0", "file", ["read", "open"])
    assert v.allowed and bool(v)

Every object may be shared between threads; the batch calls release the GIL and run on
every core. Errors are `arbiter.Error` and its subclasses.
"""

import os
import pathlib
from typing import Callable, Iterable, Optional, Sequence, Tuple, Union

__version__: str

StrPath = Union[str, "os.PathLike[str]", "os.PathLike[bytes]", bytes]
PolicyLike = Union["Policy", str, "os.PathLike[str]", bytes, bytearray, memoryview]
Perms = Union[str, Iterable[str]]

class Error(Exception):
    """Base class of every error arbiter raises."""

class PolicyError(Error):
    """A policy could not be read."""

    offset: Optional[int]
    """Byte offset the reader stood at (None when the fault is not at one place)."""
    what: Optional[str]
    """What was being read."""
    path: Optional[str]
    """The file (None for an image in memory)."""

class ContextError(Error):
    """A context is malformed, names something the policy lacks, or is not allowed."""

    context: Optional[str]
    """The context concerned."""

class UnknownNameError(Error):
    """A class, permission or boolean the policy does not define (or rejects)."""

    name: Optional[str]
    """The name concerned."""

class Policy:
    """A compiled SELinux policy (format versions 15 to 35), read and validated."""

    @staticmethod
    def open(path: StrPath) -> Policy:
        """Reads a binary policy file. Raises PolicyError."""
    @staticmethod
    def from_bytes(data: Union[bytes, bytearray, memoryview]) -> Policy:
        """Reads a policy from its binary image. Raises PolicyError."""
    @staticmethod
    def builtin() -> Policy:
        """The small policy embedded in arbiter."""
    @property
    def version(self) -> int:
        """The policy format version (e.g. 33)."""
    @property
    def mls(self) -> bool:
        """Whether the policy is MLS."""
    @property
    def handle_unknown(self) -> str:
        """"allow", "deny" or "reject": what happens to classes the policy lacks."""
    @property
    def path(self) -> Optional[pathlib.Path]:
        """The file the policy was read from, if any."""
    def stats(self) -> dict[str, Union[int, bool, str]]:
        """Statistics under seinfo's names ("Classes", "Allow", "Type_trans", ...)."""
    def types(self) -> list[str]:
        """Type names (no attributes, no aliases), in value order."""
    def attributes(self) -> list[str]:
        """Type attribute names, in value order."""
    def classes(self) -> list[str]:
        """Class names, in value order."""
    def permissions(self, tclass: str) -> list[str]:
        """A class's permissions (common included), in bit order. Raises UnknownNameError."""
    def roles(self) -> list[str]:
        """Role names, in value order."""
    def role_types(self, role: str) -> list[str]:
        """The types a role may have. Raises UnknownNameError."""
    def users(self) -> list[str]:
        """User names, in value order."""
    def booleans(self) -> dict[str, bool]:
        """Booleans and their default values."""

class AvDecision:
    """The kernel's struct av_decision; vectors in kernel bit order."""

    @property
    def allowed(self) -> int:
        """Granted permission bits."""
    @property
    def auditallow(self) -> int:
        """Granted bits to audit."""
    @property
    def auditdeny(self) -> int:
        """Denied bits to audit."""
    @property
    def flags(self) -> int:
        """1 = permissive domain, 2 = never audited domain."""
    @property
    def seqno(self) -> int:
        """The policy state the decision was computed under."""
    @property
    def permissive(self) -> bool:
        """Whether the source domain is permissive."""
    def as_tuple(self) -> Tuple[int, int, int]:
        """(allowed, auditallow, auditdeny)."""

class Verdict:
    """The verdict on a permission request; bool(v) == v.allowed."""

    @property
    def allowed(self) -> bool:
        """Whether every requested permission is granted by the policy."""
    @property
    def granted(self) -> list[str]:
        """Requested permissions granted, in the caller's order."""
    @property
    def denied(self) -> list[str]:
        """Requested permissions denied, in the caller's order."""
    @property
    def permissive(self) -> bool:
        """Whether the source domain is permissive (denials not enforced)."""
    @property
    def audited(self) -> bool:
        """Whether the kernel would write an audit record for this check."""
    @property
    def tclass(self) -> str:
        """The class, as given."""
    @property
    def decision(self) -> AvDecision:
        """The full decision for the class."""
    def __bool__(self) -> bool: ...

class Explanation:
    """Why a decision came out as it did. str(e) is the command line's text."""

    @property
    def scontext(self) -> str: ...
    @property
    def tcontext(self) -> str: ...
    @property
    def tclass(self) -> str: ...
    @property
    def source_type(self) -> str: ...
    @property
    def target_type(self) -> str: ...
    @property
    def requested(self) -> list[str]: ...
    @property
    def granted(self) -> list[str]: ...
    @property
    def denied(self) -> list[str]: ...
    @property
    def allowed(self) -> bool:
        """Whether every requested permission is granted."""
    @property
    def allowed_bits(self) -> int:
        """The final allowed access vector."""
    @property
    def te_allowed(self) -> int:
        """What the TE rules alone allow."""
    @property
    def auditallow(self) -> int: ...
    @property
    def auditdeny(self) -> int: ...
    @property
    def permissive(self) -> bool: ...
    @property
    def neveraudit(self) -> bool: ...
    @property
    def agrees(self) -> bool:
        """Whether the explanation's recomputation agrees with the fast path."""
    @property
    def permissions(self) -> list[dict[str, object]]:
        """Per requested permission: name, granted, allow_rules, would_allow, ..."""
    @property
    def constraints(self) -> list[dict[str, object]]: ...
    @property
    def rbac(self) -> Optional[dict[str, object]]: ...
    @property
    def bounds(self) -> Optional[dict[str, object]]: ...
    def to_dict(self) -> dict[str, object]: ...
    def to_json(self) -> str: ...

class Server:
    """The reloadable security server. Thread-safe; batch calls run without the GIL."""

    def __init__(self, policy: PolicyLike) -> None: ...
    @staticmethod
    def open(path: StrPath) -> Server:
        """A server for the policy file at path."""
    @property
    def seqno(self) -> int:
        """Sequence number of the current policy state (never decreases)."""
    @property
    def policy(self) -> Policy:
        """The policy currently in force."""
    def check(self, scon: str, tcon: str, tclass: str, perms: Perms) -> Verdict:
        """May scon do perms to tcon of class tclass?"""
    def compute_av(self, scon: str, tcon: str, tclass: str) -> AvDecision:
        """security_compute_av."""
    def compute_av_many(
        self, queries: Iterable[Sequence[str]], *, strict: bool = True
    ) -> list[Tuple[int, int, int]]:
        """compute_av for every (scon, tcon, tclass), in parallel without the GIL.
        With strict=False a failed query gives None instead of raising."""
    def check_many(
        self, queries: Iterable[Tuple[str, str, str, Perms]], *, strict: bool = True
    ) -> list[bool]:
        """check(...).allowed for every (scon, tcon, tclass, perms), in parallel."""
    def compute_create(
        self, scon: str, tcon: str, tclass: str, name: Optional[str] = None
    ) -> str:
        """Label of a new object (type_transition, filename transitions with name)."""
    def compute_relabel(self, scon: str, tcon: str, tclass: str) -> str:
        """Label after relabeling (type_change)."""
    def compute_member(self, scon: str, tcon: str, tclass: str) -> str:
        """Label of a member object (type_member)."""
    def explain(self, scon: str, tcon: str, tclass: str, perms: Perms) -> Explanation:
        """Why the decision is what it is."""
    def booleans(self) -> dict[str, bool]:
        """Booleans and their current values."""
    def set_booleans(self, values: dict[str, bool]) -> int:
        """Sets and commits booleans (all or nothing); returns the new seqno."""
    def load_policy(self, policy: PolicyLike) -> int:
        """Replaces the policy under load; returns the new seqno."""

class Avc:
    """Access vector cache in front of a Server (kernel semantics, auditing)."""

    def __init__(
        self, server: Server, slots: int = 8192, threshold: int = 8192, hash: str = "arbiter"
    ) -> None: ...
    def check(self, scon: str, tcon: str, tclass: str, perms: Perms) -> Verdict:
        """Server.check through the cache; audited outcomes go to the callback."""
    def compute_av(self, scon: str, tcon: str, tclass: str) -> AvDecision:
        """Server.compute_av through the cache."""
    def stats(self) -> dict[str, int]:
        """lookups, hits, misses, allocations, reclaims, frees, ..., entries."""
    def set_audit_callback(self, callback: Optional[Callable[[str], object]]) -> None:
        """fn(record_text) for every audited grant or denial; None to stop."""
    @property
    def enforcing(self) -> bool: ...
    @enforcing.setter
    def enforcing(self, value: bool) -> None: ...
    def reset(self) -> None:
        """Drops every cached entry."""

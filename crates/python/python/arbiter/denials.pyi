"""Type stubs for arbiter.denials (the classes live in the extension arbiter._native)."""

import os
from typing import Dict, Iterable, List, Optional, Tuple, Union

from . import Error, Policy

StrPath = Union[str, "os.PathLike[str]"]
PlainVerdict = Tuple[int, List[Tuple[str, bool]], Optional[str]]
KeptDenial = Tuple[str, str, str, List[str], Optional[int], Optional[PlainVerdict]]

class LogError(Error):
    """A denial log could not be read. `.path` names the file."""

    path: Optional[str]

class Report:
    """A run's standard output (`text`) and counts."""

    text: str
    lines: int
    records: int
    decided: int
    malformed: int
    unknown: int
    selinux_seen: bool
    problems: List[str]

class Denial:
    """One AVC record and audit2why's verdict on it."""

    source: str
    line: int
    record: str
    denied: bool
    permissive: Optional[bool]
    scontext: str
    tcontext: str
    tclass: str
    perms: List[str]
    ioctlcmd: Optional[int]
    comm: Optional[str]
    exe: Optional[str]
    name: Optional[str]
    verdict: Optional[str]
    code: Optional[int]
    booleans: List[Tuple[str, bool]]
    constraint: Optional[str]
    unknown: Optional[str]
    allowed: bool

class Digest:
    """Counts of one log chunk and its distinct denials, decided."""

    lines: int
    records: int
    denials: int
    malformed: int
    unknown: int
    selinux_seen: bool
    verdicts: Dict[str, int]
    rules: Dict[Tuple[str, str, str], int]
    kept: List[KeptDenial]
    roles: List[Tuple[str, str]]

class Denials:
    """audit2why / audit2allow over logs, for one policy."""

    def __init__(self, policy: Union[Policy, StrPath, bytes]) -> None: ...
    def why(self, text: Union[str, bytes, None] = None, *, files: Optional[Iterable[StrPath]] = None,
            name: str = "-", explain: bool = False, json: bool = False) -> Report: ...
    def allow(self, text: Union[str, bytes, None] = None, *,
              files: Optional[Iterable[StrPath]] = None, name: str = "-",
              module: Optional[str] = None, requires: bool = False, dontaudit: bool = False,
              xperms: bool = False, verbose: bool = False, explain_rules: bool = False,
              type_regex: Optional[str] = None, json: bool = False) -> Report: ...
    def records(self, text: Union[str, bytes, None] = None, *,
                files: Optional[Iterable[StrPath]] = None, name: str = "-") -> List[Denial]: ...
    def digest(self, text: Union[str, bytes], *, name: str = "-") -> Digest: ...
    def merge_allow(self, kept: List[KeptDenial], roles: List[Tuple[str, str]],
                    selinux_seen: bool, *, module: Optional[str] = None, requires: bool = False,
                    dontaudit: bool = False, xperms: bool = False) -> str: ...

"""Type stubs for arbiter.bsm (the classes live in the extension arbiter._native)."""

import os
from typing import Iterable, List, Optional, Sequence, Tuple, Union

from . import Error

StrPath = Union[str, "os.PathLike[str]"]
TrailSource = Union[StrPath, bytes]
Trails = Union[TrailSource, Iterable[TrailSource]]

class TrailError(Error):
    """A BSM trail or configuration file could not be read. `.path` names the file."""

    path: Optional[str]

class Token:
    """One token of a record: its id byte and its praudit text."""

    id: int
    """The token id byte (0x14 header32, 0x24 subject32, 0x27 return32, ...)."""
    name: str
    """praudit's name for the token (`header`, `subject`, `path`, ...)."""
    text: str
    """The token as praudit prints it with the options of the call."""

class Record:
    """One record of a trail, with the fields selection looks at already decoded."""

    trail: str
    offset: int
    data: bytes
    event: Optional[int]
    event_name: Optional[str]
    modifier: Optional[int]
    sec: Optional[int]
    msec: Optional[int]
    auid: Optional[int]
    euid: Optional[int]
    egid: Optional[int]
    ruid: Optional[int]
    rgid: Optional[int]
    pid: Optional[int]
    sid: Optional[int]
    ret: Optional[Tuple[int, int]]
    tokens: List[Token]
    error: Optional[str]

class PrintReport:
    """What `arbiter bsm print` wrote (`data`, `text`) and reported (`problems`)."""

    data: bytes
    text: str
    records: int
    problems: List[str]

class ReduceReport:
    """The selected records as a trail (`data`) and the counts."""

    data: bytes
    records: int
    selected: int
    undecodable: int
    suppressed_after_error: int

class Selection:
    """The answer of `au_preselect` (true when selected)."""

    selected: bool
    event: int
    class_bits: int
    matched: int
    classes: List[str]
    matched_classes: List[str]
    mask: Tuple[int, int]
    def __bool__(self) -> bool: ...

def records(trails: Trails, *, raw: bool = False, short: bool = False,
            noresolve: bool = False, etc: Optional[StrPath] = None,
            strict: bool = False) -> List[Record]: ...
def praudit(trails: Trails, *, oneline: bool = False, raw: bool = False, short: bool = False,
            xml: bool = False, noresolve: bool = False, delim: str = ",", json: bool = False,
            resync: bool = False, check: bool = False,
            etc: Optional[StrPath] = None) -> PrintReport: ...
def auditreduce(trails: Trails, options: Sequence[str] = (), *,
                etc: Optional[StrPath] = None) -> ReduceReport: ...
def preselect(event: Union[int, str], mask: str, *, outcome: str = "success",
              etc: Optional[StrPath] = None) -> Optional[Selection]: ...

"""Type stubs for arbiter.landlock (the classes live in the extension arbiter._native)."""

import os
from typing import List, Optional, Sequence, Union

from . import Error

StrPath = Union[str, "os.PathLike[str]"]
Op = Union[str, Sequence[str]]

class LandlockConfigError(Error):
    """A landlockconfig file could not be read, parsed or resolved. `.file` names it."""

    file: Optional[str]

class Evaluation:
    """The verdict for one operation, with the reasons (true when allowed)."""

    op: str
    verdict: str
    errno: Optional[str]
    errno_code: int
    explanation: List[str]
    allowed: bool
    line: str
    def __bool__(self) -> bool: ...

class Landlock:
    """Stacked Landlock layers, one per landlockconfig file."""

    files: List[str]
    warnings: List[str]
    def __init__(self, layers: Sequence[StrPath] = ..., *, layout: str = "hash") -> None: ...
    def __len__(self) -> int: ...
    def check(self, op: Op) -> Evaluation: ...
    def check_many(self, ops: Sequence[Op]) -> List[Evaluation]: ...

"""Type stubs for arbiter.build (the classes live in the extension arbiter._native)."""

import os
from typing import Iterable, List, Optional, Tuple, Union

from . import Error, Policy

StrPath = Union[str, "os.PathLike[str]"]
CilSource = Union[StrPath, bytes, Tuple[str, Union[str, bytes]]]

class CompileError(Error):
    """CIL sources did not compile: secilc's `messages` and exit `status`."""

    messages: List[str]
    status: int

class Build:
    """A compiled policy: its bytes, its file contexts, secilc's warnings, the policy."""

    data: bytes
    file_contexts: bytes
    warnings: List[str]
    policy: Policy
    def write(self, path: StrPath, fc_path: Optional[StrPath] = None) -> None: ...

def compile(sources: Union[CilSource, Iterable[CilSource]], *, mls: Optional[bool] = None,
            policy_version: int = 33, handle_unknown: Optional[str] = None,
            disable_dontaudit: bool = False, preserve_tunables: bool = False,
            qualified_names: bool = False, multiple_decls: bool = False,
            disable_neverallow: bool = False, expand_generated: bool = False,
            expand_size: int = 1, optimize: bool = False, verbose: int = 0) -> Build: ...

"""The policy build: CIL sources compiled to a binary policy as secilc 3.4 compiles them
(arbiter's CIL compiler, the engine of ``arbiter build``).

    from arbiter.build import compile
    b = compile(["base.cil", "local.cil"], mls=True)      # = secilc -M true base.cil local.cil
    b.data            # the bytes secilc writes (policy.33)
    b.policy          # an arbiter.Policy read back from them
    b.write("policy.33", "file_contexts")

Failures raise ``CompileError`` with secilc's messages and exit status.
"""

from ._native import Build, CompileError, compile  # noqa: F401

__all__ = ["Build", "CompileError", "compile"]

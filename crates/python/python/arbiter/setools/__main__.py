"""``python3 -m arbiter.setools PROGRAM [ARGS...]`` (or ``-m MODULE [ARGS...]``): run a
Python program with ``setools`` served by arbiter.

A program given as a file runs as ``runpy.run_path(PROGRAM, run_name="__main__")`` runs
it, but without ``runpy.run_path`` itself when the file is a plain script (neither a
directory nor a zip archive): that function imports ``pkgutil``, which imports ``typing``
(0.8 MB resident, a sixth of what a whole setools script keeps on arbiter), for a lookup
that finds nothing for a plain file. ``_run_script`` does what ``run_path`` then does."""

import io
import os
import runpy
import sys
from types import ModuleType

from . import install

USAGE = "usage: python3 -m arbiter.setools (PROGRAM | -m MODULE) [ARGS...]"


def _path_importer(path):
    """The importer ``sys.path_hooks`` give ``path`` (``pkgutil.get_importer``'s lookup):
    None for a plain file; a directory or a zip archive has one."""
    path = os.fsdecode(path)
    cache = sys.path_importer_cache
    if path in cache:
        return cache[path]
    for hook in sys.path_hooks:
        try:
            importer = hook(path)
        except ImportError:
            continue
        cache.setdefault(path, importer)
        return importer
    return None


def _script_code(path):
    """The code of the script at ``path``: its bytecode if the file is a compiled
    ``.pyc`` (as ``pkgutil.read_code`` reads it), else its source compiled with ``path``
    as the file name (the encoding declared in the file applies), as ``compile`` would."""
    from importlib.util import MAGIC_NUMBER

    with io.open_code(os.path.abspath(os.fsdecode(path))) as f:
        data = f.read()
    if data[:4] == MAGIC_NUMBER:
        import marshal

        return marshal.loads(data[16:])
    if b"\0" in data:
        return compile(data, path, "exec")  # which says what is wrong with it
    # The same compilation without ``compile()``, which would build CPython's AST classes
    # for the whole run (see ``arbiter._native.compile_source``).
    from .. import _native

    return _native.compile_source(data, os.fsencode(path))


def _run_script(path):
    """Runs the plain script ``path`` as ``__main__``, as ``runpy.run_path`` does: a new
    module ``__main__`` in ``sys.modules`` and ``sys.argv[0]`` set to ``path`` while it
    runs (both restored after), its globals ``__name__``, ``__file__``, ``__cached__``,
    ``__doc__``, ``__loader__``, ``__package__`` and ``__spec__`` set as ``run_path``
    sets them."""
    code = _script_code(path)
    module = ModuleType("__main__")
    saved_main = sys.modules.get("__main__")
    saved_argv0 = sys.argv[0]
    sys.modules["__main__"] = module
    sys.argv[0] = path
    try:
        module.__dict__.update(
            __name__="__main__", __file__=path, __cached__=None, __doc__=None,
            __loader__=None, __package__="", __spec__=None,
        )
        exec(code, module.__dict__)
    finally:
        sys.argv[0] = saved_argv0
        if saved_main is None:
            del sys.modules["__main__"]
        else:
            sys.modules["__main__"] = saved_main


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not args else sys.stdout)
        return 2 if not args else 0
    install()
    if args[0] == "-m":
        if len(args) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        sys.argv = args[1:]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = args
        if _path_importer(args[0]) is None:
            _run_script(args[0])
        else:
            runpy.run_path(args[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())

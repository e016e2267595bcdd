"""Runs the real /usr/bin/sesearch script once per JSON argv line on stdin, with each policy
loaded once (setools.SELinuxPolicy is cached by path); prints one JSON line per run:
{"out": stdout, "err": stderr, "code": exit status}. Everything else is sesearch's own code.

With ARBITER_SETOOLS_EXPAND=1, every rule object the tool prints is printed as the rules of
setools' own rule.expand() instead (the oracle of `arbiter search --expand`)."""
import builtins
import contextlib
import io
import json
import os
import sys

import setools

_loaded = {}
_real = setools.SELinuxPolicy


def _cached(path=None):
    if path not in _loaded:
        _loaded[path] = _real(path)
    return _loaded[path]


setools.SELinuxPolicy = _cached


def _expanding_print(*args, **kwargs):
    if len(args) == 1 and hasattr(args[0], "expand"):
        for rule in args[0].expand():
            builtins.print(rule, **kwargs)
    else:
        builtins.print(*args, **kwargs)


_globals = {"__name__": "__main__"}
if os.environ.get("ARBITER_SETOOLS_EXPAND") == "1":
    _globals["print"] = _expanding_print
tool = sys.argv[1] if len(sys.argv) > 1 else "/usr/bin/sesearch"
code_obj = compile(open(tool).read(), tool, "exec")
for line in sys.stdin:
    argv = json.loads(line)
    out, err = io.StringIO(), io.StringIO()
    code = 0
    sys.argv = [tool.rsplit("/", 1)[-1]] + argv
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            exec(code_obj, dict(_globals))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except Exception as e:  # a crash of the tool itself
            code = 99
            print(repr(e), file=sys.stderr)
    print(json.dumps({"out": out.getvalue(), "err": err.getvalue(), "code": code}), flush=True)

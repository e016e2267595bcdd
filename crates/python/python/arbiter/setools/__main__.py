"""``python3 -m arbiter.setools PROGRAM [ARGS...]`` (or ``-m MODULE [ARGS...]``): run a
Python program with ``setools`` served by arbiter."""

import runpy
import sys

from . import install

USAGE = "usage: python3 -m arbiter.setools (PROGRAM | -m MODULE) [ARGS...]"


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
        runpy.run_path(args[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())

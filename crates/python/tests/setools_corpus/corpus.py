"""Runs several corpus scripts in one process (one interpreter start and one import of
setools per policy): ``corpus.py POLICY MODE SCRIPT...``; MODE is ``full`` or ``sample``.
Each script's output is preceded by a ``#### name`` line."""

import os
import runpy
import sys

here = os.path.dirname(os.path.abspath(__file__))
policy, mode, scripts = sys.argv[1], sys.argv[2], sys.argv[3:]
for name in scripts:
    print("####", name, flush=True)
    sys.argv = [os.path.join(here, name), policy, mode]
    runpy.run_path(sys.argv[0], run_name="__main__")
    sys.stdout.flush()

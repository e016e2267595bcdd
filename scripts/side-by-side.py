#!/usr/bin/env python3
"""Whole-process timing of two commands side by side, for the benchmark scripts.

Usage: side-by-side.py NAME RUNS PEER-ARGV... -- ARBITER-ARGV...
       side-by-side.py NAME RUNS -- ARBITER-ARGV...        (one command, no ratio)

Each run is measured from outside, spawn to reap: wall seconds, CPU seconds (user + system
of the child, from wait4) and peak RSS. The two commands alternate run by run (A B A B ...)
after one warm-up run each, so that both see the same machine load; the row shows the
median of RUNS runs of each and the ratios peer/arbiter of the medians. A command that
exits non-zero is reported as FAILED with its status instead of figures. Output of the
commands is discarded; run them in the directory they expect.
"""
import os
import shutil
import statistics
import sys
import time


def measure(cmd, null):
    spawn = [(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)]
    t = time.perf_counter()
    pid = os.posix_spawn(cmd[0], cmd, os.environ, file_actions=spawn)
    _, st, ru = os.wait4(pid, 0)
    return (time.perf_counter() - t, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024,
            os.waitstatus_to_exitcode(st))


def main():
    name, n, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    split = argv.index("--")
    cmds = [c for c in (argv[:split], argv[split + 1:]) if c]
    for c in cmds:
        c[0] = shutil.which(c[0]) or c[0]
    null = os.open(os.devnull, os.O_WRONLY)
    figures = [[] for _ in cmds]
    status = [0 for _ in cmds]
    for c in cmds:
        measure(c, null)  # warm-up: page cache, lazy binding
    for _ in range(n):
        for k, c in enumerate(cmds):
            wall, cpu, rss, code = measure(c, null)
            figures[k].append((wall, cpu, rss))
            status[k] = status[k] or code
    med = [tuple(statistics.median(f[i] for f in fs) for i in range(3)) for fs in figures]
    cols = []
    for k in range(len(cmds)):
        if status[k]:
            cols.append("%9s %9s %8s" % ("FAILED", "exit %d" % status[k], "-"))
        else:
            cols.append("%9.3f %9.3f %8.1f" % med[k])
    if len(cmds) == 2 and not any(status):
        ratios = "%6.1fx %6.1fx %6.1fx" % tuple(med[0][i] / med[1][i] for i in range(3))
    else:
        ratios = "%7s %7s %7s" % ("-", "-", "-")
    print("%-44s %s | %s" % (name, " | ".join(cols), ratios))


if __name__ == "__main__":
    main()

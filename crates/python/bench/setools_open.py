"""What importing setools and opening one policy cost, in time and resident memory: the
figures behind the open goal (``SELinuxPolicy(path)``) and the memory goal, apart from the
queries (``setools_api.py`` times those).

Run it under both implementations with the same interpreter, side by side:

    /usr/bin/python3 crates/python/bench/setools_open.py POLICY [OPENS]
    PYTHONPATH=crates/python/python /usr/bin/python3 crates/python/bench/setools_open.py \\
        --arbiter POLICY [OPENS]

``--arbiter`` imports ``arbiter.setools`` directly, so that neither run pays for the
``python3 -m`` runner. Run both with their bytecode compiled, as installed: Debian's
setools ships its ``__pycache__`` and ``pip install`` compiles arbiter's, while a source tree
on ``PYTHONPATH`` under ``PYTHONDONTWRITEBYTECODE=1`` is compiled at every import, which
leaves 0.7-1.7 MB more resident (the compiler's memory) and misstates the figures.

Prints one JSON object: ``impl``; ``import_s``; ``open_s`` and ``open_cpu_s``, medians of OPENS opens (default 21; wall and this process's CPU time: on
a loaded machine the wall time of a short open is mostly waiting for a core); and
resident memory in kB read from /proc/self/status: ``bare_kb`` (VmRSS before the import),
``import_kb`` (after it), ``open_kb`` (after the first open, with its peak ``open_hwm_kb``,
VmHWM) and ``query_kb`` (after a TE query and a pass over every type and attribute, the
usual first steps of a script).
"""

import sys
import time

# json and statistics are imported after the memory readings (they add 1.4 MB).


def status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(field + " not in /proc/self/status")


def main():
    args = sys.argv[1:]
    arbiter = "--arbiter" in args
    args = [a for a in args if a != "--arbiter"]
    path = args[0]
    opens = int(args[1]) if len(args) > 1 else 21
    out = {"bare_kb": status("VmRSS")}
    t = time.perf_counter()
    if arbiter:
        import arbiter.setools as setools
    else:
        import setools
    out["import_s"] = time.perf_counter() - t
    out["impl"] = setools.__name__
    out["import_kb"] = status("VmRSS")
    policy = setools.SELinuxPolicy(path)
    out["open_kb"], out["open_hwm_kb"] = status("VmRSS"), status("VmHWM")
    sum(1 for _ in setools.TERuleQuery(policy, ruletype=["allow"], source="httpd_t").results())
    for t in policy.types():
        str(t)
    for a in policy.typeattributes():
        str(a)
    out["query_kb"] = status("VmRSS")
    del policy
    import json
    import statistics

    walls, cpus = [], []
    for _ in range(opens):
        t, c = time.perf_counter(), time.process_time()
        setools.SELinuxPolicy(path)
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    out["open_s"], out["open_cpu_s"] = statistics.median(walls), statistics.median(cpus)
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()

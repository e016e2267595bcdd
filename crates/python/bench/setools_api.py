"""setools' Python API, timed from inside: open a policy, then each Query class's
results() a few times (median), and a policycoreutils-style pass over every type's rules.

Run the same file under both implementations, in the same session, side by side:

    /usr/bin/python3 crates/python/bench/setools_api.py POLICY            # the real setools
    python3 -m arbiter.setools crates/python/bench/setools_api.py POLICY  # arbiter.setools

Prints one JSON object: {"impl", "open_s", "queries": {name: [median_s, results,
median_cpu_s, loops, median_results_cpu_s, loop_floor_cpu_s]}, "per_type_s", "rss_kb",
"base_rss_kb"}. A query's sample is ``loops`` constructions + ``results()`` + iterations
back to back (``LOOPS``, the same for both implementations: a sub-millisecond query cannot
be timed by one call), and its figures are per run: the sample over ``loops``.
``median_results_cpu_s`` is the same loop of ``results()`` + iteration over one query
constructed beforehand (what a script that builds a query once and reruns it pays).
``loop_floor_cpu_s`` is the loop's own cost (see ``loop_floor``): the other
implementation's time over it is the most any implementation could reach here. Each run
iterates its results with a plain ``for`` statement counting them (what a script writes),
the same code for both implementations; until 2026-11-28 09:50 it was ``sum(1 for _ in
...)``, whose generator-expression frame was about 0.35 us of the 0.5 us floor (the
figures of earlier runs in docs/history/setools.md include it).
Resident memory is read from /proc/self/status (VmHWM) at the end, after every query ran;
``base_rss_kb`` is VmRSS before the policy was opened (the interpreter and the imported
package), so that ``rss_kb - base_rss_kb`` is what the policy and the queries keep. The CPU time (this
process's, ``time.process_time``) is reported beside the wall time: on a machine shared
with other jobs a sub-millisecond query's wall time is mostly waiting for a core.

    python3 setools_api.py POLICY [REPEATS] [--compare OTHER.json]

With ``--compare``, a table of both runs' medians (CPU and wall) and their ratios is
printed to stderr (OTHER.json: the other implementation's output, run just before).
"""

import json
import statistics
import sys
import time

import setools

QUERIES = {
    "TERuleQuery allow -s httpd_t": lambda p: setools.TERuleQuery(
        p, ruletype=["allow"], source="httpd_t"),
    "TERuleQuery -t shadow_t file": lambda p: setools.TERuleQuery(
        p, target="shadow_t", tclass=["file"]),
    "TERuleQuery perms write,append": lambda p: setools.TERuleQuery(
        p, ruletype=["allow"], perms={"write", "append"}, tclass=["file"]),
    "TERuleQuery type_transition": lambda p: setools.TERuleQuery(
        p, ruletype=["type_transition"]),
    "TERuleQuery bool regex": lambda p: setools.TERuleQuery(
        p, boolean="^httpd_", boolean_regex=True),
    "TypeQuery attrs domain": lambda p: setools.TypeQuery(p, attrs=["domain"]),
    "TypeQuery name regex": lambda p: setools.TypeQuery(p, name="_exec_t$", name_regex=True),
    "TypeAttributeQuery types": lambda p: setools.TypeAttributeQuery(p, types=["httpd_t"]),
    "RoleQuery types": lambda p: setools.RoleQuery(p, types=["httpd_t"]),
    "UserQuery roles": lambda p: setools.UserQuery(p, roles=["system_r"]),
    "BoolQuery default": lambda p: setools.BoolQuery(p, default=True),
    "ObjClassQuery perms": lambda p: setools.ObjClassQuery(p, perms={"read"}),
    "CommonQuery perms": lambda p: setools.CommonQuery(p, perms={"ioctl"}),
    "PolCapQuery": lambda p: setools.PolCapQuery(p),
    "UserQuery range subset": lambda p: setools.UserQuery(p, range_="s0", range_subset=True),
    "SensitivityQuery dom": lambda p: setools.SensitivityQuery(p, sens="s0", sens_dom=True),
    "CategoryQuery regex": lambda p: setools.CategoryQuery(p, name="^c1", name_regex=True),
    "MLSRuleQuery process": lambda p: setools.MLSRuleQuery(p, tclass=["process"]),
    "ConstraintQuery mlsconstrain": lambda p: setools.ConstraintQuery(
        p, ruletype=["mlsconstrain"]),
    "ConstraintQuery type_": lambda p: setools.ConstraintQuery(p, type_="domain"),
    "DefaultQuery": lambda p: setools.DefaultQuery(p),
    "InitialSIDQuery type_": lambda p: setools.InitialSIDQuery(p, type_="kernel_t"),
    "FSUseQuery fs": lambda p: setools.FSUseQuery(p, fs="ext4"),
    "GenfsconQuery fs": lambda p: setools.GenfsconQuery(p, fs="proc"),
    "PortconQuery ports": lambda p: setools.PortconQuery(p, ports=(80, 80)),
    "PortconQuery overlap": lambda p: setools.PortconQuery(
        p, ports=(1, 1024), ports_overlap=True),
    "NetifconQuery": lambda p: setools.NetifconQuery(p),
    "NodeconQuery": lambda p: setools.NodeconQuery(p, ip_version="ipv4"),
}

# Constructions + results() + iterations timed per sample, by query (1 if not named): a
# sub-millisecond query cannot be timed by one call (the clock's and the loop's own cost
# are a large part of it), so a sample is LOOPS[name] runs back to back and the figure is
# the sample over LOOPS[name]. The same counts for both implementations, chosen from the
# real setools' cost so that one of its samples is a few milliseconds at least.
LOOPS = {
    "TypeQuery attrs domain": 5,
    "TypeQuery name regex": 5,
    "TypeAttributeQuery types": 5,
    "RoleQuery types": 20,
    "UserQuery roles": 20,
    "BoolQuery default": 200,
    "ObjClassQuery perms": 50,
    "CommonQuery perms": 200,
    "PolCapQuery": 1000,
    "UserQuery range subset": 200,
    "SensitivityQuery dom": 1000,
    "CategoryQuery regex": 20,
    "MLSRuleQuery process": 200,
    "ConstraintQuery mlsconstrain": 50,
    "ConstraintQuery type_": 5,
    "DefaultQuery": 500,
    "InitialSIDQuery type_": 5,
    "FSUseQuery fs": 200,
    "GenfsconQuery fs": 50,
    "PortconQuery ports": 10,
    "PortconQuery overlap": 10,
    "NetifconQuery": 1000,
    "NodeconQuery": 1000,
}


class _Prebuilt:
    """A query stand-in whose ``results()`` is an iterator over ``n`` prebuilt objects."""

    def __init__(self, n):
        self.items = (None,) * n

    def results(self):
        return iter(self.items)


def loop_floor(n, loops, repeats):
    """The CPU time of the benchmark's own loop (a call of the query's ``make``, a
    ``for`` statement counting the results) around a stand-in that does nothing else (its object
    made beforehand, ``results()`` a prebuilt iterator of ``n`` items): no implementation
    can take less per run, so the other's time over this bounds the ratio."""
    prebuilt = _Prebuilt(n)
    make = lambda p: prebuilt  # noqa: E731 (the same call shape as QUERIES' lambdas)
    cpus = []
    for _ in range(repeats):
        c = time.process_time()
        for _ in range(loops * 10):
            k = 0
            for _ in make(None).results():
                k += 1
        cpus.append((time.process_time() - c) / (loops * 10))
    return statistics.median(cpus)


def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def rss_now_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def compare(ours, other):
    """Both runs side by side: other's median over ours (CPU time, then wall), per run of
    a query (microseconds)."""
    print(f"{'query':34s} {'other CPU us':>13s} {'ours CPU us':>12s} {'ratio':>8s} "
          f"{'wall ratio':>10s} {'results() only: other':>22s} {'ours':>9s} {'ratio':>8s}",
          file=sys.stderr)
    for name, (wall, n, cpu, _, res, floor) in ours["queries"].items():
        owall, on, ocpu, _, ores, _ = other["queries"][name]
        assert n == on, f"{name}: {n} results here, {on} in the other run"
        print(f"{name:34s} {ocpu * 1e6:13.1f} {cpu * 1e6:12.2f} {ocpu / max(cpu, 1e-9):7.1f}x "
              f"{owall / max(wall, 1e-9):9.1f}x {ores * 1e6:22.1f} {res * 1e6:9.2f} "
              f"{ores / max(res, 1e-9):7.1f}x  (loop floor {floor * 1e6:.2f} us: "
              f"at most {ocpu / max(floor, 1e-9):.0f}x)", file=sys.stderr)
    print(f"open: {other['open_s']:.3f} s vs {ours['open_s']:.4f} s; per-type pass: "
          f"{other['per_type_s']:.3f} s vs {ours['per_type_s']:.4f} s; RSS (whole / over the "
          f"bare interpreter): {other['rss_kb']} / {other['rss_kb'] - other['base_rss_kb']} kB "
          f"vs {ours['rss_kb']} / {ours['rss_kb'] - ours['base_rss_kb']} kB", file=sys.stderr)


def main():
    args = sys.argv[1:]
    other = None
    if "--compare" in args:
        i = args.index("--compare")
        with open(args[i + 1]) as f:
            other = json.load(f)
        del args[i:i + 2]
    path = args[0]
    repeats = int(args[1]) if len(args) > 1 else 3
    base_rss = rss_now_kb()
    t = time.perf_counter()
    policy = setools.SELinuxPolicy(path)
    open_s = time.perf_counter() - t
    out = {"impl": setools.__name__, "open_s": open_s, "queries": {}}
    for name, make in QUERIES.items():
        loops = LOOPS.get(name, 1)
        times, cpus, result_cpus = [], [], []
        for _ in range(repeats):
            t, c = time.perf_counter(), time.process_time()
            for _ in range(loops):
                n = 0
                for _ in make(policy).results():
                    n += 1
            times.append((time.perf_counter() - t) / loops)
            cpus.append((time.process_time() - c) / loops)
            # The same loop over one query constructed beforehand: results() + iteration.
            query = make(policy)
            c = time.process_time()
            for _ in range(loops):
                k = 0
                for _ in query.results():
                    k += 1
            result_cpus.append((time.process_time() - c) / loops)
        out["queries"][name] = [statistics.median(times), n, statistics.median(cpus), loops,
                                statistics.median(result_cpus), loop_floor(n, loops, repeats)]
    # policycoreutils-style: for each of 5 domains, its allow rules on files, read field
    # by field.
    domains = [t for t in setools.TypeQuery(policy, attrs=["domain"]).results()][:5]
    t = time.perf_counter()
    for d in domains:
        for r in setools.TERuleQuery(policy, ruletype=["allow"], source=d,
                                     tclass=["file"]).results():
            (str(r.source), str(r.target), sorted(r.perms))
    out["per_type_s"] = time.perf_counter() - t
    out["rss_kb"] = rss_kb()
    out["base_rss_kb"] = base_rss
    json.dump(out, sys.stdout)
    print()
    if other is not None:
        compare(out, other)


if __name__ == "__main__":
    main()

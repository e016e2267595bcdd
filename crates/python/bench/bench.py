"""Benchmarks of the Python package, side by side in one run:

* `srv.check(scon, tcon, tclass, perm)` with string arguments, one call at a time
  (target: <= 1.5 us), and the same through `Avc.check` and `Server.compute_av`;
* `srv.compute_av_many` / `check_many` throughput on random queries (target: >= 5 M/s
  on 2 cores);
* setools' TERuleQuery answering the same question ("which allow rules grant it?"), run
  under the interpreter that has setools (default /usr/bin/python3).

Usage: python3 crates/python/bench/bench.py [--policy PATH] [--queries N] [--setools-python PY]
Prints medians over repeats and the ratios.
"""

import argparse
import json
import os
import pathlib
import random
import statistics
import subprocess
import sys
import time

import arbiter

HERE = pathlib.Path(__file__).resolve().parent
DEBIAN = "/etc/selinux/default/policy/policy.33"


def random_queries(policy, n, seed=8):
    """The differential test's generator: valid contexts, every class, a random permission
    of the class."""
    rng = random.Random(seed)
    domains = policy.role_types("system_r")
    types = policy.types()
    classes = [c for c in policy.classes() if policy.permissions(c)]
    perms = {c: policy.permissions(c) for c in classes}
    sources = [f"system_u:system_r:{rng.choice(domains)}:s0" for _ in range(3000)]
    targets = [f"system_u:object_r:{rng.choice(types)}:s0" for _ in range(4000)]
    out = []
    for _ in range(n):
        c = rng.choice(classes)
        out.append((rng.choice(sources), rng.choice(targets), c, rng.choice(perms[c])))
    return out


def timed(fn, repeats):
    """Medians over `repeats` runs of fn(): (wall seconds, CPU seconds of the process, all
    threads). On a shared machine the wall time includes waiting for a core; the CPU
    time does not."""
    wall, cpu = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return statistics.median(wall), statistics.median(cpu)


def per_call(fn, queries, repeats):
    """Median (wall, CPU) seconds per call of fn(*q) over the queries."""
    def loop():
        for q in queries:
            fn(*q)
    w, c = timed(loop, repeats)
    return w / len(queries), c / len(queries)


def batch(fn, queries, repeats):
    """Median (wall, CPU) seconds for one fn(queries) call."""
    return timed(lambda: fn(queries), repeats)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policy", default=DEBIAN if os.path.exists(DEBIAN) else None)
    ap.add_argument("--queries", type=int, default=200_000)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--setools-python", default="/usr/bin/python3")
    ap.add_argument("--setools-queries", type=int, default=10)
    args = ap.parse_args()

    policy = arbiter.Policy.open(args.policy) if args.policy else arbiter.Policy.builtin()
    name = args.policy or "builtin"
    srv = arbiter.Server(policy)
    avc = arbiter.Avc(srv)
    print(f"policy {name}: {len(policy.types())} types, {policy.stats()['Allow']} allow rules;"
          f" {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}")

    queries = random_queries(policy, args.queries)
    single = queries[:20000]
    srv.check_many(queries)  # issue every SID once, so no run pays for it
    for q in single:  # and warm the single-call paths
        srv.check(*q), avc.check(*q)
    time.sleep(1.0)  # after two busy threads, let the scheduler treat this one fairly
    rows = []

    ns = lambda t: (t[0] * 1e9, t[1] * 1e9)  # noqa: E731
    t_check = per_call(srv.check, single, args.repeats)
    rows.append(("Server.check (str args, one call)", *ns(t_check), "ns/call", "<= 1500"))
    t_avc = per_call(avc.check, single, args.repeats)
    rows.append(("Avc.check (str args, one call)", *ns(t_avc), "ns/call", ""))
    t_av = per_call(lambda s, t, c, p: srv.compute_av(s, t, c), single, args.repeats)
    rows.append(("Server.compute_av (one call)", *ns(t_av), "ns/call", ""))

    triples = [(s, t, c) for s, t, c, _ in queries]
    rate = lambda n, t: (n / t[0] / 1e6, n / t[1] / 1e6)  # noqa: E731
    t_many = batch(srv.compute_av_many, triples, args.repeats)
    rows.append((f"compute_av_many ({len(triples)} queries)", *rate(len(triples), t_many),
                 "M queries/s", ">= 5"))
    t_cmany = batch(srv.check_many, queries, args.repeats)
    rows.append((f"check_many ({len(queries)} queries)", *rate(len(queries), t_cmany),
                 "M queries/s", ""))
    # The same work as one Python loop of single calls, for the batch calls' ratio.
    t_loop = per_call(srv.compute_av, triples[:20000], 3)
    rows.append(("compute_av in a Python loop", 1 / t_loop[0] / 1e6, 1 / t_loop[1] / 1e6,
                 "M queries/s", ""))

    setools = None
    if args.policy and os.path.exists(args.setools_python):
        sample = queries[: args.setools_queries]
        job = {
            "policy": args.policy,
            "queries": [[s.split(":")[2], t.split(":")[2], c, p] for s, t, c, p in sample],
            "repeats": 1,
        }
        run = subprocess.run([args.setools_python, str(HERE / "setools_query.py")],
                             input=json.dumps(job), capture_output=True, text=True)
        if run.returncode == 0:
            setools = json.loads(run.stdout)
            t_setools = statistics.median(setools["query_s"])
            t_ours = per_call(srv.check, sample, args.repeats)
            rows.append(("setools TERuleQuery (same question)", t_setools * 1e9, None,
                         "ns/call", ""))
            rows.append(("  arbiter Server.check on that sample", *ns(t_ours), "ns/call", ""))
            rows.append(("  ratio setools / arbiter (wall)", t_setools / t_ours[0], None, "x", ""))
            rows.append(("setools policy load", setools["load_s"] * 1e3, None, "ms", ""))
            t_open = timed(lambda: arbiter.Server.open(args.policy), 3)
            rows.append(("arbiter Server.open", t_open[0] * 1e3, t_open[1] * 1e3, "ms", ""))
            # setools lists rules, arbiter decides: they agree where no constraint or
            # handle_unknown intervenes, which the sample shows.
            ours = [srv.check(*q).allowed for q in sample]
            agree = sum(a == b for a, b in zip(ours, setools["granted"]))
            rows.append(("  verdicts agreeing with setools' rule lists", agree, None,
                         f"of {len(sample)}", ""))
        else:
            print("setools run failed:", run.stderr.strip()[-500:], file=sys.stderr)

    def fmt(x):
        if x is None:
            return "-"
        return f"{x:,.3f}" if x < 100 else f"{x:,.0f}"

    width = max(len(r[0]) for r in rows)
    print(f"{'benchmark':<{width}}  {'wall median':>14}  {'CPU median':>12}  unit           target")
    for label, wall, cpu, unit, target in rows:
        print(f"{label:<{width}}  {fmt(wall):>14}  {fmt(cpu):>12}  {unit:<13}  {target}")
    print("ratio compute_av_many / Python loop of compute_av (wall): "
          f"{t_loop[0] * len(triples) / t_many[0]:.1f}x")
    print(f"load average after the run: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

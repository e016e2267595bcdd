"""Throughput of arbiter.dask with 1 and 2 worker processes (lines/s), on a generated fleet.

    python3 bench/dask_fleet.py [--hosts 50] [--lines 20000] [--rounds 3] [--seeds N] [--dir DIR]
                                [--parts] [--threads] [--tasks-per-worker K] [--spread S]
                                [--client-blobs B] [--profile] [--dask-ticks] [--warm]
                                [--saturation S] [--hugepages] [--plain N]

Generates DIR/hostNN.log with crates/denials' gen_denials (formats in turn) if missing,
then times explain_fleet (the map over every line and the reduce) in rounds that alternate
1 worker, 2 workers, 1, 2, ..., 1: ``--rounds`` two-worker rounds, each between two
one-worker rounds. Every round runs on a LocalCluster of its own (threads_per_worker=1,
processes), started for it and closed after it, so no round inherits another's state (a
worker's engine and the verdicts it decided, its memory) and no idle cluster runs beside
the timed one; its start-up, the import of arbiter.dask and the engine's build on every
worker are done before the timed part, alike for both worker counts. Every round is thus
a first run on new workers, each deciding every distinct denial it meets; with --warm, an
untimed run on the same cluster comes first (a long-lived cluster's steady state).

The machine's speed drifts between rounds (the same one-worker work took 9.6-13.8 CPU-s
from round to round on the shared 2-core VM), so the scaling is read per pair: each
two-worker round's wall time against the mean of the one-worker rounds on either side of
it (A B A). The summary gives every pair's ratio and their median, and, as before, the
median lines/s of each worker count and their ratio.

Besides wall time, each round reports the CPU seconds other processes spent on the
machine meanwhile (Linux: its busy time in /proc/stat less this run's processes'; the
summary lists the pairs whose three rounds had under 0.05 CPU-s of it per second, the
only ones that measure the scaling on a shared machine), the CPU seconds spent by each
worker process and its CPU/wall utilisation, and by this client process (which also hosts the LocalCluster's
scheduler and its nannies, the objects that start and watch the worker processes), split
by thread: the calling thread (graph, final step's merge and dictionaries), the event-loop
threads (client, scheduler and nannies share one), the rest (the final step's render
threads); and, from Dask's own fine performance metrics (the scheduler's
``cumulative_worker_metrics``), the thread CPU seconds spent inside the tasks per task
prefix (the map: reading blocks and digesting them; the tree merges) and the time the task
threads were runnable but not on a core ("waiting"). On a machine shared with other jobs,
wall time depends on what the others take, while the CPU split shows how the work divides:
a worker process's CPU beyond its tasks' is Dask's own event loop (heartbeats, transfers),
which grows with wall time, so a starved run shows more of it. On N idle cores the wall
time is about the tasks' CPU divided over N workers, plus the serial part (the last merge
and the client's rendering of audit2allow's text). With --parts, Dask's task stream gives
each run's serial start (the call to the first task) and end (the last task to the
return), and each worker's busy time, tasks and the gaps between them, how long before
the last task each worker finished (the balance at the end), how many map tasks
started after a worker had run out of tasks (tasks held by the other), and the order in
which the map tasks started (by index: 0 is the first and largest share).

With --plain N, no Dask: the map tasks explain_fleet would give one and two workers run
in plain processes started with Dask's worker environment (MALLOC_TRIM_THRESHOLD_, and
GLIBC_TUNABLES with --hugepages), N times alternated: one process over the one-worker
split's tasks, then two processes at once over the two-worker split's (even and odd
tasks). Each process builds its engine first and reports only the tasks' CPU (user and
system) and minor faults: whether two workers at once take more CPU for the same lines
than one, without Dask's processes, messages or scheduling in the figures."""

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import threading
import time

import dask
import distributed

import arbiter.dask

REPO = pathlib.Path(__file__).resolve().parents[3]
FORMATS = ["audit.log", "ausearch", "journal", "dmesg", "logcat", "user_avc", "mixed"]


def task_metrics(client):
    """Dask's cumulative per-prefix task metrics: {prefix: (thread CPU s, not-on-CPU s)}."""
    m = client.run_on_scheduler(
        lambda dask_scheduler: dict(dask_scheduler.cumulative_worker_metrics))
    out = {}
    for k, v in m.items():
        if isinstance(k, tuple) and len(k) == 4 and k[0] == "execute" and k[3] == "seconds":
            cpu, wait = out.get(k[1], (0.0, 0.0))
            if k[2] == "thread-cpu":
                cpu += v
            elif k[2] == "thread-noncpu":
                wait += v
            out[k[1]] = (cpu, wait)
    return out


async def heartbeat(dask_worker):
    """Sends the worker's heartbeat now, with the metrics of the tasks it ran since the
    last one (the scheduler's ``cumulative_worker_metrics`` lag by up to a heartbeat
    interval otherwise). Run on each worker with ``client.run``, outside the timed part."""
    await dask_worker.heartbeat()


def metrics_delta(before, after):
    """Per-prefix deltas, the largest CPU first, as text."""
    rows = []
    for k, (cpu, wait) in after.items():
        c0, w0 = before.get(k, (0.0, 0.0))
        if cpu - c0 > 0.005 or wait - w0 > 0.005:
            rows.append((cpu - c0, wait - w0, k))
    rows.sort(reverse=True)
    return "; ".join(f"{k} {c:.2f} CPU s (+{w:.2f} s waiting)" for c, w, k in rows)


def thread_cpu():
    """CPU seconds of this process (the client, the scheduler and the nannies) by thread:
    the calling thread, Dask's event-loop threads, and the rest (the final step's render
    threads, which are not Python threads, and threads that have ended)."""
    main, loops = 0.0, 0.0
    for t in threading.enumerate():
        try:
            cpu = time.clock_gettime(time.pthread_getcpuclockid(t.ident))
        except (OSError, TypeError):
            continue
        if t is threading.main_thread():
            main = cpu
        else:
            loops += cpu
    return main, loops, time.process_time()


def machine_busy():
    """CPU seconds the whole machine has been busy (every process, every core), from
    /proc/stat (Linux); None elsewhere."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    # user nice system idle iowait irq softirq steal: all but idle and iowait.
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def worker_threads():
    """CPU seconds of this process by thread role: the event loop (the main thread, where a
    worker's heartbeats, transfers, memory monitor and statistical profiler run), the task
    threads (Dask-Default-Threads), the rest. Run on each worker with ``client.run``."""
    out = {"loop": 0.0, "tasks": 0.0}
    for t in threading.enumerate():
        try:
            cpu = time.clock_gettime(time.pthread_getcpuclockid(t.ident))
        except (OSError, TypeError):
            continue
        role = ("loop" if t is threading.main_thread()
                else "tasks" if t.name.startswith(("Dask-Default-Threads", "0-Dask", "1-Dask"))
                or "Dask-Default-Threads" in t.name else "other")
        out[role] = out.get(role, 0.0) + cpu
    out["process"] = time.process_time()
    return out


def timeline(stream, t0, t1):
    """From Dask's task stream of one run: the serial start (call to the first task's
    start), the serial end (the last task's end to the return), each worker's busy seconds
    and the gaps between its tasks, as text; and the seconds between the first and the
    last worker's last task end (the balance at the end)."""
    spans, seen, starts = {}, set(), []
    for task in stream:
        for ss in task.get("startstops", ()):
            # (The stream may hold a task twice.)
            if ss["action"] == "compute" and (task["key"], ss["start"]) not in seen:
                seen.add((task["key"], ss["start"]))
                spans.setdefault(task["worker"], []).append(
                    (ss["start"], ss["stop"], "fleet-digest" in str(task["key"])))
                if "fleet-digest" in str(task["key"]):
                    starts.append((ss["start"], task["key"][1]))
    if not spans:
        return "no tasks", None
    first = min(s for v in spans.values() for s, _, _ in v)
    last = max(e for v in spans.values() for _, e, _ in v)
    parts = [f"serial start {first - t0:.3f} s, end {t1 - last:.3f} s"]
    for w, v in sorted(spans.items()):
        v.sort()
        busy = sum(e - s for s, e, _ in v)
        gaps = (v[-1][1] - v[0][0]) - busy
        parts.append(f"worker busy {busy:.2f} s in {len(v)} tasks, gaps {gaps:.2f} s, "
                     f"done {last - v[-1][1]:.2f} s before the last")
    ends = [v[-1][1] for v in spans.values()]
    if len(ends) > 1:
        # Map tasks another worker started after the first worker had run out of tasks:
        # held by that worker (sent to it before it could start them) while one sat idle
        # (the tree's merges wait for their inputs, so they are not counted).
        late = [e - s for v in spans.values() for s, e, digest in v if digest and s > min(ends)]
        parts.append(f"{len(late)} map tasks ({sum(late):.2f} s) started after a worker "
                     f"ran out")
    # The map tasks' indexes (0: the first and largest share) in the order they started.
    parts.append("map tasks started: " + " ".join(str(i) for _, i in sorted(starts)))
    return "; ".join(parts), max(ends) - min(ends)


def plain_child(policy, paths, workers, share, blocksize):
    """One plain process of --plain: the tasks ``share``, ``share + workers``, ... of the
    split explain_fleet gives ``workers`` one-thread workers, on an engine built first;
    prints "CPU-s faults" of the tasks alone."""
    import resource
    import secrets
    from arbiter import _native
    parts = arbiter.dask._partitions(paths, arbiter.dask.TASKS_PER_THREAD * workers,
                                     blocksize, workers)
    eng = arbiter.dask.engine(policy)
    run = secrets.randbits(63)
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    for i, ranges in enumerate(parts):
        if i % workers == share:
            _native._fleet_digest_ranges(eng, ranges, run=run, chunk=i)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
    print(f"{cpu:.4f} {r1.ru_minflt - r0.ru_minflt}")


def plain(a, paths, blocksize):
    """--plain: one process over the one-worker split, then two at once over the
    two-worker split, ``a.plain`` times; CPU-s and faults per alternation and medians."""
    env = dict(os.environ)
    env.update({k: str(v) for k, v in
                (dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {}).items()})
    cmd = [sys.executable, __file__, "--plain-child", a.policy, str(blocksize)]
    one, two = [], []
    import resource
    for r in range(a.plain):
        b0, k0 = machine_busy(), resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(cmd + ["1", "0"] + paths, env=env, check=True,
                             capture_output=True, text=True).stdout.split()
        one.append((float(out[0]), int(out[1])))
        procs = [subprocess.Popen(cmd + ["2", str(k)] + paths, env=env, text=True,
                                  stdout=subprocess.PIPE) for k in (0, 1)]
        outs = [p.communicate()[0].split() for p in procs]
        if any(p.returncode for p in procs):
            raise SystemExit("a plain process failed")
        two.append((sum(float(o[0]) for o in outs), [int(o[1]) for o in outs]))
        b1, k1 = machine_busy(), resource.getrusage(resource.RUSAGE_CHILDREN)
        # Other processes' CPU meanwhile: the machine's busy time less the three plain
        # processes' (their engines' builds included).
        ours = k1.ru_utime - k0.ru_utime + k1.ru_stime - k0.ru_stime
        other = None if b0 is None else max(0.0, b1 - b0 - ours)
        print(f"alternation {r}: one process {one[-1][0]:.2f} CPU-s, {one[-1][1]} faults; "
              f"two at once {two[-1][0]:.2f} CPU-s summed, faults {two[-1][1]}; two / one "
              f"{two[-1][0] / one[-1][0]:.2f}x; other processes "
              f"{'?' if other is None else f'{other:.2f}'} CPU-s; load "
              f"{os.getloadavg()[0]:.1f}", flush=True)
    m1 = statistics.median(c for c, _ in one)
    m2 = statistics.median(c for c, _ in two)
    print(f"medians: one process {m1:.2f} CPU-s, two at once {m2:.2f} CPU-s summed "
          f"({m2 / m1:.2f}x); median of the alternations' ratios "
          f"{statistics.median(t[0] / o[0] for o, t in zip(one, two)):.2f}x")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--plain-child":
        policy, blocksize, workers, share = sys.argv[2:6]
        return plain_child(policy, sys.argv[6:], int(workers), int(share), int(blocksize))
    ap = argparse.ArgumentParser()
    ap.add_argument("--policy", default="/etc/selinux/default/policy/policy.33")
    ap.add_argument("--hosts", type=int, default=50)
    ap.add_argument("--lines", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3,
                    help="two-worker rounds, each between two one-worker rounds (so one "
                         "more of those)")
    ap.add_argument("--blocksize", default="16MiB")
    ap.add_argument("--dir", default="/tmp/arbiter-dask-fleet")
    ap.add_argument("--seeds", type=int, default=0,
                    help="generator seeds shared by the hosts (0: one per host, every denial "
                         "distinct; N: hosts repeat each other's denials, as a real fleet does)")
    ap.add_argument("--dask-ticks", action="store_true",
                    help="keep Dask's default event-loop ticks (every 20 ms), system "
                         "monitor (every 500 ms) and memory monitor (every 100 ms) in the "
                         "scheduler, nannies and workers; by default they run every 1 s, 2 s "
                         "and 1 s, which cuts the processes' CPU when idle (ticks and system "
                         "monitor: 0.029 -> 0.013 CPU-s per second for the client and "
                         "scheduler; the memory monitor, two workers: 13.5-21.5 -> 10.0-10.7 "
                         "ms a second for the client, 7.6-9.0 -> 3.9-4.3 for each worker, "
                         "measured): CPU the workers' cores no longer share")
    ap.add_argument("--tasks-per-worker", type=int, default=None,
                    help="tasks per worker (explain_fleet's partitions= is this times the "
                         "workers); default: arbiter.dask's")
    ap.add_argument("--spread", type=float, default=None,
                    help="the first round of tasks' share over the last's (arbiter.dask.SPREAD; "
                         "1: equal shares)")
    ap.add_argument("--client-blobs", type=int, default=None,
                    help="the most blobs the client merges itself, more being merged in a tree "
                         "on the workers first (arbiter.dask._CLIENT_BLOBS)")
    ap.add_argument("--parts", action="store_true",
                    help="also record Dask's task stream: the serial start and end of each "
                         "run and each worker's busy time and gaps")
    ap.add_argument("--profile", action="store_true",
                    help="keep the workers' statistical profiler on (Dask's default: a "
                         "stack sample every 10 ms in every worker, CPU taken from the work)")
    ap.add_argument("--threads", action="store_true",
                    help="also report each worker process's CPU by thread: its event loop "
                         "(Dask's own periodic work), its task thread, the rest")
    ap.add_argument("--warm", action="store_true",
                    help="run explain_fleet once, untimed, on each round's cluster before the "
                         "timed run: the steady state of a long-lived cluster whose workers "
                         "have decided the fleet's denials (default: every round is a first "
                         "run on new workers)")
    ap.add_argument("--hugepages", action="store_true",
                    help="start the worker processes with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 "
                         "(Dask's distributed.nanny.pre-spawn-environ, for both worker counts): "
                         "glibc's heap on transparent huge pages where the kernel allows them "
                         "(madvise), so a worker's tables of names and denials take a fault per "
                         "2 MiB instead of per 4 KiB page, and fewer TLB misses")
    ap.add_argument("--saturation", type=float, default=None,
                    help="the scheduler's worker-saturation (Dask's default 1.1: a worker of one "
                         "thread is sent a second task while it runs one, which no other "
                         "worker can then take unless stolen; 1.0: one at a time), for both "
                         "worker counts")
    ap.add_argument("--plain", type=int, default=0, metavar="N",
                    help="no Dask: the map tasks of the one- and two-worker splits in plain "
                         "processes, N alternations (see above)")
    a = ap.parse_args()
    if a.spread is not None:
        arbiter.dask.SPREAD = a.spread
    if a.client_blobs is not None:
        arbiter.dask._CLIENT_BLOBS = a.client_blobs
    if a.saturation is not None:
        dask.config.set({"distributed.scheduler.worker-saturation": a.saturation})
    if a.hugepages:
        # Read by glibc when a worker process starts, so set before the nannies spawn them.
        env = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {})
        env["GLIBC_TUNABLES"] = "glibc.malloc.hugetlb=1"
        dask.config.set({"distributed.nanny.pre-spawn-environ": env})
    if not a.profile:
        # Passed to the worker processes by their nannies.
        dask.config.set({"distributed.worker.profile.enabled": False})
    if not a.dask_ticks:
        # Set before the cluster starts, so the nannies pass them to the workers.
        dask.config.set({"distributed.admin.tick.interval": "1s",
                         "distributed.admin.system-monitor.interval": "2s",
                         # The nannies' and workers' checks of the workers' memory against
                         # the spill, pause and terminate fractions.
                         "distributed.worker.memory.monitor-interval": "1s"})
    gen = os.environ.get("GEN_DENIALS_BIN", str(REPO / "target/release/examples/gen_denials"))
    d = pathlib.Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    logs = {}
    for i in range(a.hosts):
        seed = i % a.seeds if a.seeds else i
        p = d / f"host{i:02d}.{a.lines}.s{seed}.log"
        if not p.exists():
            with open(p, "wb") as f:
                subprocess.run([gen, a.policy, FORMATS[i % len(FORMATS)], str(a.lines), str(seed)],
                               stdout=f, check=True)
        logs[f"host{i:02d}"] = p
    if a.plain:
        size = dask.utils.parse_bytes(a.blocksize)
        return plain(a, [arbiter.dask._norm(str(p)) for p in logs.values()], size)
    lines = sum(1 for p in logs.values() for _ in open(p, "rb"))
    times = {1: [], 2: []}
    others = {1: [], 2: []}
    first = None
    imbalance = []
    # A B A: the one-worker rounds on either side of every two-worker round.
    for r, n in enumerate([1, 2] * a.rounds + [1]):
        with distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as c, \
                distributed.Client(c, set_as_default=False) as client:
            # Imports arbiter.dask on every worker and builds its engine, untimed.
            client.run(arbiter.dask.engine, a.policy)
            with client.as_current():
                kw = {} if a.tasks_per_worker is None else {"partitions": a.tasks_per_worker * n}
                if a.warm:
                    # An untimed run first: the workers have decided the fleet's denials.
                    arbiter.dask.explain_fleet(logs, a.policy, blocksize=a.blocksize, **kw)
                client.run(heartbeat)
                m0 = task_metrics(client)
                w0 = client.run(time.process_time)
                th0 = client.run(worker_threads) if a.threads else None
                stream = distributed.get_task_stream(client) if a.parts else None
                if stream is not None:
                    stream.__enter__()
                c0 = thread_cpu()
                b0 = machine_busy()
                t0 = time.time()
                t = time.perf_counter()
                result = arbiter.dask.explain_fleet(logs, a.policy, blocksize=a.blocksize, **kw)
                dt = time.perf_counter() - t
                t1 = time.time()
                b1 = machine_busy()
                c1 = thread_cpu()
                if stream is not None:
                    stream.__exit__(None, None, None)
                w1 = client.run(time.process_time)
                th1 = client.run(worker_threads) if a.threads else None
                client.run(heartbeat)
                m1 = task_metrics(client)
        times[n].append(dt)
        # Other processes' CPU during the round (the machine's busy time less this
        # process's and the workers'): a round that shared its cores with other work.
        other = None if b0 is None else max(0.0, b1 - b0 - sum(w1[k] - w0[k] for k in w0)
                                            - (c1[2] - c0[2]))
        others[n].append(other)
        # Every round, of either worker count, gives the same fleet.
        first = result if first is None else first
        assert result == first, f"round {r} ({n} worker(s)) disagrees with round 0"
        wcpu = [w1[k] - w0[k] for k in w0]
        util = ", ".join(f"{c:.2f} s ({100 * c / dt:.0f}%)" for c in wcpu)
        # The scheduler and the nannies run in this process: their CPU is the client's.
        cm, cl, cp = (after - before for before, after in zip(c0, c1))
        print(f"round {r}: {n} worker(s): {dt:.2f} s, {lines / dt:,.0f} lines/s; CPU s: "
              f"workers {sum(wcpu):.2f} [each, CPU/wall: {util}], client+scheduler "
              f"{cp:.2f} [calling thread {cm:.2f}, event loops {cl:.2f}, other "
              f"{cp - cm - cl:.2f}]; other processes "
              f"{'?' if other is None else f'{other:.2f}'}; load {os.getloadavg()[0]:.1f}\n"
              f"    tasks: {metrics_delta(m0, m1)}", flush=True)
        if stream is not None:
            text, spread = timeline(stream.data, t0, t1)
            print(f"    {text}", flush=True)
            if n == 2 and spread is not None:
                imbalance.append(spread)
        if th0 is not None:
            split = "; ".join(
                ", ".join(f"{k} {th1[w].get(k, 0.0) - th0[w].get(k, 0.0):.2f}"
                          for k in th1[w]) for w in sorted(th0))
            print(f"    worker CPU s by thread: {split}", flush=True)
    # Each two-worker round against the mean wall time of the one-worker rounds around it.
    pairs = [(times[1][i] + times[1][i + 1]) / 2 / t2 for i, t2 in enumerate(times[2])]
    # The pairs whose three rounds had the cores to themselves: other processes under
    # 0.05 CPU-s per second of the round (a busy process elsewhere takes half of a
    # two-worker round's cores and none of a one-worker round's).
    quiet = [p for i, p in enumerate(pairs)
             if all(o is not None and o < 0.05 * t
                    for o, t in ((others[1][i], times[1][i]), (others[2][i], times[2][i]),
                                 (others[1][i + 1], times[1][i + 1])))]
    r1 = statistics.median(lines / t for t in times[1])
    r2 = statistics.median(lines / t for t in times[2])
    state = ("warm workers (an untimed run first)" if a.warm
             else "first runs (new workers, nothing decided)")
    print(f"{lines:,} lines, {a.hosts} hosts, {state}; pairs (1 worker before and after / "
          f"2 workers): "
          + ", ".join(f"{p:.2f}x" for p in pairs))
    print(f"pairs with the cores to themselves ({len(quiet)} of {len(pairs)}): "
          + (", ".join(f"{p:.2f}x" for p in quiet) or "none")
          + (f", median {statistics.median(quiet):.2f}x" if quiet else ""))
    if imbalance:
        print("two-worker rounds, the first worker done before the last (s): "
              + ", ".join(f"{x:.2f}" for x in imbalance))
    print(f"median 1 worker {r1:,.0f} lines/s ({len(times[1])} rounds), 2 workers "
          f"{r2:,.0f} lines/s ({len(times[2])} rounds), ratio of the medians {r2 / r1:.2f}x; "
          f"median of the {len(pairs)} pairs' ratios {statistics.median(pairs):.2f}x; "
          f"load average {os.getloadavg()}")


if __name__ == "__main__":
    sys.exit(main())

"""Throughput of arbiter.dask with 1 and 2 worker processes (lines/s), on a generated fleet.

    python3 bench/dask_fleet.py [--hosts 50] [--lines 20000] [--rounds 3] [--seeds N] [--dir DIR]

Generates DIR/hostNN.log with crates/denials' gen_denials (formats in turn) if missing,
starts one LocalCluster per worker count (threads_per_worker=1, processes), warms every
worker's engine, then times explain_fleet (the map over every line and the reduce) in
alternating rounds: 1 worker, 2 workers, 1, 2, ... and prints each round and the medians.
Cluster start-up and engine builds are outside the timed part (done once per worker).

Besides wall time, each round reports the CPU seconds spent by the workers (their sum and
the busiest one), the scheduler and this client process: on a machine shared with other
jobs, wall time depends on what the others take, while the CPU split shows how the work
divides (with N workers, the busiest worker's share plus the serial client/scheduler part
bounds the wall time on N idle cores)."""

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

import distributed

import arbiter.dask

REPO = pathlib.Path(__file__).resolve().parents[3]
FORMATS = ["audit.log", "ausearch", "journal", "dmesg", "logcat", "user_avc", "mixed"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--policy", default="/etc/selinux/default/policy/policy.33")
    ap.add_argument("--hosts", type=int, default=50)
    ap.add_argument("--lines", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--blocksize", default="1MiB")
    ap.add_argument("--dir", default="/tmp/arbiter-dask-fleet")
    ap.add_argument("--seeds", type=int, default=0,
                    help="generator seeds shared by the hosts (0: one per host, every denial "
                         "distinct; N: hosts repeat each other's denials, as a real fleet does)")
    a = ap.parse_args()
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
    lines = sum(1 for p in logs.values() for _ in open(p, "rb"))
    clusters = {}
    for n in (1, 2):
        c = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                     dashboard_address=None)
        client = distributed.Client(c, set_as_default=False)
        client.run(arbiter.dask.engine, a.policy)  # one engine per worker, built now
        clusters[n] = (c, client)
    rates = {1: [], 2: []}
    results = {}
    for r in range(a.rounds):
        for n in (1, 2):
            client = clusters[n][1]
            with client.as_current():
                w0 = client.run(time.process_time)
                s0 = client.run_on_scheduler(time.process_time)
                c0 = time.process_time()
                t = time.perf_counter()
                results[n] = arbiter.dask.explain_fleet(logs, a.policy, blocksize=a.blocksize)
                dt = time.perf_counter() - t
                c1 = time.process_time()
                w1 = client.run(time.process_time)
                s1 = client.run_on_scheduler(time.process_time)
            rates[n].append(lines / dt)
            wcpu = [w1[k] - w0[k] for k in w0]
            print(f"round {r}: {n} worker(s): {dt:.2f} s, {lines / dt:,.0f} lines/s; CPU s: "
                  f"workers {sum(wcpu):.2f} (busiest {max(wcpu):.2f}), scheduler {s1 - s0:.2f}, "
                  f"client {c1 - c0:.2f}; load {os.getloadavg()[0]:.1f}", flush=True)
    assert results[1] == results[2], "1 and 2 workers disagree"
    m1, m2 = statistics.median(rates[1]), statistics.median(rates[2])
    print(f"{lines:,} lines, {a.hosts} hosts; median 1 worker {m1:,.0f} lines/s, "
          f"2 workers {m2:,.0f} lines/s, ratio {m2 / m1:.2f}x; load average {os.getloadavg()}")
    for c, client in clusters.values():
        client.close()
        c.close()


if __name__ == "__main__":
    sys.exit(main())

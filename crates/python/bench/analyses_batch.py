"""A batch of 100 analysis queries on one analysis object each, timed from inside, as a
setools user runs them: the information flow graph and the domain transition graph are
built once, then queried.

Run the same file under both implementations, side by side (whole process, alternating
runs, by scripts/side-by-side.py):

    scripts/side-by-side.py analyses-batch 3 /usr/bin/python3 \\
        crates/python/bench/analyses_batch.py POLICY -- \\
        $(which python3) -m arbiter.setools crates/python/bench/analyses_batch.py POLICY

or once each by hand for the phase figures. The queries: 40 information flow
``shortest_path``, 10 flows into a type, then a minimum weight of 5 (setools rebuilds its
subgraph) and 10 more ``shortest_path``; 40 domain transition ``shortest_path`` (20
forward, 20 reversed). Source and target types are picked by a seeded random generator from
the sorted domain types (the ``domain`` attribute's members, else every type), so both
implementations answer the same 100 queries.

Prints one JSON object: {"impl", "open_s", "infoflow_first_s" (graph build and first
query), "infoflow_batch_s" (the other queries), "dta_first_s", "dta_batch_s", "queries",
"paths", "rss_kb"}. Resident memory is VmHWM from /proc/self/status at the end.
"""

import json
import random
import sys
import time

import setools
from setools.dta import DomainTransitionAnalysis
from setools.infoflow import InfoFlowAnalysis
from setools.permmap import PermissionMap


def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def main():
    t0 = time.perf_counter()
    p = setools.SELinuxPolicy(sys.argv[1])
    opened = time.perf_counter() - t0
    try:
        domains = sorted(str(t) for t in p.lookup_typeattr("domain").expand())
    except Exception:  # noqa: BLE001 - a policy without the attribute: every type
        domains = sorted(str(t) for t in p.types())
    rng = random.Random(18)
    pairs = [tuple(rng.sample(domains, 2)) for _ in range(90)]
    paths = 0
    n = 0

    def count(gen):
        nonlocal paths, n
        n += 1
        for path in gen:
            paths += 1
            list(path)

    a = InfoFlowAnalysis(p, PermissionMap())
    t = time.perf_counter()
    count(a.shortest_path(*pairs[0]))
    if_first = time.perf_counter() - t
    t = time.perf_counter()
    for s, d in pairs[1:40]:
        count(a.shortest_path(s, d))
    for s, _ in pairs[40:50]:
        n += 1
        paths += len(list(a.infoflows(s, out=False)))
    a.min_weight = 5
    for s, d in pairs[50:60]:
        count(a.shortest_path(s, d))
    if_batch = time.perf_counter() - t

    d = DomainTransitionAnalysis(p)
    t = time.perf_counter()
    count(d.shortest_path(*pairs[60]))
    dta_first = time.perf_counter() - t
    t = time.perf_counter()
    for s, e in pairs[61:80]:
        count(d.shortest_path(s, e))
    d.reverse = True
    for s, e in pairs[70:90]:
        count(d.shortest_path(s, e))
    dta_batch = time.perf_counter() - t

    print(json.dumps({
        "impl": "arbiter" if setools.__name__ != "setools" or "arbiter" in setools.__file__
        else "setools",
        "open_s": round(opened, 3),
        "infoflow_first_s": round(if_first, 3),
        "infoflow_batch_s": round(if_batch, 3),
        "dta_first_s": round(dta_first, 3),
        "dta_batch_s": round(dta_batch, 3),
        "queries": n,
        "paths": paths,
        "rss_kb": rss_kb(),
    }))


main()

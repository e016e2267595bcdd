"""Corpus: InfoFlowAnalysis (setools.infoflow) with setools' default permission map: the
graph's statistics, the flows out of a few types, all paths (up to three steps) and all
shortest paths between a few pairs, each step with its weight and rules in order; the same
under a minimum weight, an excluded type, boolean values and an excluded permission; the
refused arguments.

Small policies only: on Debian's policy the real setools needs about 25 s to build the graph
once, so in ``sample`` mode (the Debian runs) the script prints only that it was skipped.
Nothing is sorted: every order printed is setools' (networkx's) own. Each boolean setting
gets its own analysis (see the comment there: setools' second filtering on one analysis
differs, and arbiter does not reproduce that).
"""

import sys

import setools
from setools.infoflow import InfoFlowAnalysis
from setools.permmap import PermissionMap

p = setools.SELinuxPolicy(sys.argv[1])
mode = sys.argv[2] if len(sys.argv) > 2 else "full"


def err(f, *a, **k):
    try:
        r = f(*a, **k)
        if hasattr(r, "__next__"):
            r = list(r)
        print("ok", len(r) if isinstance(r, list) else r)
    except Exception as e:  # noqa: BLE001 - the class and message are the corpus
        print("{}: {}".format(type(e).__name__, e))


def step(s):
    print("  {} -> {} {}".format(s.source, s.target, s.weight))
    for r in s.rules:
        print("    {}".format(r))


def paths(label, gen):
    n = 0
    for path in gen:
        n += 1
        print(" path", label, n)
        for s in path:
            step(s)
    print(" paths", label, n)


def run(a, label):
    print("==", label)
    types = sorted(str(t) for t in p.types())
    sources = []
    for t in types:
        flows = list(a.infoflows(t))
        if flows:
            sources.append(t)
            print("out", t, len(flows))
            for s in flows[:8]:
                step(s)
        if len(sources) >= 4:
            break
    for s in sources[:3]:
        targets = [str(x.target) for x in a.infoflows(s)][:2]
        targets += [t for t in types if t not in targets and t != s][:2]
        for t in targets:
            paths("all {} {}".format(s, t), a.all_paths(s, t, 3))
            paths("short {} {}".format(s, t), a.all_shortest_paths(s, t))


if mode != "full":
    print("skipped: the real setools takes about 25 s per graph on this policy")
else:
    m = PermissionMap()
    a = InfoFlowAnalysis(p, m)
    print(a.get_stats())
    run(a, "default")
    a.min_weight = 5
    run(a, "min_weight 5")
    a.min_weight = 1
    types = sorted(str(t) for t in p.types())
    first = [t for t in types if list(a.infoflows(t))]
    if first:
        a.exclude = [first[0]]
        run(a, "exclude " + first[0])
        a.exclude = None
    # One analysis per boolean setting: setools filters by booleans by removing rules from
    # lists its subgraph shares with its graph, so a second filtering on the same analysis
    # starts from the first one's leftovers (arbiter filters the whole graph each time).
    bools = sorted(str(b) for b in p.bools())
    run(InfoFlowAnalysis(p, PermissionMap(), booleans={
        b: not p.lookup_boolean(b).state for b in bools}), "booleans flipped")
    run(InfoFlowAnalysis(p, PermissionMap(), booleans={}), "booleans default")
    m2 = PermissionMap()
    m2.exclude_class("file")
    m2.set_weight("dir", "read", 10)
    b = InfoFlowAnalysis(p, m2, min_weight=10)
    print(b.get_stats())
    run(b, "file excluded, dir read 10, min_weight 10")
    print("== refused")
    err(InfoFlowAnalysis, p, m, min_weight=0)
    err(InfoFlowAnalysis, p, m, min_weight=11)
    err(InfoFlowAnalysis, p, m, exclude=["no_such_type_t"])
    err(a.all_paths, types[0], types[-1], 0)
    err(a.all_paths, "no_such_type_t", types[-1])
    err(a.all_shortest_paths, types[0], "no_such_type_t")
    err(a.infoflows, "no_such_type_t")

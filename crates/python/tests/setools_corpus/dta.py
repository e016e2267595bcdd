"""Corpus: DomainTransitionAnalysis (setools.dta): the graph's statistics, the transitions
out of (and, reversed, into) the domains that have some, all paths (up to three steps) and
all shortest paths between a few pairs, each step with every rule list (transition,
entrypoints with their entrypoint/execute/type_transition rules, setexec, dyntransition,
setcurrent) in order; the same with an excluded type; the refused arguments.

Small policies only: in ``sample`` mode (the Debian runs) the script prints only that it
was skipped (the real setools' graph on Debian's policy takes tens of seconds per build).
Sorted: a step's entrypoints by type name (setools 4.4.1 gathers them in a Python set, so
their order changes with the hash seed; arbiter gives them sorted by name). Every other
order printed is setools' (networkx's) own.
"""

import sys

import setools
from setools.dta import DomainTransitionAnalysis

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


def rules(label, rs):
    print("    {} {}".format(label, len(rs)))
    for r in rs:
        print("      {}".format(r))


def step(s):
    print("  {} -> {}".format(s.source, s.target))
    rules("transition", s.transition)
    for e in sorted(s.entrypoints, key=lambda e: str(e.name)):
        print("   entrypoint", e.name)
        rules("entrypoint", e.entrypoint)
        rules("execute", e.execute)
        rules("type_transition", e.type_transition)
    rules("setexec", s.setexec)
    rules("dyntransition", s.dyntransition)
    rules("setcurrent", s.setcurrent)


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
        steps = list(a.transitions(t))
        if steps:
            sources.append(t)
            print("transitions", t, len(steps))
            for s in steps[:6]:
                step(s)
        if len(sources) >= 5:
            break
    for s in sources[:3]:
        ends = [str(x.source if a.reverse else x.target) for x in a.transitions(s)][:2]
        ends += [t for t in sources if t not in ends and t != s][:2]
        for t in ends:
            paths("all {} {}".format(s, t), a.all_paths(s, t, 3))
            paths("short {} {}".format(s, t), a.all_shortest_paths(s, t))


if mode != "full":
    print("skipped: the real setools takes tens of seconds per graph on this policy")
else:
    a = DomainTransitionAnalysis(p)
    print(a.get_stats())
    run(a, "forward")
    a.reverse = True
    run(a, "reverse")
    a.reverse = False
    types = sorted(str(t) for t in p.types())
    first = [t for t in types if list(a.transitions(t))]
    if first:
        a.exclude = [first[0]]
        run(a, "exclude " + first[0])
        a.exclude = None
    print("== refused")
    err(DomainTransitionAnalysis, p, exclude=["no_such_type_t"])
    err(a.all_paths, types[0], types[-1], 0)
    err(a.all_paths, "no_such_type_t", types[-1])
    err(a.all_shortest_paths, types[0], "no_such_type_t")
    err(a.transitions, "no_such_type_t")

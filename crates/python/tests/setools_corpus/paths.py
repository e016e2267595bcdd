"""Corpus: the one-path and flows-into queries of InfoFlowAnalysis and
DomainTransitionAnalysis (``shortest_path`` of both, ``infoflows(type, out=False)``) over a
generated query set: ``paths.py POLICY MODE [SEED]``.

The types queried are picked by a seeded ``random.Random`` from the sorted type names, plus
the most connected ones (those with the most attributes, a measure both implementations
answer without a graph query). Each analysis object answers every query of a setting, then the next setting is set
on it, as a setools user would do (setools rebuilds only its subgraph when a setting
changes): information flow with no filter, with a minimum weight and excluded types, and
with every boolean flipped; domain transitions forward, reversed, and with excluded types.

Nothing is sorted but a step's entrypoints (setools 4.4.1 keeps them in a Python set, whose
order changes with the hash seed; see dta.py's docstring): the path networkx's
bidirectional search picks and the order of the flows into a type are printed as setools
gives them. MODE ``full`` (our small policies) queries more types than ``sample`` (the
Debian policies, where setools needs about 25 s per information flow graph) and prints every
rule; ``sample`` prints rule counts and the first rule of each step.
"""

import random
import sys

import setools
from setools.dta import DomainTransitionAnalysis
from setools.infoflow import InfoFlowAnalysis
from setools.permmap import PermissionMap

p = setools.SELinuxPolicy(sys.argv[1])
mode = sys.argv[2] if len(sys.argv) > 2 else "full"
seed = int(sys.argv[3]) if len(sys.argv) > 3 else 18
full = mode == "full"
rng = random.Random(seed)

types = sorted(str(t) for t in p.types())
by_attrs = sorted(types, key=lambda t: (-len(list(p.lookup_type(t).attributes())), t))
n_random, n_top = (12, 6) if full else (8, 6)
picked = rng.sample(types, min(n_random, len(types))) + by_attrs[:n_top]
pairs = [(a, b) for a in picked for b in picked if a != b]
rng.shuffle(pairs)
pairs = pairs[:60 if full else 40]


def rules(label, rs):
    rs = list(rs)
    if full:
        for r in rs:
            print("    {} {}".format(label, r))
    else:
        print("    {} {} {}".format(label, len(rs), rs[0] if rs else "-"))


def flow_step(s):
    print("  {} -> {} {}".format(s.source, s.target, s.weight))
    rules("rule", s.rules)


def dta_step(s):
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


def shortest(label, a, step):
    for s, t in pairs:
        n = 0
        for path in a.shortest_path(s, t):
            n += 1
            print("short", label, s, t)
            for st in path:
                step(st)
        if not n:
            print("short", label, s, t, "none")


def flows_in(label, a):
    for t in picked:
        flows = list(a.infoflows(t, out=False))
        print("in", label, t, len(flows))
        for s in flows if full else flows[:25]:
            print("  {} -> {} {}".format(s.source, s.target, s.weight))
        for s in flows[:3]:
            flow_step(s)


excluded = by_attrs[n_top:n_top + 2] + picked[:1]
print("picked", picked)
print("excluded", excluded)

# One analysis, its settings changed between query sets, as a setools user would: setools
# builds the graph once and rebuilds only the subgraph. Booleans come last, because setools'
# boolean filtering removes rules from lists its subgraph shares with its graph, so the
# settings after it would start from those leftovers (arbiter does not reproduce that).
a = InfoFlowAnalysis(p, PermissionMap())
for label, weight, exclude, booleans in [
        ("default", 1, None, None),
        ("min_weight 5, exclude", 5, excluded, None),
        ("booleans flipped", 1, None, {str(b): not b.state for b in p.bools()}),
]:
    a.min_weight = weight
    a.exclude = exclude
    a.booleans = booleans
    print("== infoflow", label)
    shortest(label, a, flow_step)
    flows_in(label, a)

d = DomainTransitionAnalysis(p)
for label, reverse, exclude in [("forward", False, None), ("reverse", True, None),
                                ("exclude", False, excluded)]:
    print("== dta", label)
    d.reverse = reverse
    d.exclude = exclude
    shortest(label, d, dta_step)

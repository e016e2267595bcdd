"""Corpus: SELinuxPolicy.bounds() and BoundsQuery with every keyword, in results() order."""

import sys

import setools
from setools.policyrep import SELinuxPolicy
from setools.boundsquery import BoundsQuery

p = SELinuxPolicy(sys.argv[1])
bounds = list(p.bounds())
print("bounds", len(bounds), p.typebounds_count)
for b in bounds:
    print(repr(b), b.ruletype, repr(b.parent), repr(b.child), b.statement(), b == b)
names = [str(t) for t in p.types()]
QUERIES = [dict(), dict(ruletype=["typebounds"]), dict(parent=names[0]),
           dict(child=names[-1]), dict(parent="^p", parent_regex=True),
           dict(child="_t$", child_regex=True)]
QUERIES += [dict(child=str(b.child)) for b in bounds[:3]]
QUERIES += [dict(parent=str(b.parent)) for b in bounds[:3]]
for kw in QUERIES:
    print("query", sorted(kw.items()), [str(b) for b in BoundsQuery(p, **kw).results()])

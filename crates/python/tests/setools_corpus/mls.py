"""Corpus: the MLS symbols (sensitivities, categories, level declarations, levels and
ranges with their dominance comparisons), lookups and their exceptions, range_transition
rules, SensitivityQuery, CategoryQuery, MLSRuleQuery and UserQuery's level/range
keywords, in results() order.

Normalised (setools itself is unordered there, named): Level.categories() iterates a
set, printed sorted by value."""

import sys

import setools
from setools.policyrep import SELinuxPolicy
from setools.categoryquery import CategoryQuery
from setools.mlsrulequery import MLSRuleQuery
from setools.sensitivityquery import SensitivityQuery
from setools.userquery import UserQuery

p = SELinuxPolicy(sys.argv[1])
step = 1 if len(sys.argv) > 2 and sys.argv[2] == "full" else 13


def sample(items, kind):
    items = list(items)
    print("== {} order".format(kind), [str(x) for x in items])
    return [x for i, x in enumerate(items) if i % step == 0]


def attempt(label, fn):
    try:
        r = fn()
    except (setools.exception.SEToolsException, ValueError, AttributeError) as e:
        print(label, "->", type(e).__name__, e)
        return None
    print(label, "->", r)
    return r


print("mls", p.mls, "counts", p.category_count, p.level_count, p.range_transition_count)
print("len", len(p.sensitivities()), len(p.categories()), len(p.levels()), len(p.mlsrules()))
sens = sample(p.sensitivities(), "sensitivities")
for s in sens:
    print(repr(s), list(s.aliases()), s.statement(), hash(s) == hash(str(s)), s == str(s))
    d = s.level_decl()
    print("  decl", repr(d), d.statement(), d == s.level_decl(), d.sensitivity == s)
allsens = list(p.sensitivities())
for a, b in zip(allsens, allsens[1:]):
    print("sens cmp", a, b, a < b, a <= b, a > b, a >= b, a == b)
for c in sample(p.categories(), "categories"):
    print(repr(c), list(c.aliases()), c.statement(), hash(c) == hash(str(c)))
cats = list(p.categories())
for a, b in list(zip(cats, cats[1:]))[:20]:
    print("cat cmp", a, b, a < b, b < a)
for d in sample(p.levels(), "levels"):
    print(repr(d), d.statement(), [str(c) for c in sorted(d.categories(), key=lambda c: c._value)
                                   if hasattr(c, "_value")][:5] if False else len(list(d.categories())))

print("== lookups")
names = [str(s) for s in allsens] + [str(c) for c in cats[:3]]
texts = ["nosuch", "s0", "s0:c0", "s0:c0.c3,c5", "s0:c5.c2", "s0:c0,c1,c2,c4",
         "s0:cnosuch", "s0:c0.cnosuch", "s0:c0.c1.c2", "s1:c0", "s15:c0.c1023",
         "s0 - s15:c0.c1023", "s0-s0", "s15 - s0", "s0 - nosuch", "s0:c0 - s0:c1",
         "s0:c0 - s0:c0,c1", "s0 - s1 - s2"]
texts += [n for n in names]
for t in texts:
    lv = attempt("lookup_level " + t, lambda: p.lookup_level(t))
    rg = attempt("lookup_range " + t, lambda: p.lookup_range(t))
    if rg is not None:
        print("  range", rg.low, rg.high, rg == t, rg == t.replace(" ", ""), hash(rg) == hash(str(rg)))
for n in names[:4] + ["nosuch"]:
    attempt("lookup_sensitivity " + n, lambda: p.lookup_sensitivity(n))
    attempt("lookup_category " + n, lambda: p.lookup_category(n))
for s in allsens:
    for a in s.aliases():
        attempt("alias " + a, lambda: p.lookup_sensitivity(a))
        attempt("alias nodref " + a, lambda: p.lookup_sensitivity(a, deref=False))
for c in cats:
    for a in c.aliases():
        attempt("alias " + a, lambda: p.lookup_category(a))
        attempt("alias nodref " + a, lambda: p.lookup_category(a, deref=False))

print("== level comparisons")
levels = []
for t in ["s0", "s0:c0", "s0:c0.c3", "s0:c1,c2", "s1", "s1:c0", "s15:c0.c1023", "s2:c3"]:
    try:
        levels.append(p.lookup_level(t))
    except Exception:
        pass
for a in levels:
    for b in levels:
        print("lvl", a, b, a == b, a != b, a >= b, a > b, a <= b, a < b, a ^ b)
ranges = []
for t in ["s0", "s0 - s15:c0.c1023", "s0:c0 - s0:c0.c3", "s1 - s2", "s0:c1,c2 - s1:c0.c3"]:
    try:
        ranges.append(p.lookup_range(t))
    except Exception:
        pass
for r in ranges:
    print("range", r, [l in r for l in levels], [r == o for o in ranges])

print("== users")
for u in p.users():
    if p.mls:
        print(u, u.mls_level, u.mls_range, u.statement())
    else:
        attempt("mls_level " + str(u), lambda: u.mls_level)

print("== mlsrules")
rules = sample(p.mlsrules(), "mlsrules")
for r in rules:
    print(repr(r), r.ruletype, repr(r.source), repr(r.target), repr(r.tclass), repr(r.default),
          hash(r) == hash(r), r == r, str(r) == r.statement())
    print("  expand", [str(x) for x in r.expand()][:6])
    attempt("  conditional", lambda: r.conditional)
allrules = list(p.mlsrules())
srcs = sorted({str(r.source) for r in allrules})[:3]
tgts = sorted({str(r.target) for r in allrules})[:3]
Q = [dict(), dict(ruletype=["range_transition"]), dict(tclass=["process"]),
     dict(tclass="^f", tclass_regex=True), dict(source="_t$", source_regex=True),
     dict(target="exec", target_regex=True)]
Q += [dict(source=s) for s in srcs] + [dict(source=s, source_indirect=False) for s in srcs]
Q += [dict(target=t) for t in tgts] + [dict(target=t, target_indirect=False) for t in tgts]
if p.mls:
    for rg in ["s0", "s0 - s15:c0.c1023", "s0 - s0:c0.c1023", "s1"]:
        for flags in [{}, dict(default_subset=True), dict(default_overlap=True),
                      dict(default_superset=True), dict(default_subset=True, default_proper=True),
                      dict(default_superset=True, default_proper=True)]:
            Q.append(dict(default=rg, **flags))
for kw in Q:
    try:
        res = [str(r) for r in MLSRuleQuery(p, **kw).results()]
    except Exception as e:
        res = type(e).__name__ + ": " + str(e)
    print("mlsquery", sorted(kw.items()), res)

print("== SensitivityQuery / CategoryQuery")
SQ = [dict(), dict(name="s0"), dict(name="s1"), dict(name="^s1", name_regex=True),
      dict(alias="nosuch"), dict(sens="s1"), dict(sens="s1", sens_dom=True),
      dict(sens="s1", sens_domby=True), dict(sens="nosuch")]
for kw in SQ:
    try:
        res = [str(s) for s in SensitivityQuery(p, **kw).results()]
    except Exception as e:
        res = type(e).__name__ + ": " + str(e)
    print("sensquery", sorted(kw.items()), res)
CQ = [dict(), dict(name="c1"), dict(name="^c1[0-9]$", name_regex=True), dict(alias="x"),
      dict(name="c1", alias_deref=True)]
for kw in CQ:
    res = [str(c) for c in CategoryQuery(p, **kw).results()]
    print("catquery", sorted(kw.items()), res)

print("== UserQuery level/range")
UQ = []
for lv in ["s0", "s15:c0.c1023", "s1", "s0:c0"]:
    for flags in [{}, dict(level_dom=True), dict(level_domby=True), dict(level_incomp=True)]:
        UQ.append(dict(level=lv, **flags))
for rg in ["s0", "s0 - s15:c0.c1023", "s0 - s0", "s0 - s1", "s15:c0.c1023"]:
    for flags in [{}, dict(range_subset=True), dict(range_overlap=True), dict(range_superset=True),
                  dict(range_subset=True, range_proper=True),
                  dict(range_superset=True, range_proper=True)]:
        UQ.append(dict(range_=rg, **flags))
UQ.append(dict(level="nosuch"))
UQ.append(dict(range_="s0 - nosuch"))
for kw in UQ:
    try:
        res = [str(u) for u in UserQuery(p, **kw).results()]
    except Exception as e:
        res = type(e).__name__ + ": " + str(e)
    print("userquery", sorted(kw.items()), res)

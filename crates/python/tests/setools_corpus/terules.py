"""Corpus: TE rules (every attribute, str(), repr(), conditional, expand(), enabled()) from
SELinuxPolicy.terules() and TERuleQuery with every keyword, in setools' results() order.
Argument 2 is "full" to print every rule of the policy (small policies), else a sample.

Normalised (setools itself is unordered there, named): AVRule.perms is a frozenset,
printed sorted (an xperm rule's IoctlSet is printed as setools prints it too: str,
format with no spec and with ",", repr); Conditional.booleans is a frozenset, printed sorted; rule hashes are
printed only as equal-or-not."""

import sys

import setools
from setools.policyrep import SELinuxPolicy
from setools.terulequery import TERuleQuery
from setools.exception import (InvalidBoolean, InvalidClass, InvalidPermission, InvalidType,
                               RuleNotConditional, RuleUseError, TERuleNoFilename)

p = SELinuxPolicy(sys.argv[1])
full = len(sys.argv) > 2 and sys.argv[2] == "full"


def show(rule):
    out = [repr(rule), str(rule.ruletype), str(rule.source), str(rule.target), str(rule.tclass),
           rule.extended, rule.origin]
    for attr in ("perms", "default", "filename", "xperm_type"):
        try:
            v = getattr(rule, attr)
            if isinstance(v, setools.IoctlSet):
                # setools' own text of the set (IoctlSet's str/format/repr).
                out.append("ioctlset {} {} {} {} str={} fmt={} comma={} repr={}".format(
                    len(v), min(v), max(v), v.ranges(), str(v), format(v), format(v, ","),
                    repr(v)))
            else:
                out.append(sorted(v) if isinstance(v, frozenset) else str(v))
        except (RuleUseError, TERuleNoFilename, AttributeError) as e:
            out.append(type(e).__name__ + ":" + str(e))
    try:
        c = rule.conditional
        out += [str(c), rule.conditional_block, sorted(str(b) for b in c.booleans)]
    except RuleNotConditional as e:
        out.append("RuleNotConditional")
    out.append(rule.enabled())
    print(*out)


rules = list(p.terules())
print("terules", len(rules))
for i, r in enumerate(rules):
    if full or i % 97 == 0:
        show(r)

QUERIES = [
    dict(ruletype=["allow"], source="httpd_t"),
    dict(source="httpd_t", source_indirect=False),
    dict(target="shadow_t", tclass=["file"]),
    dict(target="shadow_t", target_indirect=False),
    dict(source="^http", source_regex=True, tclass=["process"]),
    dict(target="_exec_t$", target_regex=True, ruletype=["type_transition"]),
    dict(tclass="sock", tclass_regex=True, source="init_t"),
    dict(perms={"write", "append"}, tclass=["file"], target="etc_t"),
    dict(perms={"read", "write"}, perms_equal=True, target="etc_t"),
    dict(perms={"read", "getattr"}, perms_subset=True, source="httpd_t"),
    dict(ruletype=["allowxperm", "auditallowxperm", "dontauditxperm"]),
    dict(xperms=[(0x8900, 0x8910)]),
    dict(xperms=[(0x5401, 0x5401)], xperms_equal=True),
    dict(ruletype=["type_transition"], default="etc_t"),
    dict(default="_tmp_t$", default_regex=True),
    dict(boolean=["httpd_can_network_connect"]),
    dict(boolean="^httpd_", boolean_regex=True, ruletype=["allow"]),
    dict(boolean=["httpd_enable_cgi", "httpd_unified"], boolean_equal=True),
    dict(ruletype=["dontaudit"], source="domain"),
    dict(ruletype=["type_change", "type_member"]),
    dict(ruletype=["auditallow"]),
    dict(source="user_t", target="user_t", tclass=["process"]),
    dict(ruletype=["neverallow"]),
    dict(source="init_t", ruletype=["type_transition"], tclass=["file", "dir"]),
]


def describe(kw):
    return [(k, sorted(v) if isinstance(v, (set, frozenset)) else v) for k, v in sorted(kw.items())]


# Every keyword on the small policies; every other query on the large ones (the real
# setools takes about a second per query there).
for kw in QUERIES if full else QUERIES[::2]:
    try:
        q = TERuleQuery(p, **kw)
        res = list(q.results())
    except (InvalidType, InvalidClass, InvalidBoolean, InvalidPermission) as e:
        print("query", describe(kw), type(e).__name__, e)
        continue
    print("query", describe(kw), len(res))
    for r in res[:60]:
        print(" ", r)
    for r in res[:3]:
        show(r)
        ex = list(r.expand())
        print("  expand", len(ex), [str(e) for e in ex[:5]], all(e == r for e in ex),
              [e.origin is r for e in ex[:2]])

for kw in [dict(source="nosuch_t"), dict(tclass=["nosuch"]), dict(boolean=["nosuch"]),
           dict(ruletype=["nosuch"]), dict(perms={"nosuchperm"})]:
    try:
        list(TERuleQuery(p, **kw).results())
        print("no error", kw)
    except (setools.exception.SEToolsException, ValueError, KeyError) as e:
        print("error", sorted(kw), type(e).__name__, e)

some = str(next(p.types()))
q = TERuleQuery(p)
q.source = some
q.ruletype = [setools.TERuletype.allow]
print("settable", len(list(q.results())))
a = sorted(TERuleQuery(p, source=some).results())[:5]
print("sorted", [str(r) for r in a])

# IoctlSet as scripts build it (policyrep.IoctlSet; a subclass of it): str, format specs
# (none, ",", others refused with object.__format__'s TypeError), repr, ranges, and what
# set operations return.


class _Sub(setools.policyrep.IoctlSet):
    pass


for v in (setools.policyrep.IoctlSet([0x8900, 0x8901, 0x8902, 5, 0x10]),
          setools.policyrep.IoctlSet(), _Sub([1, 2, 4]), setools.IoctlSet([0xFFFF, 0]),
          setools.IoctlSet([0x12345, 0x12346]), setools.IoctlSet(range(10))):
    print("ioctlset", type(v).__name__, str(v), "|", repr(v), "|", format(v), "|",
          format(v, ","), "|", "{0:,}".format(v), "|", "{}".format(v), v.ranges(), len(v),
          v == frozenset(v), hash(v) == hash(frozenset(v)), type(v | {1}).__name__)
    for spec in ("x", ",,", " ", "s"):
        try:
            print("  format", repr(spec), format(v, spec))
        except TypeError as e:
            print("  format", repr(spec), type(e).__name__, e)
q = TERuleQuery(p, xperms=[(0x8900, 0x8905), (0x5401, 0x5401)])
print("xperms criterion", str(q.xperms), repr(q.xperms), format(q.xperms, ","), q.xperms.ranges())

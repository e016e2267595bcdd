"""Corpus: SELinuxPolicy.rbacrules() and RBACRuleQuery with every keyword, in results()
order; RoleAllow / RoleTransition attributes, str(), expand() and the fields they lack."""

import sys

import setools
from setools.policyrep import SELinuxPolicy
from setools.rbacrulequery import RBACRuleQuery

p = SELinuxPolicy(sys.argv[1])
rules = list(p.rbacrules())
print("rbacrules", len(rules))
for r in rules:
    out = [repr(r), str(r.ruletype), str(r.source), str(r.target), r.origin]
    for attr in ("tclass", "default"):
        try:
            out.append(str(getattr(r, attr)))
        except setools.exception.RuleUseError as e:
            out.append("RuleUseError:" + str(e))
    try:
        r.conditional
    except setools.exception.RuleNotConditional:
        out.append("RuleNotConditional")
    ex = list(r.expand())
    out += [len(ex), all(e == r for e in ex), [str(e) for e in ex[:3]]]
    print(*out)

roles = [str(r) for r in p.roles() if str(r) != "object_r"]
types = [str(t) for t in p.types()]
QUERIES = [dict(ruletype=["allow"]), dict(ruletype=["role_transition"]),
           dict(source=roles[0]), dict(source="^s", source_regex=True),
           dict(target=roles[-1]), dict(target=types[0]),
           dict(target="_t$", target_regex=True), dict(target="_r$", target_regex=True),
           dict(tclass=["process"]), dict(tclass="^p", tclass_regex=True),
           dict(default=roles[0]), dict(default="^s", default_regex=True),
           dict(source="nosuch_r"), dict(target="nosuch")]
for kw in QUERIES:
    try:
        res = [str(r) for r in RBACRuleQuery(p, **kw).results()]
        print("query", sorted(kw.items()), len(res), res[:30])
    except (setools.exception.SEToolsException, ValueError) as e:
        print("query", sorted(kw.items()), type(e).__name__, e)

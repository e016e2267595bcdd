"""Corpus: constraints and validatetrans (and their MLS kinds) with setools' expression
text, postfix nodes and name sets, default_* rules, the counts, ConstraintQuery and
DefaultQuery with their keywords, in results() order.

Normalised (setools itself is unordered there, named): a constraint's perms and its
expression's users/roles/types are frozensets, printed sorted; the name sets inside the
expression text are frozensets that setools prints in iteration order, which is the
same under one hash seed: the test runs both sides with PYTHONHASHSEED=0."""

import sys

import setools
from setools.policyrep import SELinuxPolicy
from setools.constraintquery import ConstraintQuery
from setools.defaultquery import DefaultQuery

p = SELinuxPolicy(sys.argv[1])
step = 1 if len(sys.argv) > 2 and sys.argv[2] == "full" else 5


def sample(items, kind):
    items = list(items)
    print("== {} order".format(kind), [str(x) for x in items])
    return [x for i, x in enumerate(items) if i % step == 0]


def names(s):
    return sorted(str(x) for x in s)


def run(label, cls, kw):
    try:
        res = [str(x) for x in cls(p, **kw).results()]
    except (setools.exception.SEToolsException, ValueError, KeyError) as e:
        res = type(e).__name__ + ": " + str(e)
    print(label, sorted((k, str(v)) for k, v in kw.items()), res)


for n in ["constraint_count", "mlsconstraint_count", "validatetrans_count",
          "mlsvalidatetrans_count", "default_count"]:
    print(n, getattr(p, n))
for c in sample(p.constraints(), "constraints"):
    print(repr(c), c.ruletype, repr(c.tclass), c == c, hash(c) == hash(str(c)))
    try:
        print("  perms", names(c.perms))
    except setools.exception.ConstraintUseError as e:
        print("  ConstraintUseError", e)
    e = c.expression
    print("  expr", e.mls, names(e.users), names(e.roles), names(e.types))
    print("  postfix", [names(x) if isinstance(x, frozenset) else x for x in e])
    print("  infix", [names(x) if isinstance(x, frozenset) else x for x in e.infix()])
for cls in list(p.classes())[:40]:
    print("class", cls, len(list(cls.constraints())), len(list(cls.validatetrans())),
          [str(d) for d in cls.defaults()])
for d in sample(p.defaults(), "defaults"):
    print(repr(d), d.ruletype, repr(d.tclass), d.default, hash(d) == hash(d), d == d)
    try:
        print("  range", d.default_range)
    except AttributeError as e:
        print("  AttributeError", e)

allc = list(p.constraints())
classes = sorted({str(c.tclass) for c in allc})[:3]
users = sorted({str(u) for c in allc for u in c.expression.users})[:2]
roles = sorted({str(r) for c in allc for r in c.expression.roles})[:2]
types = sorted({str(t) for c in allc for t in c.expression.types})[:3]
CQ = [dict(), dict(ruletype=["constrain"]), dict(ruletype=["mlsconstrain", "mlsvalidatetrans"]),
      dict(ruletype=["validatetrans"]), dict(tclass="^file$", tclass_regex=True),
      dict(perms=["write"]), dict(perms=["read", "write"], perms_equal=True),
      dict(perms="^relabel", perms_regex=True), dict(perms=["nosuch"])]
CQ += [dict(tclass=[c]) for c in classes] + [dict(tclass=[classes[0]], perms=["create"])] if classes else []
CQ += [dict(user=u) for u in users] + [dict(user="^sys", user_regex=True)]
CQ += [dict(role=r) for r in roles] + [dict(role=r, role_indirect=False) for r in roles]
CQ += [dict(role="_r$", role_regex=True)]
CQ += [dict(type_=t) for t in types] + [dict(type_=t, type_indirect=False) for t in types]
CQ += [dict(type_="_t$", type_regex=True), dict(type_="nosuch_t")]
# Attributes as criteria (matched against the names and, indirectly, their expansions),
# and a member type of each.
some_attrs = list(p.typeattributes())[:2]
CQ += [dict(type_=str(a)) for a in some_attrs]
CQ += [dict(type_=str(a), type_indirect=False) for a in some_attrs]
CQ += [dict(type_=str(m)) for a in some_attrs for m in sorted(a, key=str)[:1]]
CQ += [dict(role=r, user=u) for r in roles[:1] for u in users[:1]]
for kw in CQ:
    run("constraintquery", ConstraintQuery, kw)
DQ = [dict(), dict(ruletype=["default_user"]), dict(ruletype=["default_range"]),
      dict(ruletype=["default_role", "default_type"]), dict(default="source"),
      dict(default="target"), dict(default="glblub"), dict(default_range="low"),
      dict(default_range="low_high"), dict(tclass=["file"]), dict(tclass="sock", tclass_regex=True),
      dict(ruletype=["nosuch"])]
for kw in DQ:
    run("defaultquery", DefaultQuery, kw)

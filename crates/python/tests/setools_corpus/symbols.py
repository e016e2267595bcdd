"""Corpus: SELinuxPolicy properties, every symbol iterator in order, each symbol's str(),
repr(), statement() and attributes, lookups and their exceptions. Prints; the test compares
the output of the real setools with arbiter.setools' byte for byte.

Normalised (setools itself is unordered there, named): Role.types() and User.roles are
frozensets, printed sorted; Common/ObjClass.perms are frozensets, printed sorted."""

import sys

import setools
from setools.policyrep import SELinuxPolicy

p = SELinuxPolicy(sys.argv[1])
# "full" details every symbol; otherwise every order is printed in full but the details of
# one symbol in 13 (the real setools needs ~50 s for every detail of the Debian policy).
step = 1 if len(sys.argv) > 2 and sys.argv[2] == "full" else 13


def sample(items, kind):
    items = list(items)
    print("== {} order".format(kind), [str(x) for x in items])
    return [x for i, x in enumerate(items) if i % step == 0]

print("policy", repr(p), p.version, p.mls, p.handle_unknown, repr(p.handle_unknown),
      p.target_platform)
for count in ["type_count", "type_attribute_count", "role_count", "user_count",
              "boolean_count", "class_count", "common_count", "conditional_count",
              "polcap_count", "permissives_count", "role_allow_count",
              "role_transition_count", "allow_count", "auditallow_count", "dontaudit_count",
              "allowxperm_count", "type_transition_count", "type_change_count",
              "type_member_count"]:
    print(count, getattr(p, count))

for t in sample(p.types(), "types"):
    print(repr(t), t.ispermissive, list(t.aliases()), [str(a) for a in t.attributes()])
    print(" ", t.statement(), hash(t) == hash(str(t)), t == str(t))
for a in sample(p.typeattributes(), "typeattributes"):
    print(repr(a), a.statement(), len(a), [str(t) for t in a.expand()][:20])
    for use in ("ispermissive",):
        try:
            getattr(a, use)
        except setools.exception.SymbolUseError as e:
            print("  SymbolUseError", type(e).__name__)
for r in sample(p.roles(), "roles"):
    print(repr(r), sorted(str(t) for t in r.types()), r.statement()[:300])
for u in sample(p.users(), "users"):
    print(repr(u), sorted(str(r) for r in u.roles), u.statement())
    if p.mls:
        print("  ", u.mls_level, u.mls_range)
for b in sample(p.bools(), "bools"):
    print(repr(b), b.state, b.statement())
for c in sample(p.classes(), "classes"):
    try:
        com = str(c.common)
    except setools.exception.NoCommon as e:
        com = "NoCommon"
    print(repr(c), com, sorted(c.perms), c.statement())
for c in sample(p.commons(), "commons"):
    print(repr(c), sorted(c.perms), c.statement())
print("== polcaps")
for c in p.polcaps():
    print(repr(c), c.statement())
print("== conditionals")
for c in p.conditionals():
    print(str(c), sorted(str(b) for b in c.booleans), [str(x) for x in c.expression()],
          c.evaluate(), [(sorted(r.values.items()), r.result) for r in c.truth_table()][:4])

print("== lookups")
for fn, arg in [("lookup_type", "nosuch_t"), ("lookup_typeattr", "nosuch"),
                ("lookup_type_or_attr", "nosuch"), ("lookup_role", "nosuch_r"),
                ("lookup_user", "nosuch_u"), ("lookup_boolean", "nosuch"),
                ("lookup_class", "nosuch"), ("lookup_common", "nosuch")]:
    try:
        getattr(p, fn)(arg)
    except (setools.exception.InvalidSymbol) as e:
        print(fn, type(e).__name__, isinstance(e, ValueError), e)
t = next(p.types())
print(p.lookup_type(str(t)) == t, p.lookup_type_or_attr(str(t)) == t)
# A type's name is not an attribute's, nor an attribute's a type's (one table holds both).
a = next(p.typeattributes(), None)
for fn, arg in [("lookup_typeattr", str(t)), ("lookup_type", str(a))] if a else []:
    try:
        print(fn, arg, getattr(p, fn)(arg))
    except setools.exception.InvalidType as e:
        print(fn, type(e).__name__, e)
for t in p.types():
    for al in t.aliases():
        print("alias", al, p.lookup_type(al))
        try:
            p.lookup_type(al, deref=False)
        except setools.exception.InvalidType as e:
            print("  no deref:", e)
        try:
            print("  as attribute:", p.lookup_typeattr(al))
        except setools.exception.InvalidType as e:
            print("  as attribute:", e)
        break
try:
    SELinuxPolicy("/nonexistent/policy.33")
except OSError as e:
    print("OSError", e)

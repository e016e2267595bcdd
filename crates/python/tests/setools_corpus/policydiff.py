"""PolicyDifference between two policies: ``policydiff.py LEFT RIGHT [--no-te-rules]``
(the flag leaves out the TE rule sections, which setools takes minutes to compute on
Debian's policies). Prints every
section arbiter.setools implements (properties, types, type attributes, roles, users,
Booleans, commons, classes, policy capabilities, role allows and transitions, typebounds,
categories, sensitivities, level declarations, range transitions, the four constraint
kinds, defaults, initial SIDs, and the labeling statements).

Normalised where setools itself is unordered: the added/removed/matched results are sets
and the modified results dicts filled from sets, so each is printed sorted by its text;
the modified role transition and typebounds lists come from a set of matched pairs, so
they are sorted too. The AV rule lists are printed in setools' own order (dicts keyed in
the order rules are first seen); the xperm and type_* added/removed results are sets and
their modified lists come from a set of matched pairs, so those are sorted."""

import sys

import setools


def text(v):
    if isinstance(v, (set, frozenset)):
        return "{" + ", ".join(sorted(text(x) for x in v)) + "}"
    if isinstance(v, tuple):
        return "(" + ", ".join(text(x) for x in v) + ")"
    return str(v)


def record(r):
    return type(r).__name__ + " " + " ".join(
        "{}={}".format(f, text(getattr(r, f))) for f in r._fields)


left, right = (setools.SELinuxPolicy(p) for p in sys.argv[1:3])
d = setools.PolicyDifference(left, right)
print("modified_properties:")
for p in d.modified_properties:
    print("  ", record(p))
for kind in ["types", "type_attributes", "roles", "users", "booleans", "commons", "classes"]:
    for side in ("added", "removed"):
        items = getattr(d, "{}_{}".format(side, kind))
        print("{}_{} ({}): {}".format(side, kind, type(items).__name__, text(items)))
    mod = getattr(d, "modified_" + kind)
    print("modified_{} ({}, {}):".format(kind, type(mod).__name__, len(mod)))
    for k in sorted(mod, key=str):
        print("  ", k, type(k).__name__, record(mod[k]))
for side in ("added", "removed"):
    print("{}_polcaps: {}".format(side, text(getattr(d, side + "_polcaps"))))
for kind in ["role_allows", "role_transitions", "typebounds"]:
    for side in ("added", "removed"):
        items = getattr(d, "{}_{}".format(side, kind))
        print("{}_{} ({}): {}".format(side, kind, type(items).__name__,
                                     sorted(str(r) for r in items)))
    if kind != "role_allows":
        mod = getattr(d, "modified_" + kind)
        print("modified_{} ({}): {}".format(kind, type(mod).__name__,
                                           sorted(record(m) for m in mod)))
for kind in ["categories", "sensitivities", "initialsids"]:
    for side in ("added", "removed"):
        items = getattr(d, "{}_{}".format(side, kind))
        print("{}_{} ({}): {}".format(side, kind, type(items).__name__, text(items)))
    mod = getattr(d, "modified_" + kind)
    print("modified_{} ({}, {}):".format(kind, type(mod).__name__, len(mod)))
    for k in sorted(mod, key=str):
        print("  ", k, type(k).__name__, record(mod[k]))
for kind in ["levels", "range_transitions", "defaults", "fs_uses", "genfscons", "netifcons",
             "nodecons", "portcons", "ibpkeycons", "ibendportcons", "constrains",
             "mlsconstrains", "validatetrans", "mlsvalidatetrans"]:
    for side in ("added", "removed"):
        items = getattr(d, "{}_{}".format(side, kind))
        print("{}_{} ({}): {}".format(side, kind, type(items).__name__,
                                     sorted(str(r) for r in items)))
    if "constrain" not in kind and "validatetrans" not in kind:
        mod = getattr(d, "modified_" + kind)
        print("modified_{} ({}):".format(kind, type(mod).__name__))
        for m in sorted(record(m) for m in mod):
            print("  ", m)
te_kinds = [] if "--no-te-rules" in sys.argv[3:] else [
    "allow", "auditallow", "neverallow", "dontaudit"]
for kind in te_kinds:
    for side in ("added", "removed"):
        items = getattr(d, "{}_{}s".format(side, kind))
        print("{}_{}s ({}, {}):".format(side, kind, type(items).__name__, len(items)))
        for r in items:
            print("  ", r, type(r).__name__, text(r.perms), r.origin is None)
    mod = getattr(d, "modified_{}s".format(kind))
    print("modified_{}s ({}, {}):".format(kind, type(mod).__name__, len(mod)))
    for m in mod:
        print("  ", type(m).__name__, m.rule, text(m.added_perms), text(m.removed_perms),
              text(m.matched_perms))
for kind in te_kinds and ["allowxperm", "auditallowxperm", "neverallowxperm",
                         "dontauditxperm", "type_transition", "type_change", "type_member"]:
    for side in ("added", "removed"):
        items = getattr(d, "{}_{}s".format(side, kind))
        print("{}_{}s ({}): {}".format(side, kind, type(items).__name__,
                                       sorted(str(r) for r in items)))
    mod = getattr(d, "modified_{}s".format(kind))
    print("modified_{}s ({}):".format(kind, type(mod).__name__))
    for m in sorted((type(m).__name__ + " " + record(m) for m in mod)):
        print("  ", m)
# Swapping the policies resets every section.
d.left_policy, d.right_policy = right, left
print("swapped:", text(d.added_types), text(d.removed_roles), len(d.modified_types))

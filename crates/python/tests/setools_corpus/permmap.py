"""Corpus: PermissionMap (setools.permmap): setools' default map in full, written maps with
the format's tolerated quirks, refused maps (exception class and message), lookups and
their errors, settings, exclusions, save, deepcopy, map_policy and rule_weight.

Normalised: the temporary directory in paths and messages is printed as ``<tmp>``;
permissions that map_policy adds are printed sorted (setools adds them in the iteration
order of a frozenset of names); rule weights are printed sorted by rule text.
"""

import copy
import os
import sys
import tempfile

import setools
from setools.permmap import PermissionMap

p = setools.SELinuxPolicy(sys.argv[1])
mode = sys.argv[2] if len(sys.argv) > 2 else "full"
tmp = tempfile.mkdtemp()


def show(text):
    print(str(text).replace(tmp, "<tmp>"))


def err(f, *a):
    try:
        r = f(*a)
        if hasattr(r, "__next__"):
            r = list(r)
        show("ok {}".format(r if not isinstance(r, list) else len(r)))
    except Exception as e:  # noqa: BLE001 - the class and message are the corpus
        show("{}: {}".format(type(e).__name__, e))


def dump(m, sort_perms=False):
    for cls in m.classes():
        perms = list(m.perms(cls))
        if sort_perms:
            perms.sort()
        for x in perms:
            print(cls, x.class_, x.perm, x.direction, x.weight, x.enabled)


def write(name, text):
    path = os.path.join(tmp, name)
    with open(path, "w", newline="") as f:
        f.write(text)
    return path


print("## default map")
d = PermissionMap()
print(str(d) == "/usr/lib/python3/dist-packages/setools/perm_map")
dump(d)
print(len(list(d)), sorted(d)[0].perm, sorted(d)[-1].perm)

print("## quirks")
q = write("quirks", "# comment\n\n 3 extra\nclass file 2\n read r 10 x\n write w 1\n"
          "class dir 1\nsearch   b   +5\r\nclass file 1\r getattr n 02\n")
m = PermissionMap(q)
show(m)
dump(m)
m2 = PermissionMap(write("fewer", "5\nclass a 1\n p u 1\n"))
dump(m2)

print("## refused")
bad = [
    "", "x\n", "0\n", "-1\n", "1\nklass a 1\n", "1\nclass a\n", "1\nclass a b\n",
    "1\nclass a 0\n", "1\nclass a 1\n p r 1\nclass b 1\n", "1\nclass a 1\n p x 1\n",
    "1\nclass a 1\n p r\n", "1\nclass a 1\n p\n", "1\nclass a 1\n p x\n",
    "1\nclass a 1\n p r w\n", "1\nclass a 1\n p r 0\n", "1\nclass a 1\n p r 11\n",
    "1\nclass a 1\n p r 1.5\n", "1 2\nclass a 1 2\n",
]
for i, text in enumerate(bad):
    path = write("bad{}".format(i), text)
    try:
        x = PermissionMap(path)
        show("accepted {}: {}".format(i, list(x.classes())))
    except Exception as e:  # noqa: BLE001
        show("{} {}: {}".format(i, type(e).__name__, e))
err(PermissionMap, os.path.join(tmp, "missing"))

print("## lookups and settings")
m = PermissionMap(q)
err(m.mapping, "nope", "read")
err(m.mapping, "file", "nope")
err(m.perms, "nope")
err(m.set_weight, "file", "getattr", 0)
err(m.set_weight, "file", "getattr", 11)
err(m.set_weight, "file", "getattr", 7)
err(m.set_direction, "file", "getattr", "x")
err(m.set_direction, "file", "getattr", "w")
err(m.set_direction, "nope", "getattr", "w")
err(m.exclude_class, "nope")
err(m.exclude_permission, "file", "nope")
err(m.include_permission, "nope", "x")
x = m.mapping("file", "getattr")
print(x.direction, x.weight, x.enabled)
m.exclude_class("dir")
m.exclude_permission("file", "getattr")
dump(m)
m.include_class("dir")
m.include_permission("file", "getattr")
dump(m)
c = copy.deepcopy(m)
c.set_weight("dir", "search", 1)
c.exclude_class("file")
print(str(c) == str(m))
dump(m)
dump(c)
m.save(os.path.join(tmp, "saved"))
with open(os.path.join(tmp, "saved")) as f:
    print(f.read(), end="")
d.save(os.path.join(tmp, "saved-default"))
dump(PermissionMap(os.path.join(tmp, "saved-default")))

print("## map_policy")
m = PermissionMap(q)
m.map_policy(p)
dump(m, sort_perms=True)
d.map_policy(p)
print(len(list(d)))
d.set_direction("file", "read", "b")
d.exclude_permission("file", "write")
rules = list(setools.TERuleQuery(p, ruletype=["allow"]).results())
if mode == "sample":
    rules = rules[::50]
out = sorted("{} {}".format(r, d.rule_weight(r)) for r in rules)
print(len(out))
for line in out:
    print(line)
for r in setools.TERuleQuery(p, ruletype=["dontaudit", "type_transition"]).results():
    err(d.rule_weight, r)
    break
for r in setools.TERuleQuery(p, ruletype=["allow"]).results():
    err(PermissionMap(q).rule_weight, r)
    break

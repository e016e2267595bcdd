"""A program that uses setools the way policycoreutils' sepolicy does: each class imported
from its own submodule, queries built empty and then given criteria as attributes, result
objects read field by field and probed with ``except AttributeError``. Its output is
compared between the real setools and ``python3 -m arbiter.setools``."""

import sys

from setools.boolquery import BoolQuery
from setools.objclassquery import ObjClassQuery
from setools.policyrep import SELinuxPolicy
from setools.rolequery import RoleQuery
from setools.terulequery import TERuleQuery
from setools.typeattrquery import TypeAttributeQuery
from setools.typequery import TypeQuery
from setools.userquery import UserQuery

try:
    policy = SELinuxPolicy(sys.argv[1])
except Exception as e:
    raise ValueError(str(e))


def type_info(name=None):
    q = TypeQuery(policy)
    if name:
        q.name = name
    found = list(q.results())
    if name and not found:
        q.name = None
        q.alias = name
        found = list(q.results())
    return [{"name": str(t), "aliases": [str(a) for a in t.aliases()],
             "attributes": [str(a) for a in t.attributes()], "permissive": bool(t.ispermissive)}
            for t in found]


def role_info():
    q = RoleQuery(policy)
    out = []
    for r in q.results():
        out.append({"name": str(r), "roles": [str(x) for x in r.expand()],
                    "types": sorted(str(t) for t in r.types())})
    return out


def attribute_info():
    return [{"name": str(a), "types": [str(t) for t in a.expand()]}
            for a in TypeAttributeQuery(policy).results()]


def user_info():
    out = []
    for u in UserQuery(policy).results():
        d = {"name": str(u), "roles": sorted(str(r) for r in u.roles)}
        if policy.mls:
            d["level"] = str(u.mls_level)
            d["range"] = str(u.mls_range)
        out.append(d)
    return out


def bool_info():
    return [{"name": str(b), "state": b.state} for b in BoolQuery(policy).results()]


def class_info():
    return [{"name": str(c), "perms": sorted(c.perms)} for c in ObjClassQuery(policy).results()]


def rule_to_dict(rule):
    d = {"type": str(rule.ruletype), "source": str(rule.source), "target": str(rule.target),
         "class": str(rule.tclass)}
    try:
        d["permlist"] = sorted(str(p) for p in rule.perms)
    except AttributeError:
        pass
    try:
        d["transtype"] = str(rule.default)
    except AttributeError:
        pass
    try:
        d["boolean"] = [(str(rule.conditional), rule.conditional_block)]
    except AttributeError:
        pass
    try:
        d["filename"] = rule.filename
    except AttributeError:
        pass
    try:
        d["enabled"] = rule.enabled()
    except AttributeError:
        pass
    return d


def search(types, source=None, target=None, tclass=None, perms=None):
    q = TERuleQuery(policy, ruletype=types, source=source, target=target, tclass=tclass)
    if perms:
        q.perms = perms
    return [rule_to_dict(r) for r in q.results()]


def entrypoints(domain):
    q = TERuleQuery(policy, ruletype=["allow"], source=domain, tclass=["file"],
                    perms=["entrypoint"])
    return sorted(str(r.target) for r in q.results() if r.source == domain)


def print_section(title, items):
    print("==", title, len(items))
    for i in items:
        print(sorted(i.items()))


print_section("types", type_info())
print_section("roles", role_info())
print_section("attributes", attribute_info())
print_section("users", user_info())
print_section("booleans", bool_info())
print_section("classes", class_info())
domains = [t["name"] for t in type_info() if "domain" in t["attributes"]][:3]
for d in domains:
    print_section("allow from " + d, search(["allow"], source=d, tclass=["file", "dir"]))
    print_section("transitions from " + d, search(["type_transition"], source=d))
    print("entrypoints", d, entrypoints(d))

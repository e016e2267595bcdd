"""Corpus: one query object's ``results()`` called again, after its criteria change and
without a change, as a script that builds a query once and reruns it does (arbiter keeps a
query's results until an assignment: ``query.MemoResults``). Run before the scripts that
import ``logging`` (``test_setools.SCRIPTS``), so that arbiter answers from its kept results
rather than its logging generator. Covers UserQuery, CommonQuery, MLSRuleQuery,
PolCapQuery, NetifconQuery, NodeconQuery and SensitivityQuery: each criterion and flag
assigned after a first ``results()`` (and a property criterion through its setter), a result iterator consumed while
another is open, an unchanged rerun, and a subclass whose ``__setattr__`` writes through
``object.__setattr__``.

Normalised: nothing (every printed value is a result in ``results()`` order)."""

import sys

import setools

p = setools.SELinuxPolicy(sys.argv[1])
users = [str(u) for u in p.users()]
roles = [str(r) for r in p.roles() if str(r) != "object_r"]
commons = list(p.commons())
perms = sorted({perm for c in commons for perm in c.perms})
classes = [str(c) for c in p.classes()]
sens = [str(s) for s in p.sensitivities()]


def show(label, query):
    res = [str(r) for r in query.results()]
    print(label, len(res), res[:12])


def twice(label, query):
    """Two ``results()`` of one query, the second opened before the first is consumed."""
    first = query.results()
    head = next(first, None)
    second = [str(r) for r in query.results()]
    rest = [str(r) for r in first]
    print(label, "first:", [] if head is None else [str(head)] + rest, "second:", second)


print("== UserQuery")
q = setools.UserQuery(p)
twice("every user", q)
for role in roles[:4]:
    q.roles = [role]
    show("roles " + role, q)
    q.roles_equal = True
    show("roles equal " + role, q)
    q.roles_equal = False
    show("roles again " + role, q)
q.roles = roles[:3]
show("three roles", q)
q.roles_regex = True
q.roles = "^s"
show("roles regex ^s", q)
q.roles = None
q.name = users[0] if users else None
show("name", q)
q.name = None
if p.mls and sens:
    for flags in ({"range_subset": True}, {"range_overlap": True}, {"range_superset": True},
                  {"range_superset": True, "range_proper": True}, {}):
        for s in sens[:2]:
            r = setools.UserQuery(p, range_=s, **flags)
            twice("range {} {}".format(s, sorted(flags)), r)
            twice("again range {} {}".format(s, sorted(flags)),
                  setools.UserQuery(p, range_=s, **flags))
    q.range_ = sens[0]
    q.range_subset = True
    show("range set after", q)
    q.range_subset = False
    show("range flag cleared", q)
    q.level = sens[0]
    show("range and level", q)
    q.range_ = None
    q.level_dom = True
    show("level dom", q)

print("== CommonQuery")
q = setools.CommonQuery(p)
twice("every common", q)
for perm in perms[:6]:
    q.perms = {perm}
    twice("perms " + perm, q)
    q.perms_subset = True
    show("perms subset " + perm, q)
    q.perms_subset = False
    q.perms_equal = True
    show("perms equal " + perm, q)
    q.perms_equal = False
q.perms = set(perms[:2])
show("two perms", q)
q.perms = None
if commons:
    q.name = str(commons[0])
    show("name", q)

print("== MLSRuleQuery")
q = setools.MLSRuleQuery(p)
twice("every rule", q)
for cls in classes[:4] + ["process"] * ("process" in classes):
    q.tclass = [cls]
    twice("tclass " + cls, q)
    twice("new query tclass " + cls, setools.MLSRuleQuery(p, tclass=[cls]))
q.tclass = classes[:3]
show("three classes", q)
q.ruletype = ["range_transition"]
show("ruletype", q)
if p.mls and sens:
    q.default = sens[0]
    q.default_overlap = True
    show("default overlap", q)


class Direct(setools.CommonQuery):
    """A subclass whose ``__setattr__`` writes around ``PolicyQuery.__setattr__``."""

    def __setattr__(self, name, value):
        if name in ("perms_equal", "perms_subset"):
            object.__setattr__(self, name, value)
        else:
            super().__setattr__(name, value)


if perms:
    d = Direct(p, perms={perms[0]})
    show("own __setattr__", d)
    d.perms_equal = True
    show("own __setattr__ flag written around", d)


print("== PolCapQuery")
q = setools.PolCapQuery(p)
twice("every capability", q)
caps = [str(c) for c in p.polcaps()]
for cap in caps[:3]:
    q.name = cap
    twice("name " + cap, q)
q.name_regex = True
q.name = "^network|open"
show("name regex", q)
q.name = None
show("name cleared", q)

print("== NetifconQuery")
q = setools.NetifconQuery(p)
twice("every netifcon", q)
netifs = [n.netif for n in p.netifcons()]
for n in netifs[:2]:
    q.name = n
    twice("name " + n, q)
q.name = None
if users:
    q.user = users[0]
    show("user", q)
    q.user = None
show("cleared", q)

print("== NodeconQuery")
q = setools.NodeconQuery(p)
twice("every nodecon", q)
for version in ("ipv4", "ipv6", None):
    q.ip_version = version
    twice("ip_version {}".format(version), q)
    twice("new query ip_version {}".format(version), setools.NodeconQuery(p, ip_version=version))
q.network = "127.0.0.1/32"
show("network", q)
q.network_overlap = True
q.network = "0.0.0.0/0"
show("network overlap", q)
q.network = None
show("network cleared", q)

print("== SensitivityQuery")
q = setools.SensitivityQuery(p)
twice("every sensitivity", q)
for s in sens[:3]:
    for flags in ({"sens_dom": True}, {"sens_domby": True}, {}):
        twice("new query {} {}".format(s, sorted(flags)),
              setools.SensitivityQuery(p, sens=s, **flags))
        twice("again {} {}".format(s, sorted(flags)),
              setools.SensitivityQuery(p, sens=s, **flags))
    q.sens = s
    q.sens_dom = True
    show("sens dom " + s, q)
    q.sens_dom = False
    q.sens_domby = True
    show("sens domby " + s, q)
    q.sens_domby = False
    show("sens equal " + s, q)
    q.name = s
    show("sens and name " + s, q)
    q.name = None

"""Corpus: one query object's ``results()`` called again, after its criteria change and
without a change, as a script that builds a query once and reruns it does (arbiter keeps a
query's results until an assignment: ``query.MemoResults``). Run before the scripts that
import ``logging`` (``test_setools.SCRIPTS``), so that arbiter answers from its kept results
rather than its logging generator. Covers UserQuery, CommonQuery, MLSRuleQuery,
PolCapQuery, NetifconQuery, NodeconQuery and SensitivityQuery: each criterion and flag
assigned after a first ``results()`` (and a property criterion through its setter), a result iterator consumed while
another is open, an unchanged rerun, and a subclass whose ``__setattr__`` writes through
``object.__setattr__``. Then new queries constructed again and again with the same
keywords (arbiter copies in the criteria and answer of an earlier construction, see
``query._keep_construction``): changed after construction, keywords equal in value but
of another type (a flag given 1, roles as a list, tuple or set), a list changed by the
caller between constructions, keywords in another order, invalid criteria and bad calls
raising each time, and a script's subclasses with and without an ``__init__``.

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

print("== Constructions with the same keywords")
# arbiter keeps, per policy, the criteria (and the answer) of a construction seen twice
# and copies them into the next with equal keywords (``query._keep_construction``).
QUERIES = [setools.PolCapQuery, setools.NetifconQuery, setools.NodeconQuery,
           setools.SensitivityQuery, setools.UserQuery, setools.CommonQuery,
           setools.MLSRuleQuery, setools.TypeQuery, setools.BoolQuery, setools.DefaultQuery,
           setools.CategoryQuery, setools.PortconQuery, setools.GenfsconQuery]
for cls in QUERIES:
    for n in range(3):
        show("{} () #{}".format(cls.__name__, n), cls(p))
for n in range(4):
    q = setools.PolCapQuery(p, name="^network", name_regex=True)
    show("PolCapQuery regex #{}".format(n), q)
    print("  criteria:", q.name.pattern, q.name_regex)
# A query changed after construction, then new ones with its first keywords.
for n in range(3):
    q = setools.NodeconQuery(p, ip_version="ipv4")
    show("NodeconQuery ipv4 #{}".format(n), q)
    q.ip_version = "ipv6"
    show("  changed to ipv6", q)
    print("  ip_version:", repr(q.ip_version))
if sens:
    for n in range(3):
        q = setools.SensitivityQuery(p, sens=sens[0], sens_domby=True)
        print("SensitivityQuery #{} before results:".format(n), q.sens, q.sens_domby, q.sens_dom)
        q.sens_domby = False
        show("  domby cleared", q)
        show("  again new", setools.SensitivityQuery(p, sens=sens[0], sens_domby=True))
# Equal keywords of other types: a flag given 1 or True, a list or a tuple or a set.
for flag in (True, 1, True, 1, "yes", "yes"):
    q = setools.PolCapQuery(p, name="open", name_regex=flag)
    show("PolCapQuery name_regex={!r}".format(flag), q)
    print("  flag kept as given:", repr(q.name_regex))
if roles:
    for value in ([roles[0]], (roles[0],), {roles[0]}, frozenset([roles[0]]), [roles[0]],
                  (roles[0],)):
        q = setools.UserQuery(p, roles=value)
        show("UserQuery roles {}".format(type(value).__name__), q)
        print("  criterion:", type(q.roles).__name__, sorted(str(r) for r in q.roles))
# A list the caller changes after constructing with it.
if len(roles) > 1:
    mine = [roles[0]]
    for n in range(3):
        show("UserQuery roles list #{}".format(n), setools.UserQuery(p, roles=mine))
    mine.append(roles[1])
    for n in range(3):
        q = setools.UserQuery(p, roles=mine)
        show("UserQuery roles list changed #{}".format(n), q)
        print("  criterion:", sorted(str(r) for r in q.roles))
# The same keywords in another order; an invalid criterion raised every time.
for n in range(2):
    show("PortconQuery ports then overlap #{}".format(n),
         setools.PortconQuery(p, ports=(1, 1024), ports_overlap=True))
    show("PortconQuery overlap then ports #{}".format(n),
         setools.PortconQuery(p, ports_overlap=True, ports=(1, 1024)))
for n in range(3):
    try:
        setools.UserQuery(p, roles=["nosuch_r"])
    except Exception as e:
        print("invalid #{}:".format(n), type(e).__name__, e)
    try:
        setools.PolCapQuery(p, 1)
    except TypeError as e:
        print("extra positional #{}:".format(n), e)
    try:
        setools.BoolQuery(p, policy=p)
    except TypeError as e:
        print("policy twice #{}:".format(n), e)
    q = setools.BoolQuery(policy=p, name="nosuch")
    show("policy as a keyword #{}".format(n), q)


# A script's subclass (without and with its own __init__) constructed repeatedly.
class Sub(setools.NetifconQuery):
    extra = False


class SubInit(setools.SensitivityQuery):
    def __init__(self, policy, **kwargs):
        super().__init__(policy, **kwargs)
        self.made = True


for n in range(3):
    q = Sub(p, extra=True)
    show("subclass #{}".format(n), q)
    print("  extra:", q.extra, type(q).__name__)
    if sens:
        q = SubInit(p, sens=sens[0])
        show("subclass with __init__ #{}".format(n), q)
        print("  made:", q.made)
        q.sens_dom = True
        show("  sens_dom set", q)

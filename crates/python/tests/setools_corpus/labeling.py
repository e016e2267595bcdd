"""Corpus: initial SIDs, contexts and every SELinux *con statement (fs_use, genfscon,
portcon, netifcon, nodecon, ibpkeycon, ibendportcon) with their attributes, str(),
hashing and equality, the counts, and each labeling query with its keywords (context
matching, port and pkey ranges with subset/overlap/superset/proper, networks), in
results() order, with the exceptions bad criteria raise."""

import stat
import sys

import setools
from setools.policyrep import SELinuxPolicy
from setools.fsusequery import FSUseQuery
from setools.genfsconquery import GenfsconQuery
from setools.ibendportconquery import IbendportconQuery
from setools.ibpkeyconquery import IbpkeyconQuery
from setools.initsidquery import InitialSIDQuery
from setools.netifconquery import NetifconQuery
from setools.nodeconquery import NodeconQuery
from setools.portconquery import PortconQuery

p = SELinuxPolicy(sys.argv[1])
step = 1 if len(sys.argv) > 2 and sys.argv[2] == "full" else 7


def sample(items, kind):
    items = list(items)
    print("== {} order".format(kind), [str(x) for x in items])
    return [x for i, x in enumerate(items) if i % step == 0]


def ctx(c):
    rng = str(c.range_) if p.mls else "-"
    return "{} [{} {} {} {}] {}".format(repr(c), repr(c.user), repr(c.role), repr(c.type_), rng,
                                       hash(c) == hash(str(c)))


def run(label, cls, kw):
    try:
        res = [str(x) for x in cls(p, **kw).results()]
    except (setools.exception.SEToolsException, ValueError, TypeError, KeyError) as e:
        res = type(e).__name__ + ": " + str(e)
    print(label, sorted((k, str(v)) for k, v in kw.items()), res)


for name in ["initialsids_count", "fs_use_count", "genfscon_count", "portcon_count",
             "netifcon_count", "nodecon_count", "ibpkeycon_count", "ibendportcon_count"]:
    print(name, getattr(p, name))

for name in ["initialsids", "fs_uses", "genfscons", "portcons", "netifcons", "nodecons",
             "ibpkeycons", "ibendportcons"]:
    try:
        print("len", name, len(getattr(p, name)()))
    except TypeError as e:
        print("len", name, "TypeError", e)
sids = sample(p.initialsids(), "initialsids")
for s in sids:
    print(repr(s), s.statement(), s == str(s), hash(s) == hash(str(s)))
    print("  ", ctx(s.context))
    if not p.mls:
        try:
            s.context.range_
        except setools.exception.MLSDisabled as e:
            print("  MLSDisabled", repr(str(e)))
for name in ["kernel", "unlabeled", "nosuch"]:
    try:
        print("lookup_initialsid", name, repr(p.lookup_initialsid(name)))
    except setools.exception.InvalidInitialSid as e:
        print("lookup_initialsid", type(e).__name__, e)
for f in sample(p.fs_uses(), "fs_uses"):
    print(repr(f), f.ruletype, f.fs, ctx(f.context), hash(f) == hash(f))
fsu = list(p.fs_uses())
if len(fsu) > 1:
    print("fs_use eq", fsu[0] == fsu[1], fsu[0] == fsu[0], fsu[0] < fsu[1])
for g in sample(p.genfscons(), "genfscons"):
    print(repr(g), g.fs, g.path, int(g.filetype), repr(str(g.filetype)), repr(g.tclass),
          ctx(g.context))
for c in sample(p.portcons(), "portcons"):
    print(repr(c), c.protocol, c.ports, c.ports.low, c.ports.high, ctx(c.context))
for n in sample(p.netifcons(), "netifcons"):
    print(repr(n), n.netif, ctx(n.context), ctx(n.packet))
for n in sample(p.nodecons(), "nodecons"):
    print(repr(n), n.ip_version, repr(n.network), ctx(n.context))
for k in sample(p.ibpkeycons(), "ibpkeycons"):
    print(repr(k), repr(k.subnet_prefix), k.pkeys, ctx(k.context))
for e in sample(p.ibendportcons(), "ibendportcons"):
    print(repr(e), e.name, e.port, ctx(e.context))

users = sorted({str(s.context.user) for s in p.initialsids()})[:2]
roles = sorted({str(s.context.role) for s in p.initialsids()})[:2]
types = sorted({str(s.context.type_) for s in p.initialsids()})[:3]
CTX = [dict(user=u) for u in users] + [dict(role=r) for r in roles]
CTX += [dict(type_=t) for t in types] + [dict(user="^sys", user_regex=True),
                                         dict(type_="port", type_regex=True),
                                         dict(role="_r$", role_regex=True)]
if p.mls:
    for rg in ["s0", "s0 - s15:c0.c1023", "s15:c0.c1023", "s0 - s0:c0.c1023"]:
        for flags in [{}, dict(range_subset=True), dict(range_overlap=True),
                      dict(range_superset=True), dict(range_subset=True, range_proper=True),
                      dict(range_superset=True, range_proper=True)]:
            CTX.append(dict(range_=rg, **flags))
CTX += [dict(user="nosuch_u"), dict(type_="nosuch_t"), dict(role="nosuch_r")]

for kw in [dict(), dict(name="kernel"), dict(name="^s", name_regex=True)] + CTX:
    run("initsidquery", InitialSIDQuery, kw)
for kw in [dict(), dict(ruletype=["fs_use_xattr"]), dict(ruletype=["fs_use_task", "fs_use_trans"]),
           dict(fs="ext4"), dict(fs="^e", fs_regex=True), dict(ruletype=["nosuch"])] + CTX[:6]:
    run("fsusequery", FSUseQuery, kw)
for kw in [dict(), dict(fs="proc"), dict(fs="^s", fs_regex=True), dict(path="/"),
           dict(path="^/sys", path_regex=True), dict(filetype=stat.S_IFDIR),
           dict(filetype=stat.S_IFREG), dict(fs="proc", path="/kmsg")] + CTX[:6]:
    run("genfsconquery", GenfsconQuery, kw)
PQ = [dict(), dict(protocol="tcp"), dict(protocol="udp"), dict(protocol="sctp"),
      dict(protocol="nosuch"), dict(ports=(80, 80)), dict(ports=(1, 1024)),
      dict(ports=(1, 1024), ports_subset=True), dict(ports=(1, 1024), ports_overlap=True),
      dict(ports=(1, 1024), ports_superset=True),
      dict(ports=(1, 1024), ports_superset=True, ports_proper=True),
      dict(ports=(600, 1023), ports_subset=True), dict(ports=(600, 1023), ports_subset=True,
                                                       ports_proper=True),
      dict(ports=(6000, 6020), ports_overlap=True), dict(ports=(6000, 6020), ports_superset=True),
      dict(ports=(0, 5)), dict(ports=(10, 5)), dict(ports=(0, 0)), dict(ports=(8080, 8080),
                                                                      protocol="tcp")]
for kw in PQ + CTX[:6]:
    run("portconquery", PortconQuery, kw)
for kw in [dict(), dict(name="lo"), dict(name="^e", name_regex=True)] + CTX[:6]:
    run("netifconquery", NetifconQuery, kw)
NQ = [dict(), dict(ip_version="ipv4"), dict(ip_version="ipv6"), dict(network="127.0.0.1/32"),
      dict(network="127.0.0.0/8", network_overlap=True), dict(network="::1/128"),
      dict(network="10.0.0.0/8"), dict(network="10.0.0.0/8", network_overlap=True),
      dict(network="ff00::/8", network_overlap=True), dict(network="1.2.3.4/8")]
for kw in NQ + CTX[:6]:
    run("nodeconquery", NodeconQuery, kw)
for kw in [dict(), dict(subnet_prefix="fe80::"), dict(pkeys=(1, 0xffff)),
           dict(pkeys=(1, 0xffff), pkeys_subset=True), dict(pkeys=(0, 3)),
           dict(pkeys=(5, 3)), dict(pkeys=(1, 0x10000))] + CTX[:4]:
    run("ibpkeyconquery", IbpkeyconQuery, kw)
for kw in [dict(), dict(name="mlx4_0"), dict(name="^m", name_regex=True), dict(port=1),
           dict(port=300)] + CTX[:4]:
    run("ibendportconquery", IbendportconQuery, kw)

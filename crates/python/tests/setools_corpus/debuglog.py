"""Corpus: what every ``*Query.results()`` logs when a program turns setools' logging on at
DEBUG (``sesearch --debug``): the INFO line, then one DEBUG line per criterion group, each
showing the criteria as the query holds them (``repr`` of symbols, sets, patterns, enums,
networks, ranges) and its flags. Every query class with no criteria, then with criteria
of each kind (one symbol, several, a regex, flags set, criteria assigned after
construction); nothing is logged at INFO or above but the INFO line. (On a policy that
is not Xen's, setools 4.4.1 reads its SELinux statements as Xen's in the Xen queries,
where arbiter finds none: their results are not shown.)

Normalised: nothing (one ``PYTHONHASHSEED`` on both sides, as for every corpus script, so
a set of several criteria prints in the same order when both build it the same way)."""

import logging
import sys

import setools

p = setools.SELinuxPolicy(sys.argv[1])


def first(it):
    return next(iter(it), None)


def names(it, n):
    return [str(x) for x, _ in zip(it, range(n))]


types = names(p.types(), 3)
attrs = names(p.typeattributes(), 2)
roles = names(p.roles(), 2)
users = names(p.users(), 2)
classes = names(p.classes(), 2)
some_class = first(p.classes())
some_perm = sorted(some_class.perms)[0] if some_class is not None and some_class.perms else None
commons = names(p.commons(), 1)
bools = names(p.bools(), 1)
sens = names(p.sensitivities(), 1)
cats = names(p.categories(), 1)

Q = setools
CASES = [
    ("PolCapQuery", lambda: Q.PolCapQuery(p, name="network", name_regex=True)),
    ("BoolQuery", lambda: Q.BoolQuery(p, name=bools[0] if bools else None, default=True)),
    ("CategoryQuery", lambda: Q.CategoryQuery(p, name="^c1", name_regex=True, alias="x")),
    ("CommonQuery", lambda: Q.CommonQuery(p, name=commons[0] if commons else None)),
    ("CommonQuery perms", lambda: Q.CommonQuery(p, perms={"ioctl"}, perms_equal=True)),
    ("ConstraintQuery", lambda: Q.ConstraintQuery(
        p, ruletype=["constrain"], tclass=classes[:1], user=users[0], role="r$",
        role_regex=True, type_=types[0])),
    ("DefaultQuery", lambda: Q.DefaultQuery(p, ruletype=["default_user"], tclass=classes[:1],
                                            default="source")),
    ("FSUseQuery", lambda: Q.FSUseQuery(p, ruletype=["fs_use_xattr"], fs="ext", fs_regex=True,
                                        user=users[0], type_=types[0])),
    ("GenfsconQuery", lambda: Q.GenfsconQuery(p, fs="proc", path="/", filetype=0o040000,
                                              role=roles[0])),
    ("InitialSIDQuery", lambda: Q.InitialSIDQuery(p, name="kernel", type_=types[0])),
    ("MLSRuleQuery", lambda: Q.MLSRuleQuery(p, ruletype=["range_transition"], source=types[0],
                                            target=attrs[0] if attrs else None,
                                            tclass=classes[:2])),
    ("NetifconQuery", lambda: Q.NetifconQuery(p, name="eth", name_regex=True,
                                              user=users[0], user_regex=False)),
    ("NodeconQuery", lambda: Q.NodeconQuery(p, ip_version="ipv4", network="127.0.0.1/32",
                                            network_overlap=True)),
    ("NodeconQuery v6", lambda: Q.NodeconQuery(p, network="::1/128")),
    ("ObjClassQuery", lambda: Q.ObjClassQuery(p, name=classes[0], common=commons[0] if commons
                                              else None, perms_indirect=True)),
    ("ObjClassQuery perms", lambda: Q.ObjClassQuery(p, perms={some_perm} if some_perm else None,
                                                    perms_equal=True)),
    ("PortconQuery", lambda: Q.PortconQuery(p, ports=(80, 80), protocol="tcp",
                                            ports_overlap=True, type_="port_t$",
                                            type_regex=True)),
    ("RBACRuleQuery", lambda: Q.RBACRuleQuery(p, ruletype=["allow"], source=roles[0],
                                              target=roles[-1], source_indirect=False)),
    ("RoleQuery", lambda: Q.RoleQuery(p, name=roles[0], types=types[:2], types_equal=True)),
    ("TERuleQuery", lambda: Q.TERuleQuery(p, ruletype=["allow"], source=types[0],
                                          target=types[1], tclass=classes[:1],
                                          perms={some_perm} if some_perm else None)),
    ("TERuleQuery regex", lambda: Q.TERuleQuery(p, ruletype=["type_transition"],
                                                source="_t$", source_regex=True,
                                                default=types[0], boolean="^a",
                                                boolean_regex=True)),
    ("TERuleQuery xperms", lambda: Q.TERuleQuery(p, ruletype=["allowxperm"],
                                                 xperms=[(0x8900, 0x8905)], xperms_equal=True)),
    ("TypeAttributeQuery", lambda: Q.TypeAttributeQuery(p, name="domain", types=types[:1])),
    ("TypeQuery", lambda: Q.TypeQuery(p, name="_exec_t$", name_regex=True, attrs=attrs[:1],
                                      permissive=True)),
    ("TypeQuery alias", lambda: Q.TypeQuery(p, alias="x", alias_regex=True)),
    ("UserQuery", lambda: Q.UserQuery(p, name=users[0], roles=roles[:2], roles_equal=True)),
    ("BoundsQuery", lambda: Q.BoundsQuery(p, ruletype=["typebounds"], parent=types[0],
                                          child="t$", child_regex=True)),
    ("IbendportconQuery", lambda: Q.IbendportconQuery(p, name="mlx", port=1)),
    ("IbpkeyconQuery", lambda: Q.IbpkeyconQuery(p, subnet_prefix="fe80::",
                                                pkeys=(1, 2), pkeys_overlap=True)),
]
if p.mls and sens:
    CASES += [
        ("SensitivityQuery", lambda: Q.SensitivityQuery(p, sens=sens[0], sens_dom=True)),
        ("SensitivityQuery name", lambda: Q.SensitivityQuery(p, name=sens[0], alias="x",
                                                             alias_regex=True)),
        ("UserQuery MLS", lambda: Q.UserQuery(p, range_=sens[0], range_subset=True,
                                              level=sens[0], level_dom=True)),
        ("MLSRuleQuery default", lambda: Q.MLSRuleQuery(p, default=sens[0],
                                                        default_overlap=True)),
        ("PortconQuery range", lambda: Q.PortconQuery(p, range_=sens[0], range_superset=True)),
    ]

handler = logging.StreamHandler(sys.stdout)
handler.setFormatter(logging.Formatter("log: %(name)s %(levelname)s %(message)s"))
root = logging.getLogger("setools")
root.addHandler(handler)
root.setLevel(logging.DEBUG)


def run(label, make):
    sys.stdout.flush()
    try:
        q = make()
        n = sum(1 for _ in q.results())
    except (setools.exception.SEToolsException, ValueError, KeyError, TypeError) as e:
        handler.flush()
        print(label, "error", type(e).__name__, e, flush=True)
        return
    handler.flush()
    print(label, "logged,", n, "results", flush=True)


# Every query class with no criteria: the lines are logged when results() starts, so
# one result is taken (the other corpus scripts compare the results themselves; setools
# needs seconds to list every TE rule of the Debian policies).
for name in sorted(n for n in dir(setools) if n.endswith("Query") and n != "PolicyQuery"):
    sys.stdout.flush()
    first_result = next(iter(getattr(setools, name)(p).results()), None)
    handler.flush()
    print(name + "()", "logged", flush=True)

# Criteria of each kind.
for label, make in CASES:
    run(label, make)


# Criteria assigned after construction, then cleared.
q = setools.TERuleQuery(p)
q.ruletype = ["type_change", "type_member"]
q.source = types[0]
q.tclass = classes[:2]
run("TERuleQuery assigned", lambda: q)
q.source = None
q.tclass = None
run("TERuleQuery cleared", lambda: q)


# A subclass logs as its setools base does.
class Derived(setools.PolCapQuery):
    pass


run("Derived PolCapQuery", lambda: Derived(p, name="x"))

root.setLevel(logging.INFO)
run("PolCapQuery at INFO", lambda: setools.PolCapQuery(p))
root.removeHandler(handler)

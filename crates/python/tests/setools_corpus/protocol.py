"""Corpus: the query protocol every ``*Query`` shares, as scripts observe it: keywords set
in reverse-sorted order at construction, criteria assigned (and re-assigned, and cleared)
after construction, keywords the class does not define (kept as plain attributes),
keywords that conflict with a method, invalid criteria raising setools' exceptions when
they are assigned, empty results, the construction call's own errors (missing or extra
positional arguments), criteria given as None, ``isinstance`` against ``setools.query.PolicyQuery``,
subclasses (a property, a criterion overridden by a plain attribute, a method named like a
keyword, an own ``__setattr__``, ``results()`` extended), and what each query logs at INFO
when a program turns setools' logging on (as ``sesearch -v`` does).

Normalised: nothing (every printed value is a result in ``results()`` order, a criterion's
``str()``, or an exception's class and text)."""

import logging
import sys

import setools
from setools.query import PolicyQuery

p = setools.SELinuxPolicy(sys.argv[1])
some_user = next(p.users())
some_sens = next(p.sensitivities(), None)
some_class = next(p.classes())
some_common = next(p.commons(), None)

QUERIES = [setools.PolCapQuery, setools.NetifconQuery, setools.NodeconQuery,
           setools.SensitivityQuery, setools.CategoryQuery, setools.UserQuery,
           setools.CommonQuery, setools.MLSRuleQuery, setools.TypeQuery, setools.RoleQuery,
           setools.BoolQuery, setools.ObjClassQuery, setools.TypeAttributeQuery,
           setools.PortconQuery, setools.FSUseQuery, setools.GenfsconQuery,
           setools.InitialSIDQuery, setools.DefaultQuery, setools.ConstraintQuery]


def show(label, query):
    try:
        res = [str(r) for r in query.results()]
    except (setools.exception.SEToolsException, ValueError, KeyError, AttributeError,
            TypeError) as e:
        print(label, "results error", type(e).__name__, e)
        return
    print(label, len(res), res[:12])


def attempt(label, make):
    try:
        return make()
    except (setools.exception.SEToolsException, ValueError, KeyError, AttributeError,
            TypeError) as e:
        print(label, "error", type(e).__name__, e)
        return None


# Every query: an instance of PolicyQuery; no criteria; an unknown keyword kept as a plain
# attribute; a keyword naming a method refused.
for cls in QUERIES:
    q = cls(p)
    print(cls.__name__, "isinstance", isinstance(q, PolicyQuery), "policy is p", q.policy is p)
    show(cls.__name__ + "()", q)
    q = cls(p, not_a_criterion=42)
    print(cls.__name__, "unknown keyword kept:", q.not_a_criterion, "log:", q.log.name)
    attempt(cls.__name__ + "(results=1)", lambda: cls(p, results=1))

# Criteria assigned after construction, re-assigned, then cleared (None and empty values
# restore the default: every object again).
q = setools.PolCapQuery(p)
q.name = "open"
q.name_regex = True
show("PolCapQuery name set before its regex flag", q)
q.name = "open"
show("PolCapQuery name set again after the flag", q)
q.name = None
show("PolCapQuery name cleared", q)

q = setools.SensitivityQuery(p)
if some_sens is not None:
    q.sens = str(some_sens)
    q.sens_dom = True
    show("SensitivityQuery sens then sens_dom", q)
    print("sens criterion:", q.sens, type(q.sens).__name__)
    q.sens_dom = False
    q.sens_domby = True
    show("SensitivityQuery sens_domby", q)
    q.sens = ""
    show("SensitivityQuery sens cleared", q)
attempt("SensitivityQuery sens=nosuch", lambda: setools.SensitivityQuery(p, sens="nosuch_s"))
attempt("SensitivityQuery sens=c0 (a category)", lambda: setools.SensitivityQuery(p, sens="c0"))

q = setools.NodeconQuery(p)
q.ip_version = "ipv6"
print("NodeconQuery ip_version:", q.ip_version, repr(q.ip_version))
show("NodeconQuery ipv6", q)
q.ip_version = "ipv4"
show("NodeconQuery ipv4", q)
q.ip_version = None
print("NodeconQuery ip_version cleared:", q.ip_version)
attempt("NodeconQuery ip_version=ipv5", lambda: setools.NodeconQuery(p, ip_version="ipv5"))
attempt("NodeconQuery network=not an address", lambda: setools.NodeconQuery(p, network="x"))
show("NodeconQuery network 127.0.0.1/32", setools.NodeconQuery(p, network="127.0.0.1/32"))
show("NodeconQuery network 0.0.0.0/0 overlap",
     setools.NodeconQuery(p, network="0.0.0.0/0", network_overlap=True))

q = setools.NetifconQuery(p, name="^lo", name_regex=True)
show("NetifconQuery name regex", q)
q.name_regex = False
q.name = "lo"
show("NetifconQuery name lo", q)
attempt("NetifconQuery user=nosuch", lambda: setools.NetifconQuery(p, user="nosuch_u"))
show("NetifconQuery user", setools.NetifconQuery(p, user=str(some_user)))

q = setools.UserQuery(p)
if p.mls:
    q.range_ = "s0"
    q.range_subset = True
    show("UserQuery range_ s0 subset (set after construction)", q)
    q.range_subset = False
    q.range_overlap = True
    show("UserQuery range_ s0 overlap", q)
    q.range_ = None
    show("UserQuery range_ cleared", q)
attempt("UserQuery range_=s99", lambda: setools.UserQuery(p, range_="s99"))
attempt("UserQuery range_=s0-nonsense", lambda: setools.UserQuery(p, range_="s0:c1.c0"))
attempt("UserQuery roles=[nosuch_r]", lambda: setools.UserQuery(p, roles=["nosuch_r"]))

q = setools.CommonQuery(p)
attempt("CommonQuery perms set after construction", lambda: setattr(q, "perms", {"ioctl"}))
show("CommonQuery perms set after construction", q)
attempt("CommonQuery perms=nosuch", lambda: setools.CommonQuery(p, perms={"nosuch_perm"}))
q.perms = set()
show("CommonQuery perms cleared", q)

q = setools.MLSRuleQuery(p)
q.tclass = [str(some_class)]
show("MLSRuleQuery tclass set after construction", q)
print("tclass criterion:", sorted(str(c) for c in q.tclass))
attempt("MLSRuleQuery tclass=[nosuch]", lambda: setools.MLSRuleQuery(p, tclass=["nosuch_c"]))
attempt("MLSRuleQuery ruletype=[allow]", lambda: setools.MLSRuleQuery(p, ruletype=["allow"]))
show("MLSRuleQuery ruletype range_transition",
     setools.MLSRuleQuery(p, ruletype=["range_transition"], tclass=["process"]))
q.tclass = None
attempt("MLSRuleQuery tclass text without its regex flag", lambda: setattr(q, "tclass", "^proc"))
q.tclass_regex = True
q.tclass = "^proc"
show("MLSRuleQuery tclass regex set after construction", q)

# Empty results.
show("TypeQuery name regex matching nothing",
     setools.TypeQuery(p, name="^no such type$", name_regex=True))
show("CategoryQuery name regex matching nothing",
     setools.CategoryQuery(p, name="^zz", name_regex=True))
show("PolCapQuery name nothing", setools.PolCapQuery(p, name="nosuch"))

# The generator protocol: next() and iteration on one results() object.
it = setools.PolCapQuery(p).results()
first = next(it, None)
print("next then iteration:", str(first), [str(c) for c in it])
print("exhausted:", next(it, "done"))


# Subclasses.
class Capped(setools.PolCapQuery):
    """A property criterion of the script's own."""

    _limit = None

    @property
    def limit(self):
        return self._limit

    @limit.setter
    def limit(self, value):
        self._limit = int(value)

    def results(self):
        for n, r in enumerate(super().results()):
            if self._limit is not None and n >= self._limit:
                return
            yield r


show("subclass with a property", Capped(p, limit="2"))
q = Capped(p)
q.limit = 1
show("subclass property set after construction", q)
attempt("subclass property bad value", lambda: Capped(p, limit="x"))


class PlainName(setools.PolCapQuery):
    """A criterion overridden by a plain attribute: stored as given."""

    name = None


q = PlainName(p, name="open")
print("plain attribute kept as given:", repr(q.name))


class Conflict(setools.SensitivityQuery):
    def sens_dom(self):
        return True


attempt("subclass method named like a flag", lambda: Conflict(p, sens_dom=True))


class Recording(setools.TypeQuery):
    """An own __setattr__ that records every assignment."""

    def __setattr__(self, name, value):
        seen.append(name)
        super().__setattr__(name, value)


seen = []
q = Recording(p, name="_exec_t$", name_regex=True)
print("own __setattr__ saw:", seen)
show("own __setattr__ results", q)
attempt("own __setattr__ bad criterion", lambda: Recording(p, attrs=["nosuch_attr"]))


class Derived(setools.UserQuery):
    """Extra flag and results() filtering on top."""

    only_system = False

    def results(self):
        for u in super().results():
            if not self.only_system or str(u).startswith("system"):
                yield u


show("subclass flag", Derived(p, only_system=True))
q = Derived(p)
print("subclass log:", q.log.name)
q.log = "replaced"
print("log assigned:", q.log)
show("subclass flag with criteria", Derived(p, only_system=True, name="^s", name_regex=True))
if some_common is not None:
    show("CommonQuery by name", setools.CommonQuery(p, name=str(some_common)))

# The construction call itself: a missing or doubled policy and extra positionals raise
# TypeError naming the class's __init__; the policy as a keyword; criteria given as None
# or empty (the default again); a known keyword beside an unknown one (assigned in
# setools' reverse-sorted order, so the bad criterion's error comes first or last); a
# flag given a non-bool; a subclass with its own __init__ calling the query's.
for cls in QUERIES + [setools.TERuleQuery, setools.BoundsQuery, setools.RBACRuleQuery]:
    for args, kw in (((), {}), ((p, 1), {}), ((p,), {"policy": p}),
                     ((), {"policy": p, "name": None})):
        q = attempt(cls.__name__ + " call", lambda: cls(*args, **kw))
        if q is not None:
            print(cls.__name__, "call ok, policy is p:", q.policy is p)
    print(cls.__name__, "__init__:", cls.__init__.__qualname__, cls.__init__.__name__)
show("CommonQuery perms=None name=None", setools.CommonQuery(p, perms=None, name=None))
show("CommonQuery perms=set() name=''", setools.CommonQuery(p, perms=set(), name=""))
show("UserQuery roles=[] range_=None", setools.UserQuery(p, roles=[], range_=None))
attempt("CommonQuery bad perms and an unknown keyword",
        lambda: setools.CommonQuery(p, perms={"nosuch_perm"}, zzz=1))
attempt("CommonQuery bad perms and a keyword naming a method",
        lambda: setools.CommonQuery(p, perms={"nosuch_perm"}, results=1))
attempt("SensitivityQuery bad sens and an unknown keyword",
        lambda: setools.SensitivityQuery(p, sens="nosuch_s", aaa=1))
q = setools.PolCapQuery(p, name="OPEN", name_regex=1, extra="kept")
print("flag given 1:", q.name_regex, q.extra)
show("PolCapQuery name regex flag 1", q)


class WithInit(setools.CommonQuery):
    """An own __init__ around the query's."""

    def __init__(self, policy, **kwargs):
        self.before = sorted(kwargs)
        super().__init__(policy, **kwargs)
        self.after = True


# A permission some class of this policy has (the small policies have no ioctl).
some_perm = sorted(set().union(*(c.perms for c in p.classes())))[0]
q = WithInit(p, perms={some_perm}, name_regex=False)
print("own __init__:", q.before, q.after, sorted(q.perms))
show("own __init__ results", q)
attempt("own __init__ bad perms", lambda: WithInit(p, perms={"nosuch_perm"}))

# setools' logging at INFO (what sesearch -v shows): each query's first line, on its logger.
handler = logging.StreamHandler(sys.stdout)
handler.setFormatter(logging.Formatter("log: %(name)s %(levelname)s %(message)s"))
root = logging.getLogger("setools")
root.addHandler(handler)
root.setLevel(logging.INFO)
sys.stdout.flush()
for cls in QUERIES + [setools.BoundsQuery, setools.RBACRuleQuery]:
    q = cls(p)
    n = sum(1 for _ in q.results())
    handler.flush()
    print(cls.__name__, "logged,", n, "results", flush=True)
show("logged subclass", Derived(p, only_system=True))
root.setLevel(logging.WARNING)
show("not logged at WARNING", setools.PolCapQuery(p))
root.removeHandler(handler)

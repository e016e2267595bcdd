"""Corpus: the symbol queries (TypeQuery, TypeAttributeQuery, RoleQuery, UserQuery,
BoolQuery, ObjClassQuery, CommonQuery, PolCapQuery) with every keyword arbiter.setools
implements, in results() order, name regexes in Python's ``re`` dialect (the constructs
other dialects read differently, flags, and patterns with no translation for arbiter's
native matcher, which arbiter matches with ``re``), combined criteria, and the keyword
protocol (reverse-sorted assignment,
callable conflicts, lookup errors at assignment).

Normalised (setools itself is unordered there, named): sets given as criteria are printed
sorted; Role.types() and User.roles are printed sorted."""

import re
import sys

import setools
from setools.policyrep import SELinuxPolicy
from setools.typequery import TypeQuery
from setools.typeattrquery import TypeAttributeQuery
from setools.rolequery import RoleQuery
from setools.userquery import UserQuery
from setools.boolquery import BoolQuery
from setools.objclassquery import ObjClassQuery
from setools.commonquery import CommonQuery
from setools.polcapquery import PolCapQuery

p = SELinuxPolicy(sys.argv[1])
some_type = next(p.types())
some_attr = next(p.typeattributes(), None)
some_role = [r for r in p.roles() if r.name != "object_r"][0]
some_bool = next(p.bools(), None)


def run(cls, **kw):
    desc = [(k, sorted(str(x) for x in v) if isinstance(v, (set, frozenset, list)) else str(v))
            for k, v in sorted(kw.items())]
    try:
        res = list(cls(p, **kw).results())
    except (setools.exception.SEToolsException, ValueError, KeyError) as e:
        print(cls.__name__, desc, "error", type(e).__name__, e)
        return
    print(cls.__name__, desc, len(res), [str(r) for r in res[:40]])


run(TypeQuery)
run(TypeQuery, name=str(some_type))
run(TypeQuery, name="^s", name_regex=True)
run(TypeQuery, name="_exec_t$", name_regex=True)
run(TypeQuery, alias="^.", alias_regex=True)
run(TypeQuery, permissive=True, match_permissive=True)
run(TypeQuery, permissive=False, match_permissive=True)
# setools 4.4.1 matches the permissive state whenever it is not None (match_permissive is
# no keyword of its: a plain attribute).
run(TypeQuery, permissive=True)
run(TypeQuery, permissive=False)
run(TypeQuery, permissive=0)
if some_attr is not None:
    run(TypeQuery, attrs=[str(some_attr)])
    run(TypeQuery, attrs=[str(some_attr)], attrs_equal=True)
    run(TypeQuery, attrs="^dom", attrs_regex=True)
    run(TypeAttributeQuery, name=str(some_attr))
    run(TypeAttributeQuery, types=[str(some_type)])
    run(TypeAttributeQuery, types="^init", types_regex=True)
run(TypeQuery, name="nosuch_t")
run(TypeQuery, attrs=["nosuch_attr"])
run(TypeAttributeQuery)
run(TypeAttributeQuery, name="type$", name_regex=True)
run(RoleQuery)
run(RoleQuery, name=str(some_role))
run(RoleQuery, name="_r$", name_regex=True)
run(RoleQuery, types=[str(some_type)])
run(RoleQuery, types="^user", types_regex=True)
run(RoleQuery, name="nosuch_r")
run(UserQuery)
run(UserQuery, name="^s", name_regex=True)
run(UserQuery, roles=[str(some_role)])
run(UserQuery, roles="^sys", roles_regex=True)
run(UserQuery, roles=[str(some_role)], roles_equal=True)
run(UserQuery, name="nosuch_u")
run(BoolQuery)
run(BoolQuery, default=True)
run(BoolQuery, default=False)
run(BoolQuery, name="^http", name_regex=True)
if some_bool is not None:
    run(BoolQuery, name=str(some_bool))
run(BoolQuery, name="nosuch")
run(ObjClassQuery)
run(ObjClassQuery, name="socket$", name_regex=True)
run(ObjClassQuery, common="file")
run(ObjClassQuery, common="sock", common_regex=True)
run(ObjClassQuery, perms={"read"})
run(ObjClassQuery, perms={"read"}, perms_indirect=False)
run(ObjClassQuery, perms={"read", "write"}, perms_equal=True)
run(ObjClassQuery, perms="^name_", perms_regex=True)
run(ObjClassQuery, common="nosuch")
run(CommonQuery)
run(CommonQuery, perms={"ioctl"})
run(CommonQuery, name="sock", name_regex=True)
run(PolCapQuery)
run(PolCapQuery, name="open", name_regex=True)
try:
    TypeQuery(p, results=1)
except ValueError as e:
    print("callable conflict:", e)
q = TypeQuery(p)
q.name = "^a"
q.name_regex = True
try:
    print("regex set after name:", len(list(q.results())))
except AttributeError as e:
    print("regex set after name:", type(e).__name__, e)
q.name = "^a"
print("regex set before name:", len(list(q.results())))

# Name regexes: Python's reading of each construct, per symbol kind.
PATTERNS = ["(?i)^HTTPD_", r"^\w+_t$", r"[[:alpha:]]", r"t\Z", r"^(?P<x>s)y", r"x{,2}_t$",
            r"_\d", r"(?=.*exec)^\w+$", r"(s)\1", "^$", r"\bt", "a{,}b", "^(?a:[a-c])"]
for pat in PATTERNS:
    run(TypeQuery, name=pat, name_regex=True)
for cls in (TypeAttributeQuery, RoleQuery, UserQuery, BoolQuery, ObjClassQuery, CommonQuery,
            PolCapQuery):
    for pat in ["(?i)^S", r"_\d|[[:alpha:]]", r"(?<=_)r", "e$"]:
        run(cls, name=pat, name_regex=True)
q = TypeQuery(p, name=re.compile("^SY", re.IGNORECASE), name_regex=True)
print("compiled with flags:", [str(t) for t in q.results()][:20])
for bad in ["(", "a{2,1}", "[z-a]"]:
    try:
        TypeQuery(p, name=bad, name_regex=True)
        print("bad regex", repr(bad), "accepted")
    except re.error as e:
        print("bad regex", repr(bad), type(e).__name__, e)
some_alias = next((a for t in p.types() for a in t.aliases()), None)
if some_alias is not None:
    run(TypeQuery, name=some_alias)
    run(TypeQuery, name=some_alias, alias_deref=True)
    run(TypeQuery, alias=some_alias)
# Combined criteria (the name filter, then the index of the others).
if some_attr is not None:
    run(TypeQuery, name="^s", name_regex=True, attrs=[str(some_attr)])
    run(TypeQuery, name=str(some_type), attrs=[str(some_attr)])
    run(TypeQuery, attrs=[str(some_attr)], permissive=False, match_permissive=True)
    run(TypeAttributeQuery, name="^d", name_regex=True, types=[str(some_type)])
    types2 = [str(t) for t in p.types()][:3]
    run(TypeAttributeQuery, types=types2)
    run(TypeAttributeQuery, types=types2, types_equal=True)
run(ObjClassQuery, name="^s", name_regex=True, perms={"read"})
run(ObjClassQuery, perms={"read", "nosuch_perm"})
run(ObjClassQuery, perms={"nosuch_perm"})
run(ObjClassQuery, perms={"ioctl", "create"}, perms_indirect=False)
run(ObjClassQuery, common="file", perms={"read"})
run(CommonQuery, perms={"ioctl", "read"})
run(CommonQuery, perms={"read"}, perms_equal=True)
run(CommonQuery, perms={"ioctl", "read"}, perms_subset=True)
run(CommonQuery, perms={"ioctl"}, perms_subset=True)
run(CommonQuery, perms={"nosuch_perm"})
run(CommonQuery, name="file", perms={"read"})
run(BoolQuery, name="^a", name_regex=True, default=True)
run(BoolQuery, name="^a", name_regex=True, default=False)
run(UserQuery, name="^s", name_regex=True, roles=[str(some_role)])
run(RoleQuery, name="^s", name_regex=True, types=[str(some_type)])
run(PolCapQuery, name="open_perms")
run(PolCapQuery, name="nosuch")

"""arbiter.setools against the real setools 4.4.1.

Each corpus script (tests/setools_corpus/*.py) runs once under Debian's /usr/bin/python3
with the real setools and once under ``python3 -m arbiter.setools`` on the same policy; the
outputs must be identical byte for byte. Where setools itself is unordered (frozensets,
criteria sets) the scripts print sorted, and each such case is named in the script's
docstring. Also: the import redirection (``install()``, ``-m``), pickling, and the
exceptions' classes.
"""

import os
import pathlib
import pickle
import re
import subprocess
import sys
import tracemalloc

import pytest

import arbiter
import arbiter.setools as st
from conftest import DEBIAN, DEBIAN_MLS, POLICIES

CORPUS = pathlib.Path(__file__).resolve().parent / "setools_corpus"
REAL_PYTHON = "/usr/bin/python3"


def real_setools_available():
    if not os.path.exists(REAL_PYTHON):
        return False
    r = subprocess.run([REAL_PYTHON, "-c", "import setools, sys; sys.exit(setools.__version__ != '4.4.1')"],
                       capture_output=True)
    return r.returncode == 0


needs_real = pytest.mark.skipif(not real_setools_available(),
                                reason="the real setools 4.4.1 (python3-setools) is not installed")

OWN = [POLICIES / n for n in ("default.33", "features.33", "bounds.33", "tiny.28")]
DEB = [p for p in (DEBIAN, DEBIAN_MLS) if p.exists()]


# One hash seed for both sides: setools prints some frozensets (a constraint expression's
# name sets) in iteration order, which is then the same for the same insertions.
SEEDED = dict(os.environ, PYTHONHASHSEED="0")


def run_real(script, *args):
    return subprocess.run([REAL_PYTHON, str(CORPUS / script), *map(str, args)],
                          capture_output=True, text=True, timeout=3600, env=SEEDED)


def run_arbiter(script, *args):
    env = dict(SEEDED)
    return subprocess.run([sys.executable, "-m", "arbiter.setools", str(CORPUS / script),
                           *map(str, args)], capture_output=True, text=True, timeout=3600, env=env)


def assert_same(script, *args):
    real = run_real(script, *args)
    ours = run_arbiter(script, *args)
    assert real.returncode == 0, real.stderr[-2000:]
    assert ours.returncode == 0, ours.stderr[-2000:]
    if real.stdout != ours.stdout:
        a, b = real.stdout.splitlines(), ours.stdout.splitlines()
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                pytest.fail("{} {}: first difference at line {}:\n  setools: {}\n  arbiter: {}"
                            .format(script, args, i + 1, x[:400], y[:400]))
        pytest.fail("{} {}: {} lines from setools, {} from arbiter".format(
            script, args, len(a), len(b)))


SCRIPTS = ["rerun.py", "symbols.py", "queries.py", "protocol.py", "debuglog.py", "terules.py", "rbac.py", "bounds.py",
           "sepolicy_like.py", "mls.py", "labeling.py", "constraints.py", "checker.py",
           "permmap.py", "infoflow.py", "dta.py", "paths.py"]


@needs_real
@pytest.mark.parametrize("policy", OWN, ids=lambda p: p.name)
def test_corpus_matches_setools_on_our_policies(policy):
    # Every symbol and rule in detail, every query.
    assert_same("corpus.py", policy, "full", *SCRIPTS)


@needs_real
@pytest.mark.skipif(not DEB, reason="the Debian policies are not installed")
@pytest.mark.parametrize("policy", DEB, ids=lambda p: p.parent.parent.name)
def test_corpus_matches_setools_on_debian(policy):
    # Every iteration order in full; details of a sample of the symbols and rules and half
    # of the TE queries (the real setools needs about a second per query here).
    assert_same("corpus.py", policy, "sample", *[s for s in SCRIPTS if s != "paths.py"])


@needs_real
@pytest.mark.skipif(not DEB, reason="the Debian policies are not installed")
@pytest.mark.skipif(not os.environ.get("ARBITER_SETOOLS_DEBIAN_PATHS"),
                    reason="set ARBITER_SETOOLS_DEBIAN_PATHS=1: the real setools needs minutes "
                           "of CPU per Debian policy for paths.py (three information flow "
                           "subgraphs, the boolean one the slowest, and the DTA graph)")
@pytest.mark.parametrize("policy", DEB, ids=lambda p: p.parent.parent.name)
def test_paths_match_setools_on_debian(policy):
    # shortest_path of both analyses and the flows into a type, over the generated query
    # set, on Debian's policies.
    assert_same("paths.py", policy, "sample")


def test_module_runner_serves_setools_over_a_real_one(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text("import sys, setools, setools.policyrep as pr\n"
                    "print(setools.__name__, pr.__name__, setools.SELinuxPolicy is pr.SELinuxPolicy)\n"
                    "print(sys.argv[1:])\n")
    r = subprocess.run([sys.executable, "-m", "arbiter.setools", str(prog), "a", "b"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "arbiter.setools arbiter.setools.policyrep True\n['a', 'b']\n"


def test_install_inside_a_program_and_unimplemented_names_say_so(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text("import arbiter.setools\narbiter.setools.install()\n"
                    "from setools.terulequery import TERuleQuery\nprint(TERuleQuery.__module__)\n"
                    "import setools.pirqconquery\nprint(setools.pirqconquery.__name__)\n"
                    "import setools\ntry:\n    setools.AnyTERule\nexcept AttributeError as e:\n"
                    "    print(e)\n")
    r = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "arbiter.setools.terulequery",
        "arbiter.setools.pirqconquery",
        "setools.AnyTERule is not implemented by arbiter.setools yet",
    ]


def test_exceptions_keep_setools_base_classes():
    p = st.SELinuxPolicy(str(POLICIES / "default.33"))
    with pytest.raises(ValueError):
        p.lookup_type("nosuch_t")
    with pytest.raises(st.exception.InvalidType):
        st.TERuleQuery(p, source="nosuch_t")
    rule = next(p.terules())
    with pytest.raises(AttributeError):
        rule.conditional
    assert st.policyrep.InvalidType is st.exception.InvalidType


@pytest.mark.parametrize("name", ["default.33", "features.33"])
def test_policy_objects_pickle_by_path_and_by_bytes(name):
    path = POLICIES / name
    p = st.SELinuxPolicy(str(path))
    q = pickle.loads(pickle.dumps(p))
    assert str(q) == str(p) and q.version == p.version
    assert [str(t) for t in q.types()] == [str(t) for t in p.types()]
    m = st.SELinuxPolicy.from_bytes(path.read_bytes())
    m2 = pickle.loads(pickle.dumps(m))
    assert [str(r) for r in m2.terules()] == [str(r) for r in p.terules()]
    t = next(p.types())
    t2 = pickle.loads(pickle.dumps(t))
    assert str(t2) == str(t) and t2.statement() == t.statement()


def test_engine_policy_and_server_pickle():
    path = POLICIES / "default.33"
    pol = arbiter.Policy.open(str(path))
    pol2 = pickle.loads(pickle.dumps(pol))
    assert repr(pol2) == repr(pol)
    mem = arbiter.Policy.from_bytes(path.read_bytes())
    assert pickle.loads(pickle.dumps(mem)).booleans() == mem.booleans()
    srv = arbiter.Server(pol)
    names = list(srv.booleans())
    if names:
        srv.set_booleans({names[0]: not srv.booleans()[names[0]]})
    srv2 = pickle.loads(pickle.dumps(srv))
    assert srv2.booleans() == srv.booleans()
    from conftest import HTTPD, CONTENT
    a = srv.compute_av(HTTPD, CONTENT, "file")
    b = srv2.compute_av(HTTPD, CONTENT, "file")
    assert (a.allowed, a.auditallow, a.auditdeny) == (b.allowed, b.auditallow, b.auditdeny)


def test_analyses_keep_one_graph_and_check_arguments_alike():
    # One native handle per analysis object across queries and settings (the graph is
    # built once); both analyses refuse a bad path length and an unknown type the same way.
    from arbiter.setools.dta import DomainTransitionAnalysis
    from arbiter.setools.infoflow import InfoFlowAnalysis
    from arbiter.setools.permmap import PermissionMap
    p = st.SELinuxPolicy(str(POLICIES / "default.33"))
    a = InfoFlowAnalysis(p, PermissionMap())
    d = DomainTransitionAnalysis(p)
    for an in (a, d):
        list(an.shortest_path("init_t", "sshd_t"))
        handle = an._native
        an.exclude = ["user_t"]
        list(an.shortest_path("init_t", "sshd_t"))
        assert an._native is handle
        with pytest.raises(ValueError, match="Maximum path length must be positive"):
            list(an.all_paths("init_t", "sshd_t", 0))
        with pytest.raises(st.exception.InvalidType):
            list(an.shortest_path("init_t", "no_such_type_t"))
        with pytest.raises(st.exception.InvalidType):
            an.exclude = ["no_such_type_t"]
    a.min_weight = 5
    list(a.infoflows("sshd_t", out=False))
    assert a._native is not None
    a.perm_map = PermissionMap()
    assert a._native is None  # a new map builds a new graph, as in setools

# Patterns for the native name matcher: Python-only readings ([[:alpha:]] is a set, \Z,
# {,n}, (?P<..>), inline flags, Unicode classes), and constructs it refuses (lookaround,
# backreferences), for which it must answer None so that Python's re decides.
NAME_PATTERNS = [
    "_exec_t$", "^httpd_", "(?i)^HTTPD", r"^\w+_t\Z", "[[:alpha:]]", "x{,2}_t$", r"_\d",
    r"^(?P<x>s)(?:y|s)", r"\bt", "a{,}b", "^(?a:[a-c])", "(?x) ^ s s h", "[^a-z_]", "t$|^a",
    "(?=.*exec)", r"(s)\1", "(?<=_)t", "",
    # The one-pass search over the names joined by newlines: anchors at each name's ends,
    # matches that could run into the next name (negated sets, \s, \W, DOTALL), \A and
    # \Z, multi-line mode set and cleared, empty matches.
    "^", "$", "^$", r"\A", r"\As", r"t\Z", "[^a]*x", r"\s", r"\S+$", r"\W", r"[\s\S]t_",
    ".", "(?s).*", "(?s)t.a", "(?s:.)$", "(?m)^s", "(?-m:t)$", "(?m)t$", r"\B", r"_t\b",
    "a|$", "(?i)[A-Z]{3}_t$", "x*", r"^[^_]+$",
]


@pytest.mark.parametrize("policy", OWN[:1] + DEB[:1], ids=lambda p: p.name)
def test_native_name_regexes_answer_as_python_re_does(policy):
    # The oracle is Python's re itself, over every type and attribute name of the policy.
    # ("[[:alpha:]]" draws re's FutureWarning about nested sets: the reading it pins.)
    import re
    import warnings

    warnings.simplefilter("ignore", FutureWarning)
    from arbiter import _native

    p = st.SELinuxPolicy(policy)
    symbols = list(p.types()) + list(p.typeattributes())
    index = _native.NameIndex(symbols, [s.name for s in symbols])
    for pattern in NAME_PATTERNS:
        expected = [s for s in symbols if re.search(pattern, s.name)]
        got = index.search(pattern)
        if got is None:
            # Refused: only for what the engine cannot express.
            assert re.search(r"\(\?<?[=!]|\\[1-9]", pattern), pattern
            continue
        assert [s.name for s in got] == [s.name for s in expected], pattern


def test_symbol_queries_read_the_policys_own_lists_without_a_copy(debian_path):
    """The symbol queries scan the lists the policy keeps behind its iterators, not a
    per-policy copy of each (a second list of the Debian policy's types was 31 kB)."""
    from arbiter.setools import query

    p = st.SELinuxPolicy(str(debian_path))
    for make in (st.TypeQuery, st.TypeAttributeQuery, st.RoleQuery, st.UserQuery,
                 st.BoolQuery, st.ObjClassQuery, st.CommonQuery, st.CategoryQuery):
        assert list(make(p).results())
    tables = ("types", "attributes", "roles", "users", "bools", "classes", "commons",
              "categories")
    assert [k for k in p._cache if k in ["query_" + t for t in tables]] == []
    assert query.table(p, "types", p.types) is p._types_only()
    assert query.table(p, "attributes", p.typeattributes) is p._attributes_only()
    assert list(st.TypeQuery(p).results()) == list(p.types())
    assert list(st.CategoryQuery(p).results()) == list(p.categories())


def test_a_category_regex_and_a_range_query_make_no_category_they_do_not_return(debian_path):
    """A range query reads which categories' alias datums win from the rows, and a regex
    ``CategoryQuery`` makes only the categories it matches (an eighth of the Debian
    policy's 1,024 for ``^c1``: 0.14 MB of ``Category`` objects were made for it), the
    same objects the whole table holds once it is made; the answers are the whole
    table's."""
    import gc

    from arbiter.setools._mls import Category

    def made():
        return sum(1 for o in gc.get_objects() if type(o) is Category and o.policy is p)

    p = st.SELinuxPolicy(str(debian_path))
    assert list(st.UserQuery(p, range_="s0", range_subset=True).results())
    assert made() == 0
    got = list(st.CategoryQuery(p, name="^c1", name_regex=True).results())
    assert made() == len(got) == 135  # c1, c10-c19, c100-c199, c1000-c1023
    assert "categories" not in p._cache
    again = list(st.CategoryQuery(p, name="c1[0-9]$", name_regex=True).results())
    assert all(any(c is g for g in got) for c in again if c.name.startswith("c1"))
    everything = list(p.categories())
    assert made() == len(everything) == 1024
    assert all(any(c is e for e in everything) for c in got)
    for pattern in ("^c1", "c(1|2)0$", "^c10", "x", ""):
        want = [c for c in everything if re.search(pattern, c.name)]
        q = list(st.CategoryQuery(st.SELinuxPolicy(str(debian_path)), name=pattern,
                                  name_regex=True).results())
        assert [c.name for c in q] == [c.name for c in want], pattern
        assert list(st.CategoryQuery(p, name=pattern, name_regex=True).results()) == want


def test_a_category_regex_and_a_range_query_build_no_row_of_the_whole_table(debian_path):
    """The name index's columns, the categories whose alias wins and a regex's rows are
    read without the whole table's rows (1,024 tuples of four for the Debian policy, left
    on CPython's free list once dropped); each answers as the whole table does."""
    from arbiter import _native

    p = st.SELinuxPolicy(str(debian_path))
    full = _native.category_table(p._db)
    assert len(full) == 1024
    assert _native.category_names(p._db) == ([r[0] for r in full], [r[1] for r in full])
    assert _native.category_alias_wins(p._db) == [r[0] for r in full if r[3]]
    some = {full[7][0], full[500][0], full[-1][0], 5000}
    assert _native.category_table(p._db, some) == [r for r in full if r[0] in some]
    assert _native.category_table(p._db, set()) == []
    calls = []
    table = _native.category_table
    _native.category_table = lambda db, values=None: calls.append(values) or table(db, values)
    try:
        q = st.SELinuxPolicy(str(debian_path))
        assert list(st.UserQuery(q, range_="s0", range_subset=True).results())
        got = list(st.CategoryQuery(q, name="^c1", name_regex=True).results())
    finally:
        _native.category_table = table
    assert [c.name for c in got] == [r[1] for r in full if r[1].startswith("c1")]
    assert [len(v) for v in calls] == [135]


def test_type_objects_hold_no_name_and_answer_as_named_ones(debian_path):
    """The type table's objects hold no name: it is read from the policy when asked (the
    Debian policy's 4,153 names were about 0.27 MB kept for the whole run). ``str()``,
    hashing, equality with a text, ordering and the name criteria answer as before."""
    from arbiter.setools.policyrep import PolicySymbol

    p = st.SELinuxPolicy(str(debian_path))
    types, attrs = list(p.types()), list(p.typeattributes())
    for t in types[:50] + attrs[:50]:
        with pytest.raises(AttributeError):
            PolicySymbol.name.__get__(t)
        assert str(t) == t.name and hash(t) == hash(t.name) and t == t.name
        assert t is p.lookup_type_or_attr(t.name)
    assert len({t.name for t in types + attrs}) == len(types) + len(attrs)
    assert sorted(types) == sorted(types, key=lambda t: t.name)
    assert [t.name for t in st.TypeQuery(p, name="httpd_t").results()] == ["httpd_t"]
    assert list(st.TypeQuery(p, name="domain").results()) == []
    assert [a.name for a in st.TypeAttributeQuery(p, name="domain").results()] == ["domain"]
    assert list(st.TypeAttributeQuery(p, name="httpd_t").results()) == []
    aliased = next(t for t in types if list(t.aliases()))
    alias = next(aliased.aliases())
    assert list(st.TypeQuery(p, name=alias).results()) == []
    assert list(st.TypeQuery(p, name=alias, alias_deref=True).results()) == [aliased]
    assert not any(k.startswith("name_map_") for k in p._cache)


def test_a_policy_with_a_native_name_index_is_freed_when_dropped():
    # The index holds the symbols, which hold the policy, which caches the index: a cycle
    # the collector frees only if the index reports what it holds.
    import gc
    import weakref

    p = st.SELinuxPolicy(OWN[0])
    assert len(list(st.TypeQuery(p, name="_t$", name_regex=True).results())) > 0
    assert any(k.startswith("name_index_") for k in p._cache)
    ref = weakref.ref(p)
    del p
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("policy", DEB[:1] or OWN[:1], ids=lambda p: p.name)
def test_type_relations_rows_agree_both_ways_and_no_int_is_kept_per_type(policy):
    # The relations are held natively and each row is made as a tuple of the values on
    # reading; a type lists an attribute exactly when the attribute lists the type (the
    # two are computed apart). The type objects hold their values natively: making every
    # type and the relations keeps the objects (48 bytes each with the collector's
    # header), the list by value (8 bytes a slot), the order (2), the aliases and the
    # permissive set (about 70 bytes a slot in all for the Debian policy), and no int per
    # value (32 bytes more for each value above the small-int cache: 98 a slot).
    p = st.SELinuxPolicy(policy)
    tracemalloc.start()
    try:
        tv = p._type_by_value
        rel = p._type_relations()
        kept = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    made = sum(t is not None for t in tv)
    assert max(t._value for t in tv if t is not None) > 256
    assert kept < 80 * len(tv), (kept, made, len(tv))
    assert all(type(t._value) is int and tv[t._value] is t for t in tv if t is not None)
    assert len(rel) == len(tv) - 1
    assert rel[-1] == rel[len(rel) - 1]
    with pytest.raises(IndexError):
        rel[len(rel)]
    with pytest.raises(IndexError):
        rel[-len(rel) - 1]
    members = {a._value: set(rel[a._value - 1]) for a in p.typeattributes()}
    for t in p.types():
        row = rel[t._value - 1]
        assert all(tv[v].name and isinstance(tv[v], st.TypeAttribute) for v in row)
        assert set(row) == {a for a, m in members.items() if t._value in m}, t.name


@pytest.mark.parametrize("policy", DEB[:1] or OWN[:1], ids=lambda p: p.name)
def test_type_relations_rows_keep_no_int_and_a_query_by_one_attribute_reads_its_row_once(
        policy):
    # A row's ints are made on each read (no table of every value's int kept from a first
    # read: 34 kB for the Debian policy); the query that reads one row again and again,
    # TypeQuery by one attribute, keeps the members in order and reads the row once.
    p = st.SELinuxPolicy(policy)
    rel = p._type_relations()
    domain = max(p.typeattributes(), key=len)
    row = rel[domain._value - 1]
    assert row == rel[domain._value - 1]
    assert max(row) > 256 or policy not in DEB
    assert all(a is not b for a, b in zip(row, rel[domain._value - 1]) if a > 256)

    class Counting:
        def __init__(self, rows):
            self.rows, self.reads = rows, 0

        def __len__(self):
            return len(self.rows)

        def __getitem__(self, i):
            self.reads += 1
            return self.rows[i]

    want = [t for t in p.types() if domain in t.attributes()]
    other = next(a for a in p.typeattributes() if a != domain and len(a))
    both = {t for t in p.types() if domain in t.attributes() or other in t.attributes()}
    counting = p._cache["type_relations"] = Counting(rel)
    for _ in range(3):
        assert list(st.TypeQuery(p, attrs=[domain]).results()) == want
        assert list(st.TypeQuery(p, attrs=[domain.name]).results()) == want
    assert counting.reads == 1
    # Two attributes still read their rows.
    assert set(st.TypeQuery(p, attrs=[domain, other]).results()) == both
    assert counting.reads == 3


@pytest.mark.parametrize("policy", DEB[:1] + OWN[:2], ids=lambda p: p.name)
def test_booleans_hold_no_name_and_read_it_from_the_policy(policy):
    # The Boolean objects hold their value and state, not their name (read from the
    # policy when asked): making every Boolean keeps the objects and two lists (about 90
    # bytes a Boolean), not a str per Boolean too (about 80 bytes more each for the
    # Debian policy's names). Measured after a collection, which empties CPython's free
    # lists (the table's rows cross as tuples).
    import gc

    p = st.SELinuxPolicy(policy)
    tracemalloc.start()
    try:
        bools = list(p.bools())
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert bools
    assert kept < 120 * len(bools) + 300, (kept, len(bools))
    names = [b.name for b in bools]
    assert len(set(names)) == len(names) and all(type(n) is str and n for n in names)
    for b in bools:
        assert str(b) == b.name and hash(b) == hash(b.name) and b == b.name
        assert p.lookup_boolean(b.name) is b
        assert b.name == p._db.bool_name(b._value)
    with pytest.raises(IndexError):
        p._db.bool_name(0)
    with pytest.raises(IndexError):
        p._db.bool_name(len(bools) + 1)
    assert sorted(st.BoolQuery(p, name=names[0]).results()) == [bools[0]]


def test_native_query_base_is_no_query_and_init_stays_python():
    """``arbiter._native.QueryBase`` (the native base of ``PolicyQuery``) refuses to be
    constructed alone, and a query class's ``__init__`` (what scripts, ``super()`` and
    subclasses find) is still the Python function while constructions run natively."""
    import types

    from arbiter import _native
    import arbiter.setools.query as query

    with pytest.raises(TypeError):
        _native.QueryBase(1)
    for cls in (st.PolCapQuery, st.NetifconQuery, st.NodeconQuery, st.SensitivityQuery):
        assert issubclass(cls, query.PolicyQuery)
        assert type(cls.__dict__["__init__"]) is types.FunctionType
        assert cls.__init__.__qualname__ == cls.__name__ + ".__init__"


def test_role_types_are_a_sorted_array_and_role_query_answers_by_them():
    """A role keeps its type values as a sorted machine array (no ``int`` object each),
    and ``RoleQuery(types=...)`` answers what the roles' ``types()`` say."""
    from array import array

    for path in [POLICIES / "default.33"] + ([DEBIAN] if DEBIAN.exists() else []):
        p = st.SELinuxPolicy(str(path))
        roles = list(p.roles())
        for r in roles:
            assert isinstance(r._types, array)
            assert list(r._types) == sorted({t._value for t in r.types()})
        sample = [t for i, t in enumerate(p.types()) if i % 97 == 0][:40]
        for t in sample:
            want = [str(r) for r in roles if t in r.types()]
            assert [str(r) for r in st.RoleQuery(p, types=[t]).results()] == want
        pair = sample[:2]
        want = [str(r) for r in roles if set(pair) & set(r.types())]
        assert [str(r) for r in st.RoleQuery(p, types=pair).results()] == want


def test_type_objects_have_two_slots_and_the_policy_one_list_of_them(debian_path):
    """A type or attribute object is the policy and its value (48 bytes of Python's
    memory; a third, unused name slot made each 64 for 4,000 types; the value is the
    native base's ``u32``, no ``int`` object of 32 bytes more), and the policy
    keeps them in one list, by value, with setools' order as machine ints (a second
    list of every type object was 37 kB)."""
    from arbiter.setools.policyrep import BaseType, Role

    p = st.SELinuxPolicy(str(debian_path))
    types, attrs = list(p.types()), list(p.typeattributes())
    slots = [s for c in type(types[0]).__mro__ for s in getattr(c, "__slots__", ())]
    assert sorted(slots) == ["policy"]
    assert arbiter._native.SymbolBase in type(types[0]).__mro__
    assert type(types[0]).__basicsize__ == arbiter._native.SymbolBase.__basicsize__ + 8
    assert sys.getsizeof(types[0]) == sys.getsizeof(attrs[0]) == object.__sizeof__(
        types[0]) + 16  # two slots past the header (and the collector's 16 bytes)
    assert sys.getsizeof(types[0]) < sys.getsizeof(next(p.roles()))
    assert isinstance(types[0], st.policyrep.PolicySymbol)
    assert issubclass(Role, st.policyrep.PolicySymbol)
    list(st.TERuleQuery(p, ruletype=["allow"], source="httpd_t").results())
    list(st.TypeQuery(p, attrs=["domain"]).results())
    every = len(types) + len(attrs)
    whole = [k for k, v in p._cache.items() if isinstance(v, list) and len(v) >= every]
    assert whole == ["type_by_value"]
    tv = p._type_by_value
    assert [t for t in tv if isinstance(t, BaseType)] == sorted(types + attrs,
                                                                 key=lambda t: t._value)
    assert all(tv[t._value] is t for t in types + attrs)
    # setools' order (the corpus compares it with setools'): the types and attributes
    # interleaved as the policy's hash table holds them, not by value.
    assert [t._value for t in types] != sorted(t._value for t in types)
    order = list(p._cache["type_order"])
    assert [t._value for t in types] == [v for v in order if isinstance(tv[v], st.Type)]
    assert [a._value for a in attrs] == [v for v in order if isinstance(tv[v], st.TypeAttribute)]


def test_exact_port_queries_are_looked_up_by_the_statements_own_low_ports(debian_path):
    """``PortconQuery``'s exact-range table is keyed by each statement's own low-port
    ``int`` (a key combining both ports made an ``int`` per statement), and an exact
    query of every range of the Debian policy (and of ranges sharing a low port, or no
    statement's) answers what filtering the statements by both ports gives, in order."""
    p = st.SELinuxPolicy(str(debian_path))
    cons = list(p.portcons())
    list(st.PortconQuery(p, ports=(80, 80)).results())
    by_low = p._cache["query_portcon_rows"][2]
    lows = {id(c.ports.low) for c in cons}
    assert by_low and all(id(k) in lows for k in by_low)
    ranges = {(c.ports.low, c.ports.high) for c in cons}
    shared = {lo for lo, hi in ranges if sum(1 for r in ranges if r[0] == lo) > 1}
    assert shared  # ranges sharing a low port (1-511 and 1-1023, say) are covered
    for lo, hi in sorted(ranges) + [(lo, 65535) for lo in sorted(shared)] + [(3, 3)]:
        got = list(st.PortconQuery(p, ports=(lo, hi)).results())
        assert got == [c for c in cons if (c.ports.low, c.ports.high) == (lo, hi)], (lo, hi)


def test_sensitivities_share_one_tuple_and_int_per_category_value():
    """Sensitivities with equal category lists share one tuple, and every value is one
    ``int`` for all of them (the native rows make a new list per sensitivity: the Debian
    MLS policy's 16 copies of c0.c1023 were 0.5 MB); the values are the rows', in order."""
    from arbiter import _native

    if not DEBIAN_MLS.exists():
        pytest.skip("the Debian MLS policy is not installed")
    p = st.SELinuxPolicy(str(DEBIAN_MLS))
    sens = list(p.sensitivities())
    rows = _native.sensitivity_table(p._db)
    assert [list(s._cats) for s in sens] == [row[3] for row in rows]
    assert len(sens) == 16 and len({id(s._cats) for s in sens}) == 1
    ints = {}
    for s in sens:
        for v in s._cats:
            assert ints.setdefault(v, v) is v
    assert [str(lv) for lv in p.levels()][:2] == ["s0:c0.c1023", "s10:c0.c1023"]


def test_type_values_are_kept_as_two_byte_machine_ints(debian_path):
    """setools' type order, each role's types and ``TypeQuery``'s positions are arrays of
    2-byte machine ints (a type value is 16 bits in the kernel's tables; 4 bytes each
    was 16 kB for each of the first and the last on the Debian policy), with the same
    values; a value past 16 bits keeps 4 bytes."""
    from arbiter.setools.policyrep import _values_array

    p = st.SELinuxPolicy(str(debian_path))
    types, attrs = list(p.types()), list(p.typeattributes())
    [str(t) for t in st.TypeQuery(p, attrs=["domain"]).results()]
    order, pos = p._cache["type_order"], p._cache["query_type_pos"]
    assert (order.itemsize, pos.itemsize) == (2, 2)
    assert sorted(order) == sorted(t._value for t in types + attrs)
    assert [pos[t._value] for t in types] == list(range(len(types)))
    assert all(pos[a._value] == -1 for a in attrs)
    roles = list(p.roles())
    assert {r._types.itemsize for r in roles} == {2}
    assert all(list(r._types) == sorted(t._value for t in r.types()) for r in roles)
    wide = _values_array([1, 70000, 3])
    assert (wide.itemsize, list(wide)) == (4, [1, 70000, 3])

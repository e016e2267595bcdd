"""``arbiter.setools`` loads its submodules on first use (PEP 562), so importing it and
opening a policy cost only what a script uses; every name setools 4.4.1's package
exports must still resolve as ``setools.X`` and ``from setools import X``. The list of
names is read from the installed setools' ``__init__.py`` at test time."""

import ast
import json
import pathlib
import subprocess
import sys

import pytest

from conftest import DEBIAN_MLS, POLICIES

REAL_INIT = pathlib.Path("/usr/lib/python3/dist-packages/setools/__init__.py")

# Modules a script that only opens a policy must not pay for: the analyses, the policy
# difference and the checker, and the standard library modules only they (or a rare
# warning) need.
NOT_LOADED_BY_OPEN = [
    "arbiter.setools.diff", "arbiter.setools.checker", "arbiter.setools.infoflow",
    "arbiter.setools.dta", "arbiter.setools.permmap", "logging", "ipaddress",
    "importlib.abc", "configparser", "typing", "tempfile",
    # The setools finder serves submodules without importlib.util's lookup (which loads
    # contextlib and importlib._abc).
    "importlib.util", "contextlib",
]


def fresh(code):
    """Runs ``code`` in a new interpreter with this one's environment (so the same
    ``arbiter`` package: the installed one, or ``PYTHONPATH``'s); its stdout."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_import_and_open_load_no_analysis_nor_heavy_stdlib_module():
    policy = POLICIES / "features.33"
    loaded = fresh(
        "import sys\n"
        "print(' '.join(sys.modules))\n"
        "import arbiter.setools as s\n"
        "print(' '.join(sys.modules))\n"
        "s.SELinuxPolicy({!r})\n"
        "print(' '.join(sys.modules))\n".format(str(policy))
    ).splitlines()
    # Measured against what the interpreter had loaded before (a site hook may load some).
    before, after_import, after_open = (set(line.split()) for line in loaded)
    assert "arbiter.setools.policyrep" not in after_import
    assert "arbiter.setools.policyrep" in after_open
    assert sorted(set(NOT_LOADED_BY_OPEN) & (after_open - before)) == []


# The modules of the MLS, Xen, labeling and constraint parts of a policy: imported when
# one of their methods or classes is first used, not by an open nor by TE rules and types.
PARTS = ["arbiter.setools._mls", "arbiter.setools._xen", "arbiter.setools._labeling",
         "arbiter.setools._constraint"]


def test_open_types_and_te_rules_load_no_mls_labeling_nor_constraint_part():
    policy = POLICIES / "features.33"
    loaded = fresh(
        "import sys\n"
        "import arbiter.setools as s\n"
        "p = s.SELinuxPolicy({!r})\n"
        "[str(t) for t in p.types()]\n"
        "[str(r) for r in s.TERuleQuery(p, ruletype=['allow']).results()]\n"
        "print(' '.join(sys.modules))\n"
        "p.portcons()\n"
        "print(' '.join(sys.modules))\n".format(str(policy))
    ).splitlines()
    after_rules, after_portcons = (set(line.split()) for line in loaded)
    assert sorted(set(PARTS) & after_rules) == []
    assert "arbiter.setools._labeling" in after_portcons


def test_re_is_imported_by_the_first_regex_criterion_only():
    """Name criteria leave ``re`` unloaded (0.3-0.4 MB); a regex criterion loads it and
    matches as setools does."""
    # Without site (-S): site hooks of some interpreters import re themselves.
    import os
    import arbiter
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(arbiter.__file__).parents[1]))
    policy = POLICIES / "features.33"
    code = (
        "import sys\n"
        "before = 're' in sys.modules\n"
        "import arbiter.setools as s\n"
        "p = s.SELinuxPolicy({!r})\n"
        "n = sum(1 for _ in s.TERuleQuery(p, ruletype=['allow'], tclass=['file']).results())\n"
        "print(before, 're' in sys.modules, n > 0)\n"
        "q = s.TypeQuery(p, name='_t$', name_regex=True)\n"
        "print('re' in sys.modules, all(str(t).endswith('_t') for t in q.results()),\n"
        "      sum(1 for _ in q.results()) > 0)\n".format(str(policy)))
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["False False True", "True True True"]


def test_policy_part_member_lists_match_the_part_modules():
    """policyrep's lists of the parts' methods and classes, which stand for them until they
    load, name exactly what the part modules define."""
    import importlib

    from arbiter.setools import policyrep

    for modules, names in policyrep._PART_MEMBERS.items():
        defined = set()
        for module in modules:
            mixin = getattr(importlib.import_module("arbiter.setools." + module),
                            policyrep._PART_MIXINS[module])
            defined |= {n for n in vars(mixin) if not n.startswith("__")}
        assert sorted(names.split()) == sorted(defined), modules
    for module, names in policyrep._PART_CLASSES.items():
        mod = importlib.import_module("arbiter.setools." + module)
        classes = {n for n, v in vars(mod).items()
                   if isinstance(v, type) and v.__module__ == mod.__name__
                   and not n.startswith("_") and n != "Listing"}
        assert sorted(names.split()) == sorted(classes), module
        for name in names.split():
            assert getattr(policyrep, name) is getattr(mod, name)
    # Loaded, the parts' methods are the class's own.
    importlib.import_module("arbiter.setools._xen")
    policyrep.SELinuxPolicy.pirqcons  # loads the Xen part
    labeling = importlib.import_module("arbiter.setools._labeling")
    assert policyrep.SELinuxPolicy._build_labeling is labeling._LabelingPolicy._build_labeling
    xen = importlib.import_module("arbiter.setools._xen")
    assert policyrep.SELinuxPolicy.pirqcons is xen._XenPolicy.pirqcons


def test_selinux_labeling_loads_no_xen_part(debian_path):
    """An SELinux policy's labeling statements (initial SIDs included) and its target
    leave the Xen module unloaded; a Xen iterator loads it (and is empty there)."""
    loaded = fresh(
        "import sys\n"
        "import arbiter.setools as s\n"
        "p = s.SELinuxPolicy({!r})\n"
        "n = [len(list(getattr(p, k)())) for k in ('initialsids', 'portcons', 'fs_uses',\n"
        "     'genfscons', 'netifcons', 'nodecons')]\n"
        "print(n[0] > 0 and n[1] > 0, str(p.target_platform),\n"
        "      'arbiter.setools._xen' in sys.modules)\n"
        "print(list(p.pirqcons()), p.iomemcon_count, 'arbiter.setools._xen' in sys.modules)\n"
        .format(str(debian_path))
    ).splitlines()
    assert loaded == ["True selinux False", "[] 0 True"]


def real_exports():
    """The names setools 4.4.1's package binds from its submodules, by submodule."""
    tree = ast.parse(REAL_INIT.read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            for alias in node.names:
                out[alias.asname or alias.name] = node.module
    return out


@pytest.mark.skipif(not REAL_INIT.exists(), reason="setools 4.4.1 (python3-setools) not installed")
def test_every_name_setools_exports_resolves_lazily():
    import arbiter.setools as ours

    exports = real_exports()
    assert len(exports) > 100, "the reading of setools' __init__.py found too few names"
    for name, module in sorted(exports.items()):
        if name in ours.NOT_IMPLEMENTED_NAMES:
            with pytest.raises(AttributeError, match="not implemented by arbiter.setools"):
                getattr(ours, name)
            continue
        value = getattr(ours, name)
        # ``from . import exception`` binds the module itself.
        expected = sys.modules["arbiter.setools." + module] if module else None
        if module is None:
            assert value is sys.modules["arbiter.setools." + name], name
        else:
            assert value is getattr(expected, name), name
        assert name in dir(ours), name


def test_star_import_and_unknown_names():
    out = fresh(
        "from arbiter.setools import *\n"
        "import arbiter.setools as s\n"
        "missing = [n for n in s.__all__ if n not in globals()]\n"
        "print(len(s.__all__), missing)\n"
        "try:\n"
        "    s.NoSuchThing\n"
        "except AttributeError as e:\n"
        "    print(e)\n"
    ).splitlines()
    count, missing = out[0].split(" ", 1)
    assert int(count) > 100 and missing == "[]"
    assert out[1] == "module 'setools' has no attribute 'NoSuchThing'"



def test_equal_constraint_sets_are_one_object_that_iterates_as_a_new_one(debian_path):
    """The constraints' name and permission sets are shared per distinct content (the
    Debian policy's 670 name sets are 26 distinct ones), and each iterates in the order of
    a set built afresh from its constraint's own values, as before they were shared."""
    import arbiter.setools as s
    from arbiter import _native
    from arbiter.setools._constraint import _constraint_ident

    policy = s.SELinuxPolicy(str(debian_path))
    constraints = list(policy.constraints())
    rows = {v: (cons, vts) for v, cons, vts in _native.constraint_table(policy._db)}
    by_value = {"r": policy._role_by_value, "t": policy._type_by_value,
                "u": policy._user_by_value()}
    shared, seen = {}, 0
    for c in constraints:
        cons, vts = rows[c.tclass._value]
        which, n = _constraint_ident(c)[1:]
        nodes = cons[n][1] if which == 0 else vts[n]
        # A node is three items of the flat postfix list ("t1", names, "==") or one ("and").
        pos = 0
        for row in nodes:
            if row[0] == "names":
                sym, names = c.expression[pos], c.expression[pos + 1]
                fresh = frozenset(by_value[sym[0]][v] for v in row[3])
                assert list(names) == list(fresh)
                assert shared.setdefault(names, names) is names
                seen += 1
            pos += 3 if row[0] in ("names", "attr") else 1
        assert pos == len(list(c.expression))
    assert seen > len(shared) > 0
    perms = [c.perms for c in constraints if c.ruletype.name.endswith("constrain")]
    assert len({id(p) for p in perms}) == len(set(perms)) < len(perms)


def test_running_policy_search_loads_only_for_an_open_without_a_path(debian_path):
    """The running policy's search (``_running``) is imported by ``SELinuxPolicy()``
    alone: an open by path and every query leave it unloaded."""
    loaded = fresh(
        "import sys\n"
        "import arbiter.setools as s\n"
        "p = s.SELinuxPolicy({!r})\n"
        "[str(c) for c in p.portcons()]\n"
        "print('arbiter.setools._running' in sys.modules)\n"
        "try:\n"
        "    s.SELinuxPolicy()\n"
        "except Exception:\n"
        "    pass\n"
        "print('arbiter.setools._running' in sys.modules)\n".format(str(debian_path))
    ).splitlines()
    assert loaded == ["False", "True"]


def test_statements_load_on_first_call_and_answer_as_before(debian_path):
    """The symbols' and rules' ``statement()`` methods are in ``_statements``, imported on
    the first call of one: the whole query script's kinds of queries leave it unloaded;
    after it the methods are the classes' own (named, documented and introspected as
    methods of ``policyrep``) and answer as setools' text does."""
    out = fresh(
        "import sys, inspect, pickle\n"
        "import arbiter.setools as s\n"
        "from arbiter.setools import policyrep as pr\n"
        "p = s.SELinuxPolicy({!r})\n"
        "ts = list(p.types()); rs = list(p.roles()); us = list(p.users())\n"
        "bs = list(p.bools()); cs = list(p.classes())\n"
        "rules = list(s.TERuleQuery(p, ruletype=['allow'], source='init_t').results())\n"
        "rbac = list(p.rbacrules())\n"
        "print('arbiter.setools._statements' in sys.modules)\n"
        "b = bs[0]\n"
        "print(b.statement() == 'bool {{}} {{}};'.format(b, 'true' if b.state else 'false'))\n"
        "print('arbiter.setools._statements' in sys.modules)\n"
        "print(pr.Type.statement.__qualname__, pr.Type.statement.__module__,\n"
        "      inspect.signature(pr.User.statement), inspect.isfunction(pr.Role.statement))\n"
        "print(inspect.getdoc(pr.Type.statement))\n"
        "print(pickle.loads(pickle.dumps(ts[1])).statement() == ts[1].statement())\n"
        "print(all(r.statement().startswith('allow {{}} {{}}:'.format(r.source, r.target))\n"
        "          for r in rules) and len(rules) > 100)\n"
        "print(all(r.statement().startswith(('allow ', 'role_transition ')) for r in rbac))\n"
        "print(sum(t.statement().startswith('type {{}}'.format(t)) for t in ts) == len(ts))\n"
        .format(str(debian_path))
    ).splitlines()
    assert out == ["False", "True", "True",
                   "Type.statement arbiter.setools.policyrep (self) True",
                   "The policy language text of the object.", "True", "True", "True", "True"]
    import pydoc

    from arbiter.setools import policyrep as pr

    assert "statement(self)" in pydoc.render_doc(pr.ObjClass, renderer=pydoc.plaintext)


def test_conditional_evaluation_loads_on_first_call_and_answers_as_before(debian_path):
    """A conditional's evaluation, truth table and rule blocks are in ``_evaluation``,
    imported on the first call of one: reading the conditionals (text, Booleans,
    expression) and the conditional rules leaves it unloaded; the truth table then agrees
    with an evaluation of the expression's postfix items, row by row."""
    out = fresh(
        "import sys\n"
        "import arbiter.setools as s\n"
        "p = s.SELinuxPolicy({!r})\n"
        "conds = [(str(c), sorted(map(str, c.booleans)), list(c.expression())) for c in\n"
        "         p.conditionals()]\n"
        "rules = [r for r in s.TERuleQuery(p, boolean='.*', boolean_regex=True).results()]\n"
        "print(len(conds) > 100, len(rules) > 100)\n"
        "print('arbiter.setools._evaluation' in sys.modules)\n"
        "OPS = {{'&&': lambda a, b: a and b, '||': lambda a, b: a or b,\n"
        "       '^': lambda a, b: a != b, '==': lambda a, b: a == b, '!=': lambda a, b: a != b}}\n"
        "def postfix(expr, env):\n"
        "    st = []\n"
        "    for i in expr:\n"
        "        if type(i).__name__ == 'Boolean':\n"
        "            st.append(env[str(i)])\n"
        "        elif str(i) == '!':\n"
        "            st.append(not st.pop())\n"
        "        else:\n"
        "            b, a = st.pop(), st.pop()\n"
        "            st.append(OPS[str(i)](a, b))\n"
        "    return st[0]\n"
        "ok = total = 0\n"
        "for (text, names, expr), c in zip(conds, p.conditionals()):\n"
        "    table = c.truth_table()\n"
        "    assert [sorted(r.values) for r in table] == [names] * 2 ** len(names)\n"
        "    for row in table:\n"
        "        total += 1\n"
        "        ok += row.result == postfix(expr, row.values) == c.evaluate(**row.values)\n"
        "print('arbiter.setools._evaluation' in sys.modules, ok == total > 100)\n"
        "c = next(iter(p.conditionals()))\n"
        "print(sorted(map(str, c.true_rules())) == sorted(str(r) for r in rules\n"
        "      if r.conditional == c and r.conditional_block))\n"
        .format(str(debian_path))
    ).splitlines()
    assert out == ["True True", "False", "True True", "True"]


def test_labeling_tables_are_read_per_kind(debian_path):
    """Each labeling table's rows are read when its kind is first asked for, alone (the
    rows of every kind alive at once set a peak that stayed as free memory): iterating
    the portcons keeps no other kind's rows, and each kind's rows read alone are those of
    the whole read."""
    from arbiter import _native
    from arbiter.setools import SELinuxPolicy

    p = SELinuxPolicy(str(debian_path))
    ports = [str(c) for c in p.portcons()]
    assert len(ports) > 100
    assert sorted(k for k in p._cache if "labeling" in k) == ["labeling_portcons"]
    whole = _native.labeling_tables(p._db)
    assert "target" in whole and len(whole) == 14
    for kind, rows in whole.items():
        alone = _native.labeling_tables(p._db, kind)
        assert list(alone) == [kind] and alone[kind] == rows
    assert [str(c) for c in p.portcons()] == ports


def test_pickling_loads_on_first_use_and_pickles_as_before(debian_path):
    """The ``__reduce__`` methods and rebuilding functions are in ``_pickling``, imported
    on the first pickling (or unpickling): queries leave it unloaded; the pickles name
    ``policyrep``'s functions as before, and a new interpreter, which has not loaded it,
    unpickles them to equal objects."""
    out = fresh(
        "import sys, pickle\n"
        "import arbiter.setools as s\n"
        "p = s.SELinuxPolicy({!r})\n"
        "objs = [p.lookup_type('init_t'), next(iter(p.conditionals())),\n"
        "        next(iter(s.TERuleQuery(p, ruletype=['allow'], source='init_t').results())),\n"
        "        next(iter(p.rbacrules())), next(iter(p.bools())), next(iter(p.users()))]\n"
        "print('arbiter.setools._pickling' in sys.modules)\n"
        "data = pickle.dumps(objs)\n"
        "print('arbiter.setools._pickling' in sys.modules)\n"
        "print(b'arbiter.setools.policyrep' in data and b'_resolve_symbol' in data\n"
        "      and b'_te_rule_at' in data and b'_pickling' not in data)\n"
        "print(data.hex())\n"
        "print('|'.join(map(str, objs)))\n".format(str(debian_path))
    ).splitlines()
    assert out[:3] == ["False", "True", "True"]
    again = fresh(
        "import sys, pickle\n"
        "objs = pickle.loads(bytes.fromhex({!r}))\n"
        "print('|'.join(map(str, objs)))\n".format(out[3])
    ).splitlines()
    assert again == [out[4]]


def test_constraint_rows_are_read_per_class(debian_path):
    """A class's constraint rows are read when its constraints are first asked for, alone
    (every class's rows alive at once set a peak that stayed as free memory): a class's
    constraints keep no other class's rows, each class's rows read alone are those of the
    whole read, and the constraints built class by class are those of the whole policy."""
    from arbiter import _native
    from arbiter.setools import SELinuxPolicy

    p = SELinuxPolicy(str(debian_path))
    file_cons = [str(c) for c in p.lookup_class("file").constraints()]
    assert len(file_cons) >= 5
    assert not any("rows" in k for k in p._cache if isinstance(k, str))
    whole = _native.constraint_table(p._db)
    for v, cons, vts in whole:
        assert _native.constraint_table(p._db, v) == [(v, cons, vts)]
    assert _native.constraint_table(p._db, len(whole) + 1) == []
    every = [str(c) for c in p.constraints()]
    assert len(every) == sum(len(cons) + len(vts) for _, cons, vts in whole)
    assert [c for c in every if c in file_cons] and file_cons == [
        str(c) for c in p.lookup_class("file").constraints()]


def test_counts_load_on_first_use_and_answer_as_before(debian_path):
    """``SELinuxPolicy``'s counts are a part (``_counts``) imported on the first count
    asked for: a script's queries leave it unloaded; loaded, each count is what the
    policy's iterators and queries give (the corpus compares them with setools')."""
    out = fresh(
        "import sys\n"
        "import arbiter.setools as s\n"
        "p = s.SELinuxPolicy({!r})\n"
        "[str(t) for t in p.types()], list(p.typeattributes()), list(p.roles())\n"
        "list(s.TERuleQuery(p, ruletype=['allow'], source='httpd_t').results())\n"
        "list(s.BoolQuery(p, default=True).results())\n"
        "list(s.ObjClassQuery(p, perms={{'read'}}).results())\n"
        "print('arbiter.setools._counts' in sys.modules)\n"
        "got = (p.type_count, p.type_attribute_count, p.role_count, p.user_count,\n"
        "       p.boolean_count, p.class_count, p.common_count, p.polcap_count,\n"
        "       p.permissives_count, p.typebounds_count, p.allow_count,\n"
        "       p.type_transition_count, p.role_allow_count, p.neverallow_count)\n"
        "print('arbiter.setools._counts' in sys.modules)\n"
        "n = lambda it: sum(1 for _ in it)\n"
        "te = lambda k: n(s.TERuleQuery(p, ruletype=[k]).results())\n"
        "want = (n(p.types()), n(p.typeattributes()), n(p.roles()), n(p.users()),\n"
        "        n(p.bools()), n(p.classes()), n(p.commons()), n(p.polcaps()),\n"
        "        n(t for t in p.types() if t.ispermissive), n(p.bounds()), te('allow'),\n"
        "        te('type_transition'), n(s.RBACRuleQuery(p, ruletype=['allow']).results()),\n"
        "        0)\n"
        "print(got == want, got[0] > 3000, got[10] > 10000)\n"
        "d = vars(s.SELinuxPolicy)\n"
        "print(s.SELinuxPolicy.type_count.fget.__module__, 'type_count' in d,\n"
        "      type(d['type_count']).__name__)\n"
        .format(str(debian_path)))
    assert out.splitlines() == [
        "False", "True", "True True True",
        "arbiter.setools._counts True property"]



def test_the_parts_counts_are_in_the_counts_part(debian_path):
    """The MLS, labeling and constraint parts' counts are ``_counts``' too: the queries of
    those parts leave it unloaded; loaded, each count (which loads its part) is the
    length of the part's listing."""
    out = fresh(
        "import sys\n"
        "import arbiter.setools as s\n"
        "p = s.SELinuxPolicy({!r})\n"
        "for q in (s.CategoryQuery(p, name='^c1', name_regex=True), s.MLSRuleQuery(p),\n"
        "          s.PortconQuery(p, ports=(80, 80)), s.GenfsconQuery(p, fs='proc'),\n"
        "          s.ConstraintQuery(p, type_='domain'), s.DefaultQuery(p)):\n"
        "    list(q.results())\n"
        "print('arbiter.setools._counts' in sys.modules)\n"
        "n = lambda it: sum(1 for _ in it)\n"
        "kinds = lambda k: n(c for c in p.constraints() if str(c.ruletype) == k)\n"
        "pairs = [(p.category_count, n(p.categories())), (p.level_count, n(p.levels())),\n"
        "         (p.initialsids_count, n(p.initialsids())), (p.fs_use_count, n(p.fs_uses())),\n"
        "         (p.genfscon_count, n(p.genfscons())), (p.portcon_count, n(p.portcons())),\n"
        "         (p.netifcon_count, n(p.netifcons())), (p.nodecon_count, n(p.nodecons())),\n"
        "         (p.ibpkeycon_count, n(p.ibpkeycons())),\n"
        "         (p.ibendportcon_count, n(p.ibendportcons())),\n"
        "         (p.constraint_count, kinds('constrain')),\n"
        "         (p.mlsconstraint_count, kinds('mlsconstrain')),\n"
        "         (p.validatetrans_count, kinds('validatetrans')),\n"
        "         (p.mlsvalidatetrans_count, kinds('mlsvalidatetrans')),\n"
        "         (p.default_count, n(p.defaults()))]\n"
        "print(all(a == b for a, b in pairs), pairs[0][0], pairs[5][0] > 100,\n"
        "      pairs[10][0] > 0, s.SELinuxPolicy.portcon_count.fget.__module__)\n"
        .format(str(debian_path)))
    assert out.splitlines() == ["False", "True 1024 True True arbiter.setools._counts"]


def test_exception_classes_are_made_on_first_use_with_setools_hierarchy(debian_path):
    """``setools.exception``'s 50 classes are made when first named (a script that raises
    few keeps few: about 75 kB for all), each once, with setools 4.4.1's names and
    bases (compared with the installed setools'), reachable as before through
    ``policyrep``, ``from ... import``, star imports and pickles."""
    code = (
        "import json, pickle, sys\n"
        "import arbiter.setools as s\n"
        "p = s.SELinuxPolicy({!r})\n"
        "list(s.TERuleQuery(p, ruletype=['allow'], source='httpd_t').results())\n"
        "list(s.TypeQuery(p, name='_exec_t$', name_regex=True).results())\n"
        "made = lambda: sorted(n for n in vars(s.exception) if n[:1].isupper())\n"
        "print(json.dumps(made()))\n"
        "try:\n"
        "    p.lookup_boolean('no_such_boolean')\n"
        "except s.exception.InvalidSymbol as e:\n"
        "    print(type(e).__name__, type(e) is s.policyrep.InvalidBoolean)\n"
        "from arbiter.setools.exception import InvalidLevel\n"
        "e = pickle.loads(pickle.dumps(InvalidLevel('x')))\n"
        "print(type(e) is s.exception.InvalidLevel, 'InvalidLevel' in made())\n"
        "ns = {{}}\n"
        "exec('from arbiter.setools.exception import *', ns)\n"
        "print(json.dumps({{n: [c.__name__ for c in v.__mro__] for n, v in ns.items()\n"
        "                  if n[:1].isupper()}}, sort_keys=True))\n"
        "print(all(ns[n] is getattr(s.exception, n) for n in ns if n[:1].isupper()))\n"
    ).format(str(debian_path))
    lines = fresh(code).splitlines()
    assert len(json.loads(lines[0])) <= 8  # a failed type lookup's, no-common's and bases
    assert "InvalidBoolean" not in json.loads(lines[0])
    assert lines[1:3] == ["InvalidBoolean True", "True True"]
    real = subprocess.run(
        ["/usr/bin/python3", "-c",
         "import inspect, json, setools.exception as e\n"
         "print(json.dumps({n: [c.__name__ for c in v.__mro__] for n, v in vars(e).items()\n"
         "                  if inspect.isclass(v) and issubclass(v, BaseException)},\n"
         "                 sort_keys=True))\n"],
        capture_output=True, text=True, timeout=120)
    if real.returncode != 0:
        pytest.skip("setools 4.4.1 is not importable by /usr/bin/python3")
    assert json.loads(lines[3]) == json.loads(real.stdout)
    assert lines[4] == "True"


def test_rare_enumerations_and_named_tuples_are_made_on_first_use(debian_path):
    """``RBACRuletype``, ``HandleUnknown``, ``PolicyTarget``, ``BoundsRuletype`` and the
    named tuples of the rarer statements are made when first named: the types, TE and
    labeling queries leave them unmade; made, they are the classes setools' names stand
    for (members, values, pickles, module and qualified names)."""
    out = fresh(
        "import pickle\n"
        "import arbiter.setools as s\n"
        "rep = s.policyrep\n"
        "p = s.SELinuxPolicy({!r})\n"
        "list(s.TERuleQuery(p, ruletype=['allow'], source='httpd_t').results())\n"
        "list(s.PortconQuery(p, ports=(80, 80)).results())\n"
        "list(s.InitialSIDQuery(p).results()), list(s.TypeQuery(p).results())\n"
        "print(sorted(n for n in rep._MADE_ON_USE if n in vars(rep)))\n"
        "print(p.handle_unknown, p.target_platform, repr(p.handle_unknown))\n"
        "r = next(p.rbacrules())\n"
        "print(repr(r.ruletype), r.ruletype is s.RBACRuletype.allow,\n"
        "      pickle.loads(pickle.dumps(r.ruletype)) is r.ruletype)\n"
        "print([(m.name, m.value) for m in rep.RBACRuletype],\n"
        "      [(m.name, m.value) for m in s.BoundsRuletype], s.HandleUnknown.lookup(2))\n"
        "for n in rep._MADE_ON_USE:\n"
        "    c = getattr(s, n)\n"
        "    assert c is getattr(rep, n) and c.__module__ == rep.__name__, n\n"
        "    assert c.__qualname__ == n and pickle.loads(pickle.dumps(c)) is c, n\n"
        "print(s.IbpkeyconRange(1, 2), s.IomemconRange._fields, s.TruthTableRow._fields)\n"
        "print(sorted(n for n in rep._MADE_ON_USE if n in vars(rep)) == sorted(rep._MADE_ON_USE))\n"
        .format(str(debian_path)))
    assert out.splitlines() == [
        "[]",
        "allow selinux <HandleUnknown.allow: 4>",
        "<RBACRuletype.allow: 1> True True",
        "[('allow', 1), ('role_transition', 2)] [('typebounds', 1)] reject",
        "IbpkeyconRange(low=1, high=2) ('low', 'high') ('values', 'result')",
        "True",
    ]


def test_the_parts_pickling_loads_on_first_use_and_pickles_as_before(debian_path):
    """The MLS, labeling and constraint parts' ``__reduce__`` methods and rebuilding
    functions are in ``_mls_pickling``, ``_labeling_pickling`` and
    ``_constraint_pickling``, imported on the first pickling of one of the part's objects
    (or unpickling): the queries of these kinds leave them unloaded; the pickles name the
    parts' functions as before, and a new interpreter unpickles them to objects of the
    same text (the Debian policies have no default_* rules nor nodecons: the pickling
    tests cover those on the repository's policies)."""
    mls = DEBIAN_MLS if DEBIAN_MLS.exists() else None
    if mls is None:
        pytest.skip("the Debian MLS policy is not installed")
    parts = ["arbiter.setools._mls_pickling", "arbiter.setools._labeling_pickling",
             "arbiter.setools._constraint_pickling"]
    out = fresh(
        "import sys, pickle\n"
        "import arbiter.setools as s\n"
        "p = s.SELinuxPolicy({!r})\n"
        "d = s.SELinuxPolicy({!r})\n"
        "mls = [next(p.categories()), next(p.sensitivities()), next(p.levels()),\n"
        "       next(p.mlsrules()), next(p.mlsrules()).default,\n"
        "       next(iter(next(p.mlsrules()).expand()))]\n"
        "lab = [next(iter(p.portcons())), next(iter(p.portcons())).context,\n"
        "       next(iter(p.initialsids())).context, next(iter(p.netifcons())).packet,\n"
        "       next(iter(p.genfscons()))]\n"
        "con = [next(p.constraints()), next(p.constraints()).expression,\n"
        "       next(d.constraints())]\n"
        "for q in (s.MLSRuleQuery(p), s.PortconQuery(p, ports=(80, 80)),\n"
        "          s.ConstraintQuery(p, tclass=['file']), s.DefaultQuery(d),\n"
        "          s.CategoryQuery(p, name='^c1', name_regex=True), s.InitialSIDQuery(p)):\n"
        "    [str(x) for x in q.results()]\n"
        "loaded = lambda: [m in sys.modules for m in {!r}]\n"
        "print(loaded())\n"
        "data = [pickle.dumps(mls), pickle.dumps(lab), pickle.dumps(con)]\n"
        "print(loaded())\n"
        "print([b'_pickling' not in x for x in data])\n"
        "print(b'arbiter.setools._mls' in data[0] and b'_level_at' in data[0],\n"
        "      b'arbiter.setools._labeling' in data[1] and b'_ocontext_at' in data[1],\n"
        "      b'arbiter.setools._constraint' in data[2] and b'_constraint_at' in data[2])\n"
        "print(s._mls.Range.__reduce__.__module__, s._mls.Range.__reduce__.__qualname__)\n"
        "print('|'.join(x.hex() for x in data))\n"
        "print('|'.join(map(str, mls + lab + con)))\n".format(str(mls), str(debian_path),
                                                          parts)
    ).splitlines()
    assert out[:5] == ["[False, False, False]", "[True, True, True]", "[True, True, True]",
                       "True True True", "arbiter.setools._mls Range.__reduce__"]
    again = fresh(
        "import sys, pickle\n"
        "objs = [o for x in {!r}.split('|') for o in pickle.loads(bytes.fromhex(x))]\n"
        "print('|'.join(map(str, objs)))\n".format(out[5])
    ).splitlines()
    assert again == [out[6]]


def test_rarer_objects_load_on_first_use_and_answer_as_before(debian_path):
    """Conditional expressions, ioctl sets, RBAC rules and typebounds are in ``_rarer``,
    imported on the first use of one: the query kinds of a setools script
    (bench/setools_api.py: TE rules, conditional ones among them, symbols, MLS,
    constraints, defaults, labeling) leave it unloaded; ``rbacrules()`` loads it, and
    the classes are ``policyrep``'s names and ``setools``'; a TE rule's ``conditional``,
    an ``IoctlSet`` and the policy's listings answer from it; the statements and pickling
    installed before it loaded (by a TE rule's ``str()``, a type's pickle) serve its
    classes too."""
    out = fresh(
        "import sys, pickle\n"
        "import arbiter.setools as s\n"
        "p = s.SELinuxPolicy({!r})\n"
        "for q in (s.TERuleQuery(p, ruletype=['allow'], source='httpd_t'),\n"
        "          s.TERuleQuery(p, boolean='^httpd_', boolean_regex=True),\n"
        "          s.TypeQuery(p, attrs=['domain']), s.RoleQuery(p, types=['httpd_t']),\n"
        "          s.UserQuery(p, roles=['system_r']), s.BoolQuery(p, default=True),\n"
        "          s.ObjClassQuery(p, perms={{'read'}}), s.MLSRuleQuery(p),\n"
        "          s.SensitivityQuery(p, sens='s0', sens_dom=True),\n"
        "          s.ConstraintQuery(p, type_='domain'), s.DefaultQuery(p),\n"
        "          s.InitialSIDQuery(p, type_='kernel_t'), s.PortconQuery(p, ports=(80, 80)),\n"
        "          s.GenfsconQuery(p, fs='proc'), s.NodeconQuery(p)):\n"
        "    [str(x) for x in q.results()]\n"
        "pickle.dumps(next(p.types()))  # the pickling installed before _rarer loads\n"
        "print('arbiter.setools._rarer' in sys.modules)\n"
        "rbac = list(p.rbacrules())\n"
        "rarer = sys.modules['arbiter.setools._rarer']\n"
        "print(s.RoleAllow is s.policyrep.RoleAllow is rarer.RoleAllow,\n"
        "      s.Conditional is rarer.Conditional, s.IoctlSet is rarer.IoctlSet,\n"
        "      s.Bounds is rarer.Bounds)\n"
        "print(type(rbac[0]).__name__, str(rbac[0]).startswith('allow '),\n"
        "      rbac[0].statement() == str(rbac[0]), len(rbac) > 100,\n"
        "      type(rbac[-1]).__name__, rbac[-1].statement().startswith('role_transition '))\n"
        "r = next(s.TERuleQuery(p, boolean=['httpd_enable_cgi']).results())\n"
        "c = r.conditional\n"
        "print(c, type(c).__name__, c is p._conditional(c._node),\n"
        "      c in set(p.conditionals()), c.evaluate(httpd_enable_cgi=False))\n"
        "print(format(s.IoctlSet({{0x5401, 0x5402, 0x5410}}), ','), len(list(p.bounds())))\n"
        "again = pickle.loads(pickle.dumps(rbac[0]))\n"
        "print(str(again) == str(rbac[0]), type(again) is s.RoleAllow)\n".format(
            str(debian_path))
    ).splitlines()
    assert out[0] == "False"
    assert out[1] == "True True True True"
    assert out[2] == "RoleAllow True True True RoleTransition True"
    assert out[3].endswith(" Conditional True True False") and "&& httpd_enable_cgi" in out[3]
    assert out[4] == "0x5401-0x5402, 0x5410 0"
    assert out[5] == "True True"


def test_policyrep_star_import_binds_what_it_bound_before():
    """``from setools.policyrep import *`` binds the exceptions and the rarer enumerations
    and named tuples, made on first use, as it did when they were module globals."""
    out = fresh(
        "ns = {}\n"
        "exec('from arbiter.setools.policyrep import *', ns)\n"
        "import arbiter.setools as s\n"
        "want = ['InvalidType', 'NoStatement', 'PolicyrepException', 'RBACRuletype',\n"
        "        'HandleUnknown', 'IoportconRange', 'TruthTableRow', 'TERuletype',\n"
        "        'SELinuxPolicy', 'Type', 'PortconRange', 'RoleAllow', 'IoctlSet',\n"
        "        'Conditional']\n"
        "print([n for n in want if ns.get(n) is not getattr(s.policyrep, n)])\n"
        "print(ns['InvalidType'] is s.exception.InvalidType)\n"
    ).splitlines()
    assert out == ["[]", "True"]


def test_a_large_labeling_table_leaves_no_rows_in_the_free_lists(debian_path):
    """A labeling table crosses as flat columns (numbers, strings, byte strings, distinct
    ranges), not a tuple per statement: reading the Debian policy's portcons and
    genfscons adds no tuple per statement to CPython's free lists (a few: the calls'
    argument tuples; the rows' dead tuples, five or six per statement, 2,000 in all on
    main, stayed there to the end of a script), and the package calls no
    ``gc.collect`` for it (the former workaround, 1.5-2 ms per table). The class table,
    which a genfscon reads, is made before counting: its rows, 130 tuples of four for the
    Debian policy, were hidden while the category table's 1,024 rows filled that free
    list first."""
    out = fresh(
        "import gc, os, re, sys\n"
        "import arbiter.setools as s\n"
        "from arbiter import _native\n"
        "def free_tuples():\n"
        "    r, w = os.pipe()\n"
        "    saved = os.dup(2)\n"
        "    os.dup2(w, 2)\n"
        "    sys._debugmallocstats()\n"
        "    os.dup2(saved, 2)\n"
        "    os.close(w)\n"
        "    text = os.read(r, 1 << 20).decode()\n"
        "    os.close(r)\n"
        "    return sum(int(n) for n in re.findall(r'(\\d+) free \\d+-sized PyTupleObjects', text))\n"
        "full = []\n"
        "collect = gc.collect\n"
        "gc.collect = lambda *a: full.append(a) or collect(*a)\n"
        "p = s.SELinuxPolicy({!r})\n"
        "p.fs_uses(), p.initialsids(), p._class_by_value\n"
        "gc.disable()\n"
        "before = free_tuples()\n"
        "n = len(p.portcons())\n"
        "g = len(p.genfscons())\n"
        "print(n > 400, g > 50, free_tuples() - before < 64)\n"
        "gc.enable()\n"
        "q = s.SELinuxPolicy({!r})\n"
        "print(len(q.portcons()) == n, len(q.genfscons()) == g, len(full))\n"
        "table = _native.labeling_tables(p._db, 'portcons')['portcons']\n"
        "shape = [type(x).__name__ for x in table]\n"
        "tuples = sum(1 for r in table[3] for x in (r, *r) if type(x) is tuple)\n"
        "print(shape, len(table[0]) == 8 * 7 * n, tuples <= 3 * len(table[3]) <= 30)\n"
        .format(str(debian_path), str(debian_path)))
    assert out.splitlines() == [
        "True True True",
        "True True 0",
        "['bytes', 'list', 'list', 'list'] True True",
    ]


def test_rarer_mls_methods_load_on_first_call_and_answer_as_before(debian_path):
    """A level's and a range's ``str()`` and comparisons, the MLS rules' expansion and
    hashing and the MLS statements are in ``_mls_more``, imported on the first call of
    one: the MLS queries of a script (users by range, categories, sensitivities, range
    transitions) leave it unloaded (a level's ordering stays in ``_mls``: range criteria
    use it); loaded, the methods are ``_mls``'s classes' own and answer as setools
    does."""
    out = fresh(
        "import sys\n"
        "import arbiter.setools as s\n"
        "p = s.SELinuxPolicy({!r})\n"
        "for q in (s.UserQuery(p, range_='s0', range_subset=True),\n"
        "          s.CategoryQuery(p, name='^c1', name_regex=True),\n"
        "          s.SensitivityQuery(p, sens='s0', sens_dom=True),\n"
        "          s.MLSRuleQuery(p, tclass=['process'])):\n"
        "    list(q.results())\n"
        "print('arbiter.setools._mls_more' in sys.modules)\n"
        "u = p.lookup_user('root')\n"
        "r = u.mls_range\n"
        "rule = next(p.mlsrules())\n"
        "lvl = next(p.levels())\n"
        "print(str(r), str(u.mls_level), r.low == u.mls_level, u.mls_level in r,\n"
        "      r == 's0-s0:c0.c1023', hash(r) == hash(str(r)), r.high > r.low,\n"
        "      r.low < r.high, r.low <= r.high, r.low ^ r.high)\n"
        "print(lvl.statement(), next(p.sensitivities()).statement(),\n"
        "      p.lookup_category('c5').statement(), lvl == lvl, lvl >= lvl)\n"
        "print(rule.statement() == '{{0.ruletype}} {{0.source}} {{0.target}}:{{0.tclass}} '\n"
        "      '{{0.default}};'.format(rule), hash(rule) == hash(rule),\n"
        "      len(list(rule.expand())) >= 1, sorted(c.name for c in r.high.categories())[:2])\n"
        "L = s.policyrep.Level\n"
        "B = s.policyrep.BaseMLSLevel\n"
        "print('arbiter.setools._mls_more' in sys.modules, L.__eq__.__module__,\n"
        "      L.__eq__.__qualname__, type(B.__dict__['__str__']).__name__)\n"
        .format(str(debian_path)))
    assert out.splitlines() == [
        "False",
        "s0 - s0:c0.c1023 s0 True True True True True True True False",
        "level s0:c0.c1023; sensitivity s0; category c5; True True",
        "True True True ['c0', 'c1']",
        "True arbiter.setools._mls Level.__eq__ function",
    ]


def test_rarer_constraint_methods_load_on_first_call_and_answer_as_before():
    """The constraint expressions' text, items and equality and the constraints' and
    defaults' text, equality and hashing are in ``_constraint_more``, imported on the
    first call of one: the constraint and default queries of a script leave it unloaded;
    loaded, the methods are ``_constraint``'s classes' own and answer as setools does."""
    out = fresh(
        "import sys\n"
        "import arbiter.setools as s\n"
        "p = s.SELinuxPolicy({!r})\n"
        "for q in (s.ConstraintQuery(p, ruletype=['mlsconstrain'], tclass=['file']),\n"
        "          s.ConstraintQuery(p, type_='mlsfilerelabel'), s.DefaultQuery(p)):\n"
        "    list(q.results())\n"
        "print('arbiter.setools._constraint_more' in sys.modules)\n"
        "c = next(c for c in p.constraints() if str(c.tclass) == 'dir')\n"
        "e = c.expression\n"
        "print(c.statement().startswith('mlsconstrain dir relabelto ('), c.statement().endswith(\n"
        "      '(h1 dom h2 or ( t1 == mlsfilerelabeltoclr ) and ( h1 dom l2 ) or '\n"
        "      '( t1 == mlsfilerelabel )); '), str(c) == c.statement())\n"
        "print(str(e).startswith('h1 dom h2 or ( t1 == mlsfilerelabeltoclr )'),\n"
        "      e.infix()[:5], e == e, hash(e) == hash(str(e)),\n"
        "      e[0], list(e)[:3], 'h1' in list(e)[0])\n"
        "C = type(e)\n"
        "print('arbiter.setools._constraint_more' in sys.modules, C.__str__.__module__,\n"
        "      C.__str__.__qualname__, type(C.__dict__['infix']).__name__)\n"
        .format(str(DEBIAN_MLS)))
    assert out.splitlines() == [
        "False",
        "True True True",
        "True ['h1', 'dom', 'h2', 'or', '('] True True h1 ['h1', 'h2', 'dom'] True",
        "True arbiter.setools._constraint ConstraintExpression.__str__ function",
    ]


def test_rarer_policyrep_methods_load_on_first_use_and_answer_as_before(debian_path):
    """The symbols' aliases, attributes, members and expansion, the TE rules' expansion and
    hashing, the policy's copies, text and rarer lookups, the objects'
    ordering and ``repr()`` and the rarer enumerations are in ``_more``, imported on first
    use: a script's TE and type queries leave it unloaded; loaded, the methods are
    ``policyrep``'s classes' own and answer as setools does."""
    out = fresh(
        "import copy, pickle, sys\n"
        "import arbiter.setools as s\n"
        "p = s.SELinuxPolicy({!r})\n"
        "list(s.TERuleQuery(p, ruletype=['allow'], source='httpd_t').results())\n"
        "list(s.TypeQuery(p, attrs=['domain']).results())\n"
        "str(next(p.types())); pickle.dumps(next(p.types()))\n"
        "print('arbiter.setools._more' in sys.modules)\n"
        "t, a = p.lookup_type('httpd_t'), p.lookup_typeattr('domain')\n"
        "print(repr(t).endswith(', \"httpd_t\")>'), t != a, sorted([t, a])[0], t in a,\n"
        "      'domain' in [str(x) for x in t.attributes()], list(t.expand()) == [t],\n"
        "      list(a.expand()) == list(a), len(a) == len(list(a.expand())))\n"
        "r = next(s.TERuleQuery(p, ruletype=['allow'], source='domain', source_indirect=False,\n"
        "                       tclass=['file']).results())\n"
        "print(str(r.source), len(list(r.expand())) == len(r.source) * len(list(r.target.expand())),\n"
        "      hash(r) == hash(r), sorted(r.derive_expanded(t, t, {{'read'}}).perms))\n"
        "print(p.handle_unknown, p.target_platform, copy.copy(p) is p, copy.deepcopy(p) is p,\n"
        "      repr(p) == '<SELinuxPolicy(\"{{}}\")>'.format(p), str(p) == str(p.path),\n"
        "      pickle.loads(pickle.dumps(p)).path == p.path)\n"
        "print(p.lookup_user('system_u'), p.lookup_boolean('httpd_can_network_connect'),\n"
        "      sum(1 for _ in p.terules()) == p.allow_count + p.auditallow_count\n"
        "      + p.dontaudit_count + p.neverallow_count + p.type_transition_count\n"
        "      + p.type_change_count + p.type_member_count + p.allowxperm_count\n"
        "      + p.auditallowxperm_count + p.dontauditxperm_count + p.neverallowxperm_count,\n"
        "      [str(x) for x in p.lookup_role('object_r').types()][:0], 'read' in p.lookup_class('file'))\n"
        "H = s.policyrep.HandleUnknown\n"
        "print('arbiter.setools._more' in sys.modules, H.__module__, H.__qualname__,\n"
        "      pickle.loads(pickle.dumps(H.allow)) is H.allow, s.policyrep.Type.aliases.__module__,\n"
        "      s.policyrep.SELinuxPolicy.lookup_user.__qualname__)\n"
        .format(str(debian_path)))
    assert out.splitlines() == [
        "False",
        "True True domain True True True True True",
        "domain True True ['read']",
        "allow selinux True True True True True",
        "system_u httpd_can_network_connect True [] True",
        "True arbiter.setools.policyrep HandleUnknown True arbiter.setools.policyrep "
        "SELinuxPolicy.lookup_user",
    ]


# The submodules that hold methods a script rarely calls (``policyrep._Deferred``, and
# ``util``'s module ``__getattr__``), and a member of each that must still be its
# stand-in after the benchmark's queries.
RARER_PARTS = {
    "arbiter.setools._more": ("policyrep", "SELinuxPolicy", "version"),
    "arbiter.setools._mls_more": ("_mls", "_MLSPolicy", "lookup_category"),
    "arbiter.setools._constraint_more": ("_constraint", "ConstraintExprNode", "symbol_type"),
    "arbiter.setools._labeling_more": ("_labeling", "Context", "range_"),
    "arbiter.setools._mixins_more": ("mixins", "MatchContext", "_match_context"),
}


def test_every_benchmark_query_leaves_the_rarer_methods_unloaded(debian_path):
    """Every query of ``bench/setools_api.py`` (each kind a script runs), and the
    policycoreutils-style pass over a domain's rules, load none of the submodules of rarer
    methods: their members are still the stand-ins that import them (a class attribute
    compared by identity, as ``mixins._filter_equal`` compares ``__eq__``, would load
    one)."""
    bench = pathlib.Path(__file__).resolve().parents[1] / "bench" / "setools_api.py"
    out = fresh(
        "import runpy, sys\n"
        "import arbiter.setools as s\n"
        "s.install()\n"
        "queries = runpy.run_path({!r}, run_name='bench')['QUERIES']\n"
        "p = s.SELinuxPolicy({!r})\n"
        "for make in queries.values():\n"
        "    for _ in range(2):\n"
        "        list(make(p).results())\n"
        "for r in s.TERuleQuery(p, ruletype=['allow'], source='httpd_t',\n"
        "                       tclass=['file']).results():\n"
        "    (str(r.source), str(r.target), sorted(r.perms))\n"
        "print(sorted(m for m in sys.modules if m.endswith('_more')))\n"
        "import importlib\n"
        "for mod, cls, name in {!r}.values():\n"
        "    c = getattr(importlib.import_module('arbiter.setools.' + mod), cls)\n"
        "    print(type(vars(c)[name]).__name__)\n"
        "print('arbiter.setools._util_more' in sys.modules)\n"
        .format(str(bench), str(debian_path), RARER_PARTS))
    assert out.splitlines() == ["[]"] + ["_Deferred"] * len(RARER_PARTS) + ["False"]


def test_rarer_labeling_methods_load_on_first_use_and_answer_as_before(debian_path):
    """The labeling statements' text, hashing and keys, the contexts' text and range, the
    rarer statements' making and the policy's labeling listings are in
    ``_labeling_more``, imported on first use: the labeling queries leave it unloaded;
    loaded, the methods and properties are ``_labeling``'s classes' own and
    ``SELinuxPolicy``'s listings are the functions themselves."""
    out = fresh(
        "import pickle, sys\n"
        "import arbiter.setools as s\n"
        "p = s.SELinuxPolicy({!r})\n"
        "for q in (s.PortconQuery(p, ports=(80, 80)), s.GenfsconQuery(p, fs='proc'),\n"
        "          s.FSUseQuery(p, fs='ext4'), s.InitialSIDQuery(p, type_='kernel_t'),\n"
        "          s.NodeconQuery(p), s.NetifconQuery(p)):\n"
        "    list(q.results())\n"
        "print('arbiter.setools._labeling_more' in sys.modules)\n"
        "pc = next(c for c in p.portcons() if c.ports.low == 80)\n"
        "print(pc.statement(), str(pc) == pc.statement(), hash(pc) == hash(pc), pc == pc)\n"
        "print(str(pc.context), pc.context.range_, pickle.loads(pickle.dumps(pc)).statement())\n"
        "sid = p.lookup_initialsid('kernel')\n"
        "print(sid, sid.statement(), next(p.fs_uses()).statement(),\n"
        "      next(iter(p.genfscons())).statement())\n"
        "print(len(list(p.nodecons())), len(list(p.netifcons())), len(list(p.ibpkeycons())),\n"
        "      len(list(p.ibendportcons())), len(p.initialsids()) > 20)\n"
        "L = s.policyrep.Context\n"
        "print('arbiter.setools._labeling_more' in sys.modules,\n"
        "      type(vars(L)['range_']).__name__, L.range_.fget.__module__,\n"
        "      s.policyrep.Portcon.statement.__qualname__,\n"
        "      s.SELinuxPolicy.portcons is vars(s._labeling._LabelingPolicy)['portcons'])\n"
        .format(str(debian_path)))
    assert out.splitlines() == [
        "False",
        "portcon tcp 80 system_u:object_r:http_port_t:s0 True True True",
        "system_u:object_r:http_port_t:s0 s0 portcon tcp 80 system_u:object_r:http_port_t:s0",
        "kernel sid kernel system_u:system_r:kernel_t:s0 "
        "fs_use_xattr btrfs system_u:object_r:fs_t:s0; "
        "genfscon afs /  system_u:object_r:nfs_t:s0",
        "0 0 0 0 True",
        "True property arbiter.setools._labeling Portcon.statement True",
    ]


def test_rarer_util_helpers_and_properties_load_on_first_use_and_answer_as_before():
    """``util``'s rarer helpers are in ``_util_more`` and ``query``'s in ``_query_more``,
    served by their module's ``__getattr__`` as its own (``from setools.util import
    ...``, ``dir()``); the criteria that reach them answer as before. ``policyrep``'s,
    ``_mls``'s and ``_constraint``'s rarer properties and methods answer as before once
    loaded, as properties and functions of their classes."""
    out = fresh(
        "import sys\n"
        "import arbiter.setools as s\n"
        "p = s.SELinuxPolicy({!r})\n"
        "print('arbiter.setools._util_more' in sys.modules,\n"
        "      'arbiter.setools._query_more' in sys.modules)\n"
        "print(len(list(s.UserQuery(p, range_='s0 - s15:c0.c1023', range_overlap=True)\n"
        "           .results())),\n"
        "      len(list(s.MLSRuleQuery(p, default='s0', default_overlap=True).results())),\n"
        "      len(list(s.TypeQuery(p, alias='.', alias_regex=True).results())))\n"
        "from arbiter.setools.util import match_regex\n"
        "u = s.util\n"
        "print('arbiter.setools._util_more' in sys.modules, match_regex.__module__,\n"
        "      'match_level' in dir(u), s.xperm_str_to_tuple_ranges('0x08,0x30-0x40'),\n"
        "      u.match_range.__qualname__)\n"
        "print(len(list(s.ObjClassQuery(p, common='file', perms={{'read'}}).results())),\n"
        "      len(list(s.RoleQuery(p, types=['sysadm_t'], types_equal=True).results())),\n"
        "      'arbiter.setools._query_more' in sys.modules, s.query.match_set.__module__,\n"
        "      'match_name' in dir(s.query))\n"
        "print(p.version, p.handle_unknown, p.target_platform, str(p.path) == {!r},\n"
        "      p.lookup_type('unconfined_t').ispermissive, p.lookup_category('c5'),\n"
        "      len(list(p.levels())), len(list(p.categories())), next(p.mlsrules()).default)\n"
        "P = s.SELinuxPolicy\n"
        "print(type(vars(P)['version']).__name__, P.version.fget.__module__,\n"
        "      P.from_bytes.__func__.__qualname__, P.lookup_category.__module__,\n"
        "      s.policyrep.ConstraintExprNode.symbol_type.fget.__module__,\n"
        "      s.mixins.MatchContext._match_context.__module__)\n"
        .format(str(DEBIAN_MLS), str(DEBIAN_MLS)))
    assert out.splitlines() == [
        "False False",
        "7 23 262",
        "True arbiter.setools.util True [(8, 8), (48, 64)] match_range",
        "8 0 True arbiter.setools.query True",
        "33 deny selinux True 0 c5 16 1024 s0 - s15:c0.c1023",
        "property arbiter.setools.policyrep SELinuxPolicy.from_bytes arbiter.setools._mls "
        "arbiter.setools._constraint arbiter.setools.mixins",
    ]

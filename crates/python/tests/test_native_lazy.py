"""``arbiter._native`` makes only the exceptions and setools' classes at import; every other
group of names (the server and cache, denials, BSM, Landlock, the compiler, the analyses)
is registered on its first use through the module's ``__getattr__``. These tests pin that
a setools script builds none of them, and that the names listed for first use are exactly
the ones their groups register (a name added to a group but not to ``LAZY`` in lib.rs
would be missing from ``dir()`` and unreachable)."""

import subprocess
import sys

from conftest import POLICIES

# Classes of the groups made on first use, one or more per group.
NOT_MADE_BY_SETOOLS = ["Policy", "Server", "Avc", "Denials", "Landlock", "Build", "Record",
                       "Dta", "CheckerDb", "_fleet_merge"]


def fresh(code):
    """Runs ``code`` in a new interpreter with this one's environment; its stdout."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_setools_import_and_open_register_no_other_group():
    made = fresh(
        "import arbiter.setools as s, arbiter, arbiter._native as n\n"
        "s.SELinuxPolicy({!r})\n"
        "print(' '.join(sorted(set(vars(n)) | set(vars(arbiter)))))\n"
        .format(str(POLICIES / "features.33"))
    ).split()
    assert [name for name in NOT_MADE_BY_SETOOLS if name in made] == []
    assert {"PolicyDb", "TeResults", "QueryBase", "PolicyError", "Error"} <= set(made)


def test_every_listed_name_resolves_and_groups_add_only_listed_names():
    out = fresh(
        "import arbiter._native as n\n"
        "listed = set(dir(n))\n"
        "unlisted = set()\n"
        "for name in sorted(listed - set(vars(n))):\n"
        "    before = set(vars(n))\n"
        "    getattr(n, name)\n"
        "    unlisted |= set(vars(n)) - before - listed\n"
        "print(sorted(unlisted))\n"
        "print(sorted(listed - set(vars(n))))\n"
    ).splitlines()
    assert out == ["[]", "[]"]


def test_first_use_gives_the_same_object_each_time_and_through_the_package():
    out = fresh(
        "import arbiter, arbiter._native as n\n"
        "from arbiter._native import Policy\n"
        "from arbiter.denials import Denials\n"
        "print(Policy is n.Policy is arbiter.Policy, Denials is n.Denials,\n"
        "      Policy.__module__, Policy.__qualname__)\n"
    )
    assert out.split() == ["True", "True", "arbiter", "Policy"]


def test_unknown_names_raise_attribute_error():
    out = fresh(
        "import arbiter, arbiter._native as n\n"
        "print(hasattr(n, 'NoSuchThing'), hasattr(arbiter, 'NoSuchThing'))\n"
        "try:\n"
        "    n.NoSuchThing\n"
        "except AttributeError as e:\n"
        "    print(e)\n"
    ).splitlines()
    assert out == ["False False", "module 'arbiter._native' has no attribute 'NoSuchThing'"]

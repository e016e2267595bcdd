"""arbiter.setools' PolicyDifference against the real setools 4.4.1 (python3-setools), byte
for byte through tests/setools_corpus/policydiff.py, on pairs of policies: Debian's
default against its MLS policy (both ways) and pairs of the repository's own policies, and
a CIL pair (tests/policydiff_te, compiled by secilc at test time) written so that every TE
rule section has modified rules: permissions changed, a conditional rule whose permissions
the unconditional rules partly grant, attribute rules, ioctl sets, type_* defaults changed
with and without a file name or a conditional."""

import os
import pathlib
import shutil
import subprocess

import pytest

import arbiter.setools as st
from conftest import DEBIAN, DEBIAN_MLS, POLICIES
from test_setools import assert_same, needs_real

OWN_PAIRS = [("default.33", "features.33"), ("features.33", "features-deny.33"),
             ("default.24", "default.33"), ("bounds.24", "bounds.33"), ("tiny.28", "default.33"),
             ("features.33", "bounds.33")]


@needs_real
@pytest.mark.parametrize("pair", OWN_PAIRS, ids=lambda p: "-".join(p))
def test_policydiff_matches_setools_on_our_pairs(pair):
    assert_same("policydiff.py", *(POLICIES / n for n in pair))


@needs_real
@pytest.mark.skipif(not (DEBIAN.exists() and DEBIAN_MLS.exists()),
                    reason="the Debian default and MLS policies are not installed")
def test_policydiff_matches_setools_debian_default_vs_mls():
    # Without the TE rule sections: setools 4.4.1 computes them in Python over every
    # expanded rule, which takes it minutes on these policies (measured, see
    # docs/setools.md); they are compared on the repository's pairs and the CIL pair.
    assert_same("policydiff.py", DEBIAN, DEBIAN_MLS, "--no-te-rules")


@needs_real
@pytest.mark.skipif(not (DEBIAN.exists() and DEBIAN_MLS.exists()),
                    reason="the Debian default and MLS policies are not installed")
@pytest.mark.skipif(os.environ.get("ARBITER_PY_DIFF_TE_DEBIAN") != "1",
                    reason="set ARBITER_PY_DIFF_TE_DEBIAN=1 (setools takes minutes)")
def test_policydiff_te_sections_match_setools_debian_default_vs_mls():
    assert_same("policydiff.py", DEBIAN, DEBIAN_MLS)


TE_PAIR = pathlib.Path(__file__).parent / "policydiff_te"
SECILC = shutil.which("secilc")


@needs_real
@pytest.mark.skipif(SECILC is None, reason="secilc is not installed")
@pytest.mark.parametrize("order", [("left", "right"), ("right", "left")], ids="-".join)
def test_policydiff_te_sections_match_setools(tmp_path, order):
    for side in ("left", "right"):
        subprocess.run([SECILC, "-c", "33", "-o", str(tmp_path / side), "-f", "/dev/null",
                        str(TE_PAIR / "base.cil"), str(TE_PAIR / (side + ".cil"))], check=True)
    assert_same("policydiff.py", *(tmp_path / side for side in order))


def test_unknown_sections_raise_attribute_error():
    p = st.SELinuxPolicy(str(POLICIES / "default.33"))
    d = st.PolicyDifference(p, p)
    assert d.added_types == set() and d.modified_properties == []
    assert d.added_allows == [] and d.modified_type_transitions == []
    with pytest.raises(AttributeError, match="has no attribute"):
        d.added_nonsense

"""arbiter.setools' PolicyDifference against the real setools 4.4.1 (python3-setools), byte
for byte through tests/setools_corpus/policydiff.py, on pairs of policies: Debian's
default against its MLS policy (both ways) and pairs of the repository's own policies."""

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
    assert_same("policydiff.py", DEBIAN, DEBIAN_MLS)


def test_unimplemented_sections_say_so():
    p = st.SELinuxPolicy(str(POLICIES / "default.33"))
    d = st.PolicyDifference(p, p)
    assert d.added_types == set() and d.modified_properties == []
    with pytest.raises(AttributeError, match="not implemented by arbiter.setools yet"):
        d.added_allows
    with pytest.raises(AttributeError, match="has no attribute"):
        d.added_nonsense

"""arbiter.setools' Xen labeling against the real setools 4.4.1, on a Xen policy built at
test time by ``secilc -t xen`` from ``policies/cil/xen.cil`` (every Xen statement, ranges,
a 64-bit I/O memory range, MLS). The corpus script ``setools_corpus/xen.py`` runs under
both; the outputs must be identical byte for byte."""

import pickle
import shutil
import subprocess

import pytest

import arbiter.setools as st
from conftest import POLICIES, REPO
from test_setools import assert_same, needs_real


@pytest.fixture(scope="module")
def xen_policy(tmp_path_factory):
    if shutil.which("secilc") is None:
        pytest.skip("secilc is not installed")
    out = tmp_path_factory.mktemp("xen") / "xen.30"
    subprocess.run(["secilc", "-t", "xen", "-c", "30", "-o", str(out), "-f", "/dev/null",
                    str(REPO / "policies" / "cil" / "xen.cil")], check=True)
    return out


@needs_real
def test_xen_corpus_matches_setools(xen_policy):
    assert_same("xen.py", xen_policy)


def test_xen_policy_is_xen_and_selinux_policies_have_no_xen_statements(xen_policy):
    p = st.SELinuxPolicy(str(xen_policy))
    assert p.target_platform is st.policyrep.PolicyTarget.xen
    assert p.pirqcon_count == 3 and p.devicetreecon_count == 3
    q = st.SELinuxPolicy(str(POLICIES / "default.33"))
    assert q.target_platform is st.policyrep.PolicyTarget.selinux
    assert [len(getattr(q, n)()) for n in ("pirqcons", "iomemcons", "ioportcons",
                                            "pcidevicecons", "devicetreecons")] == [0] * 5


def test_xen_statements_round_trip_through_pickle(xen_policy):
    p = st.SELinuxPolicy(str(xen_policy))
    def listing():
        return [x for name in ("pirqcons", "iomemcons", "ioportcons", "pcidevicecons",
                               "devicetreecons") for x in getattr(p, name)()]

    objs = listing()
    assert len(objs) == 17
    # Pickled together with a second listing: both come back in one policy, pairwise equal.
    back, again = pickle.loads(pickle.dumps((objs, listing())))
    for a, b, c in zip(objs, back, again):
        assert type(a) is type(b) and str(a) == str(b) and hash(a) == hash(b)
        assert b.policy is back[0].policy and b == c

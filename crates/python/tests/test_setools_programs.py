"""setools' own programs, unchanged, on arbiter.setools: Debian's /usr/bin/seinfo and
/usr/bin/sesearch run once as installed (the real setools) and once under
``python3 -m arbiter.setools``; the outputs must be identical byte for byte. seinfo
``--all`` lists every symbol, MLS symbol, constraint, default and labeling statement with
the statistics block; ``-x`` expands them."""

import os
import subprocess
import sys

import pytest

from conftest import DEBIAN, DEBIAN_MLS, POLICIES
from test_setools import real_setools_available

SEINFO = "/usr/bin/seinfo"
SESEARCH = "/usr/bin/sesearch"

needs_programs = pytest.mark.skipif(
    not (os.path.exists(SEINFO) and os.path.exists(SESEARCH) and real_setools_available()),
    reason="setools 4.4.1's seinfo/sesearch are not installed")

OWN = [POLICIES / n for n in ("features.33", "tiny.28")]
POLICY_FILES = OWN + [p for p in (DEBIAN, DEBIAN_MLS) if p.exists()]

RUNS = [
    (SEINFO, "--all"),
    (SESEARCH, "--range_trans"),
    (SEINFO, "-x", "--all"),
    (SEINFO, "--constrain", "file"),
    (SEINFO, "--portcon", "80"),
    (SEINFO, "--nodecon", "127.0.0.1"),
    (SEINFO, "--level", "s0"),
    (SESEARCH, "--range_trans", "-c", "process", "-ep"),
]


def same_output(program, policy, *args):
    env = dict(os.environ, PYTHONHASHSEED="0")
    real = subprocess.run([program, str(policy), *args], capture_output=True, text=True,
                          env=env, timeout=600)
    ours = subprocess.run([sys.executable, "-m", "arbiter.setools", program, str(policy), *args],
                          capture_output=True, text=True, env=env, timeout=600)
    assert real.returncode == ours.returncode, (real.stderr[-500:], ours.stderr[-500:])
    assert real.stdout == ours.stdout, "{} {} {}".format(program, policy, args)
    assert real.stderr == ours.stderr


@needs_programs
@pytest.mark.parametrize("policy", POLICY_FILES, ids=lambda p: str(p).replace("/", "_"))
def test_seinfo_and_sesearch_unchanged_on_arbiter(policy):
    for program, *args in RUNS:
        # Each run is two interpreter starts; on the Debian policies only the complete
        # listing and the range_transition search run (the rest is their subset).
        if policy not in OWN and args not in (["--all"], ["--range_trans"]):
            continue
        same_output(program, policy, *args)

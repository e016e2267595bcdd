"""paths.py on Debian's MLS policy: arbiter.setools against the real setools' output.

The real setools 4.4.1 took 31 minutes of wall time for paths.py on the MLS policy here (at
nice 10 on a loaded 2-core machine: three information flow subgraphs and the domain
transition graph), so its output is generated once by ``paths_mls_regen.sh`` (beside this
file) and committed as
``paths_mls_sample.out``, with the digest of the policy it came from in
``paths_mls_sample.sha256``. This test runs ``python3 -m arbiter.setools paths.py`` on the
installed MLS policy and compares its output with that file byte for byte, when
``ARBITER_SETOOLS_MLS_PATHS=1``. A policy whose digest differs from the recorded one is
skipped (regenerate the file for it); a missing expected file fails.
"""

import hashlib
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
POLICY = pathlib.Path("/etc/selinux/mls/policy/policy.33")
EXPECTED = HERE / "paths_mls_sample.out"
DIGEST = HERE / "paths_mls_sample.sha256"


@pytest.mark.skipif(not os.environ.get("ARBITER_SETOOLS_MLS_PATHS"),
                    reason="set ARBITER_SETOOLS_MLS_PATHS=1 to compare paths.py on the MLS "
                           "policy with the committed setools output (arbiter needs seconds)")
def test_paths_match_committed_setools_output_on_mls():
    if not POLICY.exists():
        pytest.skip(f"{POLICY} is not installed")
    assert EXPECTED.exists() and DIGEST.exists(), \
        "no committed setools output: run paths_mls_regen.sh"
    digest = hashlib.sha256(POLICY.read_bytes()).hexdigest()
    if digest != DIGEST.read_text().strip():
        pytest.skip(f"{POLICY} is not the policy the committed output was made from; "
                    "run paths_mls_regen.sh")
    # The hash seed test_setools.py and paths_mls_regen.sh use.
    env = dict(os.environ, PYTHONHASHSEED="0")
    ours = subprocess.run([sys.executable, "-m", "arbiter.setools", str(HERE / "paths.py"),
                           str(POLICY), "sample"], capture_output=True, text=True, env=env,
                          timeout=3600)
    assert ours.returncode == 0, ours.stderr[-2000:]
    expected = EXPECTED.read_text()
    if ours.stdout != expected:
        a, b = expected.splitlines(), ours.stdout.splitlines()
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                pytest.fail("first difference at line {}:\n  setools: {}\n  arbiter: {}"
                            .format(i + 1, x[:400], y[:400]))
        pytest.fail("{} lines from setools, {} from arbiter".format(len(a), len(b)))

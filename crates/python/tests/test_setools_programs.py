"""setools' own programs, unchanged, on arbiter.setools: Debian's /usr/bin/seinfo and
/usr/bin/sesearch run once as installed (the real setools) and once under
``python3 -m arbiter.setools``; the outputs must be identical byte for byte. seinfo
``--all`` lists every symbol, MLS symbol, constraint, default and labeling statement with
the statistics block; ``-x`` expands them."""

import os
import re
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
    # -v: setools' INFO lines on stderr (opening the policy, each query).
    (SESEARCH, "-v", "--range_trans"),
    (SEINFO, "-v", "--portcon", "80"),
    # --debug: also each query's criteria at DEBUG (the time stamps are not compared).
    (SESEARCH, "--debug", "--range_trans"),
    (SESEARCH, "--debug", "--allow", "-p", "read,write", "-ep", "-s", "^a", "-rs"),
    (SEINFO, "--debug", "--portcon", "80"),
]


def same_output(program, policy, *args):
    env = dict(os.environ, PYTHONHASHSEED="0")
    real = subprocess.run([program, str(policy), *args], capture_output=True, text=True,
                          env=env, timeout=600)
    ours = subprocess.run([sys.executable, "-m", "arbiter.setools", program, str(policy), *args],
                          capture_output=True, text=True, env=env, timeout=600)
    assert real.returncode == ours.returncode, (real.stderr[-500:], ours.stderr[-500:])
    assert real.stdout == ours.stdout, "{} {} {}".format(program, policy, args)
    assert without_times(real.stderr) == without_times(ours.stderr)


def without_times(text):
    """``--debug``'s log lines (``TIME|LEVEL|LOGGER|MESSAGE``) without their time stamps."""
    return re.sub(r"(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\|", "TIME|", text)


@needs_programs
@pytest.mark.parametrize("policy", POLICY_FILES, ids=lambda p: str(p).replace("/", "_"))
def test_seinfo_and_sesearch_unchanged_on_arbiter(policy):
    for program, *args in RUNS:
        # Each run is two interpreter starts; on the Debian policies only the complete
        # listing and the range_transition search run (the rest is their subset).
        if policy not in OWN and args not in (["--all"], ["--range_trans"]):
            continue
        same_output(program, policy, *args)


# setools' own log lines (``setools.*`` loggers; libsepol's are not setools') while opening
# policies: by path, the running policy (``SELinuxPolicy()``), a missing file.
OPEN_LOG = r"""
import logging, sys
handler = logging.StreamHandler(sys.stdout)
handler.addFilter(logging.Filter("setools"))
handler.setFormatter(logging.Formatter("%(levelname)s|%(name)s|%(message)s"))
logging.getLogger().addHandler(handler)
logging.getLogger().setLevel(logging.DEBUG)
import setools
for path in sys.argv[1:]:
    try:
        print(setools.SELinuxPolicy(path or None))
    except Exception as e:
        print(type(e).__name__, e)
"""


@needs_programs
def test_open_log_lines_are_setools(tmp_path):
    script = tmp_path / "open_log.py"
    script.write_text(OPEN_LOG)
    args = ["", str(POLICIES / "features.33"), str(POLICIES / "tiny.28"), "/nonexistent"]
    if DEBIAN_MLS.exists():
        args.append(str(DEBIAN_MLS))
    env = dict(os.environ, PYTHONHASHSEED="0")
    real = subprocess.run(["/usr/bin/python3", str(script), *args], capture_output=True,
                          text=True, env=env, timeout=600)
    ours = subprocess.run([sys.executable, "-m", "arbiter.setools", str(script), *args],
                          capture_output=True, text=True, env=env, timeout=600)
    assert "Opening SELinux policy" in real.stdout, real.stdout + real.stderr
    assert real.stdout == ours.stdout

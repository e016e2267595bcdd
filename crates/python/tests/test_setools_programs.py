"""setools' own programs, unchanged, on arbiter.setools: Debian's /usr/bin/seinfo and
/usr/bin/sesearch run once as installed (the real setools) and once under
``python3 -m arbiter.setools``; the outputs must be identical byte for byte. seinfo
``--all`` lists every symbol, MLS symbol, constraint, default and labeling statement with
the statistics block; ``-x`` expands them."""

import os
import pathlib
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


# What a program run by ``python3 -m arbiter.setools PROGRAM`` sees of how it was run; the
# runner runs a plain script without ``runpy.run_path`` (see ``arbiter/setools/__main__.py``),
# so each run is compared with ``runpy.run_path(PROGRAM, run_name="__main__")``'s.
PROBE = """# -*- coding: latin-1 -*-
import pickle, sys
class Kept:
    pass
main = sys.modules["__main__"]
print(__name__, __file__ == sys.argv[0], __package__ == "", __spec__ and __spec__.name,
      type(__loader__).__name__, __cached__, __doc__, main.__dict__ is globals(), sys.argv[1:])
print(type(pickle.loads(pickle.dumps(Kept()))).__qualname__, "\xe9")
"""

RUN_PATH = ("import runpy, sys\n"
            "sys.argv = sys.argv[1:]\n"
            "runpy.run_path(sys.argv[0], run_name='__main__')\n"
            "print(sys.modules['__main__'].__name__, sys.argv)\n")
RUNNER_AFTER = ("import sys\n"
                "from arbiter.setools.__main__ import main\n"
                "sys.argv = ['runner'] + sys.argv[1:]\n"
                "main()\n"
                "print(sys.modules['__main__'].__name__, sys.argv)\n")


def run_both(program, *args):
    """``program`` run by ``runpy.run_path`` and by the runner's ``main`` (each followed
    by what ``sys.modules["__main__"]`` and ``sys.argv`` are after it): both outputs."""
    runs = []
    for code in (RUN_PATH, RUNNER_AFTER):
        out = subprocess.run([sys.executable, "-c", code, str(program), *args],
                             capture_output=True, timeout=120)
        assert out.returncode == 0, out.stderr.decode()
        runs.append(out.stdout)
    return runs


def test_runner_runs_a_script_as_run_path_does(tmp_path):
    script = tmp_path / "probe.py"
    script.write_bytes(PROBE.encode("latin-1"))
    real, ours = run_both(script, "a", "--b")
    assert b"__main__ True True None NoneType None None True ['a', '--b']" in real
    assert ours == real


def test_runner_runs_compiled_scripts_directories_and_zips_as_run_path_does(tmp_path):
    import py_compile
    import zipfile

    source = tmp_path / "probe.py"
    source.write_bytes(PROBE.encode("latin-1"))
    compiled = tmp_path / "probe.pyc"
    py_compile.compile(str(source), cfile=str(compiled), doraise=True)
    folder = tmp_path / "app"
    folder.mkdir()
    (folder / "__main__.py").write_bytes(PROBE.encode("latin-1"))
    archive = tmp_path / "app.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(folder / "__main__.py", "__main__.py")
    for program in (compiled, folder, archive):
        real, ours = run_both(program, "x")
        assert ours == real, program


def test_runner_imports_neither_pkgutil_nor_typing_for_a_script(tmp_path):
    """``runpy.run_path`` imports ``pkgutil``, which imports ``typing`` (0.8 MB resident);
    the runner does not for a plain script. Without site (-S): some interpreters' site
    hooks import them."""
    import arbiter

    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(arbiter.__file__).parents[1]))
    script = tmp_path / "mods.py"
    script.write_text("import sys\nprint('pkgutil' in sys.modules, 'typing' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-S", "-m", "arbiter.setools", str(script)],
                         capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "False False\n"


# Whether CPython's AST node classes exist: ``compile()`` builds them (once per
# interpreter); running a script does not. Printed after a query class is constructed twice
# with the same keywords, which installs its generated ``__init__`` (see ``query.py``).
AST_PROBE = """import gc, sys
import setools
policy = setools.SELinuxPolicy(sys.argv[1])
for _ in range(3):
    list(setools.BoolQuery(policy, default=True).results())
print(sum(1 for o in gc.get_objects() if isinstance(o, type) and o.__module__ == "ast"))
"""


def test_runner_and_generated_inits_build_no_ast_classes(tmp_path):
    """The runner compiles a script, and the query classes their ``__init__``, without
    ``compile()``, whose AST classes were about 0.2 MB of a whole script's memory: none
    exist afterwards, as when the interpreter runs the script itself. Without site (-S):
    some interpreters' site hooks build them."""
    import arbiter

    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(arbiter.__file__).parents[1]))
    script = tmp_path / "ast_probe.py"
    script.write_text(AST_PROBE)
    out = subprocess.run([sys.executable, "-S", "-m", "arbiter.setools", str(script),
                          str(POLICIES / "features.33")],
                         capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "0\n"


def _error_lines(stderr):
    """The lines of a traceback that say what and where: the failing file's location lines
    and the exception line (the runners' own frames differ)."""
    lines = stderr.decode().splitlines()
    return [ln for ln in lines if "probe" in ln or not ln.startswith(" ")][-4:]


@pytest.mark.parametrize("source", [
    b"x = 1\nif x\n    pass\n",          # a syntax error
    b"# -*- coding: latin-1 -*-\ns = '\xe9'\n)\n",  # one after a coding declaration
    b"x = 1\n\x00\n",                   # a NUL byte: compile's own error
    b"\xef\xbb\xbfprint('bom')\n  x\n",  # an indentation error after a BOM
])
def test_runner_reports_a_bad_script_as_run_path_does(tmp_path, source):
    script = tmp_path / "probe.py"
    script.write_bytes(source)
    outs = []
    for code in (RUN_PATH, RUNNER_AFTER):
        out = subprocess.run([sys.executable, "-c", code, str(script)], capture_output=True,
                             timeout=120)
        assert out.returncode == 1
        outs.append(_error_lines(out.stderr))
    assert outs[0] == outs[1]
    assert any("Error" in ln for ln in outs[0])

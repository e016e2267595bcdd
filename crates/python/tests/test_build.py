"""arbiter.build.compile against secilc 3.4: the written policy and file_contexts are
byte-identical to secilc's for the CIL corpus of crates/cil (base.cil plus each case, with
the options on its `; args:` line), and failures carry secilc's exit status."""

import shutil
import subprocess

import pytest

import arbiter
from arbiter.build import Build, CompileError, compile
from conftest import REPO

CORPUS = REPO / "crates" / "cil" / "tests" / "corpus"
SECILC = shutil.which("secilc")

# secilc flag -> compile() keyword (a flag taking a value maps its value).
FLAGS = {"-M": ("mls", lambda v: v == "true"), "-c": ("policy_version", int),
         "-U": ("handle_unknown", str), "-X": ("expand_size", int)}
SWITCHES = {"-D": "disable_dontaudit", "-P": "preserve_tunables", "-Q": "qualified_names",
            "-m": "multiple_decls", "-N": "disable_neverallow", "-G": "expand_generated",
            "-O": "optimize"}


def case_args(path):
    first = path.read_text().splitlines()[0] if path.read_text() else ""
    return first.split("args:", 1)[1].split() if first.startswith("; args:") else []


def kwargs(argv):
    kw, it = {}, iter(argv)
    for a in it:
        if a in FLAGS:
            name, conv = FLAGS[a]
            kw[name] = conv(next(it))
        elif a in SWITCHES:
            kw[SWITCHES[a]] = True
        elif a == "-v":
            kw["verbose"] = kw.get("verbose", 0) + 1
    return kw


def secilc(tmp_path, argv, files):
    r = subprocess.run([SECILC, *argv, "-o", str(tmp_path / "policy"), "-f",
                        str(tmp_path / "fc"), *map(str, files)], capture_output=True, timeout=120)
    if r.returncode:
        return r.returncode, None, None
    return 0, (tmp_path / "policy").read_bytes(), (tmp_path / "fc").read_bytes()


@pytest.mark.skipif(SECILC is None, reason="secilc not installed")
def test_corpus_equals_secilc(tmp_path):
    cases = sorted(p for p in CORPUS.glob("*.cil") if p.name != "base.cil")
    assert len(cases) > 50
    compared = failed = 0
    for case in cases:
        argv = case_args(case)
        files = [CORPUS / "base.cil", case]
        status, data, fc = secilc(tmp_path, argv, files)
        try:
            b = compile(files, **kwargs(argv))
        except CompileError as e:
            assert status != 0, f"{case.name}: secilc built it, we refused: {e}"
            assert e.status == status, case.name
            failed += 1
            continue
        except ValueError:
            continue  # an option value secilc itself refuses at the command line
        assert status == 0, f"{case.name}: secilc refused it (status {status}), we built it"
        assert b.data == data, case.name
        assert b.file_contexts == fc, case.name
        compared += 1
    assert compared > 30 and failed > 10


def test_policy_is_the_written_bytes_read_back(tmp_path):
    b = compile([CORPUS / "base.cil", CORPUS / "ok_booleanif.cil"])
    assert isinstance(b, Build) and isinstance(b.policy, arbiter.Policy)
    b.write(tmp_path / "policy.33", tmp_path / "fc")
    again = arbiter.Policy.open(tmp_path / "policy.33")
    assert again.types() == b.policy.types() and again.classes() == b.policy.classes()
    text = (CORPUS / "base.cil").read_text()
    assert compile([("base.cil", text)]).data == compile([CORPUS / "base.cil"]).data


def test_bad_input(tmp_path):
    with pytest.raises(CompileError) as e:
        compile([tmp_path / "missing.cil"])
    assert e.value.status == 255 and "Could not open file" in e.value.messages[0]
    with pytest.raises(CompileError) as e:
        compile([("x.cil", "(type")])
    assert e.value.messages and e.value.status == 255
    with pytest.raises(CompileError):
        compile([])
    with pytest.raises(ValueError):
        compile([CORPUS / "base.cil"], policy_version=40)
    with pytest.raises(ValueError):
        compile([CORPUS / "base.cil"], handle_unknown="maybe")
    with pytest.raises(TypeError):
        compile([42])

"""arbiter.denials against the `arbiter why` binary and against audit2why / audit2allow
(policycoreutils) on generated logs of every format: the text must be identical."""

import json
import pickle
import shutil
import subprocess

import pytest

import arbiter
from arbiter.denials import Denial, Denials, LogError, Report
from denial_logs import generate, run_cli


@pytest.fixture(scope="module")
def den(debian_path):
    return Denials(debian_path)


@pytest.fixture(scope="module")
def mixed_log(debian_path, tmp_path_factory):
    return generate(debian_path, "mixed", 1500, 5, tmp_path_factory.mktemp("d") / "mixed.log")


def test_why_text_equals_the_cli(den, debian_path, mixed_log):
    got = den.why(files=[mixed_log])
    assert isinstance(got, Report) and got.records > 0
    assert got.text == run_cli(debian_path, mixed_log)
    assert str(got) == got.text


def test_why_from_text_equals_from_file(den, mixed_log):
    text = mixed_log.read_text()
    assert den.why(text).text == den.why(files=[mixed_log]).text
    assert den.why(text.encode()).text == den.why(files=[mixed_log]).text


@pytest.mark.parametrize("flags,kw", [
    ([], {}),
    (["-m", "localfix", "-r"], {"module": "localfix", "requires": True}),
    (["-D", "-x", "-e"], {"dontaudit": True, "xperms": True, "explain_rules": True}),
    (["-v", "-t", "httpd"], {"verbose": True, "type_regex": "httpd"}),
    (["--json"], {"json": True}),
])
def test_allow_text_equals_the_cli(den, debian_path, mixed_log, flags, kw):
    assert den.allow(files=[mixed_log], **kw).text == \
        run_cli("--allow", *flags, debian_path, mixed_log)


def test_explain_and_json_why_equal_the_cli(den, debian_path, mixed_log):
    assert den.why(files=[mixed_log], explain=True).text == \
        run_cli("--explain", debian_path, mixed_log)
    assert den.why(files=[mixed_log], json=True).text == run_cli("--json", debian_path, mixed_log)


def test_records_are_the_cli_json_objects(den, debian_path, mixed_log):
    recs = den.records(files=[mixed_log])
    cli = [json.loads(l) for l in run_cli("--json", debian_path, mixed_log).splitlines()]
    assert len(recs) == len(cli) > 0
    for r, c in zip(recs, cli):
        assert isinstance(r, Denial)
        assert (r.source, r.line, r.record, r.denied, r.scontext, r.tcontext, r.tclass, r.perms,
                r.ioctlcmd, r.comm, r.exe, r.name, r.verdict, r.code, r.constraint) == \
            (c["source"], c["line"], c["record"], c["denied"], c["scontext"], c["tcontext"],
             c["tclass"], c["perms"], c["ioctlcmd"], c["comm"], c["exe"], c["name"],
             c["verdict"], c.get("code"), c.get("constraint"))
        assert r.booleans == [(b["name"], b["value"]) for b in c.get("booleans", [])]
        assert r.allowed == (c["verdict"] == "ALLOW")
    assert {r.verdict for r in recs} >= {"TERULE"}


@pytest.mark.parametrize("fmt", ["audit.log", "ausearch", "journal", "dmesg", "logcat", "user_avc"])
def test_audit2why_and_audit2allow_agree(den, debian_path, tmp_path, fmt):
    if not (shutil.which("audit2why") and shutil.which("audit2allow")):
        pytest.skip("audit2why/audit2allow not installed (policycoreutils-python-utils)")
    log = generate(debian_path, fmt, 300, 11, tmp_path / "log")
    why = subprocess.run(["audit2why", "-p", str(debian_path), "-i", str(log)],
                         capture_output=True, text=True, timeout=600)
    allow = subprocess.run(["audit2allow", "-p", str(debian_path), "-i", str(log)],
                           capture_output=True, text=True, timeout=600)
    assert den.why(files=[log]).text == why.stdout
    assert den.allow(files=[log]).text == allow.stdout


def test_wrong_types_raise_type_error(den, mixed_log):
    with pytest.raises(TypeError):
        den.why(123)
    with pytest.raises(TypeError):
        den.why(files=str(mixed_log))
    with pytest.raises(TypeError):
        den.why(files=[1])
    with pytest.raises(TypeError):
        den.why()
    with pytest.raises(TypeError):
        Denials(3.5)


def test_bad_files_and_options_raise_arbiter_errors(den, tmp_path):
    missing = tmp_path / "nope.log"
    with pytest.raises(LogError) as e:
        den.why(files=[missing])
    assert isinstance(e.value, arbiter.Error) and e.value.path == str(missing)
    with pytest.raises(arbiter.PolicyError):
        Denials(b"not a policy")
    with pytest.raises(arbiter.PolicyError):
        Denials(tmp_path / "no-policy")
    with pytest.raises(ValueError):
        den.allow("x", module="bad name!")
    with pytest.raises(ValueError):
        den.allow("x", type_regex="(")


def test_garbage_input_is_counted_not_fatal(den):
    r = den.why(b"\xff\xfe avc: denied { \n" + b"x" * 3_000_000 + b"\nhello\n")
    assert r.malformed >= 1 and r.lines == 3 and r.problems


def test_pickle_by_path_and_by_bytes(den, debian_path, mixed_log):
    text = mixed_log.read_text()
    again = pickle.loads(pickle.dumps(den))
    assert again.allow(text).text == den.allow(text).text
    by_bytes = pickle.loads(pickle.dumps(Denials(debian_path.read_bytes())))
    assert by_bytes.allow(text).text == den.allow(text).text


def test_digest_kept_lines_reproduce_allow(den, mixed_log):
    lines = mixed_log.read_text().splitlines(keepends=True)
    chunks = ["".join(lines[i:i + 97]) for i in range(0, len(lines), 97)]
    kept, roles = [], []
    for c in chunks:
        d = den.digest(c)
        kept.extend(d.kept)
        roles.extend(d.roles)
    assert 0 < len(kept) < len(lines)
    assert den.merge_allow(kept, roles, True) == den.allow(files=[mixed_log]).text
    assert den.merge_allow(kept, roles, True, module="m", requires=True, xperms=True) == \
        den.allow(files=[mixed_log], module="m", requires=True, xperms=True).text
    assert den.merge_allow([], [], False) == den.allow("no selinux here\n").text == ""
    with pytest.raises(ValueError):
        den.merge_allow([("a", "b", "c", ["x"], None, (9, [], None))], [], True)
    with pytest.raises(TypeError):
        den.merge_allow([1], [], True)


def test_stub_lists_every_member():
    import ast
    import inspect
    import pathlib

    import arbiter.denials as mod
    stub = pathlib.Path(__file__).resolve().parents[1] / "python" / "arbiter" / "denials.pyi"
    tree = ast.parse(stub.read_text())
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    for name in mod.__all__:
        assert name in classes, name
        cls = getattr(mod, name)
        stubbed = {n.name for n in classes[name].body if isinstance(n, ast.FunctionDef)} | \
            {n.target.id for n in classes[name].body if isinstance(n, ast.AnnAssign)}
        public = {m for m in dir(cls) if not m.startswith("_")} - set(dir(Exception))
        assert public <= stubbed, (name, public - stubbed)
        if issubclass(cls, BaseException):
            continue  # exception attributes are class-level None defaults, documented on the class
        for m in public:
            assert inspect.getdoc(getattr(cls, m)), f"{name}.{m} undocumented"

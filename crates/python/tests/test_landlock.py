"""arbiter.landlock against `arbiter landlock check` (the same evaluator behind the command
line): verdicts, errnos and the explanation of which layer denies, on a tree made here."""

import json
import os
import pickle
import subprocess

import pytest

from arbiter.landlock import Landlock, LandlockConfigError
from conftest import arbiter_bin


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro" / "f").write_text("x")
    (tmp_path / "rw").mkdir()
    (tmp_path / "rw" / "g").write_text("y")
    base = tmp_path / "base.toml"
    base.write_text(f"""abi = 5
[[ruleset]]
handled_access_fs = ["abi.all"]
handled_access_net = ["bind_tcp", "connect_tcp"]
[[path_beneath]]
allowed_access = ["abi.read_execute"]
parent = ["{tmp_path}"]
[[path_beneath]]
allowed_access = ["abi.all"]
parent = ["{tmp_path}/rw"]
[[net_port]]
allowed_access = ["connect_tcp"]
port = [443]
""")
    app = tmp_path / "app.json"
    app.write_text(json.dumps({
        "ruleset": [{"handledAccessFs": ["write_file", "remove_file"]}],
        "pathBeneath": [{"allowedAccess": ["write_file"], "parent": [str(tmp_path / "ro")]}],
    }))
    return tmp_path, [base, app]


def ops(t):
    return [f"read {t}/ro/f", f"write {t}/ro/f", f"write {t}/rw/g", f"unlink {t}/rw/g",
            f"mkdir {t}/rw/new", f"readdir {t}", f"open {t}/rw/g rdwr,trunc",
            f"rename {t}/rw/g {t}/ro/g2", f"link {t}/ro/f {t}/rw/f2", f"read {t}/missing",
            "connect-tcp 443", "connect-tcp 80", "bind-tcp 8080", "exec /bin/sh"]


def cli_check(layers, op, *flags):
    b = arbiter_bin()
    if b is None:
        pytest.skip("no `arbiter` binary: set ARBITER_BIN or `cargo build --release -p arbiter`")
    args = [b, "landlock", "check"]
    for layer in layers:
        args += ["--layer", str(layer)]
    return subprocess.run([*args, *flags, "--", *op.split()], capture_output=True, text=True,
                          timeout=60).stdout


@pytest.mark.parametrize("nlayers", [0, 1, 2])
def test_checks_equal_the_cli(tree, nlayers):
    t, layers = tree
    ll = Landlock(layers[:nlayers])
    assert len(ll) == nlayers
    verdicts = set()
    for op in ops(t):
        ev = ll.check(op)
        want = [ev.line] + [f"  {line}" for line in ev.explanation]
        assert cli_check(layers[:nlayers], op, "--explain").splitlines() == want, op
        j = json.loads(cli_check(layers[:nlayers], op, "--json"))
        assert (j["verdict"], j["errno"], j["explanation"]) == (ev.verdict, ev.errno,
                                                                ev.explanation), op
        assert ev.allowed == (ev.verdict == "allowed") == bool(ev)
        verdicts.add(ev.verdict)
    assert verdicts == ({"allowed", "fails"} if nlayers == 0 else {"allowed", "denied", "fails"})


def test_explanation_names_the_denying_layer(tree):
    t, layers = tree
    ev = Landlock(layers).check(["write", f"{t}/rw/g"])
    assert ev.verdict == "denied" and ev.errno == "EACCES" and ev.errno_code == 13
    assert any(line.startswith("layer 2 denies") for line in ev.explanation)
    assert not any(line.startswith("layer 1 denies") for line in ev.explanation)


def test_pickle_and_many(tree):
    t, layers = tree
    ll = Landlock(layers, layout="sorted")
    back = pickle.loads(pickle.dumps(ll))
    assert back.files == ll.files and len(back) == 2
    assert [e.line for e in back.check_many(ops(t))] == [e.line for e in ll.check_many(ops(t))]


def test_bad_input(tree, tmp_path):
    t, layers = tree
    bad = tmp_path / "bad.toml"
    bad.write_text("[[ruleset]]\nhandled_access_fs = [\"no_such_right\"]\n")
    with pytest.raises(LandlockConfigError) as e:
        Landlock([bad])
    assert e.value.file == str(bad)
    with pytest.raises(LandlockConfigError):
        Landlock([tmp_path / "missing.toml"])
    with pytest.raises(ValueError):
        Landlock(layers).check("fly /tmp")
    with pytest.raises(ValueError):
        Landlock(layers, layout="tree")
    with pytest.raises(TypeError):
        Landlock(layers).check(42)

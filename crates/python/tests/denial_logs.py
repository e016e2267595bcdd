"""Generated denial logs for the denials and Dask tests: crates/denials' `gen_denials`
example ($GEN_DENIALS_BIN, else target/release/examples/gen_denials, which scripts/test.sh
builds), and the `arbiter` binary to compare with."""

import os
import pathlib
import subprocess

import pytest

from conftest import REPO, arbiter_bin

FORMATS = ["audit.log", "ausearch", "journal", "dmesg", "logcat", "user_avc", "mixed"]


def gen_bin() -> str:
    env = os.environ.get("GEN_DENIALS_BIN")
    path = env or str(REPO / "target" / "release" / "examples" / "gen_denials")
    if not os.access(path, os.X_OK):
        pytest.skip("no gen_denials: set GEN_DENIALS_BIN or "
                    "`cargo build --release -p arbiter-denials --examples`")
    return path


def cli() -> str:
    b = arbiter_bin()
    if b is None:
        pytest.skip("no `arbiter` binary: set ARBITER_BIN or `cargo build --release -p arbiter`")
    return b


def generate(policy, fmt: str, count: int, seed: int, out: pathlib.Path) -> pathlib.Path:
    with open(out, "wb") as f:
        subprocess.run([gen_bin(), str(policy), fmt, str(count), str(seed)], stdout=f,
                       check=True, timeout=300)
    return out


def run_cli(*args) -> str:
    r = subprocess.run([cli(), "why", *map(str, args)], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[:2000]
    return r.stdout

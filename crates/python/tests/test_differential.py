"""compute_av_many against the command line's `arbiter av` on random queries of the Debian
policy: two front ends over the engine must give the same access vectors, bit for bit.

The binary is $ARBITER_BIN, else the workspace's target/release/arbiter; the number of
queries is $ARBITER_PY_DIFF_QUERIES (default 200,000)."""

import os
import random
import subprocess

import pytest

import arbiter
from conftest import arbiter_bin

QUERIES = int(os.environ.get("ARBITER_PY_DIFF_QUERIES", "200000"))


def random_queries(policy: arbiter.Policy, n: int, seed: int = 8):
    """Valid contexts only (system_u with system_r's domains as sources, object_r with any
    type as targets, levels inside system_u's range), every class, plus a class the policy
    lacks (handle_unknown decides)."""
    rng = random.Random(seed)
    domains = policy.role_types("system_r")
    types = policy.types()
    classes = policy.classes() + ["no_such_class"]

    def level():
        r = rng.random()
        if r < 0.6:
            return "s0"
        if r < 0.8:
            return f"s0:c{rng.randrange(1024)}"
        if r < 0.9:
            a, b = sorted(rng.sample(range(1024), 2))
            return f"s0:c{a},c{b}"
        return "s0-s0:c0.c1023"

    sources = [f"system_u:system_r:{rng.choice(domains)}:{level()}" for _ in range(3000)]
    sources += [f"system_u:object_r:{rng.choice(types)}:{level()}" for _ in range(500)]
    targets = [f"system_u:object_r:{rng.choice(types)}:{level()}" for _ in range(4000)]
    targets += sources[:500]
    queries = [(rng.choice(sources), rng.choice(targets), rng.choice(classes)) for _ in range(n)]
    # Random pairs almost never meet one of the policy's few auditallow rules: add one.
    queries[-1] = ("system_u:object_r:sysadm_t:s0", "system_u:object_r:security_t:s0", "security")
    return queries


def test_compute_av_many_equals_arbiter_av_on_random_debian_queries(debian, debian_path):
    binary = arbiter_bin()
    if binary is None:
        pytest.skip("no `arbiter` binary: set ARBITER_BIN or `cargo build --release -p arbiter`")
    queries = random_queries(debian, QUERIES)
    ours = arbiter.Server(debian).compute_av_many(queries)
    stdin = "".join(f"{s} {t} {c}\n" for s, t, c in queries)
    run = subprocess.run([binary, "av", str(debian_path)], input=stdin, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr[:2000]
    theirs = run.stdout.splitlines()
    assert len(theirs) == len(queries)
    mismatches = [
        (q, "%08x %08x %08x" % a, line)
        for q, a, line in zip(queries, ours, theirs)
        if "%08x %08x %08x" % a != line
    ]
    assert not mismatches, f"{len(mismatches)} of {len(queries)} differ, e.g. {mismatches[:3]}"
    # The sample is not degenerate: it has grants, denials and audit masks of every kind.
    assert sum(1 for a in ours if a[0]) > len(ours) // 100
    assert sum(1 for a in ours if a[0] == 0) > len(ours) // 100
    assert any(a[1] for a in ours)
    assert any(a[2] != 0xFFFFFFFF for a in ours)

"""arbiter.Avc: the cache answers as the server does, counts, audits, follows reloads."""

import sys

import pytest

import arbiter
from conftest import CONTENT, HTTPD, SHADOW, USER

SSHD = "system_u:system_r:sshd_t:s0"
USER_HOME = "user_u:object_r:user_home_t:s0"


@pytest.fixture
def avc(srv):
    return arbiter.Avc(srv)


def test_avc_answers_as_the_server(srv, avc):
    for s, t, c, p in [
        (HTTPD, CONTENT, "file", ["read", "write"]),
        (USER, SHADOW, "file", "write"),
        (SSHD, SHADOW, "file", "read"),
        (HTTPD, CONTENT, "no_such_class", "read"),
    ]:
        for _ in range(2):  # a miss, then a hit
            got, want = avc.check(s, t, c, p), srv.check(s, t, c, p)
            assert (got.allowed, got.granted, got.denied, got.audited) == (
                want.allowed, want.granted, want.denied, want.audited)
            assert avc.compute_av(s, t, c) == srv.compute_av(s, t, c)


def test_stats_count_lookups_hits_and_misses(avc):
    assert avc.stats()["lookups"] == 0
    avc.check(HTTPD, CONTENT, "file", "read")
    avc.check(HTTPD, CONTENT, "file", "read")
    avc.compute_av(HTTPD, CONTENT, "file")
    s = avc.stats()
    assert s["lookups"] == 3 and s["misses"] == 1 and s["hits"] == 2
    assert s["allocations"] == 1 and s["entries"] == 1
    assert set(s) >= {"reclaims", "frees", "xperm_lookups", "create_lookups"}
    avc.reset()
    assert avc.stats()["entries"] == 0


def test_audit_callback_receives_kernel_records(avc):
    records = []
    avc.set_audit_callback(records.append)
    avc.check(USER, SHADOW, "file", "write")       # denied, audited
    avc.check(HTTPD, SHADOW, "file", "read")       # denied, dontaudit: silent
    avc.check(HTTPD, CONTENT, "file", "read")      # granted, not audited
    avc.check(SSHD, SHADOW, "file", "read")        # granted, auditallow
    assert len(records) == 2
    assert records[0].startswith("avc:  denied  { write } for ")
    assert f"scontext={USER}" in records[0] and "tclass=file" in records[0]
    assert "permissive=0" in records[0]
    assert records[1].startswith("avc:  granted  { read } for ")


def test_audit_callback_can_be_replaced_and_removed(avc):
    first, second = [], []
    avc.set_audit_callback(first.append)
    avc.check(USER, SHADOW, "file", "write")
    avc.set_audit_callback(second.append)
    avc.check(USER, SHADOW, "file", "write")
    avc.set_audit_callback(None)
    avc.check(USER, SHADOW, "file", "write")
    assert len(first) == 1 and len(second) == 1


def test_audit_callback_errors_go_to_unraisablehook(avc, monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)

    def broken(record):
        raise RuntimeError("callback failed")

    avc.set_audit_callback(broken)
    v = avc.check(USER, SHADOW, "file", "write")
    assert not v.allowed
    assert len(seen) == 1 and isinstance(seen[0].exc_value, RuntimeError)


def test_audit_callback_must_be_callable(avc):
    with pytest.raises(ValueError):
        avc.set_audit_callback(42)


def test_permissive_mode_passes_denials_once_and_enforcing_resets(avc):
    assert avc.enforcing is True
    avc.enforcing = False
    assert avc.enforcing is False
    records = []
    avc.set_audit_callback(records.append)
    avc.check(USER, SHADOW, "file", "write")
    assert records and "permissive=1" in records[0]
    avc.enforcing = True
    assert avc.stats()["entries"] == 0


def test_avc_follows_boolean_commits_and_reloads(srv, avc):
    assert not avc.check(HTTPD, USER_HOME, "file", "read").allowed
    srv.set_booleans({"httpd_enable_homedirs": True})
    assert avc.check(HTTPD, USER_HOME, "file", "read").allowed
    srv.load_policy(arbiter.Policy.builtin())
    assert avc.compute_av(HTTPD, USER_HOME, "file").seqno == srv.seqno
    srv.set_booleans({"httpd_enable_homedirs": False})
    assert not avc.check(HTTPD, USER_HOME, "file", "read").allowed


@pytest.mark.parametrize(
    "kwargs",
    [dict(slots=1000), dict(slots=0), dict(threshold=0), dict(hash="nope"),
     dict(slots=16, threshold=1000)],
)
def test_bad_cache_configurations_raise_value_error(srv, kwargs):
    with pytest.raises(ValueError):
        arbiter.Avc(srv, **kwargs)


@pytest.mark.parametrize("hash_name", ["arbiter", "murmur3", "muladd", "original"])
def test_every_hash_gives_the_same_answers(srv, hash_name):
    avc = arbiter.Avc(srv, slots=16, threshold=32, hash=hash_name)
    assert hash_name in repr(avc)
    contexts = [HTTPD, CONTENT, SHADOW, USER, SSHD, USER_HOME]
    for _ in range(2):
        for s in contexts:
            for t in contexts:
                assert avc.compute_av(s, t, "file") == srv.compute_av(s, t, "file")
    assert avc.stats()["reclaims"] > 0


def test_avc_errors_are_the_servers(avc):
    with pytest.raises(arbiter.ContextError):
        avc.check("bad", CONTENT, "file", "read")
    with pytest.raises(arbiter.ContextError):
        avc.compute_av(HTTPD, "bad", "file")
    with pytest.raises(TypeError):
        avc.check(HTTPD, CONTENT, "file", None)

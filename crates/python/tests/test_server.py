"""arbiter.Server: every call, on policies whose rules are known (policies/src/*.conf)."""

import pathlib

import pytest

import arbiter
from conftest import CONTENT, HTTPD, SECURITY, SHADOW, SYSADM, USER, repo_policy

SSHD = "system_u:system_r:sshd_t:s0"
PASSWD = "system_u:system_r:passwd_t:s0"
ETC = "system_u:object_r:etc_t:s0"
VAR_LOG = "system_u:object_r:var_log_t:s0"
USER_HOME = "user_u:object_r:user_home_t:s0"


def test_server_from_policy_path_pathlike_and_bytes(builtin):
    path = repo_policy("default.33")
    servers = [
        arbiter.Server(builtin),
        arbiter.Server(str(path)),
        arbiter.Server(pathlib.Path(path)),
        arbiter.Server(path.read_bytes()),
        arbiter.Server.open(path),
    ]
    for s in servers:
        assert s.seqno == 1
        assert s.check(HTTPD, CONTENT, "file", "read").allowed
    assert "Server" in repr(servers[0])
    assert servers[0].policy.stats() == builtin.stats()


def test_server_rejects_other_types():
    with pytest.raises(TypeError):
        arbiter.Server(42)


def test_check_lists_granted_and_denied_in_request_order(srv):
    v = srv.check(HTTPD, CONTENT, "file", ["write", "read", "open"])
    assert v.allowed is False and bool(v) is False
    assert v.granted == ["read", "open"]
    assert v.denied == ["write"]
    assert v.tclass == "file"
    assert v.permissive is False
    assert "Verdict" in repr(v)


def test_check_accepts_one_name_or_any_iterable(srv):
    assert srv.check(HTTPD, CONTENT, "file", "read")
    assert srv.check(HTTPD, CONTENT, "file", ("read", "open"))
    assert srv.check(HTTPD, CONTENT, "file", iter(["read"]))
    with pytest.raises(TypeError):
        srv.check(HTTPD, CONTENT, "file", 5)
    with pytest.raises(TypeError):
        srv.check(HTTPD, CONTENT, "file", ["read", 5])


def test_dontaudit_silences_and_auditallow_audits(srv):
    silenced = srv.check(HTTPD, SHADOW, "file", "read")
    assert not silenced.allowed and not silenced.audited
    denied = srv.check(USER, SHADOW, "file", "write")
    assert not denied.allowed and denied.audited
    granted_audited = srv.check(SSHD, SHADOW, "file", "read")
    assert granted_audited.allowed and granted_audited.audited
    granted_quiet = srv.check(SSHD, SHADOW, "file", "getattr")
    assert granted_quiet.allowed and not granted_quiet.audited


def test_permissive_domain_is_reported():
    srv = arbiter.Server.open(repo_policy("features.33"))
    v = srv.check("system_u:system_r:app_t:s0", "system_u:object_r:tmp_t:s0", "file", "write")
    assert not v.allowed
    assert v.permissive
    assert v.decision.permissive and v.decision.flags & 1


def test_compute_av_matches_the_verdicts_decision(srv):
    d = srv.compute_av(HTTPD, CONTENT, "file")
    assert d == srv.check(HTTPD, CONTENT, "file", "read").decision
    assert d.seqno == srv.seqno
    read_bit = 1 << srv.policy.permissions("file").index("read")
    write_bit = 1 << srv.policy.permissions("file").index("write")
    assert d.allowed & read_bit and not d.allowed & write_bit
    assert d.as_tuple() == (d.allowed, d.auditallow, d.auditdeny)
    assert "AvDecision" in repr(d)


@pytest.mark.parametrize("setting,allowed", [("allow", True), ("deny", False)])
def test_unknown_class_and_permission_follow_handle_unknown(setting, allowed):
    srv = arbiter.Server.open(repo_policy(f"unknown-{setting}.33"))
    app = "system_u:system_r:app_t"
    data = "system_u:object_r:data_t"
    assert srv.check(app, app, "capability", "chown").allowed is allowed
    assert srv.compute_av(app, app, "capability").allowed == (0xFFFFFFFF if allowed else 0)
    v = srv.check(app, data, "file", ["read", "map"])
    assert v.allowed is allowed
    assert ("map" in v.granted) is allowed and ("map" in v.denied) is not allowed
    assert "read" in v.granted


def test_unknown_names_under_reject_raise_unknown_name_error():
    srv = arbiter.Server.open(repo_policy("unknown-reject.33"))
    app = "system_u:system_r:app_t"
    with pytest.raises(arbiter.UnknownNameError):
        srv.check(app, app, "capability", "chown")
    with pytest.raises(arbiter.UnknownNameError):
        srv.compute_av(app, app, "capability")


@pytest.mark.parametrize(
    "scon,fragment",
    [
        ("system_u:system_r", "malformed"),
        ("system_u:system_r:nope_t:s0", "nope_t"),
        ("nobody_u:system_r:httpd_t:s0", "nobody_u"),
        ("system_u:system_r:httpd_t:s9", "s9"),
        ("user_u:system_r:httpd_t:s0", "invalid"),
    ],
)
def test_bad_contexts_raise_context_error(srv, scon, fragment):
    with pytest.raises(arbiter.ContextError) as info:
        srv.check(scon, CONTENT, "file", "read")
    assert fragment in str(info.value)
    assert info.value.context == scon
    assert str(info.value).startswith("source context")
    with pytest.raises(arbiter.ContextError) as info:
        srv.compute_av(HTTPD, scon, "file")
    assert str(info.value).startswith("target context")


def test_non_utf8_and_nul_contexts_are_errors_not_crashes(srv):
    # As in the kernel, a context ends at its first NUL: what follows is not read.
    with pytest.raises(arbiter.ContextError):
        srv.check("system_u:system_r:httpd_t\0:s0", CONTENT, "file", "read")
    assert srv.check("system_u:system_r:httpd_t:s0\0", CONTENT, "file", "read").allowed
    with pytest.raises(UnicodeEncodeError):
        srv.check("system_u:system_r:\udcff:s0", CONTENT, "file", "read")


def test_unknown_class_under_deny_and_unknown_permission_in_explain(srv):
    # The builtin policy denies unknown classes (handle_unknown deny).
    assert srv.policy.handle_unknown == "deny"
    assert not srv.check(HTTPD, CONTENT, "no_such_class", "read").allowed
    with pytest.raises(arbiter.UnknownNameError) as info:
        srv.explain(HTTPD, CONTENT, "file", "no_such_perm")
    assert info.value.name == "no_such_perm"
    with pytest.raises(arbiter.UnknownNameError):
        srv.compute_create(HTTPD, CONTENT, "no_such_class")


def test_compute_av_many_equals_compute_av(srv):
    contexts = [HTTPD, CONTENT, SHADOW, USER, SYSADM, SECURITY, SSHD]
    classes = ["file", "dir", "process", "security", "no_such_class"]
    queries = [(s, t, c) for s in contexts for t in contexts for c in classes]
    many = srv.compute_av_many(queries * 3)
    assert len(many) == 3 * len(queries)
    for (s, t, c), got in zip(queries * 3, many):
        assert got == srv.compute_av(s, t, c).as_tuple()


def test_compute_av_many_takes_any_iterable_and_sequences(srv):
    gen = ((HTTPD, CONTENT, "file") for _ in range(3))
    assert srv.compute_av_many(gen) == [srv.compute_av(HTTPD, CONTENT, "file").as_tuple()] * 3
    assert srv.compute_av_many([[HTTPD, CONTENT, "file"]]) == srv.compute_av_many(
        [(HTTPD, CONTENT, "file")])
    assert srv.compute_av_many([]) == []


def test_compute_av_many_large_batch_runs_in_parallel_and_agrees(srv):
    queries = [(HTTPD, CONTENT, "file"), (USER, SHADOW, "file"), (SSHD, SHADOW, "file")] * 10000
    many = srv.compute_av_many(queries)
    expected = [srv.compute_av(*q).as_tuple() for q in queries[:3]]
    assert many == expected * 10000


def test_compute_av_many_errors_name_the_query(srv):
    queries = [(HTTPD, CONTENT, "file"), (HTTPD, "bad", "file"), ("x:y:nope_t", CONTENT, "file")]
    with pytest.raises(arbiter.ContextError) as info:
        srv.compute_av_many(queries)
    assert str(info.value).startswith("query 1: target context")
    assert info.value.context == "bad"
    lenient = srv.compute_av_many(queries, strict=False)
    assert lenient[0] == srv.compute_av(HTTPD, CONTENT, "file").as_tuple()
    assert lenient[1] is None and lenient[2] is None


def test_compute_av_many_rejects_malformed_items(srv):
    with pytest.raises(TypeError):
        srv.compute_av_many([(HTTPD, CONTENT)])
    with pytest.raises(TypeError):
        srv.compute_av_many([(HTTPD, CONTENT, 7)])
    with pytest.raises(TypeError):
        srv.compute_av_many(["abc"])
    with pytest.raises(TypeError):
        srv.compute_av_many(5)


def test_check_many_equals_check(srv):
    perms = ["read", ["read", "open"], ("write",), "getattr", ["read", "no_such_perm"]]
    contexts = [HTTPD, CONTENT, SHADOW, USER, SSHD]
    queries = [(s, t, "file", p) for s in contexts for t in contexts for p in perms]
    many = srv.check_many(queries * 2)
    assert many == [srv.check(*q).allowed for q in queries] * 2
    big = srv.check_many([(HTTPD, CONTENT, "file", "read"), (USER, SHADOW, "file", "write")] * 5000)
    assert big == [True, False] * 5000


def test_check_many_errors(srv):
    with pytest.raises(arbiter.ContextError) as info:
        srv.check_many([(HTTPD, CONTENT, "file", "read"), ("bad", CONTENT, "file", "read")])
    assert str(info.value).startswith("query 1: source context")
    assert srv.check_many([("bad", CONTENT, "file", "read")], strict=False) == [None]
    with pytest.raises(TypeError):
        srv.check_many([(HTTPD, CONTENT, "file", 3)])
    reject = arbiter.Server.open(repo_policy("unknown-reject.33"))
    app = "system_u:system_r:app_t"
    with pytest.raises(arbiter.UnknownNameError):
        reject.check_many([(app, app, "capability", "chown")])


def test_compute_create_with_and_without_a_name(srv):
    assert srv.compute_create(HTTPD, VAR_LOG, "dir") == "system_u:object_r:httpd_log_t:s0"
    assert srv.compute_create(PASSWD, ETC, "file", name="shadow") == "system_u:object_r:shadow_t:s0"
    assert srv.compute_create(PASSWD, ETC, "file", "gshadow") == "system_u:object_r:shadow_t:s0"
    assert srv.compute_create(PASSWD, ETC, "file") == "system_u:object_r:etc_t:s0"


def test_compute_relabel_and_member_on_the_debian_policy(debian):
    srv = arbiter.Server(debian)
    user = "user_u:user_r:user_t:s0"
    assert srv.compute_relabel(user, "system_u:object_r:sshd_devpts_t:s0", "chr_file") \
        == "user_u:object_r:user_devpts_t:s0"
    assert srv.compute_member(user, "system_u:object_r:tmp_t:s0", "dir") \
        == "system_u:object_r:user_tmp_t:s0"


def test_compute_relabel_and_member_default_to_the_target_type(srv):
    assert srv.compute_relabel(HTTPD, CONTENT, "file").split(":")[2] == "httpd_content_t"
    assert srv.compute_member(HTTPD, CONTENT, "file").split(":")[2] == "httpd_content_t"


def test_explain_text_and_structure_agree_with_check(srv):
    e = srv.explain(USER, SHADOW, "file", ["getattr", "read", "write"])
    v = srv.check(USER, SHADOW, "file", ["getattr", "read", "write"])
    assert sorted(e.granted) == sorted(v.granted) == ["getattr"]
    assert sorted(e.denied) == sorted(v.denied)
    assert e.allowed is False and e.agrees
    assert e.scontext == USER and e.tcontext == SHADOW and e.tclass == "file"
    assert e.source_type == "user_t" and e.target_type == "shadow_t"
    text = str(e)
    for name in ("getattr", "read", "write"):
        assert name in text
    by_name = {p["name"]: p for p in e.permissions}
    assert by_name["getattr"]["granted"] is True
    assert any("allow userdomain shadow_t:file" in r["text"] for r in by_name["getattr"]["allow_rules"])
    assert by_name["read"]["dontaudit_rules"]
    d = e.to_dict()
    assert d["granted"] == e.granted
    import json
    assert json.loads(e.to_json()) == d
    assert isinstance(e.constraints, list)
    assert e.rbac is None and e.bounds is None
    assert "Explanation" in repr(e)


def test_explain_names_the_boolean_that_would_grant(srv):
    e = srv.explain(HTTPD, USER_HOME, "file", "read")
    (perm,) = e.permissions
    assert perm["granted"] is False
    flips = [f for w in perm["would_allow"] for f in w["flips"]]
    assert {"boolean": "httpd_enable_homedirs", "value": True, "grants": True} in flips


def test_booleans_and_set_booleans(srv):
    assert srv.booleans()["httpd_enable_homedirs"] is False
    assert not srv.check(HTTPD, USER_HOME, "file", "read").allowed
    before = srv.seqno
    seqno = srv.set_booleans({"httpd_enable_homedirs": True})
    assert seqno == before + 1 == srv.seqno
    assert srv.booleans()["httpd_enable_homedirs"] is True
    assert srv.check(HTTPD, USER_HOME, "file", "read").allowed
    assert srv.compute_av(HTTPD, USER_HOME, "file").seqno == seqno


def test_set_booleans_is_all_or_nothing(srv):
    before = srv.seqno
    with pytest.raises(arbiter.UnknownNameError) as info:
        srv.set_booleans({"httpd_enable_homedirs": True, "no_such_bool": False})
    assert info.value.name == "no_such_bool"
    assert srv.seqno == before
    assert srv.booleans()["httpd_enable_homedirs"] is False


def test_load_policy_from_policy_path_and_bytes(srv):
    features = repo_policy("features.33")
    assert srv.load_policy(arbiter.Policy.open(features)) == 2
    assert srv.policy.stats() == arbiter.Policy.open(features).stats()
    assert srv.load_policy(repo_policy("default.33")) == 3
    assert srv.load_policy(pathlib.Path(features)) == 4
    assert srv.load_policy(repo_policy("default.33").read_bytes()) == 5
    assert srv.seqno == 5
    assert srv.check(HTTPD, CONTENT, "file", "read").allowed


def test_failed_load_leaves_the_policy_in_force(srv):
    data = repo_policy("features.33").read_bytes()
    with pytest.raises(arbiter.PolicyError):
        srv.load_policy(data[:1000])
    with pytest.raises(arbiter.PolicyError):
        srv.load_policy("/nonexistent/policy.33")
    assert srv.seqno == 1
    assert srv.check(HTTPD, CONTENT, "file", "read").allowed


def test_sids_survive_a_reload_and_booleans_are_kept(srv):
    srv.set_booleans({"httpd_enable_homedirs": True})
    srv.load_policy(arbiter.Policy.builtin())
    assert srv.booleans()["httpd_enable_homedirs"] is True
    assert srv.check(HTTPD, USER_HOME, "file", "read").allowed


def test_exception_hierarchy():
    for cls in (arbiter.PolicyError, arbiter.ContextError, arbiter.UnknownNameError):
        assert issubclass(cls, arbiter.Error)
    assert issubclass(arbiter.Error, Exception)
    assert arbiter.PolicyError("x").offset is None
    assert arbiter.ContextError("x").context is None
    assert arbiter.UnknownNameError("x").name is None


def test_a_rust_panic_is_an_arbiter_error_not_a_crash():
    with pytest.raises(arbiter.Error) as info:
        arbiter._panic_for_tests()
    assert "internal error" in str(info.value)
    assert "deliberate panic" in str(info.value)


def test_every_format_version_of_the_builtin_policy_decides_alike(srv):
    # policies/bin/default.NN are the same source written at older format versions.
    contexts = [HTTPD, CONTENT, SHADOW, USER, SYSADM, SSHD, PASSWD, ETC, USER_HOME]
    queries = [(s, t, c) for s in contexts for t in contexts
               for c in ("file", "dir", "process", "security")]
    want = srv.compute_av_many(queries)
    versions = sorted(p.name for p in repo_policy("default.33").parent.glob("default.*"))
    assert len(versions) >= 5
    for name in versions:
        other = arbiter.Server.open(repo_policy(name))
        assert other.policy.version == int(name.split(".")[1])
        assert other.compute_av_many(queries) == want, name

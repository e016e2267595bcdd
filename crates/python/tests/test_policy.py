"""arbiter.Policy: reading from paths, path-likes and images; attributes; statistics."""

import pathlib
import re
import shutil
import subprocess

import pytest

import arbiter
from conftest import POLICIES, repo_policy


def test_builtin_policy_attributes(builtin):
    assert builtin.version == 33
    assert builtin.mls is True
    assert builtin.handle_unknown in ("allow", "deny", "reject")
    assert builtin.path is None
    assert "Policy" in repr(builtin)


def test_open_accepts_str_pathlike_and_bytes_path():
    path = repo_policy("default.33")
    by_str = arbiter.Policy.open(str(path))
    by_pathlike = arbiter.Policy.open(pathlib.Path(path))
    by_bytes = arbiter.Policy.open(bytes(path))
    assert by_str.stats() == by_pathlike.stats() == by_bytes.stats()
    assert by_str.path == pathlib.Path(path)


def test_from_bytes_accepts_bytes_bytearray_memoryview():
    data = repo_policy("default.33").read_bytes()
    stats = arbiter.Policy.from_bytes(data).stats()
    assert arbiter.Policy.from_bytes(bytearray(data)).stats() == stats
    assert arbiter.Policy.from_bytes(memoryview(data)).stats() == stats
    assert arbiter.Policy.builtin().stats() == stats


def test_from_bytes_rejects_a_str():
    with pytest.raises(TypeError):
        arbiter.Policy.from_bytes("policy.33")


def test_handle_unknown_reads_each_setting():
    for setting in ("allow", "deny", "reject"):
        assert arbiter.Policy.open(repo_policy(f"unknown-{setting}.33")).handle_unknown == setting


def test_older_format_versions_are_read():
    assert arbiter.Policy.open(repo_policy("tiny.15")).version == 15
    assert arbiter.Policy.open(repo_policy("features.35")).version == 35


def test_truncated_image_raises_policy_error_with_offset_and_what():
    data = repo_policy("default.33").read_bytes()
    with pytest.raises(arbiter.PolicyError) as info:
        arbiter.Policy.from_bytes(data[: len(data) // 2])
    err = info.value
    assert isinstance(err, arbiter.Error)
    assert isinstance(err.offset, int) and 0 < err.offset <= len(data) // 2
    assert isinstance(err.what, str) and err.what
    assert err.path is None


def test_bad_magic_is_reported_at_offset_zero():
    with pytest.raises(arbiter.PolicyError) as info:
        arbiter.Policy.from_bytes(b"\x00" * 64)
    assert info.value.offset == 0
    assert "magic" in str(info.value)


def test_empty_image_is_a_policy_error():
    with pytest.raises(arbiter.PolicyError):
        arbiter.Policy.from_bytes(b"")


def test_missing_file_is_a_policy_error_naming_the_path(tmp_path):
    missing = tmp_path / "nope.33"
    with pytest.raises(arbiter.PolicyError) as info:
        arbiter.Policy.open(missing)
    assert info.value.path == str(missing)
    assert info.value.offset is None


def test_every_truncation_is_an_error_never_a_crash():
    data = repo_policy("tiny.33").read_bytes()
    step = max(1, len(data) // 300)
    for cut in range(0, len(data), step):
        with pytest.raises(arbiter.PolicyError):
            arbiter.Policy.from_bytes(data[:cut])


def test_symbol_lists(builtin):
    assert "httpd_t" in builtin.types()
    assert "domain" in builtin.attributes()
    assert "domain" not in builtin.types()
    assert "file" in builtin.classes()
    perms = builtin.permissions("file")
    assert {"read", "write", "open", "entrypoint"} <= set(perms)
    assert "system_r" in builtin.roles()
    assert "httpd_t" in builtin.role_types("system_r")
    assert "user_t" not in builtin.role_types("system_r")
    assert "user_u" in builtin.users()
    assert builtin.booleans() == {
        "httpd_enable_homedirs": False,
        "httpd_can_network_connect": False,
        "user_exec_tmp": True,
        "secure_mode": False,
    }


def test_unknown_class_and_role_raise_unknown_name_error(builtin):
    with pytest.raises(arbiter.UnknownNameError) as info:
        builtin.permissions("no_such_class")
    assert info.value.name == "no_such_class"
    with pytest.raises(arbiter.UnknownNameError):
        builtin.role_types("no_such_r")


def test_stats_use_seinfo_names(builtin):
    s = builtin.stats()
    assert s["Policy Version"] == 33
    assert s["MLS"] is True
    assert s["Target Policy"] == "selinux"
    assert s["Booleans"] == 4
    for label in ("Classes", "Permissions", "Types", "Attributes", "Allow", "Dontaudit",
                  "Type_trans", "Role_trans", "Constraints", "MLS Constrain", "Portcon"):
        assert isinstance(s[label], int)


def test_stats_match_seinfo_on_the_debian_policy(debian, debian_path):
    seinfo = shutil.which("seinfo")
    if seinfo is None:
        pytest.skip("seinfo (setools) not installed")
    out = subprocess.run([seinfo, str(debian_path)], capture_output=True, text=True,
                         check=True).stdout
    pairs = re.findall(r"([A-Z][A-Za-z_. ]*?):\s+(\d+)", out)
    assert len(pairs) > 30
    ours = debian.stats()
    for label, value in pairs:
        assert ours[label] == int(value), label

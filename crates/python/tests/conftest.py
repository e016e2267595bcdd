"""Shared fixtures: the policies the tests run on.

The repository's small policies (policies/bin) are always there; the Debian policies
(selinux-policy-default / selinux-policy-mls) are used when installed, else the tests that
need them are skipped with the reason.
"""

import os
import pathlib

import pytest

import arbiter

REPO = pathlib.Path(__file__).resolve().parents[3]
POLICIES = REPO / "policies" / "bin"
DEBIAN = pathlib.Path("/etc/selinux/default/policy/policy.33")
DEBIAN_MLS = pathlib.Path("/etc/selinux/mls/policy/policy.33")

# Contexts of the builtin policy (policies/src/default.conf).
HTTPD = "system_u:system_r:httpd_t:s0"
CONTENT = "system_u:object_r:httpd_content_t:s0"
SHADOW = "system_u:object_r:shadow_t:s0"
USER = "user_u:user_r:user_t:s0"
SYSADM = "root:sysadm_r:sysadm_t:s0"
SECURITY = "system_u:object_r:security_t:s0"


def repo_policy(name: str) -> pathlib.Path:
    path = POLICIES / name
    if not path.exists():
        pytest.skip(f"{path} not found (run from the repository)")
    return path


@pytest.fixture
def builtin() -> arbiter.Policy:
    return arbiter.Policy.builtin()


@pytest.fixture
def srv(builtin: arbiter.Policy) -> arbiter.Server:
    return arbiter.Server(builtin)


@pytest.fixture(scope="session")
def debian_path() -> pathlib.Path:
    if not DEBIAN.exists():
        pytest.skip(f"{DEBIAN} not installed (apt-get install selinux-policy-default)")
    return DEBIAN


@pytest.fixture(scope="session")
def debian(debian_path: pathlib.Path) -> arbiter.Policy:
    return arbiter.Policy.open(debian_path)


def arbiter_bin() -> "str | None":
    """The `arbiter` command line for differential tests: $ARBITER_BIN, else the
    workspace's release build."""
    env = os.environ.get("ARBITER_BIN")
    if env:
        return env if os.access(env, os.X_OK) else None
    built = REPO / "target" / "release" / "arbiter"
    return str(built) if os.access(built, os.X_OK) else None

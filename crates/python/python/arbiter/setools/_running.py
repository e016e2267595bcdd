"""Where ``setools.policyrep.SELinuxPolicy()`` (no path) looks for the running policy, as
setools 4.4.1 looks: imported only by that call."""

import os

from .policyrep import _log

# libsepol 3.4's policy format versions, which setools 4.4.1 tries from newest to oldest
# when it looks for the running policy (``POLICYDB_VERSION_MIN``..``MAX``).
_SEPOL_VERSIONS = (15, 33)


def _libselinux_paths():
    """(selinuxfs mounted, the running policy's file, the binary policy path) from
    libselinux's binding as setools asks it; where the binding is not importable (a
    virtual environment), the same read from the files libselinux reads:
    ``/proc/filesystems``, ``/sys/fs/selinux/policy``, ``/etc/selinux/config``'s
    ``SELINUXTYPE`` (``targeted`` when unset, libselinux's default)."""
    try:
        import selinux
    except ImportError:
        pass
    else:
        return (bool(selinux.selinuxfs_exists()), selinux.selinux_current_policy_path(),
                selinux.selinux_binary_policy_path())
    try:
        with open("/proc/filesystems") as f:
            fs = any(line.split()[-1:] == ["selinuxfs"] for line in f)
    except OSError:
        fs = False
    stype = "targeted"
    try:
        with open("/etc/selinux/config") as f:
            for line in f:
                key, _, value = line.strip().partition("=")
                if key.strip() == "SELINUXTYPE" and value.strip():
                    stype = value.strip()
    except OSError:
        pass
    running = "/sys/fs/selinux/policy"
    current = running if fs and os.path.exists(running) else None
    return fs, current, "/etc/selinux/{}/policy/policy".format(stype)


def _running_policy_candidates():
    """The files setools 4.4.1 tries for ``SELinuxPolicy()``, in its order, with its log
    lines: the running policy when selinuxfs is mounted, else the binary policy path with
    each supported version, newest first."""
    log = _log()
    if log:
        log.info("Attempting to locate current running policy.")
    fs, current, base = _libselinux_paths()
    if log:
        log.debug("SELinuxfs exists: {}".format(fs))
        log.debug("Sepol version range: {}-{}".format(*_SEPOL_VERSIONS))
        log.debug("Current policy path: {}".format(current))
        log.debug("Binary policy path: {}".format(base))
    if fs:
        return [current], False
    low, high = _SEPOL_VERSIONS
    candidates = ["{0}.{1}".format(base, v) for v in range(high, low - 1, -1)]
    if log:
        log.debug("Potential policies: {}".format(candidates))
    return candidates, True

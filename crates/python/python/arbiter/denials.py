"""AVC denial logs explained as ``arbiter why`` / ``arbiter why --allow`` do (audit2why and
audit2allow), natively (the work runs without the GIL).

    from arbiter.denials import Denials
    d = Denials("/etc/selinux/default/policy/policy.33")
    print(d.why(files=["/var/log/audit/audit.log"]).text)      # audit2why's report
    print(d.allow(files=["/var/log/audit/audit.log"]).text)    # audit2allow's rules
    for r in d.records(open("audit.log").read()):              # typed records
        print(r.tclass, r.perms, r.verdict, r.booleans)
"""

from ._native import Denial, Denials, Digest, LogError, Report  # noqa: F401

__all__ = ["Denial", "Denials", "Digest", "LogError", "Report"]

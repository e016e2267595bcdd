#!/bin/sh
# Regenerates the expected sechecker 4.4.1 reports of ro_execs_debian.ini on Debian's
# default and MLS policies (each run takes setools minutes, so CI compares against these
# files; ARBITER_SECHECKER_SLOW=1 runs the comparison). Needs /usr/bin/sechecker.
set -eu
cd "$(dirname "$0")"
for p in default mls; do
    rc=0
    PYTHONHASHSEED=1 /usr/bin/sechecker ro_execs_debian.ini \
        "/etc/selinux/$p/policy/policy.33" >"ro_execs_debian.$p.out" || rc=$?
    echo "$rc" >"ro_execs_debian.$p.rc"
done

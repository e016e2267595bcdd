#!/bin/sh
# Regenerates paths_mls_sample.out: the real setools 4.4.1's output of paths.py on Debian's
# MLS policy (mode "sample", the default seed), and paths_mls_sample.sha256, the digest of
# the policy it was made from. setools took 31 minutes of wall time for it at nice 10 on a
# loaded 2-core machine, too long for CI, so the output is generated once and committed;
# paths_mls_test.py (beside it) compares arbiter.setools' output with it when
# ARBITER_SETOOLS_MLS_PATHS=1 (and skips when the installed policy's digest differs).
#
#   sh crates/python/tests/setools_corpus/paths_mls_regen.sh [POLICY]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
policy=${1:-/etc/selinux/mls/policy/policy.33}
/usr/bin/python3 -c "import setools, sys; sys.exit(setools.__version__ != '4.4.1')" ||
    { echo "paths_mls_regen.sh: the real setools 4.4.1 is needed" >&2; exit 1; }
# The same hash seed as test_setools.py's runs (it decides setools' frozenset orders).
PYTHONHASHSEED=0 nice -n 10 /usr/bin/python3 "$here/paths.py" "$policy" sample \
    > "$here/paths_mls_sample.out.tmp"
mv "$here/paths_mls_sample.out.tmp" "$here/paths_mls_sample.out"
sha256sum < "$policy" | cut -d' ' -f1 > "$here/paths_mls_sample.sha256"

#!/usr/bin/env bash
# Side-by-side benchmark of arbiter dta/infoflow/sechecker against setools 4.4.1's sedta/seinfoflow/sechecker
# on Debian's default policy, whole process (start-up and graph build included), with
# scripts/side-by-side.py: the two commands alternate run by run (wall, CPU, peak RSS,
# medians and ratios peer/arbiter). Quote the medians, and the load average printed first.
#
# Usage: scripts/bench-analysis.sh [RUNS] [dta|infoflow|batch|sechecker|all]
#        RUNS defaults to 5 for sedta rows; seinfoflow rows run min(RUNS, 3) times because
#        seinfoflow needs ≈30 s of CPU (minutes of wall time on a loaded machine) per query.
#        sechecker: the quick checks run RUNS times; the row with ro_execs once (setools
#        needs minutes for it), and ro_execs on the whole policy (about an hour in setools)
#        is timed for arbiter alone.
#        ARBITER=PATH benchmarks that binary instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
which=${2:-all}
arb=${ARBITER:-}
if [ -z "$arb" ]; then
    cargo build --release -q -p arbiter
    arb=$PWD/target/release/arbiter
fi
D=/etc/selinux/default/policy/policy.33
slow=$(( runs < 3 ? runs : 3 ))
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-44s %9s %9s %8s | %9s %9s %8s | %7s %7s %7s\n" "query" "peer wall" "cpu s" "MB" \
    "arb wall" "cpu s" "MB" "wall x" "cpu x" "mem x"
row() { /usr/bin/python3 scripts/side-by-side.py "$@"; }

if [ "$which" = dta ] || [ "$which" = all ]; then
    for q in "-s sshd_t -t sysadm_t -S" "-s init_t" "-s sshd_t -t sysadm_t -A 5"; do
        # shellcheck disable=SC2086
        row "dta $q" "$runs" sedta -p "$D" $q -- "$arb" dta -p "$D" $q
    done
fi
if [ "$which" = infoflow ] || [ "$which" = all ]; then
    for q in "-s user_t -t shadow_t -S" "-s user_t -t shadow_t -A 3"; do
        # shellcheck disable=SC2086
        row "infoflow $q" "$slow" seinfoflow -p "$D" $q -- "$arb" infoflow -p "$D" $q
    done
fi
if [ "$which" = batch ] || [ "$which" = all ]; then
    # 1,000 queries in one invocation: 500 flows-out and 500 shortest paths between the
    # first domains and file types of the policy, all on one graph.
    batch=$(mktemp)
    trap 'rm -f "$batch"' EXIT
    "$arb" search -A -c file -p write "$D" | awk '{print $2, $3}' | cut -d: -f1 \
        | awk '$1 ~ /_t$/ && $2 ~ /_t$/' | sort -u | head -500 \
        | while read -r s t; do echo "-s $s"; echo "-s $s -t $t -S"; done > "$batch"
    row "infoflow batch of $(wc -l < "$batch") queries" "$runs" -- "$arb" infoflow -p "$D" --batch "$batch"
fi
if [ "$which" = sechecker ] || [ "$which" = all ]; then
    # sechecker configurations that pass on Debian's policy (side-by-side.py reports a
    # non-zero exit as FAILED), written next to each other in a temporary directory.
    ini=$(mktemp -d)
    trap 'rm -rf "$ini" "${batch:-}"' EXIT
    cat > "$ini/quick.ini" <<'INI'
[shadow_writers]
check_type = assert_te
desc = Only account-management domains write shadow_t
tclass = file
perms = write append
target = shadow_t
exempt_source = files_unconfined_type sysadm_t passwd_t
expect_source = useradd_t groupadd_t
expect_target = shadow_t

[staff_roles]
check_type = assert_rbac
source = staff_r
exempt_target = auditadm_r dbadm_r secadm_r
expect_target = sysadm_r

[no_such_attribute]
check_type = empty_typeattr
attr = nosuch_attribute
missing_ok = true
INI
    { cat "$ini/quick.ini"; cat <<'INI'

[ro_execs_outside_file_types]
check_type = ro_execs
exempt_file = file_type
exempt_write_domain = domain
INI
    } > "$ini/every.ini"
    cat > "$ini/ro_whole.ini" <<'INI'
[ro_execs_whole_policy]
check_type = ro_execs
exempt_write_domain = domain
INI
    row "sechecker assert_te+assert_rbac+empty_typeattr" "$runs" \
        sechecker "$ini/quick.ini" "$D" -- "$arb" sechecker "$ini/quick.ini" "$D"
    row "sechecker every type (ro_execs: 34 types)" 1 \
        sechecker "$ini/every.ini" "$D" -- "$arb" sechecker "$ini/every.ini" "$D"
    row "sechecker ro_execs whole policy (arbiter)" "$runs" \
        -- "$arb" sechecker "$ini/ro_whole.ini" "$D"
fi

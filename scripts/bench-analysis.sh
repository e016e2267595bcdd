#!/usr/bin/env bash
# Side-by-side benchmark of arbiter dta/infoflow against setools 4.4.1's sedta/seinfoflow
# on Debian's default policy, whole process (start-up and graph build included), with
# scripts/side-by-side.py: the two commands alternate run by run (wall, CPU, peak RSS,
# medians and ratios peer/arbiter). Quote the medians, and the load average printed first.
#
# Usage: scripts/bench-analysis.sh [RUNS] [dta|infoflow|batch|all]
#        RUNS defaults to 5 for sedta rows; seinfoflow rows run min(RUNS, 3) times because
#        seinfoflow needs ≈30 s of CPU (minutes of wall time on a loaded machine) per query.
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

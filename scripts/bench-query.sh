#!/usr/bin/env bash
# Side-by-side benchmark of arbiter search/info/diff against setools 4.4.1's
# sesearch/seinfo/sediff on the Debian policies: whole-process wall time and maximum
# resident set size (GNU time), median of N runs each, and the ratios.
#
# Usage: scripts/bench-query.sh [RUNS]   (default 5 for arbiter, 3 for setools; the
#        sediff rule comparison runs once: it takes minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
truns=$(( runs < 3 ? runs : 3 ))
arb=target/release/arbiter
cargo build --release -q -p arbiter
D=/etc/selinux/default/policy/policy.33
M=/etc/selinux/mls/policy/policy.33
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# median of "seconds kb" lines: prints "median_seconds median_kb"
measure() {
    local n=$1; shift
    : > "$tmp/m"
    for _ in $(seq "$n"); do
        /usr/bin/time -f "%e %M" -o "$tmp/t" "$@" > /dev/null 2>&1 || true
        cat "$tmp/t" >> "$tmp/m"
    done
    python3 - "$tmp/m" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip() and not l.startswith("Command")]
print(statistics.median(float(r[0]) for r in rows), statistics.median(int(r[1]) for r in rows))
PY
}

printf "%-46s %12s %10s %12s %10s %9s %9s\n" "query" "setools s" "MB" "arbiter s" "MB" "time x" "memory x"
row() {
    local name=$1 tn=$2; shift 2
    local tool=() ours=()
    while [ "$1" != "--" ]; do tool+=("$1"); shift; done; shift
    ours=("$@")
    read -r ts tk < <(measure "$tn" "${tool[@]}")
    read -r as ak < <(measure "$runs" "${ours[@]}")
    python3 - "$name" "$ts" "$tk" "$as" "$ak" <<'PY'
import sys
n, ts, tk, a, ak = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
print("%-46s %12.3f %10.1f %12.3f %10.1f %8.0fx %8.1fx" % (n, ts, tk/1024, a, ak/1024, ts/max(a, 0.0005), tk/max(ak, 1)))
PY
}

row "search -A -s httpd_t" "$truns" sesearch -A -s httpd_t "$D" -- $arb search -A -s httpd_t "$D"
row "search --allow -s httpd_t -t etc_t -c file -p read" "$truns" sesearch --allow -s httpd_t -t etc_t -c file -p read "$D" -- $arb search --allow -s httpd_t -t etc_t -c file -p read "$D"
row "search -T -s unconfined_t -rs (regex)" "$truns" sesearch -T -s unconfined_t -rs "$D" -- $arb search -T -s unconfined_t -rs "$D"
row "search -A (full dump)" "$truns" sesearch -A "$D" -- $arb search -A "$D"
row "search --role_allow --role_trans --range_trans" "$truns" sesearch --role_allow --role_trans --range_trans "$M" -- $arb search --role_allow --role_trans --range_trans "$M"
row "info -t -x" "$truns" seinfo "$D" -t -x -- $arb info "$D" -t -x
row "info --all" "$truns" seinfo "$D" --all -- $arb info "$D" --all
row "diff -b -c --common --property default mls" "$truns" sediff -b -c --common --property "$D" "$M" -- $arb diff -b -c --common --property "$D" "$M"
row "diff --allow --auditallow --dontaudit default mls" 1 sediff --allow --auditallow --dontaudit "$D" "$M" -- $arb diff --allow --auditallow --dontaudit "$D" "$M"

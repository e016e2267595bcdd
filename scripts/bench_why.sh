#!/usr/bin/env bash
# `arbiter why` against audit2why / audit2allow on the same logs, in one run.
#
#   scripts/bench_why.sh [POLICY]        (default: the Debian default policy)
#
# Logs are generated from the policy's own rules (crates/denials/src/corpus.rs), mixed
# across the six log formats: a 1,200-line log of distinct denials, and a 100,000-line log
# where those denials repeat (as real logs do). Each command runs RUNS times (default 3);
# the median wall time is reported, with lines/s and the ratio to audit2why.
set -euo pipefail
cd "$(dirname "$0")/.."
policy=${1:-/etc/selinux/default/policy/policy.33}
runs=${RUNS:-3}
cargo build --release -q -p arbiter -p arbiter-denials --examples
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
target/release/examples/gen_denials "$policy" mixed 1200 5 > "$dir/distinct.log"
target/release/examples/gen_denials "$policy" mixed 20000 9 > "$dir/distinct20k.log"
for _ in $(seq 1 84); do cat "$dir/distinct.log"; done > "$dir/big.log"
head -n 100000 "$dir/big.log" > "$dir/repeated.log"

median() { # command... -> median seconds of $runs runs
    local t=()
    for _ in $(seq 1 "$runs"); do
        local s e
        s=$(date +%s.%N); "$@" > /dev/null 2>&1; e=$(date +%s.%N)
        t+=("$(echo "$e - $s" | bc -l)")
    done
    printf '%s\n' "${t[@]}" | sort -g | sed -n "$(( (runs + 1) / 2 ))p"
}
row() { # label lines seconds [reference seconds]
    local rate ratio=""
    rate=$(echo "$2 / $3" | bc -l)
    [ -n "${4:-}" ] && ratio=$(printf '%.1fx' "$(echo "$4 / $3" | bc -l)")
    printf '%-44s %8d lines %9.3f s %12.0f lines/s %8s\n' "$1" "$2" "$3" "$rate" "$ratio"
}
echo "policy: $policy (median of $runs runs, whole process including policy load)"
for log in distinct repeated; do
    n=$(wc -l < "$dir/$log.log")
    ref=$(median audit2why -p "$policy" -i "$dir/$log.log")
    ours=$(median target/release/arbiter why "$policy" "$dir/$log.log")
    row "audit2why ($log)" "$n" "$ref"
    row "arbiter why ($log)" "$n" "$ours" "$ref"
    refa=$(median audit2allow -p "$policy" -i "$dir/$log.log")
    oursa=$(median target/release/arbiter why --allow "$policy" "$dir/$log.log")
    row "audit2allow ($log)" "$n" "$refa"
    row "arbiter why --allow ($log)" "$n" "$oursa" "$refa"
done
n=$(wc -l < "$dir/distinct20k.log")
row "arbiter why (20,000 distinct denials)" "$n" "$(median target/release/arbiter why "$policy" "$dir/distinct20k.log")"

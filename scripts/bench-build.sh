#!/usr/bin/env bash
# Side-by-side benchmark of policy building: the small CIL-native policy, then the Debian
# default store (and, with `all`, the MLS store):
#   0. secilc  vs  arbiter build   on policies/cil/bench.cil (about 9,000 statements, from
#      policies/cil/gen-bench.py; default options, neverallow rules checked);
#   1. secilc -N  vs  arbiter build -N   on the store's modules, decompressed once, in
#      libsemanage's order (what semodule compiles);
#   2. semodule -p ROOT -s NAME -B -n  vs  arbiter build --store -p ROOT -s NAME -n   on two
#      copies of /etc/selinux + /var/lib/selinux under a scratch root.
# Whole-process figures from outside (spawn to reap): wall seconds, CPU seconds (user +
# system of the child) and peak RSS, the median of RUNS runs each, the two tools alternating
# run by run so that both see the same machine load, and the ratios (peer / arbiter). A tool
# that exits non-zero is reported as failed with its status instead of timed figures
# (scripts/side-by-side.py does the timing).
#
# Usage: scripts/bench-build.sh [RUNS] [default|all]
#        RUNS defaults to 5. ARBITER=PATH benchmarks that binary instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
which=${2:-default}
arb=${ARBITER:-}
if [ -z "$arb" ]; then
    cargo build --release -q -p arbiter
    arb=$PWD/target/release/arbiter
fi
scratch=$(mktemp -d /tmp/arbiter-bench-build.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)   runs: $runs"
printf "%-44s %9s %9s %8s | %9s %9s %8s | %7s %7s %7s\n" "build" "peer wall" "cpu s" "MB" \
    "arb wall" "cpu s" "MB" "wall x" "cpu x" "mem x"

# row NAME RUNS PEER-ARGV... -- ARBITER-ARGV...   (run in the current directory)
scripts_dir=$PWD/scripts
row() { /usr/bin/python3 "$scripts_dir/side-by-side.py" "$@"; }

# 0. The small CIL-native policy (run in the scratch directory: outputs land there).
bench=$PWD/policies/cil/bench.cil
(cd "$scratch" && row "secilc vs build (bench.cil, ~9,000 statements)" "$runs" \
    secilc -o policy.secilc -f fc.secilc "$bench" -- \
    "$arb" build -o policy.arbiter -f fc.arbiter "$bench")

stores=(default)
[ "$which" = all ] && stores=(default mls)
for store in "${stores[@]}"; do
    # 1. The store's modules, decompressed once, in libsemanage's order (highest priority,
    #    disabled ones left out, sorted by name; Debian has the one priority 100).
    cil="$scratch/cil-$store"
    mkdir -p "$cil"
    active=/var/lib/selinux/$store/active/modules
    declare -A chosen=()
    for p in $(ls "$active" | grep -E '^[0-9]+$' | sort -rn); do
        for d in "$active/$p"/*; do
            name=${d##*/}
            [ -n "${chosen[$name]:-}" ] || chosen[$name]=$d
        done
    done
    files=()
    for name in $(printf '%s\n' "${!chosen[@]}" | LC_ALL=C sort); do
        [ -e "$active/disabled/$name" ] && continue
        bzcat -f "${chosen[$name]}/cil" > "$cil/$name.cil"
        files+=("$name.cil")
    done
    unset chosen
    (cd "$cil" && row "secilc -N vs build -N ($store, ${#files[@]} modules)" "$runs" \
        secilc -N -o policy.secilc -f fc.secilc "${files[@]}" -- \
        "$arb" build -N -o policy.arbiter -f fc.arbiter "${files[@]}")

    # 2. The whole store rebuild on copied roots.
    for r in semodule arbiter; do
        mkdir -p "$scratch/$r-$store/etc" "$scratch/$r-$store/var/lib"
        cp -a /etc/selinux "$scratch/$r-$store/etc/"
        cp -a /var/lib/selinux "$scratch/$r-$store/var/lib/"
    done
    row "semodule -B -n vs build --store -n ($store)" "$runs" \
        semodule -p "$scratch/semodule-$store" -s "$store" -B -n -- \
        "$arb" build --store -p "$scratch/arbiter-$store" -s "$store" -n
done

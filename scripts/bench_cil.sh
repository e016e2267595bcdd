#!/bin/bash
# CIL compile benchmark: arbiter's compiler (crates/bench cil_build) against secilc 3.4 on
# Debian's default module store, side by side in one farm-bench run (CPU time, wall time,
# peak RSS; medians). The store is decompressed once, in libsemanage's order.
set -euo pipefail
store=${1:-default}
runs=${RUNS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mods=/var/lib/selinux/$store/active/modules
for d in $(ls "$mods"/100 | LC_ALL=C sort); do
    [ -e "$mods/disabled/$d" ] && continue
    bzcat "$mods/100/$d/cil" > "$work/$d.cil"
done
files=$(ls "$work"/*.cil | LC_ALL=C sort)
cargo build --release -q -p arbiter-bench --bin cil_build
farm-bench -n "$runs" --timeout 600 \
    --vs "secilc -N -o $work/policy.secilc -f $work/fc.secilc $files" \
    -- target/release/cil_build -N -f "$work/fc.arbiter" $files
cmp "$work/fc.arbiter" "$work/fc.secilc" && echo "file_contexts identical"

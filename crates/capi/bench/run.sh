#!/usr/bin/env bash
# libarbiter's benchmark, one run, side by side: the C API (bench.c) and libsepol on the
# same random queries of one policy, then the Rust engine (examples/bench_rust.rs) on the
# queries bench.c wrote. Prints median (and minimum) nanoseconds per call and the C/Rust
# ratios. Times are thread CPU time (the machine may be shared).
# Usage: crates/capi/bench/run.sh [POLICY] [QUERIES] [RUNS]
#   (defaults: /etc/selinux/default/policy/policy.33, 20000 queries, 15 runs)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
capi="$(cd "$here/.." && pwd)"
root="$(cd "$capi/../.." && pwd)"
policy="${1:-/etc/selinux/default/policy/policy.33}"
queries="${2:-20000}"
runs="${3:-15}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
bash "$capi/install.sh" "$work/prefix" >/dev/null
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
# shellcheck disable=SC2046 # pkg-config output is meant to split
cc -std=c11 -O2 -g -Wall -Wextra -Werror -o "$work/bench" "$here/bench.c" \
    $(pkg-config --cflags --libs arbiter) -lsepol "-Wl,-rpath,$work/prefix/lib"
(cd "$root" && cargo build --release -q -p arbiter-capi --example bench_rust)

"$work/bench" "$policy" "$work/queries.tsv" "$queries" "$runs" > "$work/c.tsv"
"$root/target/release/examples/bench_rust" "$policy" "$work/queries.tsv" "$runs" > "$work/rust.tsv"

echo "policy: $policy; $queries random queries; median of $runs runs (thread CPU ns per call)"
cat "$work/rust.tsv" "$work/c.tsv" | awk -F'\t' '
    { name[NR] = $1; med[NR] = $2; min[NR] = $3; by[$1] = $2 }
    END {
        printf "%-40s %10s %10s %10s\n", "operation", "median", "min", "ratio"
        for (i = 1; i <= NR; i++) {
            ratio = ""
            if (name[i] ~ /^rust /)
                ratio = ""  # the reference figures themselves
            else if (name[i] ~ /compute_av/)
                ratio = sprintf("%.2fx", med[i] / by["rust SecurityServer::compute_av"])
            else if (name[i] ~ /has_perm/)
                ratio = sprintf("%.2fx", med[i] / by["rust Avc::has_perm hit"])
            printf "%-40s %10.2f %10.2f %10s\n", name[i], med[i], min[i], ratio
        }
        print "(ratio: against the Rust figure of the same operation)"
    }'

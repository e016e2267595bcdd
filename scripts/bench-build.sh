#!/usr/bin/env bash
# Side-by-side benchmark of policy building on the Debian default store (and, with `all`,
# the MLS store):
#   1. secilc -N  vs  arbiter build -N   on the store's modules, decompressed once, in
#      libsemanage's order (what semodule compiles);
#   2. semodule -p ROOT -s NAME -B -n  vs  arbiter build --store -p ROOT -s NAME -n   on two
#      copies of /etc/selinux + /var/lib/selinux under a scratch root.
# Whole-process figures from outside (spawn to reap): wall seconds, CPU seconds (user +
# system of the child) and peak RSS, the median of RUNS runs each, the two tools alternating
# run by run so that both see the same machine load, and the ratios (peer / arbiter). A tool
# that exits non-zero is reported as failed with its status instead of timed figures (today
# `arbiter build` fails: the CIL compiler is not merged yet).
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
row() {
    local name=$1 n=$2; shift 2
    /usr/bin/python3 - "$name" "$n" "$@" <<'PY'
import os, shutil, statistics, sys, time

name, n, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
split = argv.index("--")
cmds = [argv[:split], argv[split + 1:]]
for c in cmds:
    c[0] = shutil.which(c[0]) or c[0]
null = os.open(os.devnull, os.O_WRONLY)
spawn = [(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)]
wall, cpu, rss, status = [[], []], [[], []], [[], []], [0, 0]
for _ in range(n):
    for k, c in enumerate(cmds):
        t = time.perf_counter()
        pid = os.posix_spawn(c[0], c, os.environ, file_actions=spawn)
        _, st, ru = os.wait4(pid, 0)
        wall[k].append(time.perf_counter() - t)
        cpu[k].append(ru.ru_utime + ru.ru_stime)
        rss[k].append(ru.ru_maxrss / 1024)
        if os.waitstatus_to_exitcode(st) != 0:
            status[k] = os.waitstatus_to_exitcode(st)
med = lambda v: statistics.median(v)
cols = []
for k in range(2):
    if status[k]:
        cols.append("%9s %9s %8s" % ("FAILED", "exit %d" % status[k], "-"))
    else:
        cols.append("%9.3f %9.3f %8.1f" % (med(wall[k]), med(cpu[k]), med(rss[k])))
if status[0] or status[1]:
    ratios = "%7s %7s %7s" % ("-", "-", "-")
else:
    ratios = "%6.1fx %6.1fx %6.1fx" % (med(wall[0]) / med(wall[1]), med(cpu[0]) / med(cpu[1]),
                                       med(rss[0]) / med(rss[1]))
print("%-44s %s | %s | %s" % (name, cols[0], cols[1], ratios))
PY
}

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

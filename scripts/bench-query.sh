#!/usr/bin/env bash
# Side-by-side benchmark of arbiter search/info/diff against setools 4.4.1's
# sesearch/seinfo/sediff on the Debian policies: whole-process wall time (spawn to exit,
# output to /dev/null) and maximum resident set size, median of N runs each, the two tools
# alternating run by run so that both see the same machine load, and the ratios.
#
# Usage: scripts/bench-query.sh [RUNS] [search|all]
#        RUNS defaults to 10; `search` (the default) runs the search rows only, `all` adds
#        info and diff (the whole sediff run of the two Debian policies runs once: it takes minutes).
#        ARBITER=PATH benchmarks that binary (an older build, say) instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
which=${2:-search}
arb=${ARBITER:-}
if [ -z "$arb" ]; then
    cargo build --release -q -p arbiter
    arb=$PWD/target/release/arbiter
fi
D=/etc/selinux/default/policy/policy.33
M=/etc/selinux/mls/policy/policy.33

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)   runs: $runs"
printf "%-46s %10s %8s %10s %8s %8s %9s\n" "query" "setools s" "MB" "arbiter s" "MB" "time x" "memory x"

# row NAME RUNS TOOL-ARGV... -- ARBITER-ARGV...
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
times, rss = [[], []], [[], []]
for _ in range(n):
    for k, c in enumerate(cmds):
        t = time.perf_counter()
        pid = os.posix_spawn(c[0], c, os.environ, file_actions=spawn)
        _, _, ru = os.wait4(pid, 0)
        times[k].append(time.perf_counter() - t)
        rss[k].append(ru.ru_maxrss)
ts, a = (statistics.median(v) for v in times)
tk, ak = (statistics.median(v) for v in rss)
print("%-46s %10.4f %8.1f %10.4f %8.1f %7.0fx %8.1fx"
      % (name, ts, tk / 1024, a, ak / 1024, ts / a, tk / ak))
PY
}

row "search -A -s httpd_t" "$runs" sesearch -A -s httpd_t "$D" -- "$arb" search -A -s httpd_t "$D"
row "search --allow -s httpd_t -t etc_t -c file -p read" "$runs" sesearch --allow -s httpd_t -t etc_t -c file -p read "$D" -- "$arb" search --allow -s httpd_t -t etc_t -c file -p read "$D"
row "search -T -s unconfined_t -rs (regex)" "$runs" sesearch -T -s unconfined_t -rs "$D" -- "$arb" search -T -s unconfined_t -rs "$D"
row "search -A (full dump)" "$runs" sesearch -A "$D" -- "$arb" search -A "$D"
row "search -T (full dump)" "$runs" sesearch -T "$D" -- "$arb" search -T "$D"
row "search --dontaudit (full dump)" "$runs" sesearch --dontaudit "$D" -- "$arb" search --dontaudit "$D"
row "search --allowxperm (full dump)" "$runs" sesearch --allowxperm "$D" -- "$arb" search --allowxperm "$D"
row "search --role_allow (full dump)" "$runs" sesearch --role_allow "$D" -- "$arb" search --role_allow "$D"
row "search -A -b . -rb (every conditional allow)" "$runs" sesearch -A -b . -rb "$D" -- "$arb" search -A -b . -rb "$D"
row "mls: search -A -b xdm_sysadm_login" "$runs" sesearch -A -b xdm_sysadm_login "$M" -- "$arb" search -A -b xdm_sysadm_login "$M"
row "mls: search -A -s sysadm_t" "$runs" sesearch -A -s sysadm_t "$M" -- "$arb" search -A -s sysadm_t "$M"
row "mls: search --role_allow --role_trans --range_trans" "$runs" sesearch --role_allow --role_trans --range_trans "$M" -- "$arb" search --role_allow --role_trans --range_trans "$M"
[ "$which" = all ] || exit 0
row "info -t -x" "$runs" seinfo "$D" -t -x -- "$arb" info "$D" -t -x
row "info --all" "$runs" seinfo "$D" --all -- "$arb" info "$D" --all
row "diff -b -c --common --property default mls" "$runs" sediff -b -c --common --property "$D" "$M" -- "$arb" diff -b -c --common --property "$D" "$M"
row "diff default mls (every section)" 1 sediff "$D" "$M" -- "$arb" diff "$D" "$M"

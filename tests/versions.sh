#!/usr/bin/env bash
# Rewrite binary SELinux kernel policies into every older policy version that
# `checkpolicy -b -c N` accepts, so that `arbiter info` can be tested on them.
#
# Usage: tests/versions.sh OUTDIR [POLICY...]
#
#   POLICY defaults to the two Debian policies
#     /etc/selinux/default/policy/policy.33  (written as OUTDIR/default.N)
#     /etc/selinux/mls/policy/policy.33      (written as OUTDIR/mls.N)
#   Output names are <name>.<N>, where <name> is the policy store directory
#   name (…/selinux/<name>/policy/policy.NN) or else the input file's basename.
#
#   VERSIONS (env) overrides the versions tried; default "15 16 ... 32".
#   CHECKPOLICY (env) overrides the checkpolicy binary (default: checkpolicy).
#
# Writes OUTDIR/versions.txt with one line per attempt:
#   <name> <N> ok <seconds> <bytes> <output path>
#   <name> <N> fail <seconds> - <checkpolicy's error message>
# and prints, per input policy, the list of accepted versions, plus timings.
#
# Exit status: 0 if every input could be read and at least one version was
# written for it; 1 otherwise.  Individual version failures are expected
# (e.g. MLS policies cannot be written below version 19) and only reported.
#
# Notes (Debian bookworm, checkpolicy 3.4, measured on the development box):
#   * Both Debian policies are MLS-enabled, so versions 15-18 are refused
#     ("policy version N cannot support MLS"); 19-32 are accepted.
#   * Versions < 20 use the old avtab format, for which libsepol expands every
#     attribute in the access-vector rules: the .19 files are ~100 MB each
#     and take ~5.5 s each to write.  All other versions take ~0.04 s and are
#     ~2 MB.  Budget ~12 s and ~210 MB of disk for the default inputs.
#   * setools 4.4.1 (seinfo) segfaults on every version < 24 (attributes are
#     not stored in the type symbol table before v24); see
#     docs/seinfo-statistics.md.

set -u
set -o pipefail

if [ $# -lt 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
    sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi

outdir=$1
shift
if [ $# -eq 0 ]; then
    set -- /etc/selinux/default/policy/policy.33 /etc/selinux/mls/policy/policy.33
fi

CHECKPOLICY=${CHECKPOLICY:-checkpolicy}
VERSIONS=${VERSIONS:-$(seq -s ' ' 15 32)}

if ! command -v "$CHECKPOLICY" >/dev/null 2>&1; then
    echo "error: $CHECKPOLICY not found (apt-get install checkpolicy)" >&2
    exit 1
fi

mkdir -p "$outdir" || exit 1
manifest="$outdir/versions.txt"
: > "$manifest"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# Read a little-endian u32 at byte offset $2 of file $1.
u32_at() {
    od -A n -t u4 --endian=little -j "$2" -N 4 "$1" 2>/dev/null | tr -d ' \n'
}

status=0
summary=()
t_all0=$(now)

for policy in "$@"; do
    if [ ! -r "$policy" ]; then
        echo "error: cannot read $policy" >&2
        status=1
        continue
    fi

    case "$policy" in
        */selinux/*/policy/policy.*)
            name=${policy%/policy/policy.*}
            name=${name##*/}
            ;;
        *)
            name=$(basename "$policy")
            ;;
    esac

    # Header: magic u32 (0xf97cff8c = 4185718668), strlen u32, string, version u32, config u32.
    magic=$(u32_at "$policy" 0)
    slen=$(u32_at "$policy" 4)
    if [ "$magic" != "4185718668" ] || [ -z "$slen" ] || [ "$slen" -gt 64 ]; then
        echo "error: $policy is not a binary kernel policy" >&2
        status=1
        continue
    fi
    srcvers=$(u32_at "$policy" $((8 + slen)))
    config=$(u32_at "$policy" $((12 + slen)))
    mlsflag=()
    if [ $((config & 1)) -eq 1 ]; then
        mlsflag=(-M)
    fi
    echo "== $policy: version $srcvers, MLS $([ ${#mlsflag[@]} -gt 0 ] && echo enabled || echo disabled)"

    accepted=()
    t_pol0=$(now)
    for n in $VERSIONS; do
        out="$outdir/$name.$n"
        log="$outdir/$name.$n.log"
        t0=$(now)
        if "$CHECKPOLICY" -b "${mlsflag[@]}" -c "$n" -o "$out" "$policy" >"$log" 2>&1; then
            t1=$(now)
            size=$(stat -c %s "$out")
            accepted+=("$n")
            printf '%s %s ok %s %s %s\n' "$name" "$n" "$(elapsed "$t0" "$t1")" "$size" "$out" >> "$manifest"
            printf '  v%-2s ok    %7ss %10s bytes' "$n" "$(elapsed "$t0" "$t1")" "$size"
            # libsepol warns when a version cannot hold something the policy has.
            dropped=$(grep -E 'Discarding|cannot support|Warning' "$log" | sed 's/^libsepol\.[a-z_]*: //' | sort -u | paste -sd ';' -)
            [ -n "$dropped" ] && printf '  (%s)' "$dropped"
            printf '\n'
            rm -f "$log"
        else
            t1=$(now)
            rm -f "$out"
            reason=$(grep -v 'policydb_index_others' "$log" | head -n 1)
            printf '%s %s fail %s - %s\n' "$name" "$n" "$(elapsed "$t0" "$t1")" "$reason" >> "$manifest"
            printf '  v%-2s SKIP  %7ss  %s\n' "$n" "$(elapsed "$t0" "$t1")" "$reason"
        fi
    done
    t_pol1=$(now)
    if [ ${#accepted[@]} -eq 0 ]; then
        echo "error: no version accepted for $policy" >&2
        status=1
    fi
    summary+=("$name: ${accepted[*]:-none} ($(elapsed "$t_pol0" "$t_pol1")s)")
done

t_all1=$(now)
echo
echo "Accepted versions:"
for line in "${summary[@]}"; do
    echo "  $line"
done
echo "Total time: $(elapsed "$t_all0" "$t_all1")s; output in $outdir ($(du -sh "$outdir" | cut -f1)); manifest $manifest"
exit $status

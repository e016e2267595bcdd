#!/usr/bin/env bash
# End-to-end check of `arbiter bsm print|reduce` against every row of
# tests/data/bsm/EXPECTED.tsv: the binary's stdout must have the listed size and sha256 and
# its exit status must match (praudit exits 1 after reading stdin). Plus auditreduce's
# usage errors (exit 64) and `bsm preselect` on the embedded defaults.
#
#   ARBITER_BIN=target/release/arbiter bash tests/bsm_cli.sh [DATA_DIR]
set -euo pipefail
bin=${ARBITER_BIN:-target/release/arbiter}
data=${1:-$(dirname "$0")/data/bsm}
if [ ! -f "$data/EXPECTED.tsv" ]; then
    echo "bsm_cli.sh: $data/EXPECTED.tsv not found (the data is part of the repository)" >&2
    exit 1
fi
export TZ=UTC
etc=(--etc "$data/etc")
fails=0
n=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
while IFS=$'\t' read -r kind output command status bytes sha note; do
    [ "$kind" = kind ] && continue
    n=$((n + 1))
    stdin=/dev/null
    if [[ "$command" == *"<"* ]]; then
        stdin="$data/$(echo "${command##*<}" | tr -d ' ')"
        command=${command%%<*}
    fi
    eval "set -- $command"
    tool=$1
    shift
    args=()
    for a in "$@"; do
        if [ -f "$data/$a" ]; then
            args+=("$data/$a")
        else
            args+=("$a")
        fi
    done
    case "$tool" in
        praudit) sub=print ;;
        auditreduce) sub=reduce ;;
        *) echo "unknown tool $tool" >&2; exit 1 ;;
    esac
    rc=0
    "$bin" bsm "$sub" "${etc[@]}" "${args[@]}" < "$stdin" > "$tmp" || rc=$?
    got=$(sha256sum < "$tmp" | cut -d' ' -f1)
    if [ "$got" != "$sha" ] || [ "$rc" != "$status" ]; then
        echo "FAIL: $command (exit $rc, want $status; $(wc -c < "$tmp") bytes, want $bytes)" >&2
        fails=$((fails + 1))
    fi
done < "$data/EXPECTED.tsv"

rc=0
"$bin" bsm reduce "${etc[@]}" -m 0 "$data/synthetic/small.bsm" > /dev/null 2>&1 || rc=$?
[ "$rc" = 64 ] || { echo "FAIL: reduce -m 0 exit $rc, want 64" >&2; fails=$((fails + 1)); }
rc=0
"$bin" bsm reduce "${etc[@]}" -d 20220315 -a 20220101 "$data/synthetic/small.bsm" > /dev/null 2>&1 || rc=$?
[ "$rc" = 64 ] || { echo "FAIL: reduce -d -a exit $rc, want 64" >&2; fails=$((fails + 1)); }
out=$("$bin" bsm preselect --event AUE_EXECVE --mask ex) || { echo "FAIL: preselect ex" >&2; fails=$((fails + 1)); }
[ "$out" = selected ] || { echo "FAIL: preselect AUE_EXECVE ex printed $out" >&2; fails=$((fails + 1)); }
rc=0
"$bin" bsm preselect --event 6171 --mask lo --both > /dev/null || rc=$?
[ "$rc" = 1 ] || { echo "FAIL: preselect 6171 lo exit $rc, want 1 (last duplicate is class ad)" >&2; fails=$((fails + 1)); }

"$bin" bsm config --etc "$data/etc" > /dev/null 2>&1 || { echo "FAIL: bsm config on the stock files" >&2; fails=$((fails + 1)); }
strict=$("$bin" bsm config --etc "$data/etc" --strict 2>/dev/null | grep -c "accepted silently" || true)
[ "$strict" = 6 ] || { echo "FAIL: bsm config --strict found $strict, want 6 (4 duplicate numbers, 2 unknown classes)" >&2; fails=$((fails + 1)); }

echo "bsm_cli.sh: $n EXPECTED.tsv rows checked through the binary, $fails failure(s)"
[ "$fails" = 0 ]

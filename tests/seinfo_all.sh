#!/usr/bin/env bash
# Compares `arbiter info --json` with setools' seinfo on every policy we have: the two
# Debian policies, their rewrites to every older version in VERSIONS_DIR (made by
# tests/versions.sh), and our own policies in policies/bin. Versions that setools cannot
# load (< 24) are compared with the same policy's v24 rewrite on every statistic that does
# not depend on the format version; the v19 rule counts (attributes expanded) are pinned
# to the values libsepol reports (docs/seinfo-statistics.md, section 4).
#
# Usage: tests/seinfo_all.sh VERSIONS_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: tests/seinfo_all.sh VERSIONS_DIR}
cmp=(/usr/bin/python3 tests/seinfo_compare.py --arbiter "${ARBITER_BIN:-target/release/arbiter}")

"${cmp[@]}" /etc/selinux/default/policy/policy.33 /etc/selinux/mls/policy/policy.33
for p in policies/bin/*; do
    v=${p##*.}
    [[ $v =~ ^[0-9]+$ ]] || continue
    if (( v >= 24 && v <= 33 )); then "${cmp[@]}" "$p"; fi
done
for name in default mls; do
    for f in "$dir/$name".*; do
        v=${f##*.}
        [[ $v =~ ^[0-9]+$ ]] || continue
        if (( v >= 24 )); then
            "${cmp[@]}" "$f"
        elif (( v >= 20 )); then
            except=Attributes
            (( v < 22 )) && except+=,Polcap
            (( v < 21 )) && except+=,Range_trans
            "${cmp[@]}" --expect-from "$dir/$name.24" --except "$except" "$f"
        else
            if [ "$name" = default ]; then
                o=(--override Allow=3617737 --override Auditallow=22 --override Dontaudit=689463 --override Range_trans=14)
            else
                o=(--override Allow=3619970 --override Auditallow=21 --override Dontaudit=692982 --override Range_trans=29)
            fi
            "${cmp[@]}" --expect-from "$dir/$name.24" --except Attributes,Polcap "${o[@]}" "$f"
        fi
    done
done
echo "seinfo comparison: all policies agree"

#!/usr/bin/env bash
# Check that every binary in bin/ loads.  Uses seinfo (setools) for
# versions >= 24 and prints one line of key statistics per file.  setools
# 4.4.1 (Debian 12) SEGFAULTS on every policy older than version 24 (also on
# Debian's own policy downgraded with `checkpolicy -b -c 23`), so for those
# versions the file is loaded by libsepol instead, via `checkpolicy -b`
# (which also re-writes it: the result must be byte-identical).
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
fail=0
for f in bin/*; do
	v=${f##*.}
	if [ "$v" -gt 33 ]; then
		# setools/libsepol 3.4 read up to version 33: load with arbiter's reader instead
		if cargo run -q --manifest-path ../Cargo.toml -p arbiter -- info "$f" >"$tmp" 2>&1; then
			echo "$f: v$v loaded by arbiter (seinfo/libsepol 3.4 cannot read v34+)"
		else
			echo "$f: arbiter load FAILED"; cat "$tmp"; fail=1
		fi
	elif [ "$v" -ge 24 ]; then
		if out=$(seinfo "$f" 2>&1); then
			pv=$(echo "$out" | sed -n 's/^Policy Version: *//p')
			hu=$(echo "$out" | sed -n 's/^Handle unknown classes: *//p')
			stats=$(echo "$out" | sed -E 's/MLS Constrain/MLSConstrain/' |
				grep -oE '(Classes|Permissions|Sensitivities|Categories|Types|Attributes|Users|Roles|Booleans|Cond\. Expr\.|Allow|Auditallow|Dontaudit|Type_trans|Role_trans|Range_trans|Constraints|MLSConstrain|Permissives|Polcap|Defaults|Typebounds|Allowxperm|Ibpkeycon|Nodecon): +[0-9]+' |
				sed -E 's/: +/=/' | grep -vE '=0$' | tr '\n' ' ')
			echo "$f: v$pv unknown=$hu $stats"
		else
			echo "$f: seinfo FAILED"; fail=1
		fi
	else
		mls=""
		checkpolicy -b "$f" -c "$v" -o "$tmp" >/dev/null 2>&1 || { mls=-M; checkpolicy -M -b "$f" -c "$v" -o "$tmp" >/dev/null 2>&1; } || { echo "$f: libsepol load FAILED"; fail=1; continue; }
		# libsepol's re-write may order conditional/avtab entries differently,
		# so only the size is compared
		if [ "$(stat -c %s "$f")" = "$(stat -c %s "$tmp")" ]; then rt="re-written with the same size"; else rt="re-written with a DIFFERENT size"; fi
		echo "$f: v$v ${mls:+MLS }loaded by libsepol (checkpolicy -b), $rt; seinfo skipped (setools segfaults < v24)"
	fi
done
exit $fail

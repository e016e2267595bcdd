#!/usr/bin/env bash
# Regenerate every binary policy in bin/ from the sources in src/.
# Needs checkpolicy and secilc (Debian: apt-get install checkpolicy secilc),
# and cargo for the two files checkpolicy cannot write (features.34/.35).
# Output is deterministic: running it twice gives byte-identical files.
# The expected-warning lines checkpolicy prints are listed in README.md
# ("Known compiler noise").
set -euo pipefail

cd "$(dirname "$0")"
mkdir -p bin
rm -f bin/*

CP=checkpolicy
CIL=secilc

build() { # build OUT CMD...
	local out=$1; shift
	echo "building bin/$out: $*"
	"$@" -o "bin/$out"
}

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# checkpolicy 3.4 BUG: compiling SOURCE straight to a version < 26 silently
# drops every role_transition, and to a version < 21 every range_transition
# (libsepol compares each rule's class with policydb->process_class, which is
# only set when a policy is READ).  So versions < 26 are made by compiling
# v33 first and down-converting that binary with `checkpolicy -b -c N`, which
# keeps them (handle_unknown and MLS come from the v33 binary).
downconvert() { # downconvert OUT V33BINARY VERSION [-M]
	local out=$1 src=$2 v=$3; shift 3
	echo "building bin/$out: $CP $* -b $src -c $v"
	$CP "$@" -b "$src" -c "$v" -o "bin/$out"
}

# tiny: non-MLS, every version checkpolicy can write (15..33)
$CP -c 33 -U deny -o "$TMP/tiny.33" src/tiny.conf
for v in $(seq 15 25); do
	downconvert "tiny.$v" "$TMP/tiny.33" "$v"
done
for v in $(seq 26 33); do
	build "tiny.$v" $CP -c "$v" -U deny src/tiny.conf
done

# features: MLS, needs >= 30 (ioctl xperms). 31 adds infiniband contexts,
# 32 adds glblub; checkpolicy drops what an older version cannot carry.
for v in 30 31 32 33; do
	build "features.$v" $CP -M -c "$v" -U allow src/features.conf
done
# handle_unknown variants of the same policy
build "features-deny.33"   $CP -M -c 33 -U deny   src/features.conf
build "features-reject.33" $CP -M -c 33 -U reject src/features.conf

# unknown: lacks kernel classes/perms; one build per handle_unknown value
for u in allow deny reject; do
	build "unknown-$u.33" $CP -c 33 -U "$u" src/unknown.conf
done

# default: the CLI's embedded policy (MLS), plus older MLS versions
$CP -M -c 33 -U deny -o "$TMP/default.33" src/default.conf
for v in 19 21 24; do
	downconvert "default.$v" "$TMP/default.33" "$v" -M
done
for v in 26 29 33; do
	build "default.$v" $CP -M -c "$v" -U deny src/default.conf
done

# bounds: CIL, -N because the policy violates its typebounds on purpose
# (-N disables the neverallow AND the bounds check); -f /dev/null drops the
# file_contexts file secilc would otherwise write.
for v in 24 33; do
	build "bounds.$v" $CIL -N -c "$v" -f /dev/null src/bounds.cil
done

# features.34 / features.35: format versions 34 (xperms inside conditional rules) and 35
# (neveraudit types), plus nlmsg xperms, none of which checkpolicy 3.4 can write. They
# are made from bin/features.33 by arbiter's own policy writer (this step needs cargo);
# what they add is listed in README.md. Deterministic like the rest.
cargo run -q --manifest-path ../Cargo.toml -p arbiter-policy --example mkfixtures -- \
	bin/features.33 bin

echo "done: $(ls bin | wc -l) binaries, $(du -cb bin/* | tail -1 | cut -f1) bytes"

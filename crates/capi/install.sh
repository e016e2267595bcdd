#!/usr/bin/env bash
# Builds libarbiter and installs it under PREFIX:
#   PREFIX/include/arbiter.h
#   PREFIX/lib/libarbiter.so.VERSION (+ libarbiter.so.MAJOR and libarbiter.so links), libarbiter.a
#   PREFIX/lib/pkgconfig/arbiter.pc
# Usage: crates/capi/install.sh PREFIX   (e.g. /usr/local; set ARBITER_NO_BUILD=1 to skip
# the cargo build and install what target/release holds; CARGO_TARGET_DIR is honoured).
set -euo pipefail
if [ $# -ne 1 ]; then
    echo "usage: $0 PREFIX" >&2
    exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
mkdir -p "$1"
prefix="$(cd "$1" && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"

if [ "${ARBITER_NO_BUILD:-0}" != 1 ]; then
    (cd "$root" && cargo build --release -p arbiter-capi --quiet)
fi
version="$(cd "$root" && cargo pkgid -p arbiter-capi | sed 's/.*[@#]//')"
major="${version%%.*}"

install -D -m 644 "$here/include/arbiter.h" "$prefix/include/arbiter.h"
install -D -m 755 "$target/release/libarbiter.so" "$prefix/lib/libarbiter.so.$version"
ln -sf "libarbiter.so.$version" "$prefix/lib/libarbiter.so.$major"
ln -sf "libarbiter.so.$major" "$prefix/lib/libarbiter.so"
install -D -m 644 "$target/release/libarbiter.a" "$prefix/lib/libarbiter.a"
mkdir -p "$prefix/lib/pkgconfig"
cat > "$prefix/lib/pkgconfig/arbiter.pc" <<PC
prefix=$prefix
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include

Name: arbiter
Description: SELinux access decisions in userspace from a policy file, with libselinux's names
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -larbiter
Libs.private: -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
PC
echo "installed libarbiter $version under $prefix"

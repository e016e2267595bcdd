#!/usr/bin/env bash
# The C tests of libarbiter, against an installed copy (as a C user would build):
#   1. build and install into a temporary PREFIX (install.sh), compile the C programs with
#      `cc $(pkg-config --cflags --libs arbiter)`, and once against libarbiter.a;
#   2. api_test: every function of arbiter.h, bad input, threads hammering one server and
#      one cache while another thread reloads and flips booleans, then open/reload/free
#      cycles (ARBITER_C_CYCLES, default 1000);
#   3. api_test again under valgrind --leak-check=full --error-exitcode=1
#      (ARBITER_VALGRIND_CYCLES cycles, default 1000);
#   4. sepol_diff: arb_compute_av against libsepol's sepol_compute_av on
#      ARBITER_SEPOL_QUERIES (default 100,000) random queries of the Debian policy, half of
#      them under booleans set at random
#      (ARBITER_DEBIAN_POLICY, default /etc/selinux/default/policy/policy.33). A missing
#      policy fails the run unless ARBITER_SKIP_DEBIAN=1.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
capi="$(cd "$here/.." && pwd)"
root="$(cd "$capi/../.." && pwd)"
cycles="${ARBITER_C_CYCLES:-1000}"
vg_cycles="${ARBITER_VALGRIND_CYCLES:-1000}"
queries="${ARBITER_SEPOL_QUERIES:-100000}"
debian="${ARBITER_DEBIAN_POLICY:-/etc/selinux/default/policy/policy.33}"

if ! command -v valgrind >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends valgrind
    else
        echo "run.sh: valgrind is missing (apt-get install valgrind)" >&2
        exit 1
    fi
fi
for tool in cc pkg-config; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is missing" >&2; exit 1; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
bash "$capi/install.sh" "$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cflags=(-std=c11 -O2 -g -Wall -Wextra -Werror -pthread)
rpath="-Wl,-rpath,$prefix/lib"
# shellcheck disable=SC2046 # pkg-config output is meant to split
cc "${cflags[@]}" -o "$work/api_test" "$here/c/api_test.c" $(pkg-config --cflags --libs arbiter) "$rpath"
# shellcheck disable=SC2046
cc "${cflags[@]}" -o "$work/api_test_static" "$here/c/api_test.c" $(pkg-config --cflags arbiter) \
    "$prefix/lib/libarbiter.a" $(pkg-config --static --libs-only-l arbiter | sed 's/-larbiter//')
# shellcheck disable=SC2046
cc "${cflags[@]}" -o "$work/sepol_diff" "$here/c/sepol_diff.c" $(pkg-config --cflags --libs arbiter) -lsepol "$rpath"

policies="$root/policies/bin"
echo "-- api_test (shared library, $cycles cycles)"
"$work/api_test" "$policies" "$cycles" 20000
echo "-- api_test (static library, 50 cycles)"
"$work/api_test_static" "$policies" 50 2000
echo "-- api_test under valgrind ($vg_cycles cycles)"
valgrind -q --leak-check=full --show-leak-kinds=definite,indirect,possible \
    --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=1 \
    "$work/api_test" "$policies" "$vg_cycles" 500
echo "-- sepol_diff ($queries queries)"
if [ -f "$debian" ]; then
    "$work/sepol_diff" "$debian" "$queries"
elif [ "${ARBITER_SKIP_DEBIAN:-0}" = 1 ]; then
    echo "skipped: $debian is absent and ARBITER_SKIP_DEBIAN=1"
else
    echo "run.sh: $debian is absent (install selinux-policy-default, or set ARBITER_SKIP_DEBIAN=1)" >&2
    exit 1
fi
echo "-- C tests passed"

#!/usr/bin/env bash
# The whole test suite, on a fresh Debian machine or a developer's.
#
# Installs what the tests need (as root, with apt-get), then runs: format and lint checks;
# every unit and integration test in release mode (including the differential test against
# libsepol on the Debian policies and their rewrites to older format versions: five of them,
# sampled, by default; all, whole, with ARBITER_ORACLE_ALL_VERSIONS=1);
# the statistics comparison with setools' seinfo on every policy; the loom model checks of
# the lock-free structures; and a short fuzzing smoke run when cargo-fuzz is available.
set -euo pipefail
cd "$(dirname "$0")/.."
# Nothing here reads standard input; /dev/null keeps any tool that would (rustc's `-`
# probe inherits it) from reading whatever the caller's input is.
exec </dev/null

# 1. System packages: the policies, the compiler, setools (the seinfo oracle) and libsepol
#    (the decision oracle, linked only into tests and benchmarks).
packages=(selinux-policy-default selinux-policy-mls checkpolicy secilc setools python3-setools libsepol-dev bzip2
          policycoreutils selinux-utils   # semodule, setfiles, sefcontext_compile: crates/store's oracles
          binutils)                       # objdump, for scripts/scan-partial-loads.py

missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "test.sh: missing Debian packages: ${missing[*]} (run as root to install them)" >&2
        exit 1
    fi
    echo "== installing ${missing[*]}"
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

echo "== format and lint"
cargo fmt --all -- --check
# `libsepol` (crates/sepol-oracle, crates/oracle-tests) is off by default so that the workspace
# builds without libsepol-dev; here it is on, and a missing libsepol fails the build loudly.
sepol=(--features arbiter-oracle-tests/libsepol,sepol-oracle/libsepol)
cargo clippy --workspace --all-targets "${sepol[@]}" -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet "${sepol[@]}"
# The fuzz targets live in their own workspace (fuzz/), which the commands above do not
# build; a check keeps them compiling as the APIs they call change (runs need cargo-fuzz).
(cd fuzz && cargo check --quiet --bins)

# One public path per item in every engine crate (docs/architecture.md, "Where things
# live"): a source check, no build; under a second.
python3 scripts/check-one-path.py

echo "== loom model checks of the lock-free structures (early: a cfg(loom) build error shows in minutes)"
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
    cargo test --release -p arbiter-decide -p arbiter-avc -p arbiter-bsm --lib loom

echo "== older format versions of the Debian policies (checkpolicy -b -M -c N)"
versions=$(mktemp -d)
trap 'rm -rf "$versions"' EXIT
bash tests/versions.sh "$versions" >/dev/null
export ARBITER_VERSIONS_DIR="$versions"

echo "== the workspace builds without libsepol (oracle tests live in crates/oracle-tests, behind a feature)"
# Without the feature nothing in the workspace depends on sepol-oracle (whose build script
# then links nothing), so `cargo build --workspace` needs no libsepol-dev.
if cargo tree -q --workspace -e normal,dev,build -i sepol-oracle | grep -q 'arbiter'; then
    echo "test.sh: a crate depends on sepol-oracle without the libsepol feature:" >&2
    cargo tree -q --workspace -e normal,dev,build -i sepol-oracle >&2
    exit 1
fi
for c in $(cargo metadata --no-deps --format-version 1 | python3 -c 'import json,sys; print(" ".join(p["name"] for p in json.load(sys.stdin)["packages"]))'); do
    if [ "$c" != arbiter-testkit ] && [ "$c" != arbiter-lab ] && [ "$c" != arbiter-oracle-tests ] \
        && cargo tree -q -p "$c" -e normal --depth 1 --prefix none | grep -q '^arbiter-testkit '; then
        echo "test.sh: $c has arbiter-testkit as a normal dependency (test helpers are dev-dependencies)" >&2
        exit 1
    fi
done

echo "== why: audit2why / audit2allow oracle (policycoreutils-python-utils) and the arbiter why CLI"
# The differential test in crates/denials/tests/oracle.rs (run by the tests below) needs the
# oracle; ARBITER_WHY_LINES sets its lines per log format (default 1000). Here: the CLI end
# to end on a mixed-format log, byte-compared with both tools.
# selinux-policy-dev provides policy.xml, whose boolean descriptions audit2why prints.
why_missing=()
for p in policycoreutils-python-utils selinux-policy-dev; do
    dpkg -s "$p" >/dev/null 2>&1 || why_missing+=("$p")
done
if [ ${#why_missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "test.sh: missing Debian packages: ${why_missing[*]} (run as root)" >&2
        exit 1
    fi
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${why_missing[@]}"
fi
cargo build --release -q -p arbiter
cargo build --release -q -p arbiter-denials --examples
why_dir=$(mktemp -d)
for policy in /etc/selinux/default/policy/policy.33 /etc/selinux/mls/policy/policy.33; do
    target/release/examples/gen_denials "$policy" mixed 1200 3 > "$why_dir/mixed.log"
    audit2why -p "$policy" -i "$why_dir/mixed.log" > "$why_dir/expected.why"
    target/release/arbiter why "$policy" "$why_dir/mixed.log" > "$why_dir/got.why"
    cmp "$why_dir/expected.why" "$why_dir/got.why"
    audit2allow -p "$policy" -i "$why_dir/mixed.log" > "$why_dir/expected.allow"
    target/release/arbiter why --allow "$policy" < "$why_dir/mixed.log" > "$why_dir/got.allow"
    cmp "$why_dir/expected.allow" "$why_dir/got.allow"
    # audit2allow's generation options through the binary (no require block: no Python set
    # order involved); -M builds a module package with checkmodule + semodule_package.
    audit2allow -p "$policy" -i "$why_dir/mixed.log" -D -x -e > "$why_dir/expected.opts"
    target/release/arbiter why -D -x -e "$policy" "$why_dir/mixed.log" > "$why_dir/got.opts"
    cmp "$why_dir/expected.opts" "$why_dir/got.opts"
    (cd "$why_dir" && "$OLDPWD/target/release/arbiter" why -M localfix "$policy" mixed.log >/dev/null \
        && test -s localfix.pp && test ! -e localfix.mod && rm -f localfix.pp localfix.te)
    if target/release/arbiter why -R "$policy" "$why_dir/mixed.log" >/dev/null 2>&1; then
        echo "arbiter why -R must be refused (not implemented), not ignored" >&2
        exit 1
    fi
done
rm -rf "$why_dir"

echo "== tests (release)"
cargo test --workspace --release "${sepol[@]}"

echo "== Landlock: kernel differential test, a second seed and 20,000 more cases"
# (cargo test above already ran 5,000 cases with the default seed.) Fails loudly if the
# kernel has no Landlock unless ARBITER_NO_KERNEL_LANDLOCK=1.
ARBITER_LANDLOCK_CASES=${ARBITER_LANDLOCK_CASES:-20000} ARBITER_LANDLOCK_SEED=${ARBITER_LANDLOCK_SEED:-2} \
    cargo test --release -q -p arbiter-landlock --test kernel_diff

echo "== seinfo comparison"
cargo build --release -p arbiter
ARBITER_BIN=target/release/arbiter bash tests/seinfo_all.sh "$versions"

echo "== BSM audit: every tests/data/bsm/EXPECTED.tsv output through the arbiter binary"
ARBITER_BIN=target/release/arbiter bash tests/bsm_cli.sh tests/data/bsm

echo "== C library: install, every function from C, valgrind, libsepol differential"
# Builds libarbiter, installs it into a temporary prefix, compiles the C tests with
# pkg-config and runs them (crates/capi/tests/run.sh; installs valgrind if missing).
bash crates/capi/tests/run.sh

echo "== Python package (crates/python): pip install ./crates/python, then pytest"
# Installs into the default python3 (the package is built by maturin, fetched by pip).
python3 -m pytest --version >/dev/null 2>&1 || python3 -m pip install -q pytest
python3 -m pip install -q --force-reinstall ./crates/python
# arbiter.dask: the [dask] extra's requirements (as in crates/python/pyproject.toml; named
# here so that pip does not build the package a second time). tests/test_dask.py runs a
# two-worker LocalCluster over a 60-host generated fleet (~25 s); the denials tests need
# target/release/examples/gen_denials, built by the "why" step above.
python3 -m pip install -q "dask[bag]>=2023.1" "distributed>=2023.1"
# The differential test compares with the CLI built above; without it, it is skipped.
ARBITER_BIN=target/release/arbiter python3 -m pytest crates/python/tests -q

echo "== LLVM x86 partial-register miscompile: no candidate in the release CLI or the extension (about a minute)"
# rustc 1.95's LLVM 22 miscompiles a small field inserted into a padded word
# (llvm/llvm-project#205291; docs/history/setools.md, the eighteenth pass): the scan lists
# every place of that shape in the two binaries users run, and fails on any.
native=$(cd / && python3 -c 'import arbiter._native as n; print(n.__file__)')
python3 scripts/scan-partial-loads.py target/release/arbiter "$native"

echo "== documentation: runnable examples, manual pages, completions (about 30 s)"
# Every ```sh block of README.md and docs/*.md made of `arbiter` commands must exit 0, and
# every `$ arbiter` transcript must print what it shows; the manual pages for arbiter and
# every subcommand must render with man -l without a warning, the completions must load.
bash scripts/doc-examples.sh target/release/arbiter
bash scripts/check-manual.sh target/release/arbiter

if cargo fuzz --version >/dev/null 2>&1; then
    echo "== fuzzing smoke run (20 s per target; longer runs: scripts/fuzz.sh)"
    FUZZ_SECONDS=20 bash scripts/fuzz.sh
else
    echo "== fuzzing smoke run skipped: cargo-fuzz is not installed (scripts/fuzz.sh installs it)"
fi

echo "== all tests passed"

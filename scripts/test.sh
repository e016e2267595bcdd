#!/usr/bin/env bash
# The whole test suite, on a fresh Debian machine or a developer's.
#
# Installs what the tests need (as root, with apt-get), then runs: format and lint checks;
# every unit and integration test in release mode (including the differential test against
# libsepol on the Debian policies and their rewrites to every older format version);
# the statistics comparison with setools' seinfo on every policy; the loom model checks of
# the lock-free structures; and a short fuzzing smoke run when cargo-fuzz is available.
set -euo pipefail
cd "$(dirname "$0")/.."

# 1. System packages: the policies, the compiler, setools (the seinfo oracle) and libsepol
#    (the decision oracle, linked only into tests and benchmarks).
packages=(selinux-policy-default selinux-policy-mls checkpolicy secilc setools python3-setools libsepol-dev)
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
cargo clippy --workspace --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet

echo "== older format versions of the Debian policies (checkpolicy -b -M -c N)"
versions=$(mktemp -d)
trap 'rm -rf "$versions"' EXIT
bash tests/versions.sh "$versions" >/dev/null
export ARBITER_VERSIONS_DIR="$versions"

echo "== tests (release)"
cargo test --workspace --release

echo "== seinfo comparison"
cargo build --release -p arbiter
ARBITER_BIN=target/release/arbiter bash tests/seinfo_all.sh "$versions"

echo "== Python package (crates/python): pip install ./crates/python, then pytest"
# Installs into the default python3 (the package is built by maturin, fetched by pip).
python3 -m pytest --version >/dev/null 2>&1 || python3 -m pip install -q pytest
python3 -m pip install -q --force-reinstall ./crates/python
# The differential test compares with the CLI built above; without it, it is skipped.
ARBITER_BIN=target/release/arbiter python3 -m pytest crates/python/tests -q

echo "== loom model checks of the lock-free structures"
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
    cargo test --release -p arbiter-decide -p arbiter-avc --lib loom

if cargo fuzz --version >/dev/null 2>&1; then
    echo "== fuzzing smoke run (20 s per target; longer runs: scripts/fuzz.sh)"
    FUZZ_SECONDS=20 bash scripts/fuzz.sh
else
    echo "== fuzzing smoke run skipped: cargo-fuzz is not installed (scripts/fuzz.sh installs it)"
fi

echo "== all tests passed"

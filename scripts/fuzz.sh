#!/usr/bin/env bash
# Fuzzes the parsers with cargo-fuzz (libFuzzer + AddressSanitizer).
#
#   scripts/fuzz.sh                  # every target, ${FUZZ_SECONDS:-60} s each
#   FUZZ_SECONDS=600 scripts/fuzz.sh policy_read
#
# Targets (fuzz/fuzz_targets/):
#   policy_read    ValidPolicy::from_bytes on arbitrary bytes; on Ok, stats::statistics and
#                  SecurityServer::new (name tables, SID table, decision index).
#   context_parse  parse_context_bytes against policies/bin/default.33; an accepted context
#                  must format and parse back to itself.
#   denial_parse   arbiter-denials' line reader and AVC parser on arbitrary bytes; accepted
#                  records carry permissions and user:role:type contexts.
#   bsm_trail      BSM trail reader on arbitrary bytes: framing, every token, praudit printing
#                  in the plain/raw/XML forms and auditreduce selection; decoded tokens must
#                  re-encode to the bytes they came from; the streaming reader, fed in
#                  small pieces, must frame exactly as the in-memory one.
#   bsm_config     audit_class/audit_event/audit_control/audit_user parsers and masks on
#                  arbitrary bytes; an accepted mask must survive text and back.
#   landlock_config  landlockconfig TOML/JSON parsing (first byte picks the format); an
#                  accepted config keeps every rule's rights inside the handled set.
#   search_regex   sesearch's Python `re` patterns translated for the regex engine: every
#                  accepted pattern must be valid engine syntax; translation deterministic.
#   analysis_config  setools' permission map format and sechecker's .ini (configparser and
#                  the checks' options) against policies/bin/default.33; an accepted
#                  checker configuration must also run.
#   semanage_conf  the module store's semanage.conf.
#   store_bzip2    block-parallel bzip2 decoding of large modules on damaged streams, held
#                  against the serial decoder (equal text whenever it accepts).
#   cil_compile, batch_lines  (see their files in fuzz/fuzz_targets/)
#
# Works on a stable toolchain: RUSTC_BOOTSTRAP=1 lets stable rustc and cargo accept the -Z
# flags cargo-fuzz passes (-Zsanitizer=address ...); stable ships the ASan runtime. Installs
# cargo-fuzz with `cargo install cargo-fuzz --locked` if it is missing. Needs a C++ compiler
# (libfuzzer-sys builds libFuzzer).
#
# Corpora: fuzz/corpus/TARGET (git-ignored, kept between runs). policy_read is seeded with a
# copy of policies/bin/*; context_parse reads the committed seeds in fuzz/seeds/context_parse
# (and its dictionary fuzz/seeds/context_parse.dict) as a second, read-only corpus.
#
# Limits: -rss_limit_mb=2048, and -malloc_limit_mb=512: the reader must never allocate more
# than its input justifies, so a single huge allocation is reported as a crash (oom-*).
#
# Exits non-zero if any target crashed, panicked or hit a limit, after printing each new
# artifact (fuzz/artifacts/TARGET/...). To reproduce and minimise one:
#   RUSTC_BOOTSTRAP=1 cargo fuzz run TARGET fuzz/artifacts/TARGET/crash-...
#   RUSTC_BOOTSTRAP=1 cargo fuzz tmin TARGET fuzz/artifacts/TARGET/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
# Every target in fuzz/fuzz_targets/, so a new one cannot be left out.
mapfile -t all_targets < <(cd fuzz/fuzz_targets && ls -- *.rs | sed 's/\.rs$//')
if [ $# -gt 0 ]; then
    targets=("$@")
else
    targets=("${all_targets[@]}")
fi

export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

mkdir -p fuzz/corpus/policy_read fuzz/corpus/context_parse fuzz/corpus/denial_parse fuzz/corpus/landlock_config
cp policies/bin/* fuzz/corpus/policy_read/
mkdir -p fuzz/corpus/bsm_trail fuzz/corpus/bsm_config
cp tests/data/bsm/reference/*_record tests/data/bsm/synthetic/edge.bsm fuzz/corpus/bsm_trail/
cp crates/bsm/etc/audit_* fuzz/corpus/bsm_config/

stamp=$(mktemp)
trap 'rm -f "$stamp"' EXIT

failed=()
for target in "${targets[@]}"; do
    case "$target" in
        policy_read)
            extra=(-max_len=65536)
            corpora=(fuzz/corpus/policy_read)
            ;;
        context_parse)
            extra=(-max_len=256 -dict=fuzz/seeds/context_parse.dict)
            corpora=(fuzz/corpus/context_parse fuzz/seeds/context_parse)
            ;;
        denial_parse)
            extra=(-max_len=8192)
            corpora=(fuzz/corpus/denial_parse crates/denials/tests/data)
            ;;
        bsm_trail)
            extra=(-max_len=8192)
            corpora=(fuzz/corpus/bsm_trail)
            ;;
        bsm_config)
            extra=(-max_len=4096)
            corpora=(fuzz/corpus/bsm_config)
            ;;
        landlock_config)
            extra=(-max_len=4096)
            corpora=(fuzz/corpus/landlock_config fuzz/seeds/landlock_config)
            ;;
        cil_compile | batch_lines | search_regex | analysis_config | semanage_conf)
            extra=(-max_len=8192)
            corpora=(fuzz/corpus/$target)
            ;;
        store_bzip2)
            # Each input becomes a 250 kB text compressed into 100 kB blocks: the input is
            # only its seed and the steering of the damage.
            extra=(-max_len=256)
            corpora=(fuzz/corpus/$target)
            ;;
        *)
            echo "fuzz.sh: unknown target $target (known: ${all_targets[*]})" >&2
            exit 2
            ;;
    esac
    mkdir -p "fuzz/corpus/$target"
    echo "== fuzzing $target for ${seconds}s"
    touch "$stamp"
    rc=0
    cargo fuzz run "$target" "${corpora[@]}" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=512 \
        -print_final_stats=1 "${extra[@]}" || rc=$?
    new=$(find "fuzz/artifacts/$target" -type f -newer "$stamp" 2>/dev/null || true)
    if [ "$rc" != 0 ] || [ -n "$new" ]; then
        echo "fuzz.sh: $target FAILED (exit $rc)" >&2
        for a in $new; do
            echo "fuzz.sh: artifact $a" >&2
        done
        failed+=("$target")
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz.sh: failures in: ${failed[*]}" >&2
    exit 1
fi
echo "== fuzzing: no crashes (${targets[*]}, ${seconds}s each)"

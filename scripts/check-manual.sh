#!/usr/bin/env bash
# CI check of what scripts/install.sh installs: every manual page renders with `man -l`
# without a single warning, the bash completion loads and completes the subcommands, and
# the zsh and fish completions parse (when those shells are installed). BIN: the binary.
#
#   scripts/check-manual.sh [BIN]        # default target/release/arbiter
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/release/arbiter}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ARBITER_BIN="$bin" bash scripts/install.sh "$work/prefix" >/dev/null
pages=("$work"/prefix/share/man/man1/*.1)
expected=$("$bin" manpage --out-dir "$work/list" | wc -l)
[ "${#pages[@]}" -eq "$expected" ] || { echo "check-manual: installed ${#pages[@]} pages, expected $expected" >&2; exit 1; }
for page in "${pages[@]}"; do
    # groff's warnings (-ww) go to stderr; a page that renders cleanly writes none.
    warnings=$(MANWIDTH=80 man --warnings=w -l "$page" 2>&1 >/dev/null || echo "man failed")
    if [ -n "$warnings" ]; then
        echo "check-manual: $(basename "$page"): $warnings" >&2
        exit 1
    fi
    MANWIDTH=80 man -l "$page" 2>/dev/null | grep -q '^NAME' \
        || { echo "check-manual: $(basename "$page") has no NAME section" >&2; exit 1; }
done

# The bash completion must load, register a function for `arbiter`, and offer the
# subcommands after `arbiter ` and the bsm subcommands after `arbiter bsm `.
bash -c '
    set -e
    source "$1"
    complete -p arbiter >/dev/null
    COMP_WORDS=(arbiter ""); COMP_CWORD=1; COMP_LINE="arbiter "; COMP_POINT=${#COMP_LINE}
    _arbiter arbiter "" arbiter
    printf "%s\n" "${COMPREPLY[@]}" | grep -qx search
    COMP_WORDS=(arbiter bsm ""); COMP_CWORD=2; COMP_LINE="arbiter bsm "; COMP_POINT=${#COMP_LINE}
    _arbiter arbiter "" bsm
    printf "%s\n" "${COMPREPLY[@]}" | grep -qx reduce
' _ "$work/prefix/share/bash-completion/completions/arbiter" \
    || { echo "check-manual: the bash completion does not load or complete" >&2; exit 1; }
bash -c 'source <("$1" completions bash)' _ "$bin"
if command -v zsh >/dev/null; then zsh -n "$work/prefix/share/zsh/site-functions/_arbiter"; fi
if command -v fish >/dev/null; then fish --no-execute "$work/prefix/share/fish/vendor_completions.d/arbiter.fish"; fi
echo "check-manual: ${#pages[@]} manual pages render without warnings; completions load"

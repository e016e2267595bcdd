#!/usr/bin/env bash
# Runs the examples of README.md and docs/*.md against the built binary, so that the
# documentation cannot drift from what arbiter does. Fails if any example fails.
#
#   scripts/doc-examples.sh [BIN] [FILE.md...]     # BIN default target/release/arbiter
#
# What runs (everything else in the docs is left alone: synopses are ```text blocks):
# - a ```sh block whose every command line starts with `arbiter`: each line runs with bash
#   (pipes and redirections allowed) and must exit 0;
# - a ```console block: each `$ arbiter ...` line runs and its stdout must equal the lines
#   that follow it up to the next `$ ` line or the end of the block; the exit status must
#   be 0 or 1 (check and landlock answer "denied" with 1; 2 and above are errors).
# Commands run with `arbiter` resolving to BIN, TZ=UTC, in a scratch directory that links
# to the repository's top-level entries, so relative paths (tests/data/..., docs/examples/...)
# work and files the examples write do not land in the checkout. The Debian policies
# (/etc/selinux/{default,mls}) must be installed, as for the rest of the suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/release/arbiter}")
shift || true
[ -x "$bin" ] || { echo "doc-examples: $bin is not an executable (build it first)" >&2; exit 1; }
exec python3 - "$bin" "$PWD" "$@" <<'PY'
import os, re, subprocess, sys, tempfile, glob

bin_path, repo = sys.argv[1], sys.argv[2]
files = sys.argv[3:] or ["README.md"] + sorted(glob.glob("docs/*.md"))

def blocks(path):
    """Yields (info, first line number, lines) of each fenced block of a Markdown file."""
    lines = open(os.path.join(repo, path), encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^(`{3,})(\S*)", lines[i])
        if not m:
            i += 1
            continue
        fence, info, start = m.group(1), m.group(2), i + 1
        j = start
        while j < len(lines) and not lines[j].startswith(fence):
            j += 1
        yield info, start + 1, lines[start:j]
        i = j + 1

def run(cmd, scratch):
    env = dict(os.environ, TZ="UTC", PATH=os.path.dirname(bin_path) + ":" + os.environ["PATH"])
    # `arbiter` is the binary under test, whatever its file name.
    script = 'arbiter() { "%s" "$@"; }\nset -o pipefail\n%s\n' % (bin_path, cmd)
    return subprocess.run(["bash", "-c", script], cwd=scratch, env=env, capture_output=True,
                          text=True, errors="replace", timeout=300)

def is_command(line):
    return line.strip() and not line.lstrip().startswith("#")

failures, ran = [], 0
with tempfile.TemporaryDirectory(prefix="arbiter-doc-examples-") as scratch:
    for entry in os.listdir(repo):
        if entry not in (".git", "target"):
            os.symlink(os.path.join(repo, entry), os.path.join(scratch, entry))
    for path in files:
        for info, first, body in blocks(path):
            if info == "sh":
                commands = [(first + k, l) for k, l in enumerate(body) if is_command(l)]
                if not commands or not all(l.lstrip().startswith("arbiter ") for _, l in commands):
                    continue
                for lineno, line in commands:
                    ran += 1
                    r = run(line, scratch)
                    if r.returncode != 0:
                        failures.append("%s:%d: exit %d: %s\n%s" % (
                            path, lineno, r.returncode, line.strip(), r.stderr[-2000:]))
            elif info == "console":
                k = 0
                while k < len(body):
                    if not body[k].startswith("$ "):
                        k += 1
                        continue
                    cmd, lineno = body[k][2:], first + k
                    k += 1
                    expected = []
                    while k < len(body) and not body[k].startswith("$ "):
                        expected.append(body[k])
                        k += 1
                    if not cmd.startswith("arbiter "):
                        continue
                    ran += 1
                    r = run(cmd, scratch)
                    got = r.stdout.rstrip("\n").split("\n")
                    want = "\n".join(expected).rstrip("\n").split("\n")
                    if r.returncode not in (0, 1) or got != want:
                        failures.append("%s:%d: exit %d: %s\n--- documented\n%s\n--- printed\n%s\n%s" % (
                            path, lineno, r.returncode, cmd, "\n".join(want), "\n".join(got),
                            r.stderr[-2000:]))

for f in failures:
    print("doc-examples: " + f, file=sys.stderr)
if ran == 0:
    print("doc-examples: no runnable example found in %s" % " ".join(files), file=sys.stderr)
    sys.exit(1)
sys.stderr.flush()
print("doc-examples: %d example commands in %d files, %d failed" % (ran, len(files), len(failures)))
sys.exit(1 if failures else 0)
PY

#!/usr/bin/python3
"""Compare `arbiter info --json POLICY` with setools 4.4.1's `seinfo POLICY` statistics.

Run with Debian's /usr/bin/python3 (python3-setools lives there, not in a pyenv
Python).  The setools side is computed through the setools Python API in a
child process (setools segfaults on some inputs, e.g. every kernel policy older
than version 24; a crash in the child is reported as an error for that file
instead of killing this script).

Usage:
  tests/seinfo_compare.py POLICY [POLICY...]
      For each POLICY compare arbiter's statistics with setools' statistics of
      the same file.

  tests/seinfo_compare.py --expect-from OTHER --except 'Allow,Dontaudit' POLICY
      Compare arbiter's statistics of POLICY with setools' statistics of OTHER
      (for files setools cannot load, e.g. the version-19 rewrite of a policy:
      use OTHER = the version-24 rewrite of the same policy).  "Policy
      Version", "MLS", "Target Policy" and "Handle unknown classes" are taken
      from POLICY's own header (read directly by this script), so they need not
      be excluded.  --except labels are not compared.  --override LABEL=VALUE
      pins an expected value (wins over both).

  tests/seinfo_compare.py --self-check POLICY [POLICY...]
      Plumbing test without arbiter: the "arbiter" side is produced by running
      the `seinfo` command and parsing its text into arbiter's JSON shape, so
      setools' API is compared with setools' own printed output.

arbiter is found via --arbiter, else $ARBITER_BIN, else
<repository>/target/release/arbiter.  It must print a JSON object
{"statistics": {"<seinfo label>": value, ...}, ...} where counts and "Policy
Version" are integers, "MLS" is a bool, "Target Policy" and "Handle unknown
classes" are strings.

Output: one line per difference
  MISMATCH <file> <label>: seinfo=<expected> arbiter=<actual>
(values JSON-encoded; a missing key shows as <missing>), "ERROR <file>: ..."
for failures, and one summary line per file ("OK ..." / "FAIL ...").
Exit status 1 on any mismatch or error, 0 otherwise, 2 on usage errors.

See docs/seinfo-statistics.md for what each statistic counts.
"""

import argparse
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys

# (seinfo label, JSON type, SELinuxPolicy attribute) in seinfo's print order.
HEADER_STATS = [
    ("Policy Version", int, "version"),
    ("MLS", bool, "mls"),
    ("Target Policy", str, "target_platform"),
    ("Handle unknown classes", str, "handle_unknown"),
]
COMMON_STATS = [
    ("Classes", int, "class_count"),
    ("Permissions", int, "permission_count"),
    ("Sensitivities", int, "level_count"),
    ("Categories", int, "category_count"),
    ("Types", int, "type_count"),
    ("Attributes", int, "type_attribute_count"),
    ("Users", int, "user_count"),
    ("Roles", int, "role_count"),
    ("Booleans", int, "boolean_count"),
    ("Cond. Expr.", int, "conditional_count"),
    ("Allow", int, "allow_count"),
    ("Neverallow", int, "neverallow_count"),
    ("Auditallow", int, "auditallow_count"),
    ("Dontaudit", int, "dontaudit_count"),
    ("Type_trans", int, "type_transition_count"),
    ("Type_change", int, "type_change_count"),
    ("Type_member", int, "type_member_count"),
    ("Range_trans", int, "range_transition_count"),
    ("Role allow", int, "role_allow_count"),
    ("Role_trans", int, "role_transition_count"),
    ("Constraints", int, "constraint_count"),
    ("Validatetrans", int, "validatetrans_count"),
    ("MLS Constrain", int, "mlsconstraint_count"),
    ("MLS Val. Tran", int, "mlsvalidatetrans_count"),
    ("Permissives", int, "permissives_count"),
    ("Polcap", int, "polcap_count"),
    ("Defaults", int, "default_count"),
    ("Typebounds", int, "typebounds_count"),
]
SELINUX_STATS = [
    ("Allowxperm", int, "allowxperm_count"),
    ("Neverallowxperm", int, "neverallowxperm_count"),
    ("Auditallowxperm", int, "auditallowxperm_count"),
    ("Dontauditxperm", int, "dontauditxperm_count"),
    ("Ibendportcon", int, "ibendportcon_count"),
    ("Ibpkeycon", int, "ibpkeycon_count"),
    ("Initial SIDs", int, "initialsids_count"),
    ("Fs_use", int, "fs_use_count"),
    ("Genfscon", int, "genfscon_count"),
    ("Portcon", int, "portcon_count"),
    ("Netifcon", int, "netifcon_count"),
    ("Nodecon", int, "nodecon_count"),
]
XEN_STATS = [
    ("Initial SIDs", int, "initialsids_count"),
    ("Devicetreecon", int, "devicetreecon_count"),
    ("Iomemcon", int, "iomemcon_count"),
    ("Ioportcon", int, "ioportcon_count"),
    ("Pcidevicecon", int, "pcidevicecon_count"),
    ("Pirqcon", int, "pirqcon_count"),
]
ALL_TYPES = {label: typ for label, typ, _ in HEADER_STATS + COMMON_STATS + SELINUX_STATS + XEN_STATS}
HEADER_LABELS = [label for label, _, _ in HEADER_STATS]


def stat_table(target):
    """The statistics seinfo prints for a policy of the given target platform."""
    tail = XEN_STATS if target == "xen" else SELINUX_STATS
    return HEADER_STATS + COMMON_STATS + tail


SETOOLS_PYTHON = os.environ.get("SETOOLS_PYTHON", "/usr/bin/python3")
SEINFO = os.environ.get("SEINFO", shutil.which("seinfo") or "/usr/bin/seinfo")
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class CompareError(Exception):
    pass


# ---------------------------------------------------------------------------
# Child-process emitters (each prints {"statistics": {...}} as JSON).
# ---------------------------------------------------------------------------

def emit_setools(path):
    """Compute every seinfo statistic through the setools API."""
    import setools  # noqa: imported late: only the child needs it

    p = setools.SELinuxPolicy(path)
    target = str(p.target_platform)
    stats = {}
    for label, typ, attr in stat_table(target):
        value = getattr(p, attr)
        if typ is str:
            value = str(value)  # PolicyEnum.__str__ is the enum name, as seinfo prints
        elif typ is bool:
            value = bool(value)
        else:
            value = int(value)
        stats[label] = value
    json.dump({"statistics": stats, "setools_version": setools.__version__}, sys.stdout)
    sys.stdout.write("\n")


_HEADER_RE = {
    "version": re.compile(r"^Policy Version:\s+(\d+) \(MLS (enabled|disabled)\)\s*$", re.M),
    "target": re.compile(r"^Target Policy:\s+(\S+)\s*$", re.M),
    "unknown": re.compile(r"^Handle unknown classes:\s+(\S+)\s*$", re.M),
}
_COUNT_RE = re.compile(r"([A-Za-z][A-Za-z_. ]*?):\s+(-?\d+)")


def parse_seinfo_text(text):
    """Turn seinfo's statistics text into arbiter's JSON shape."""
    m = _HEADER_RE["version"].search(text)
    if not m:
        raise CompareError("no 'Policy Version' line in seinfo output")
    stats = {"Policy Version": int(m.group(1)), "MLS": m.group(2) == "enabled"}
    for label, key in (("Target Policy", "target"), ("Handle unknown classes", "unknown")):
        m = _HEADER_RE[key].search(text)
        if not m:
            raise CompareError("no '%s' line in seinfo output" % label)
        stats[label] = m.group(1)
    for line in text.splitlines():
        if not line.startswith("  "):
            continue  # the counts are the indented lines
        for label, value in _COUNT_RE.findall(line):
            stats[label.strip()] = int(value)
    return stats


def emit_seinfo_text(path):
    """Run the seinfo command and convert its printed statistics."""
    proc = subprocess.run([SEINFO, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        sys.exit(proc.returncode if proc.returncode > 0 else 1)
    json.dump({"statistics": parse_seinfo_text(proc.stdout)}, sys.stdout)
    sys.stdout.write("\n")


# ---------------------------------------------------------------------------
# Parent side
# ---------------------------------------------------------------------------

def describe_exit(returncode):
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "signal %d" % -returncode
        return "killed by %s" % name
    return "exit status %d" % returncode


def run_json(cmd, what, timeout):
    """Run cmd, return the "statistics" object of the JSON it prints."""
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=timeout)
    except FileNotFoundError:
        raise CompareError("%s: command not found: %s" % (what, cmd[0]))
    except PermissionError:
        raise CompareError("%s: not executable: %s" % (what, cmd[0]))
    except subprocess.TimeoutExpired:
        raise CompareError("%s: timed out after %ss: %s" % (what, timeout, " ".join(cmd)))
    if proc.returncode != 0:
        err = (proc.stderr or proc.stdout).strip().splitlines()
        detail = (": " + err[-1]) if err else ""
        raise CompareError("%s failed (%s)%s" % (what, describe_exit(proc.returncode), detail))
    try:
        doc = json.loads(proc.stdout)
    except ValueError as e:
        raise CompareError("%s printed invalid JSON: %s" % (what, e))
    if not isinstance(doc, dict) or not isinstance(doc.get("statistics"), dict):
        raise CompareError("%s: JSON has no \"statistics\" object" % what)
    return doc["statistics"]


def setools_stats(path, timeout):
    cmd = [SETOOLS_PYTHON, os.path.abspath(__file__), "--emit", "setools", path]
    try:
        return run_json(cmd, "setools (%s)" % path, timeout)
    except CompareError as e:
        msg = str(e)
        hdr = None
        try:
            hdr = read_header(path)
        except CompareError:
            pass
        if hdr and hdr["Policy Version"] < 24 and "killed by" in msg:
            msg += ("; setools 4.4.1 cannot load kernel policies older than version 24 "
                    "(attributes are absent from the type symbol table and it dereferences "
                    "NULL); use --expect-from with the version-24 rewrite")
        raise CompareError(msg)


def read_header(path):
    """Policy Version / MLS / Target Policy / Handle unknown from the file header."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError as e:
        raise CompareError("cannot read %s: %s" % (path, e.strerror))
    if len(head) < 8:
        raise CompareError("%s: truncated header" % path)
    magic, slen = struct.unpack_from("<II", head, 0)
    if magic != 0xF97CFF8C:
        raise CompareError("%s: not a binary kernel policy (magic %#010x)" % (path, magic))
    if slen == 0 or slen > 32 or len(head) < 8 + slen + 8:
        raise CompareError("%s: bad policy identifier length %d" % (path, slen))
    ident = head[8:8 + slen].decode("ascii", "replace")
    version, config = struct.unpack_from("<II", head, 8 + slen)
    target = {"SE Linux": "selinux", "XenFlask": "xen"}.get(ident)
    if target is None:
        raise CompareError("%s: unknown policy identifier %r" % (path, ident))
    unknown = {0: "deny", 2: "reject", 4: "allow"}.get(config & 6)
    if unknown is None:
        raise CompareError("%s: invalid handle-unknown bits in config %#x" % (path, config))
    return {"Policy Version": version, "MLS": bool(config & 1),
            "Target Policy": target, "Handle unknown classes": unknown}


def arbiter_cmd(args, path):
    if args.self_check:
        return [sys.executable, os.path.abspath(__file__), "--emit", "seinfo-text", path]
    binary = args.arbiter or os.environ.get("ARBITER_BIN") or \
        os.path.join(REPO_ROOT, "target", "release", "arbiter")
    return [binary, "info", "--json", path]


def parse_override(text):
    if "=" not in text:
        raise argparse.ArgumentTypeError("expected LABEL=VALUE, got %r" % text)
    label, value = text.split("=", 1)
    label = label.strip()
    if label not in ALL_TYPES:
        raise argparse.ArgumentTypeError("unknown statistic %r" % label)
    typ = ALL_TYPES[label]
    try:
        if typ is int:
            value = int(value)
        elif typ is bool:
            low = value.strip().lower()
            if low not in ("true", "false", "1", "0"):
                raise ValueError(value)
            value = low in ("true", "1")
    except ValueError:
        raise argparse.ArgumentTypeError("bad value for %s: %r" % (label, value))
    return label, value


def fmt(value):
    return "<missing>" if value is _MISSING else json.dumps(value)


_MISSING = object()


def type_ok(value, typ):
    if typ is int:
        return type(value) is int  # bool is not an acceptable count
    return type(value) is typ


def compare_file(path, args):
    """Return (mismatch_count, compared_count); raises CompareError on errors."""
    if not os.path.isfile(path):
        raise CompareError("no such file")
    if args.expect_from:
        expected = dict(setools_stats(args.expect_from, args.timeout))
        expected.update(read_header(path))
        reference = "setools on %s" % args.expect_from
    else:
        expected = setools_stats(path, args.timeout)
        reference = "setools"
    expected.update(args.override)

    table = stat_table(expected.get("Target Policy"))
    actual = run_json(arbiter_cmd(args, path),
                      "seinfo text" if args.self_check else "arbiter", args.timeout)

    mismatches = compared = 0
    skipped = []
    for label, typ, _ in table:
        if label in args.except_labels and label not in args.override:
            skipped.append(label)
            continue
        compared += 1
        exp = expected.get(label, _MISSING)
        act = actual.get(label, _MISSING)
        if exp is _MISSING:
            raise CompareError("reference has no value for %r" % label)
        if act is _MISSING or not type_ok(act, typ) or act != exp:
            mismatches += 1
            print("MISMATCH %s %s: seinfo=%s arbiter=%s" % (path, label, fmt(exp), fmt(act)))
        elif args.verbose:
            print("  same %s %s: %s" % (path, label, fmt(act)))
    known = {label for label, _, _ in table}
    extra = sorted(k for k in actual if k not in known)
    if extra:
        print("NOTE %s: arbiter reports statistics seinfo does not print for this target: %s"
              % (path, ", ".join(extra)))
    note = "reference: %s" % reference
    if skipped:
        note += "; not compared: %s" % ", ".join(skipped)
    if args.override:
        note += "; overridden: %s" % ", ".join("%s=%s" % (k, fmt(v)) for k, v in args.override.items())
    if mismatches:
        print("FAIL %s: %d mismatch(es), %d/%d statistics match (%s)"
              % (path, mismatches, compared - mismatches, compared, note))
    else:
        print("OK %s: %d/%d statistics match (%s)" % (path, compared, compared, note))
    return mismatches


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Compare arbiter's `info --json` statistics with setools 4.4.1 seinfo.",
        epilog="Recommended for the version-19 rewrite of a Debian policy: "
               "--expect-from NAME.24 --except 'Attributes,Allow,Auditallow,Dontaudit,Polcap,"
               "Range_trans' (see docs/seinfo-statistics.md).")
    parser.add_argument("policies", nargs="*", metavar="POLICY")
    parser.add_argument("--arbiter", help="arbiter binary (default: $ARBITER_BIN or "
                        "target/release/arbiter in the repository)")
    parser.add_argument("--self-check", action="store_true",
                        help="use the parsed text of the seinfo command instead of arbiter")
    parser.add_argument("--expect-from", metavar="OTHERFILE",
                        help="take expected statistics from setools on OTHERFILE")
    parser.add_argument("--except", dest="except_raw", action="append", default=[],
                        metavar="LABELS", help="comma-separated labels not to compare "
                        "(repeatable)")
    parser.add_argument("--override", action="append", default=[], type=parse_override,
                        metavar="LABEL=VALUE", help="expected value for LABEL (repeatable)")
    parser.add_argument("--timeout", type=float, default=900,
                        help="seconds allowed per setools/arbiter run (default 900)")
    parser.add_argument("-v", "--verbose", action="store_true", help="also print matches")
    parser.add_argument("--emit", choices=["setools", "seinfo-text"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.emit:
        if len(args.policies) != 1:
            parser.error("--emit takes exactly one policy")
        try:
            (emit_setools if args.emit == "setools" else emit_seinfo_text)(args.policies[0])
        except CompareError as e:
            sys.stderr.write("%s\n" % e)
            return 1
        return 0

    if not args.policies:
        parser.error("no policy files given")
    args.except_labels = set()
    for raw in args.except_raw:
        for label in (x.strip() for x in raw.split(",")):
            if not label:
                continue
            if label not in ALL_TYPES:
                parser.error("--except: unknown statistic %r (labels are seinfo's, e.g. "
                             "'Cond. Expr.', 'Role allow')" % label)
            args.except_labels.add(label)
    args.override = dict(args.override)
    if args.expect_from and not os.path.isfile(args.expect_from):
        print("ERROR %s: --expect-from file does not exist" % args.expect_from)
        return 1

    failed = 0
    for path in args.policies:
        try:
            if compare_file(path, args):
                failed += 1
        except CompareError as e:
            print("ERROR %s: %s" % (path, e))
            print("FAIL %s: error" % path)
            failed += 1
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

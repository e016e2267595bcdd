#!/usr/bin/env python3
"""Fails when an engine crate exposes an item under two public paths.

Each engine crate's root is curated (docs/architecture.md, "Where things live"): its
modules are private, the root re-exports what users need, and a few documented modules
stay public as namespaces whose items live there only. The duplicates this finds come
from `pub use`: a re-export of an item whose own path is already public (its module and
every module above it are `pub mod`), the same item re-exported twice, or a glob
re-export of a public module. Public modules must be listed in NAMESPACES below, so a
new `pub mod` is a decision that shows in review and in the docs.

The check reads the sources (no build), so it takes well under a second; it runs in the
lint step of scripts/test.sh.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# crate directory -> its deliberately public namespaces (paths below the crate root).
# docs/architecture.md lists the same ones; keep the two in step.
NAMESPACES = {
    "policy": {
        "avtab", "cond", "constraint", "constraint::attr", "mls", "ocontext", "optimize",
        "stats", "symbols", "transitions", "write",
    },
    "decide": {"internals"},
    "avc": {"fake", "internals"},
    "query": {"argv", "diff", "info", "json", "python_re", "render", "search", "terules"},
    "denials": {"corpus", "package"},
    "landlock": {
        "access", "access::fs", "access::net", "access::scope", "check", "config", "mounts", "sys",
        "walk",
    },
    "bsm": {"classmap"},
    "io": set(),
    "analysis": {
        "checker", "dta", "infoflow", "neverallow", "permmap", "search", "sechecker", "sedta",
        "seinfoflow",
    },
    "store": {"homedirs"},
    "cil": set(),
}

# Duplicates known and accepted for now, each with the reason; anything else fails.
PENDING: dict = {}


def strip(text):
    """Source text without comments and string or character literals (braces inside
    them would upset the depth count), same length so offsets stay meaningful."""
    pattern = re.compile(
        r'//[^\n]*|/\*.*?\*/|r(#*)".*?"\1|b?"(?:\\.|[^"\\])*"|b?\'(?:\\.|[^\'\\])\'', re.S
    )
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def items_at_depth(text, depth):
    """`(kind, body)` of the `pub mod` and `pub use` items at brace depth `depth` (the
    module's own level), with the body of an inline `pub mod` block."""
    out = []
    level = 0
    i = 0
    item = re.compile(r"\bpub\s+(use|mod)\b")
    while i < len(text):
        c = text[i]
        if c == "{":
            level += 1
        elif c == "}":
            level -= 1
        elif level == depth and c == "p":
            m = item.match(text, i)
            if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
                if m.group(1) == "use":
                    end = text.index(";", m.end())
                    out.append(("use", text[m.end():end]))
                    i = end + 1
                    continue
                name = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*([;{])", text[m.end():])
                if name.group(2) == ";":
                    out.append(("mod", (name.group(1), None)))
                    i = m.end() + name.end()
                    continue
                start = m.end() + name.end()
                j, inner = start, 1
                while inner:
                    inner += {"{": 1, "}": -1}.get(text[j], 0)
                    j += 1
                out.append(("mod", (name.group(1), text[start:j - 1])))
                i = j
                continue
        i += 1
    return out


def use_leaves(body):
    """The paths a `use` tree names, as segment lists (`as` renames dropped: the item is
    the same)."""
    tokens = re.findall(r"::|[{},*]|[A-Za-z_][A-Za-z0-9_]*", body)
    pos = 0

    def tree(prefix):
        nonlocal pos
        path = list(prefix)
        while pos < len(tokens):
            t = tokens[pos]
            if t == "{":
                pos += 1
                leaves = []
                while tokens[pos] != "}":
                    if tokens[pos] == ",":
                        pos += 1
                        continue
                    leaves += tree(path)
                pos += 1
                return leaves
            if t in (",", "}"):
                break
            if t == "as":
                pos += 2
                break
            if t != "::":
                path.append(t)
            pos += 1
        if path and path[-1] == "self":
            path = path[:-1]
        return [path]

    return tree([])


def module_file(src, modpath):
    base = os.path.join(src, *modpath)
    for f in (base + ".rs", os.path.join(base, "mod.rs")):
        if os.path.exists(f):
            return f
    return None


def check_crate(crate):
    src = os.path.join(ROOT, "crates", crate, "src")
    errors = []
    public = set()  # public module paths, as tuples (root is ())
    reexports = []  # (module path, resolved source path)
    todo = [((), strip(open(os.path.join(src, "lib.rs")).read()), 0)]
    while todo:
        modpath, text, depth = todo.pop()
        public.add(modpath)
        for kind, body in items_at_depth(text, depth):
            if kind == "mod":
                name, inline = body
                child = modpath + (name,)
                shown = "::".join(child)
                if shown not in NAMESPACES[crate]:
                    errors.append(
                        f"arbiter-{crate}: `pub mod {shown}` is not a listed namespace "
                        "(make it private and re-export what users need, or list it in "
                        "scripts/check-one-path.py and docs/architecture.md)"
                    )
                if inline is not None:
                    todo.append((child, strip(inline), 0))
                else:
                    f = module_file(src, child)
                    if f is None:
                        errors.append(f"arbiter-{crate}: no file for module {shown}")
                        continue
                    todo.append((child, strip(open(f).read()), 0))
            else:
                for leaf in use_leaves(body):
                    if not leaf:
                        continue
                    if leaf[0] == "crate":
                        resolved = tuple(leaf[1:])
                    elif leaf[0] == "self":
                        resolved = modpath + tuple(leaf[1:])
                    elif leaf[0] == "super":
                        resolved = modpath[:-1] + tuple(leaf[1:])
                    elif leaf[0].startswith("arbiter_") or leaf[0] in ("std", "core", "alloc"):
                        continue  # another crate's item: its own crate's path is its one path
                    else:
                        resolved = modpath + tuple(leaf)
                    reexports.append((modpath, resolved))
    seen = {}
    for modpath, source in reexports:
        here = "::".join(modpath + (source[-1],)) if source[-1] != "*" else None
        if source[-1] == "*":
            if source[:-1] in public:
                errors.append(f"arbiter-{crate}: glob re-export of public module {'::'.join(source[:-1])}")
            continue
        if source[:-1] in public:
            key = (crate, "::".join(source))
            if key in PENDING:
                print(f"pending: arbiter_{crate}::{key[1]} also at arbiter_{crate}::{here} ({PENDING[key]})")
                continue
            errors.append(
                f"arbiter-{crate}: `arbiter_{crate}::{'::'.join(source)}` is also public as "
                f"`arbiter_{crate}::{here}`"
            )
        if source in seen and seen[source] != here:
            errors.append(
                f"arbiter-{crate}: `{'::'.join(source)}` re-exported twice: "
                f"`arbiter_{crate}::{seen[source]}` and `arbiter_{crate}::{here}`"
            )
        seen.setdefault(source, here)
    for ns in NAMESPACES[crate]:
        if tuple(ns.split("::")) not in public:
            errors.append(f"arbiter-{crate}: listed namespace {ns} is not public (update the list)")
    return errors


def main():
    errors = []
    for crate in NAMESPACES:
        errors += check_crate(crate)
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        sys.exit(1)
    print(f"one public path per item: {len(NAMESPACES)} engine crates checked")


if __name__ == "__main__":
    main()

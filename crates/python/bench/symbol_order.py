"""Writes ``crates/python/code-order.ld``: the extension's functions a setools script runs,
in the order the linker should place them (``build.rs`` passes the linker script to the
link; it adds one output section, ``.text.setools``, before ``.text``, puts the procedure
linkage table after it and the exception tables after ``.eh_frame``: ``linker_script``).

Why: a page of the extension's code becomes resident when it is first executed, and the
kernel maps the 64 kB around it too (fault-around) when the file is in the page cache, as
an extension just installed or imported is. The few hundred functions a script runs are
spread over the 6 MB of code, so a script that runs 0.4 MB of them kept 2.4 MB of the
extension's code resident. Placed together, they take a few 64 kB windows.

The functions are the ones executed (valgrind's callgrind, names unmangled as the linker
sees them) in two workloads run by this interpreter with the extension on ``PYTHONPATH``:
first a script's usual first steps (import, open, a TE query, a pass over every type and
attribute: ``setools_open.py``'s), then every query kind of ``setools_api.py`` (each
constructed three times and its results read five, as the benchmark's loops do: the
kept constructions and the memoised results run then), so
that the first group is packed at the start and a script that does more touches the
second group next to it. Within a group, functions keep their order in the extension the
workloads ran (the compiler's placement, which keeps a crate's code together).

    PYTHONPATH=DIR python3 crates/python/bench/symbol_order.py POLICY > crates/python/code-order.ld

DIR holds the ``arbiter`` package with its extension built without the order
(``ARBITER_CODE_ORDER=0``: valgrind reads no function names in the extra section), built
by ``ARBITER_CODE_ORDER=0 python3 -m pip install ./crates/python`` as CI builds it (a copy of
the installed ``arbiter`` package): generic instances are named with their hash, which
differs between a ``pip`` and a ``cargo build`` of the same tree (68 % of a cargo-made
file's patterns matched the pip build, 100 % of a pip-made one's).
A function is named by its section (rustc puts each function in ``.text.<its symbol>``, or
``.text.unlikely.<its symbol>`` when it is cold)
with the symbol's hash left out (``17h<16 hex digits>E`` becomes ``17h*``, and a v0 name's
crate disambiguators ``*``): those depend on the crates' build metadata (dependencies,
toolchain), not on the code,
so the file stays valid across those changes. The instances of a generic function share a
stem, and are named whole (hash included) instead: those fall out of the section when
the metadata changes. Regenerate it when the code a script runs has changed much
(``tests/test_symbol_order.py`` fails when most of its patterns match nothing). Takes a
few minutes (the workloads run under valgrind).
"""

import collections
import os
import re
import subprocess
import sys
import tempfile

BENCH = os.path.dirname(os.path.abspath(__file__))

FIRST_STEPS = """
import sys
import arbiter.setools as setools
policy = setools.SELinuxPolicy(sys.argv[1])
sum(1 for _ in setools.TERuleQuery(policy, ruletype=["allow"], source="httpd_t").results())
for t in policy.types():
    str(t)
for a in policy.typeattributes():
    str(a)
"""

EVERY_QUERY = """
import sys
import arbiter.setools
arbiter.setools.install()
sys.path.insert(0, {bench!r})
import setools
import setools_api
policy = setools.SELinuxPolicy(sys.argv[1])
for make in setools_api.QUERIES.values():
    for r in make(policy).results():
        str(r)
    # As the benchmark's loops do: constructions with the same keywords (the second is
    # kept, the third copies it: query.py's kept constructions) and results() again.
    for _ in range(2):
        query = make(policy)
        for _ in range(2):
            for r in query.results():
                pass
for d in list(setools.TypeQuery(policy, attrs=["domain"]).results())[:5]:
    for r in setools.TERuleQuery(policy, ruletype=["allow"], source=d,
                                 tclass=["file"]).results():
        (str(r.source), str(r.target), sorted(r.perms))
""".format(bench=BENCH)


def executed_functions(script, policy, tmp):
    """The names of the functions of arbiter's extension that ``script`` executed, and
    the extension's path."""
    out = os.path.join(tmp, "callgrind.out")
    subprocess.run(
        ["valgrind", "--tool=callgrind", "--demangle=no", "--callgrind-out-file=" + out,
         sys.executable, "-c", script, policy],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    objects, functions = {}, {}
    current, extension, executed = None, None, set()
    # callgrind's compressed names: "ob=(N) NAME" defines object N, "fn=(N) NAME" function
    # N; later lines give the number alone. "cob"/"cfn" (callees) define names the same way.
    entry = re.compile(r"^(ob|fn|cob|cfn)=\((\d+)\)(?: (.*))?$")
    with open(out) as f:
        for line in f:
            m = entry.match(line.rstrip("\n"))
            if m is None:
                continue
            kind, index, name = m.groups()
            table = objects if kind in ("ob", "cob") else functions
            if name:
                table[index] = name
            if kind == "ob":
                current = objects[index]
            elif kind == "fn" and "/arbiter/_native" in current:
                extension = current
                # A recursive cycle's functions are named "NAME'2" and so on.
                executed.add(functions[index].split("'")[0])
    if extension is None:
        sys.exit("symbol_order.py: the workload did not run arbiter's extension")
    return executed, extension


def addresses(extension):
    """The extension's defined functions: name -> address."""
    nm = subprocess.run(["nm", "--defined-only", extension], check=True,
                        capture_output=True, text=True).stdout
    found = {}
    for line in nm.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] in "tTwW":
            found[fields[2]] = int(fields[0], 16)
    return found


# The parts of a symbol that depend on the build's metadata, not on the code: the hash
# ending a legacy-mangled name, and the crate disambiguators of a v0-mangled one
# (``Cs<base 62>_``: the allocator shims and a few std functions).
HASH = re.compile(r"17h[0-9a-f]{16}E(\.llvm\.[0-9]+)?$")
# A local function LLVM renamed (``NAME.llvm.<digits>``, different in every build).
LLVM = re.compile(r"\.llvm\.[0-9]+$")
CRATE = re.compile(r"(?<=Cs)[0-9A-Za-z]+_(?=[0-9])")


def stem(name):
    """``name`` with its hash, crate disambiguators and LLVM's local suffix as ``*``.

    The suffix (``.llvm.<digits>``, a hash of the module that defines the function)
    differs between two builds of the same code made in different directories: the
    standard library's ``#[inline]`` functions (``String``'s ``fmt::Write::write_str``)
    are compiled into the extension's own modules, and v0-mangled, so a stem that kept
    their suffix matched nothing in a build made elsewhere (a ``pip install`` of another
    checkout), and the three of them, left in ``.text``, kept 264 kB of it resident."""
    if name.startswith("_R"):
        return LLVM.sub("*", CRATE.sub("*_", name))
    return HASH.sub("17h*", name)


def pattern(name, stems):
    """The input section pattern of function ``name``: its stem when no other function of
    the extension has it (most of them), else the name itself (the instances of a generic
    function share a stem; all of them would be 1.6 MB, four times what scripts run)."""
    # ".text*." also takes the prefixed sections LLVM gives some functions: a cold one
    # (#[cold], the slow path of a lazy initialisation) is in ".text.unlikely.NAME".
    return ".text*." + (stem(name) if stems[stem(name)] == 1 else LLVM.sub("*", name))


def ordered_patterns(groups, where):
    """The input section patterns of each group of executed function names, in address
    order (``where``: name -> address), each pattern once, in its first group.

    Every name of an executed address gets its pattern: identical functions are folded
    into one, whose section is named after one of them, and callgrind may report the run
    under another name (pyo3's ``Py<PyString>::to_str`` and ``Bound<PyString>::to_str``);
    with only the reported name's pattern, the function stayed in ``.text``, where its
    first call mapped a 64 kB window of code that nothing else of a script uses."""
    stems = collections.Counter(stem(name) for name in where)
    names_at = collections.defaultdict(list)
    for name, address in where.items():
        names_at[address].append(name)
    seen = set()
    out = []
    for names in groups:
        group = []
        for name in sorted(set(names) & set(where), key=where.get):
            for alias in [name] + sorted(set(names_at[where[name]]) - {name}):
                p = pattern(alias, stems)
                if p not in seen:
                    seen.add(p)
                    group.append(p)
        out.append(group)
    return out


# The exception tables (``.gcc_except_table``, read only while a panic unwinds) placed
# after ``.eh_frame`` at the end of the read-only segment, instead of between the dynamic
# symbols and ``.rodata``: there, the 64 kB windows the kernel maps around the loader's
# reads of the dynamic symbols and around the first ``.rodata`` pages a script reads kept
# 92 kB of them resident, and ``.rodata``'s windows fell so that 100 kB more of it was
# (1.76 -> 1.57 MB of the extension resident after ``setools_api.py``).
EXCEPT_TABLE_LAST = """SECTIONS {
  .gcc_except_table : { *(.gcc_except_table .gcc_except_table.*) }
}
INSERT AFTER .eh_frame;
"""


# The read-only data of the crates no setools script runs (the CIL compiler, BSM audit
# trails, Landlock, denial logs and their TOML and JSON readers), placed after
# ``.rodata`` in an output section of their own. In ``.rodata`` they lay between the
# strings and the extension's own tables (the CIL compiler's 80 kB right after the
# merged strings), so the 64 kB windows around what a script reads held them too. Their
# objects are named by the archive (a crate's ``lib<name>-<hash>.rlib``), in the
# ``archive:member`` form of an input file pattern (GNU ld's; lld matches the pattern
# against that same string).
RODATA_COLD_CRATES = (
    "arbiter_cil", "arbiter_bsm", "arbiter_landlock", "arbiter_denials",
    "arbiter_analysis", "toml", "toml_edit", "toml_datetime", "toml_parser", "winnow",
    "serde_json", "zmij", "miniz_oxide",
)
RODATA_COLD = """SECTIONS {{
  .rodata.cold : {{
{patterns}
  }}
}}
INSERT AFTER .rodata;
""".format(patterns="\n".join(
    "    *lib{}-*:*(.rodata .rodata.*)".format(c) for c in RODATA_COLD_CRATES))


def linker_script(first_steps, every_query):
    """``code-order.ld``'s text: the two groups of patterns in ``.text.setools`` and the
    procedure linkage table after it, before ``.text``, then ``EXCEPT_TABLE_LAST``.

    The table (``.plt``: ``__tls_get_addr``, which every pyo3 entry calls for its thread
    state) is run from the import on; at the end of ``.text``, where the linker puts it,
    the windows around it kept 108 kB of the standard library's code resident."""
    lines = [
        "/* arbiter's extension: the functions setools scripts run, placed together",
        "   (see build.rs). Generated by crates/python/bench/symbol_order.py, whose",
        "   docstring says why and how; do not edit. */",
        "SECTIONS {",
        "  .text.setools : {",
        "    /* First steps (import, open, a TE query, every type) */",
    ]
    lines += ["    *({})".format(p) for p in first_steps]
    lines.append("    /* Every query kind of setools_api.py */")
    lines += ["    *({})".format(p) for p in every_query]
    lines += ["  }", "  .plt : { *(.plt) }", "}", "INSERT BEFORE .text;"]
    return "\n".join(lines) + "\n" + EXCEPT_TABLE_LAST + RODATA_COLD


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    policy = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        first, extension = executed_functions(FIRST_STEPS, policy, tmp)
        every, _ = executed_functions(EVERY_QUERY, policy, tmp)
    first_steps, every_query = ordered_patterns([first, every - first], addresses(extension))
    sys.stdout.write(linker_script(first_steps, every_query))


if __name__ == "__main__":
    main()

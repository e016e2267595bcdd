"""The extension is linked with the functions setools scripts run placed together
(``code-order.ld``, made by ``bench/symbol_order.py``; ``build.rs`` hands it to the
linker), so that a script keeps a few 64 kB windows of code resident instead of one per
function.

These tests fail when the file's patterns no longer match the build's functions
(regenerate it, as the script's docstring says) or when the build did not apply it (a
linker that does not read it, or ``ARBITER_CODE_ORDER=0``)."""

import pathlib
import shutil
import subprocess
import sys

import pytest

from arbiter import _native

CRATE = pathlib.Path(__file__).resolve().parents[1]
ORDER = CRATE / "code-order.ld"
sys.path.insert(0, str(CRATE / "bench"))
from symbol_order import stem  # noqa: E402  (the generator's one definition of a pattern)


def ordered_groups():
    """The script's input section patterns, by group (a comment line starts one)."""
    groups = []
    for line in ORDER.read_text().splitlines():
        line = line.strip()
        if line.startswith("/* First steps") or line.startswith("/* Every query"):
            groups.append([])
        elif line.startswith("*(.text*.") and line.endswith(")"):
            groups[-1].append(line[len("*(.text*."):-1])
    return groups


def by_stem(functions):
    """The functions by stem (``symbol_order.stem``)."""
    out = {}
    for name, where in functions.items():
        out.setdefault(stem(name), {})[name] = where
    return out


def matching(patterns, functions, stems):
    """The functions (name -> (address, size)) that ``patterns`` match: a pattern is a
    symbol with its build-dependent parts as ``*`` (a key of ``stems``), or a whole
    symbol."""
    out = {}
    for p in patterns:
        if p in functions:
            out[p] = functions[p]
        elif p in stems:
            out.update(stems[p])
        elif p.endswith("*"):  # a whole name whose ".llvm.<digits>" is left out
            out.update((n, v) for n, v in functions.items() if n.startswith(p[:-1]))
    return out


@pytest.fixture(scope="module")
def functions():
    """The extension's functions: name -> (address, size)."""
    if shutil.which("nm") is None:
        pytest.skip("nm (binutils) not installed")
    out = subprocess.run(["nm", "-S", "--defined-only", _native.__file__], check=True,
                         capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[2] in "tTwW":
            found[fields[3]] = (int(fields[0], 16), int(fields[1], 16))
    if not found:
        pytest.skip("the extension has no symbol table (stripped)")
    return found


def test_the_order_file_names_the_functions_of_this_build(functions):
    groups = ordered_groups()
    assert len(groups) == 2 and all(groups)
    patterns = [p for g in groups for p in g]
    stems = by_stem(functions)
    present = sum(1 for p in set(patterns) if matching([p], functions, stems))
    # A third of the patterns name generic instances whole, hash included; the hash moves
    # with the build's metadata (a file made from `cargo build` matched 68 % of a `pip
    # install` build of the same tree, one made from the pip build 100 %). Below 60 % the
    # file no longer describes the code scripts run.
    assert present >= 0.6 * len(patterns), (
        "{} of code-order.ld's {} patterns match a function of the extension: "
        "regenerate it (crates/python/bench/symbol_order.py)".format(present, len(patterns)))


def section(name):
    """(address, size) of the extension's section ``name``, or None."""
    out = subprocess.run(["readelf", "-SW", _native.__file__], check=True,
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        fields = line.replace("[ ", "[").split()
        if len(fields) > 5 and fields[1] == name:
            return int(fields[3], 16), int(fields[5], 16)
    return None


def test_the_functions_scripts_run_are_placed_together(functions):
    """The section holds the functions the file names and little else, and nearly all of
    them are in it: a function LLVM found identical to another is an alias in the other's
    section, wherever that is placed."""
    where = section(".text.setools")
    assert where is not None, "the link did not apply code-order.ld"
    start, size = where
    stems = by_stem(functions)
    groups = [matching(g, functions, stems) for g in ordered_groups()]
    inside = [sum(1 for a, _ in g.values() if start <= a < start + size) for g in groups]
    for g, n in zip(groups, inside):
        assert n >= 0.95 * len(g), (n, len(g))
    named = sum(s for g in groups for _, s in g.values())
    # Functions are aligned to 16 bytes (at most 15 bytes of padding each); a tenth more
    # for what the symbol table does not size (local labels, the linker's own glue). A
    # pattern that took every instance of a generic function made it twice as large.
    assert size <= 1.1 * named + 16 * sum(inside), (size, named)


def test_every_name_of_an_executed_address_is_ordered():
    """Identical functions are folded into one section named after one of them; the run
    may be reported under another name (pyo3's two ``to_str``), so each name at the
    executed address is placed, or the code stays in ``.text`` (a 64 kB window resident
    for one function)."""
    from symbol_order import ordered_patterns

    h = "17h{:016x}E"
    folded_a = "_ZN4pyo36to_str" + h.format(1)
    folded_b = "_ZN4pyo310other_name" + h.format(2)
    alone = "_ZN7arbiter5query" + h.format(3)
    later = "_ZN7arbiter4open" + h.format(4)
    where = {folded_a: 0x100, folded_b: 0x100, alone: 0x80, later: 0x200,
             "_ZN7arbiter6unused" + h.format(5): 0x300}
    first, second = ordered_patterns([{folded_a, alone}, {folded_b, later}], where)
    # Address order within a group; the folded pair's second name comes with its first,
    # and is not repeated in the later group that reported it.
    assert first == [".text*._ZN7arbiter5query17h*", ".text*._ZN4pyo36to_str17h*",
                     ".text*._ZN4pyo310other_name17h*"]
    assert second == [".text*._ZN7arbiter4open17h*"]


def test_a_v0_name_s_pattern_leaves_out_llvm_s_module_suffix():
    """``.llvm.<digits>`` hashes the module, which differs between builds of one tree in
    two directories: a pattern with it matched nothing in a ``pip install`` made
    elsewhere, and ``String``'s ``write_str`` and ``Display::fmt`` stayed in ``.text``."""
    from symbol_order import ordered_patterns, stem

    name = "_RNvXsZ_NtCsabc123_5alloc6stringNtB5_6StringNtNtCsdef456_4core3fmt5Write9write_str"
    here, there = name + ".llvm.17817598438271923533", name + ".llvm.583335691708501364"
    assert stem(here) == stem(there)
    assert stem(here).endswith("9write_str*") and ".llvm." not in stem(here)
    (alone,), = ordered_patterns([{here}], {here: 0x100})
    assert alone == ".text*." + stem(here)
    # Two copies (two modules compiled the same function) share a stem; each is named
    # whole with its suffix left out, which takes both in any build.
    both, = ordered_patterns([{here, there}], {here: 0x100, there: 0x200})
    assert both == [".text*." + name + "*"]


def test_the_script_places_the_linkage_and_exception_tables():
    from symbol_order import linker_script

    text = linker_script([".text*._ZN1a17h*"], [".text*._ZN1b17h*"])
    assert text.index("INSERT BEFORE .text;") < text.index("INSERT AFTER .eh_frame;")
    assert "*(.gcc_except_table .gcc_except_table.*)" in text
    assert text.index("INSERT AFTER .eh_frame;\n") < text.index("INSERT AFTER .rodata;\n")
    assert text.index("  }\n  .plt : { *(.plt) }\n}\nINSERT BEFORE .text;") > 0


def test_the_linkage_table_follows_the_ordered_code_where_the_file_asks():
    """``.plt`` (``__tls_get_addr``, run by every pyo3 entry) right after ``.text.setools``,
    not at the end of ``.text`` where its windows kept 108 kB of other code resident."""
    if ".plt : { *(.plt) }" not in ORDER.read_text():
        pytest.skip("code-order.ld predates the linkage table's placement: regenerate it")
    ordered, plt, text = section(".text.setools"), section(".plt"), section(".text")
    if plt is None:
        pytest.skip("the extension has no procedure linkage table")
    assert ordered[0] + ordered[1] <= plt[0] < text[0], (ordered, plt, text)


def test_the_exception_tables_are_linked_after_eh_frame_where_the_file_asks():
    """Away from the dynamic symbols and ``.rodata``, whose 64 kB fault-around windows kept
    92 kB of them resident (code-order.ld made before this statement lacks it)."""
    if "INSERT AFTER .eh_frame" not in ORDER.read_text():
        pytest.skip("code-order.ld predates the exception tables' placement: regenerate it")
    except_table, eh_frame = section(".gcc_except_table"), section(".eh_frame")
    if except_table is None:
        pytest.skip("the extension has no exception tables")
    assert except_table[0] >= eh_frame[0] + eh_frame[1], (except_table, eh_frame)


def test_the_script_moves_the_cold_crates_read_only_data_after_rodata():
    from symbol_order import RODATA_COLD_CRATES, linker_script

    text = linker_script([".text*._ZN1a17h*"], [".text*._ZN1b17h*"])
    assert text.endswith("INSERT AFTER .rodata;\n")
    cold = text[text.index(".rodata.cold : {"):]
    for crate in RODATA_COLD_CRATES:
        assert "*lib{}-*:*(.rodata .rodata.*)".format(crate) in cold
    # None of the crates setools' classes run: their data would be read from the end.
    for hot in ("arbiter_policy", "arbiter_query", "regex", "regex_syntax", "regex_automata",
                "pyo3", "std", "core"):
        assert hot not in RODATA_COLD_CRATES


def test_the_cold_crates_read_only_data_is_linked_after_rodata_where_the_file_asks():
    """The CIL compiler's and the other unused crates' tables out of ``.rodata``, where the
    64 kB windows around the strings and tables a script reads held them too (300 -> 236 kB
    of ``.rodata`` resident after ``setools_api.py``)."""
    if "INSERT AFTER .rodata" not in ORDER.read_text():
        pytest.skip("code-order.ld predates the cold read-only data's placement: regenerate it")
    rodata, cold = section(".rodata"), section(".rodata.cold")
    assert cold is not None, "the link did not apply code-order.ld's .rodata.cold"
    assert cold[0] >= rodata[0] + rodata[1], (rodata, cold)
    # The CIL compiler's tables alone are 80 kB: a pattern that matched nothing (an
    # archive named otherwise) would leave the section nearly empty.
    assert cold[1] >= 64 * 1024, cold


def test_the_case_folding_table_is_linked_once():
    """regex-syntax's simple case folding table (``(char, &[char])`` pairs, 70 kB of
    pointers relocated at load) is a ``const``: each codegen unit that used it had a copy,
    two in the extension until the crate was built in one unit (``[profile.release.package
    .regex-syntax]`` in the workspace's Cargo.toml); every process importing arbiter
    dirtied both."""
    import struct

    if shutil.which("readelf") is None:
        pytest.skip("readelf (binutils) not installed")
    out = subprocess.run(["readelf", "-SW", _native.__file__], check=True,
                         capture_output=True, text=True).stdout
    where = None
    for line in out.splitlines():
        fields = line.replace("[ ", "[").split()
        if len(fields) > 5 and fields[1] == ".data.rel.ro":
            where = int(fields[4], 16), int(fields[5], 16)
    assert where is not None
    with open(_native.__file__, "rb") as f:
        f.seek(where[0])
        data = f.read(where[1])
    # The table starts 'A' -> ['a'], 'B' -> ['b'], 'C' -> ['c']: entries of 24 bytes, the
    # character (4 bytes and 4 of padding) then the slice (address, length 1).
    tables = 0
    for i in range(0, len(data) - 72, 8):
        entries = [struct.unpack_from("<I4xQQ", data, i + 24 * k) for k in range(3)]
        if [(c, n) for c, _, n in entries] == [(0x41, 1), (0x42, 1), (0x43, 1)]:
            tables += 1
    assert tables == 1, tables


def test_no_unicode_script_or_age_tables_are_linked():
    """Python's ``re`` has no ``\\p{…}`` classes, and neither the setools layer's
    translation nor audit2allow's ``-t`` needs Rust's script, age, Boolean-property or
    segmentation tables; ``arbiter-denials`` once turned on all of regex's ``unicode``,
    which linked them, their name tables relocated at load. regex-syntax's script table
    (``(&str, &[(char, char)])`` pairs, 32 bytes each, sorted: ``Adlam`` then ``Ahom``)
    must not be in ``.data.rel.ro``."""
    import re
    import struct

    if shutil.which("readelf") is None:
        pytest.skip("readelf (binutils) not installed")
    out = subprocess.run(["readelf", "-SW", _native.__file__], check=True,
                         capture_output=True, text=True).stdout
    sections = {}
    for line in out.splitlines():
        fields = line.replace("[ ", "[").split()
        if len(fields) > 5 and fields[1].startswith("."):
            sections[fields[1]] = tuple(int(x, 16) for x in fields[3:6])  # addr, off, size
    with open(_native.__file__, "rb") as f:
        image = f.read()

    def addresses(text):
        """The load addresses of ``text`` in the allocated sections."""
        found = set()
        for addr, off, size in sections.values():
            if addr:
                for m in re.finditer(re.escape(text), image[off:off + size]):
                    found.add(addr + m.start())
        return found

    # The names themselves may stay (the property value table lists every script).
    adlam, ahom = addresses(b"Adlam"), addresses(b"Ahom")
    addr, off, size = sections[".data.rel.ro"]
    data = image[off:off + size]
    tables = 0
    for i in range(0, len(data) - 48, 8):
        p1, n1 = struct.unpack_from("<QQ", data, i)
        if n1 == 5 and p1 in adlam:
            p2, n2 = struct.unpack_from("<QQ", data, i + 32)
            if n2 == 4 and p2 in ahom:
                tables += 1
    assert tables == 0, tables

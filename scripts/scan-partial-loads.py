#!/usr/bin/env python3
"""Lists the places in a built binary that have the shape of LLVM's x86 partial-register
miscompile (llvm/llvm-project#205291, fixed upstream by #205600, present in rustc 1.95's
LLVM 22): an 8- or 16-bit load from memory into a register, which keeps the register's
other bits, followed by a read of the whole 64-bit register before anything writes all
of it.

That is what LLVM emits when it inserts a small field into a word that holds padding
(a `(ClassId, u32)` tuple, say) and then drops the widening of that word to 64 bits as
if its upper half were zero: the upper half is whatever the register held before. It
broke `arbiter-denials`' boolean verdicts once `ClassId` became byte-aligned
(docs/history/setools.md, the eighteenth pass). A hit is a candidate to read in the
disassembly (`objdump -d --no-show-raw-insn -C BINARY --start-address=ADDR`), not
proof: a 64-bit read may be harmless when the upper bits are known zero. Reads whose
result is a 32-bit or narrower register are not reported (only the low bits reach it).

    python3 scripts/scan-partial-loads.py target/release/arbiter [more binaries]

Prints one line per candidate (function, the load, the full read) and exits 1 when there
is any. Reads `objdump -d` output, about half a minute for the CLI.
"""
import re
import subprocess
import sys

# Every general-purpose register name by its 64-bit register.
FULL = {}
for b in "abcd":
    for n in (f"{b}l", f"{b}x", f"e{b}x", f"r{b}x"):
        FULL[n] = f"r{b}x"
for b in ("si", "di", "bp", "sp"):
    for n in (f"{b}l", b, f"e{b}", f"r{b}"):
        FULL[n] = f"r{b}"
for i in range(8, 16):
    for n in (f"r{i}b", f"r{i}w", f"r{i}d", f"r{i}"):
        FULL[n] = f"r{i}"
NARROW = {n for n in FULL if re.fullmatch(r"[abcd]l|[abcd]x|si|di|bp|sp|[sd]il|bpl|spl|r\d+[bw]", n)}
WIDE_OR_32 = {n for n in FULL if n == FULL[n] or re.fullmatch(r"e\w\w|r\d+d", n)}
# The plain moves whose destination is only part of a register (not movzx/movsx).
PLAIN_MOV = re.compile(r"mov[bw]?$")
WINDOW = 40

LINE = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")


def regs(text):
    return re.findall(r"%(\w+)", text)


def scan(insns, func, out):
    for i, (addr, op, args) in enumerate(insns):
        if not PLAIN_MOV.match(op):
            continue
        m = re.fullmatch(r"(.*\(.*\)),%(\w+)", args)
        if not m or m.group(2) not in NARROW:
            continue
        full = FULL[m.group(2)]
        for addr2, op2, args2 in insns[i + 1 : i + 1 + WINDOW]:
            if op2.startswith(("jmp", "call", "ret", "ud2")):
                break
            ops = regs(args2)
            dest_is_mem = "(" in args2.rsplit(",", 1)[-1]
            dst = None if dest_is_mem or not ops else ops[-1]
            sources = ops if dst is None else ops[:-1]
            narrow_result = dst is not None and dst in FULL and dst != FULL[dst] and dst != full
            reads_full = full in sources or op2 == "push" or (
                dst == full and not op2.startswith(("mov", "lea"))
            )
            if reads_full and not narrow_result:
                out.append(f"{func} | {addr} {op} {args} | {addr2} {op2} {args2}")
                break
            if dst is not None and FULL.get(dst) == full and dst in WIDE_OR_32:
                break


def main(paths):
    hits = []
    for path in paths:
        proc = subprocess.Popen(
            ["objdump", "-d", "--no-show-raw-insn", "-C", path],
            stdout=subprocess.PIPE,
            text=True,
        )
        func, insns = None, []
        for line in proc.stdout:
            if line.endswith(">:\n") and not line.startswith(" "):
                scan(insns, func, hits)
                func, insns = line.split("<", 1)[1].rsplit(">", 1)[0], []
                continue
            m = LINE.match(line)
            if m:
                insns.append((m.group(1), m.group(2), m.group(3).split("#")[0].strip()))
        scan(insns, func, hits)
        if proc.wait() != 0:
            sys.exit(f"objdump failed on {path}")
    for h in hits:
        print(h)
    print(f"{len(hits)} candidate(s)", file=sys.stderr)
    return 1 if hits else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))

"""Where a whole setools script's resident memory goes: ``setools_api.py``'s queries run
once each, in its order, with the memory read after the import, the open and each query
(its first run builds the per-policy tables it needs), then by mapping at the end.

    /usr/bin/python3 crates/python/bench/setools_memory.py POLICY            # setools
    PYTHONPATH=DIR /usr/bin/python3 crates/python/bench/setools_memory.py --arbiter POLICY
    ... [--tracemalloc N]   # also the N source lines holding the most Python memory

``setools_api.py`` reports the whole script's peak (VmHWM); this says which step raised
it and in which allocator, so that a pass cuts the largest part first. Printed to stdout,
one line per step: ``rss`` (VmRSS over the interpreter before the import, kB, and the
step's share), ``pymalloc`` (Python's small-object allocator: bytes in allocated blocks),
``malloc`` (glibc's heap in use: Python's larger objects and the extension's Rust
allocations) and ``mmap`` (glibc's blocks mapped on their own: the large Rust tables).
Then the resident kB of each mapping (``smaps``): the extension's file pages, the
interpreter's, the anonymous memory. Run with the bytecode of both packages compiled, as
``setools_open.py`` says. Linux and glibc only (``/proc/self``, ``mallinfo2``); with
``--tracemalloc`` the figures include tracemalloc's own memory.
"""

import sys


def status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(field + " not in /proc/self/status")


BARE_KB = status("VmRSS")

import ctypes  # noqa: E402 (after the bare reading: its cost is the tool's, not a step's)
import os  # noqa: E402
import tempfile  # noqa: E402


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in (
        "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"
    ).split()]


_LIBC = ctypes.CDLL("libc.so.6")
_LIBC.mallinfo2.restype = _Mallinfo2


def pymalloc_kb():
    """Bytes in pymalloc's allocated blocks (``sys._debugmallocstats`` writes to the C
    stderr, so it is read through a file)."""
    with tempfile.TemporaryFile("w+") as f:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(f.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        for line in f:
            if line.startswith("# bytes in allocated blocks"):
                return int(line.split("=")[1].replace(",", "")) // 1024
    return 0


class Steps:
    """Prints each step's readings and their change since the previous step."""

    def __init__(self):
        self.prev = [0, 0, 0, 0]

    def __call__(self, name):
        m = _LIBC.mallinfo2()
        now = [status("VmRSS") - BARE_KB, pymalloc_kb(), m.uordblks // 1024, m.hblkhd // 1024]
        d = [a - b for a, b in zip(now, self.prev)]
        print(f"{name:34s} rss {now[0]:6d} ({d[0]:+6d})  pymalloc {now[1]:6d} ({d[1]:+6d})  "
              f"malloc {now[2]:6d} ({d[2]:+6d})  mmap {now[3]:6d} ({d[3]:+6d})")
        self.prev = now


def resident_by_mapping():
    """Resident kB by (file name, permissions) of the mappings, largest first."""
    out, key = {}, None
    with open("/proc/self/smaps") as f:
        for line in f:
            parts = line.split()
            if "-" in parts[0] and not parts[0].endswith(":"):
                name = os.path.basename(parts[5]) if len(parts) >= 6 else "[anonymous]"
                key = (name, parts[1])
            elif parts[0] == "Rss:":
                out[key] = out.get(key, 0) + int(parts[1])
    return sorted(out.items(), key=lambda kv: -kv[1])


def main():
    args = sys.argv[1:]
    arbiter = "--arbiter" in args
    args = [a for a in args if a != "--arbiter"]
    top = 0
    if "--tracemalloc" in args:
        i = args.index("--tracemalloc")
        top = int(args[i + 1])
        del args[i:i + 2]
        import tracemalloc
        tracemalloc.start()
    path = args[0]
    step = Steps()
    step("start (this tool's modules)")
    if arbiter:
        import arbiter.setools as setools
        setools.install()
    else:
        import setools
    step("import " + setools.__name__)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import setools_api
    step("setools_api.py's own modules")
    policy = setools.SELinuxPolicy(path)
    step("open")
    for name, make in setools_api.QUERIES.items():
        for _ in make(policy).results():
            pass
        step(name)
    print(f"VmHWM over the bare interpreter: {status('VmHWM') - BARE_KB} kB")
    for (name, perms), kb in resident_by_mapping()[:12]:
        print(f"{kb:8d} kB  {name} {perms}")
    if top:
        for stat in tracemalloc.take_snapshot().statistics("lineno")[:top]:
            print(stat)


if __name__ == "__main__":
    main()

"""Fleet-scale denial analysis on Dask: the AVC denial logs of many hosts explained with
``dask.bag`` (partitions of lines) on any Dask scheduler, ``dask.distributed`` included,
giving what one ``arbiter why --allow`` over every log gives, plus counts.

Install with ``pip install ./crates/python[dask]``.

    from dask.distributed import Client, LocalCluster
    import arbiter.dask
    with Client(LocalCluster(n_workers=2, threads_per_worker=1)) as client:
        fleet = arbiter.dask.explain_fleet({"web1": "logs/web1/audit.log", ...},
                                           "/etc/selinux/default/policy/policy.33")
    print(fleet.allow)            # = arbiter why --allow POLICY logs...
    fleet.hosts["web1"], fleet.rules[("httpd_t", "shadow_t", "file")], fleet.verdicts["TERULE"]

How it is split: the logs, in order, are cut by size alone (the client reads no log) into
``partitions`` tasks, by default ``TASKS_PER_THREAD`` (8) per worker thread of the
scheduler, their shares of the bytes decreasing in rounds of as many tasks as threads
(the first round's ``SPREAD`` times the last's), each task's share cut again into ranges
of at most ``blocksize``. Each task holds its ranges itself (no dependency), so Dask's
distributed scheduler queues them and hands them out as workers free up, largest first
(their priorities, in log order): equal bytes are not equal CPU (formats differ in cost
per byte), and the small tasks at the end let the workers finish together. A task reads
its ranges on the worker, one at a time into the worker's one read buffer, each widened
to the lines that start in it (in Rust; no per-line Python object), and digests them
natively into one compact ``bytes`` blob (counts, and audit2allow's access vectors: the
task's distinct denials added per source type, target type, class and verdict, as
audit2allow's generator adds them), on an engine built once per worker process and
reused by every task there (keyed by the policy's path, or its bytes' SHA-256). Few,
large tasks because each task costs the client, the scheduler and the workers' event
loops messages and transitions on the cores the workers compute on: one task per 16 MiB
range and a tree of merges (57 tasks for a 50-host fleet) took 0.8-1.5 CPU-s a run in
those processes, against 3-4.5 for the map. Up to ``_CLIENT_BLOBS`` (8) blobs go to the
client, which merges their counts (in Rust) and adds their access vectors, in log order,
to audit2allow's generator (nothing is decided again), which prints exactly what a run
over every line prints (a vector's first denial decides its verdict, and later ones only
add permissions and commands); more tasks are merged in a tree on the workers first, as
``Bag.reduction`` builds it. Dask's scheduler does the scheduling; this module only says
what to compute.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import secrets
import threading
from collections import Counter
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import dask
from dask.base import get_scheduler
from dask.local import get_sync
from dask.system import CPU_COUNT
from dask.utils import parse_bytes

from . import _native

from ._dask_trails import TrailFleet, trails_fleet  # noqa: F401  (BSM trails)
from .denials import Denials

PolicySource = Union[str, "os.PathLike[str]", bytes]

_ENGINES: Dict[str, Denials] = {}
_ENGINES_LOCK = threading.Lock()
# Blobs merged per reduce task: the tree's fan-in (Dask's default is 8 as well).
_SPLIT_EVERY = 8
# The most blobs the client's final step merges itself; more are merged in a tree first.
# 8, not 32: with 16 blobs merged by the client, the merge became the serial end on large
# fleets (50 x 80,000 lines: 1.34x against 1.66x with the tree, idle cores, 2026-11-28).
_CLIENT_BLOBS = 8
# Tasks per worker thread when ``explain_fleet`` is not told how many: see its docs.
TASKS_PER_THREAD = 8
# The first round of tasks' share over the last's (see ``_bounds``).
SPREAD = 16


def _policy_key(policy: PolicySource) -> Tuple[str, PolicySource]:
    if isinstance(policy, (bytes, bytearray, memoryview)):
        data = bytes(policy)
        return "sha256:" + hashlib.sha256(data).hexdigest(), data
    if isinstance(policy, (str, os.PathLike)):
        path = os.path.abspath(os.fspath(policy))
        return "path:" + path, path
    raise TypeError(f"policy must be a path or the policy image (bytes), got {type(policy).__name__}")


def engine(policy: PolicySource) -> Denials:
    """The process's engine for ``policy``, built on first use (one per worker process)."""
    key, source = _policy_key(policy)
    with _ENGINES_LOCK:
        d = _ENGINES.get(key)
        if d is None:
            d = _ENGINES[key] = Denials(source)
        return d


@dataclasses.dataclass
class Fleet:
    """The aggregate over every host's logs.

    ``allow`` is audit2allow's text (``arbiter why --allow POLICY`` over the logs in the
    order given); ``hosts`` counts AVC records per host; ``rules`` counts denials per
    (source type, target type, class); ``verdicts`` counts records per audit2why verdict
    (``"UNKNOWN"`` for records the policy cannot place)."""

    allow: str
    hosts: Dict[str, int]
    rules: Dict[Tuple[str, str, str], int]
    verdicts: Dict[str, int]
    lines: int
    records: int
    denials: int
    malformed: int
    unknown: int


def _digest_task(index: int, ranges: List[Tuple[str, int, int]], policy: PolicySource,
                 run: int) -> bytes:
    """Map step: one task (its index in log order and its byte ranges) -> one blob. The
    ranges are read here, on the worker, one at a time, each widened to the lines that
    start in it, and digested into one chunk natively. ``run`` and the task's index let
    the worker's engine skip the denials an earlier task of this run already kept there
    (the merge would drop them)."""
    return _native._fleet_digest_ranges(engine(policy), ranges, run=run, chunk=index)


def _merge_blobs(blobs: Sequence[bytes]) -> bytes:
    """Reduce step (associative, order-keeping): blobs in log order → one blob."""
    blobs = list(blobs)
    return blobs[0] if len(blobs) == 1 else _native._fleet_merge(blobs)


def _merge_tree(level: List[Any]) -> List[Any]:
    """The reduction tree over the map's results (``Delayed`` objects or futures, in log
    order): merges of ``_SPLIT_EVERY`` consecutive blobs, level after level, up to a level
    of at most ``_CLIENT_BLOBS`` blobs, which the client's final step merges itself (so
    the last merge is not a task of its own whose result crosses to the client and is read
    again). The tree ``Bag.reduction`` builds, less its top."""
    merge = dask.delayed(_merge_blobs, pure=True)
    # Above every map task's priority (see ``explain_fleet``): a merge runs as soon as its
    # blobs are in, while the map goes on, not with the last merge at the end.
    with dask.annotate(priority=len(level) + 1):
        while len(level) > _CLIENT_BLOBS:
            level = [merge(level[i:i + _SPLIT_EVERY])
                     for i in range(0, len(level), _SPLIT_EVERY)]
    return level


def _bounds(total: int, count: int, threads: int) -> List[int]:
    """Where the ``count`` tasks' shares of ``total`` bytes start and end (``count + 1``
    offsets, ``count <= total``): shares decreasing in rounds of ``threads`` tasks, each
    round's tasks equal, from the first round to the last by ``SPREAD`` in all
    (geometrically), so that the tasks Dask hands out last are the smallest and the
    workers end together however equal bytes turn out to cost unequal CPU. One round (as
    many tasks as threads, or fewer): equal shares."""
    rounds = -(-count // threads)
    ratio = SPREAD ** (-1 / (rounds - 1)) if rounds > 1 else 1.0
    weights = [ratio ** (i // threads) for i in range(count)]
    whole = sum(weights)
    bounds, acc = [0], 0.0
    for i, w in enumerate(weights[:-1], 1):
        acc += w
        # Every share at least one byte (count <= total).
        bounds.append(min(max(bounds[-1] + 1, round(total * acc / whole)), total - (count - i)))
    bounds.append(total)
    return bounds


def _partitions(paths: Sequence[str], count: int, blocksize: int,
                threads: int = 1) -> List[List[Tuple[str, int, int]]]:
    """The logs, in order, cut into ``count`` partitions (a partition may span several
    logs, a log several partitions), their shares of the bytes as ``_bounds`` gives them
    (equal when ``count <= threads``, else decreasing), each partition's part of a log cut
    again into ranges of at most ``blocksize`` bytes: what one task reads, range by range.
    The cuts fall anywhere in a line; each range holds the lines that start in it. Only
    the logs' sizes are read; empty logs give no range."""
    sizes = [os.path.getsize(p) for p in paths]
    total = sum(sizes)
    count = min(count, total)
    if not count:
        return []
    bounds = _bounds(total, count, max(1, threads))
    parts: List[List[Tuple[str, int, int]]] = [[] for _ in range(count)]
    log_start, first = 0, 0
    for path, size in zip(paths, sizes):
        log_end = log_start + size
        # The partitions that overlap [log_start, log_end): partition i is
        # [bounds[i], bounds[i + 1]).
        while first < count and bounds[first + 1] <= log_start:
            first += 1
        for i in range(first, count):
            a, b = bounds[i], bounds[i + 1]
            if a >= log_end:
                break
            lo, hi = max(a, log_start) - log_start, min(b, log_end) - log_start
            if hi <= lo:
                continue
            n = -(-(hi - lo) // blocksize)
            cuts = [lo + (hi - lo) * k // n for k in range(n + 1)]
            parts[i].extend((path, c, d - c) for c, d in zip(cuts, cuts[1:]))
        log_start = log_end
    return [p for p in parts if p]


def _distributed_client(scheduler: Optional[str]) -> Any:
    """The ``distributed.Client`` that ``scheduler`` (or Dask's default) names, or None."""
    client = getattr(get_scheduler(scheduler=scheduler), "__self__", None)
    if client is not None and hasattr(client, "nthreads") and hasattr(client, "gather"):
        return client
    return None


def _worker_threads(scheduler: Optional[str]) -> int:
    """The threads that will run the tasks: a ``distributed`` cluster's worker threads,
    1 for the synchronous scheduler, else Dask's ``num_workers`` or the CPU count."""
    client = _distributed_client(scheduler)
    if client is not None:
        return max(1, sum(client.nthreads().values()))
    if get_scheduler(scheduler=scheduler) is get_sync:
        return 1
    return max(1, dask.config.get("num_workers", None) or CPU_COUNT)


def _norm(path: str) -> str:
    if path.startswith("file://"):
        path = path[len("file://"):]
    return os.path.abspath(path)


def explain_fleet(logs: Union[Mapping[str, Any], Sequence[Any]], policy: PolicySource, *,
                  blocksize: Optional[Union[int, str]] = "16MiB",
                  partitions: Optional[int] = None, module: Optional[str] = None,
                  requires: bool = False, dontaudit: bool = False, xperms: bool = False,
                  scheduler: Optional[str] = None) -> Fleet:
    """Explains every host's logs on the current Dask scheduler (a ``distributed.Client``
    if one is active, else ``scheduler``, else Dask's default).

    ``logs``: ``{host: path}`` (or ``{host: [paths]}``), or a list of paths (host = the
    file's name). ``policy``: the policy's path or bytes. ``partitions``: how many tasks
    read the logs (default: ``TASKS_PER_THREAD`` per worker thread of the scheduler), their
    shares of the logs' bytes decreasing in rounds of one task per thread (equal with no
    more tasks than threads; see ``_bounds``); ``blocksize``: the most bytes a task reads at once
    (``None``: the largest log's size). ``module``, ``requires``, ``dontaudit``,
    ``xperms``: audit2allow's -m, -r, -D, -x for ``Fleet.allow``."""
    if isinstance(logs, Mapping):
        pairs = []
        for host, paths in logs.items():
            if isinstance(paths, (str, os.PathLike)):
                paths = [paths]
            pairs.extend((str(host), _norm(os.fspath(p))) for p in paths)
    elif isinstance(logs, (str, os.PathLike)):
        raise TypeError("logs must be a mapping host -> path(s) or a list of paths, not one path")
    else:
        pairs = [(os.path.basename(os.fspath(p)), _norm(os.fspath(p))) for p in logs]
    if not pairs:
        raise ValueError("no logs given")
    _, source = _policy_key(policy)
    host_of = {path: host for host, path in pairs}
    paths = [path for _, path in pairs]
    for p in paths:
        if not os.path.isfile(p):
            from . import denials
            err = denials.LogError(f"{p}: no such file")
            err.path = p
            raise err
    size = parse_bytes(blocksize) if isinstance(blocksize, str) else blocksize
    if size is None:
        size = max(1, max(os.path.getsize(p) for p in paths))
    if not isinstance(size, int) or size <= 0:
        raise ValueError(f"blocksize must be a positive number of bytes, got {blocksize!r}")
    threads = _worker_threads(scheduler)
    if partitions is None:
        partitions = TASKS_PER_THREAD * threads
    if not isinstance(partitions, int) or partitions <= 0:
        raise ValueError(f"partitions must be a positive number, got {partitions!r}")
    parts = _partitions(paths, partitions, size, threads)
    if not parts:
        blobs = []
    else:
        # One task per partition (read and digest), its ranges in the task itself: tasks
        # with no dependency, which Dask's distributed scheduler hands out as workers free
        # up (a group this large is "root-ish": queued on the scheduler), largest first:
        # it pops that queue by priority, here the tasks' log order. Without one it is
        # Dask's graph order, which groups the tasks by the merge they feed, in no order
        # of size (a two-worker cluster started 16 tasks as 8, 14, 15, ..., 2, 1, 0: the
        # two largest last). The local schedulers ignore the priorities.
        run = secrets.randbits(63)
        name = f"arbiter-fleet-digest-{run:016x}"
        digest = dask.delayed(_digest_task, pure=True)
        digests = []
        for i, ranges in enumerate(parts):
            with dask.annotate(priority=len(parts) - i):
                digests.append(digest(i, ranges, source, run, dask_key_name=(name, i)))
        client = _distributed_client(scheduler)
        if client is None:
            blobs = dask.compute(*_merge_tree(digests), scheduler=scheduler)
        else:
            # The map tasks submitted as the outputs of a computation of their own (their
            # blobs stay on the workers), the merges after them: the scheduler takes up a
            # graph's outputs in priority order, but the tasks they depend on in the
            # order of a set, so the first tasks it sent each worker (two per one-thread
            # worker) were any of one merge's inputs, the largest often held back behind
            # another on one worker while the other ran out of work at the end.
            maps = client.compute(digests)
            top = _merge_tree(maps)
            if top is maps:
                blobs = client.gather(maps)
            else:
                blobs = dask.compute(*top, scheduler=scheduler)
    # The tree's top level is merged by the final step itself (in Rust, in log order).
    allow, per_path, rules, verdicts, counts = _native._fleet_finish(
        list(blobs), module=module, requires=requires, dontaudit=dontaudit, xperms=xperms)
    hosts: Counter = Counter({h: 0 for h in host_of.values()})
    for path, n in per_path.items():
        hosts[host_of.get(path, os.path.basename(path))] += n
    return Fleet(allow=allow, hosts=dict(hosts), rules=rules, verdicts=verdicts,
                 lines=counts["lines"], records=counts["records"], denials=counts["denials"],
                 malformed=counts["malformed"], unknown=counts["unknown"])



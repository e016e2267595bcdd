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

How it is split: each log is cut into byte ranges of about ``blocksize`` (its size only is
read on the client); one bag partition per range, whose task reads the range on the worker,
widened to whole lines as ``dask.bytes.read_bytes`` does (``fsspec``'s ``read_block``, no
per-line Python object); each block is digested natively (counts, and each distinct denial with its verdict) into one compact
``bytes`` blob, on an engine built once per worker process and reused by every task there
(keyed by the policy's path, or its bytes' SHA-256). The blobs are merged in a tree on the
workers, as ``Bag.reduction`` builds it (in Rust: counts added, distinct denials kept in log
order), up to its top level of at most 8 blobs, which the client merges and whose distinct
denials it feeds to audit2allow's generator
(nothing is decided again), which prints exactly what a run over every line prints (a
repeated denial changes nothing in audit2allow's output). Dask's scheduler does the
scheduling; this module only says what to compute.
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
import dask.bag as db
from dask.utils import parse_bytes
from fsspec.utils import read_block

from . import _native

from ._dask_trails import TrailFleet, trails_fleet  # noqa: F401  (BSM trails)
from .denials import Denials

PolicySource = Union[str, "os.PathLike[str]", bytes]

_ENGINES: Dict[str, Denials] = {}
_ENGINES_LOCK = threading.Lock()
# Blobs merged per reduce task: the tree's fan-in (Dask's default is 8 as well).
_SPLIT_EVERY = 8


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


def _digest_ranges(part: Sequence[Tuple[int, str, int, int]], policy: PolicySource,
                   run: int) -> bytes:
    """Map step: one partition of (index, path, offset, length) ranges → one blob. Each
    range is read here, on the worker, widened to whole lines: reading and digesting are
    one task. ``run`` and the range's index in log order let the worker's engine skip the
    denials an earlier range of this run already kept there (the merge would drop them)."""
    den = engine(policy)
    blobs = []
    for index, path, offset, length in part:
        with open(path, "rb") as f:
            block = read_block(f, offset, length, delimiter=b"\n")
        blobs.append(_native._fleet_digest(den, block, path, run=run, chunk=index))
    return blobs[0] if len(blobs) == 1 else _native._fleet_merge(blobs)


def _merge_blobs(blobs: Sequence[bytes]) -> bytes:
    """Reduce step (associative, order-keeping): blobs in log order → one blob."""
    blobs = list(blobs)
    return blobs[0] if len(blobs) == 1 else _native._fleet_merge(blobs)


def _merge_tree(level: List[Any]) -> List[Any]:
    """The reduction tree over the map's results (Dask ``Delayed`` objects, in log order):
    merges of ``_SPLIT_EVERY`` consecutive blobs, level after level, up to the level of at
    most ``_SPLIT_EVERY`` blobs, which the client's final step merges itself (so the last
    merge is not a task of its own whose result crosses to the client and is read again).
    The tree ``Bag.reduction`` builds, less its root."""
    merge = dask.delayed(_merge_blobs, pure=True)
    while len(level) > _SPLIT_EVERY:
        level = [merge(level[i:i + _SPLIT_EVERY]) for i in range(0, len(level), _SPLIT_EVERY)]
    return level


def _ranges(path: str, blocksize: int) -> List[Tuple[str, int, int]]:
    """The byte ranges of one log: ``size // blocksize`` (at least one) ranges of equal
    length; none for an empty file (as ``read_bytes``)."""
    size = os.path.getsize(path)
    if size == 0:
        return []
    n = max(1, size // blocksize)
    ends = [size * (i + 1) // n for i in range(n)]
    starts = [0] + ends[:-1]
    return [(path, start, end - start) for start, end in zip(starts, ends)]


def _norm(path: str) -> str:
    if path.startswith("file://"):
        path = path[len("file://"):]
    return os.path.abspath(path)


def explain_fleet(logs: Union[Mapping[str, Any], Sequence[Any]], policy: PolicySource, *,
                  blocksize: Optional[Union[int, str]] = "16MiB", module: Optional[str] = None,
                  requires: bool = False, dontaudit: bool = False, xperms: bool = False,
                  scheduler: Optional[str] = None) -> Fleet:
    """Explains every host's logs on the current Dask scheduler (a ``distributed.Client``
    if one is active, else ``scheduler``, else Dask's default).

    ``logs``: ``{host: path}`` (or ``{host: [paths]}``), or a list of paths (host = the
    file's name). ``policy``: the policy's path or bytes. ``module``, ``requires``,
    ``dontaudit``, ``xperms``: audit2allow's -m, -r, -D, -x for ``Fleet.allow``."""
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
    ranges = [(i, *r) for i, r in enumerate(r for p in paths for r in _ranges(p, size))]
    if not ranges:
        blobs = []
    else:
        # One partition (one task: read and digest) per range; the merges run on workers.
        bag = db.from_sequence(ranges, npartitions=len(ranges))
        run = secrets.randbits(63)
        digests = bag.map_partitions(_digest_ranges, policy=source, run=run).to_delayed()
        blobs = dask.compute(*_merge_tree(digests), scheduler=scheduler)
    # The tree's top level is merged by the final step itself (in Rust, in log order).
    allow, per_path, rules, verdicts, counts = _native._fleet_finish(
        list(blobs), module=module, requires=requires, dontaudit=dontaudit, xperms=xperms)
    hosts: Counter = Counter({h: 0 for h in host_of.values()})
    for path, n in per_path.items():
        hosts[host_of.get(path, os.path.basename(path))] += n
    return Fleet(allow=allow, hosts=dict(hosts), rules=rules, verdicts=verdicts,
                 lines=counts["lines"], records=counts["records"], denials=counts["denials"],
                 malformed=counts["malformed"], unknown=counts["unknown"])



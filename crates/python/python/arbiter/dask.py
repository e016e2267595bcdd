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

How it is split: ``dask.bag.read_text`` cuts the logs into partitions of whole lines (each
tagged with its file); each partition is digested natively (``Denials.digest``: counts, and
each distinct denial with its verdict), on an engine built once per worker process and
reused by every task there (keyed by the policy's path, or its bytes' SHA-256). The reduce
adds the counts and feeds the distinct denials, in log order, to audit2allow's generator
(``Denials.merge_allow``: nothing is decided again), which prints exactly what a run over
every line prints (a repeated denial changes nothing in audit2allow's output). Dask's scheduler does the scheduling; this module only says what to compute.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import os
import threading
from collections import Counter
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import dask.bag as db

from .denials import Denials

PolicySource = Union[str, "os.PathLike[str]", bytes]

_ENGINES: Dict[str, Denials] = {}
_ENGINES_LOCK = threading.Lock()


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


def _digest_partition(part: Sequence[Tuple[str, str]], policy: PolicySource) -> List[Dict[str, Any]]:
    """Map step: one partition of (line, path) pairs → one digest per run of one file."""
    den = engine(policy)
    out = []
    for path, group in itertools.groupby(part, key=lambda lp: lp[1]):
        text = "".join(line for line, _ in group)
        d = den.digest(text, name=path)
        out.append({
            "path": path, "lines": d.lines, "records": d.records, "denials": d.denials,
            "malformed": d.malformed, "unknown": d.unknown, "verdicts": dict(d.verdicts),
            "rules": dict(d.rules), "kept": list(d.kept), "roles": list(d.roles),
            "selinux_seen": d.selinux_seen,
        })
    return out


def _norm(path: str) -> str:
    if path.startswith("file://"):
        path = path[len("file://"):]
    return os.path.abspath(path)


def explain_fleet(logs: Union[Mapping[str, Any], Sequence[Any]], policy: PolicySource, *,
                  blocksize: Optional[Union[int, str]] = "1MiB", module: Optional[str] = None,
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
    bag = db.read_text(paths, include_path=True, blocksize=blocksize)
    digests = bag.map_partitions(_digest_partition, source).compute(scheduler=scheduler)
    return _reduce(digests, host_of, source, module=module, requires=requires,
                   dontaudit=dontaudit, xperms=xperms)


def _reduce(digests: Sequence[Dict[str, Any]], host_of: Mapping[str, str], policy: PolicySource,
            **generation: Any) -> Fleet:
    hosts: Counter = Counter({h: 0 for h in host_of.values()})
    rules: Counter = Counter()
    verdicts: Counter = Counter()
    totals = Counter()
    kept: List[Any] = []
    roles: List[Any] = []
    seen_roles = set()
    selinux_seen = False
    for d in digests:
        hosts[host_of.get(_norm(d["path"]), os.path.basename(d["path"]))] += d["records"]
        rules.update(d["rules"])
        verdicts.update(d["verdicts"])
        for k in ("lines", "records", "denials", "malformed", "unknown"):
            totals[k] += d[k]
        kept.extend(d["kept"])
        for r in d["roles"]:
            if tuple(r) not in seen_roles:
                seen_roles.add(tuple(r))
                roles.append(r)
        selinux_seen = selinux_seen or d["selinux_seen"]
    allow = engine(policy).merge_allow(kept, roles, selinux_seen, **generation)
    return Fleet(allow=allow, hosts=dict(hosts), rules=dict(rules), verdicts=dict(verdicts),
                 lines=totals["lines"], records=totals["records"], denials=totals["denials"],
                 malformed=totals["malformed"], unknown=totals["unknown"])

"""BSM trails of a fleet on Dask (``arbiter.dask.trails_fleet``): auditreduce-style
selection over many trails and per-event / per-user counts of the selected records, the
same as one ``arbiter bsm reduce`` over every trail in the order given.

One trail is one task (a BSM trail has no line boundaries to cut at, and one host's trail
is the natural unit), the trail's path in the task itself, so that Dask's distributed
scheduler hands the tasks out as workers free up, largest trail first (each task's
priority its trail's rank by size; on a ``distributed.Client`` the tasks are submitted as
a computation of their own before the merges, as ``explain_fleet``'s are, so the first
tasks sent are the largest, not any of one merge's inputs): the small trails at the end
let the workers finish together. Each trail is selected and counted natively on its
worker (``arbiter.bsm``'s reducer, streaming the file); a tree of merges (fan-in 8, as
``Bag.reduction`` builds it, above every trail's task in priority) runs on the workers,
keeping trail order, so the client receives one result: the selected records as one
trail (``data``) and the counts.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
from collections import Counter
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import dask
from dask.delayed import Delayed

from . import _native

_SPLIT_EVERY = 8


@dataclasses.dataclass
class TrailFleet:
    """The aggregate over every host's trails.

    ``data``: the selected records as one trail (what ``arbiter bsm reduce OPTIONS TRAILS``
    writes); ``events``: selected records per event number; ``users``: selected records per
    audit user id (-1: no subject token); ``hosts``: selected records per host;
    ``records``: records read (file tokens included); ``selected``: records selected (file
    tokens included, as auditreduce writes them)."""

    data: bytes
    events: Dict[int, int]
    users: Dict[int, int]
    hosts: Dict[str, int]
    records: int
    selected: int


def _digest(part: Sequence[Tuple[str, str]], options: List[str], etc: Optional[str]) -> Tuple:
    out = []
    for host, path in part:
        records, selected, events, users, data = _native._bsm_digest(path, options, etc=etc)
        out.append((records, selected, events, users, {host: selected}, data))
    return _merge(out)


def _merge(parts: Sequence[Tuple]) -> Tuple:
    """Associative and order-keeping: parts in trail order → one part."""
    parts = list(parts)
    if len(parts) == 1:
        return parts[0]
    records = selected = 0
    events: Counter = Counter()
    users: Counter = Counter()
    hosts: Counter = Counter()
    data = []
    for r, s, e, u, h, d in parts:
        records += r
        selected += s
        events.update(e)
        users.update(u)
        hosts.update(h)
        data.append(d)
    return records, selected, dict(events), dict(users), dict(hosts), b"".join(data)


def trails_fleet(trails: Union[Mapping[str, Any], Sequence[Any]], options: Sequence[str] = (),
                 *, etc: Optional[Union[str, "os.PathLike[str]"]] = None,
                 scheduler: Optional[str] = None) -> TrailFleet:
    """Selects (auditreduce ``options``, e.g. ``["-m", "AUE_EXECVE"]``; none: every record)
    and counts every host's BSM trails on the current Dask scheduler (a
    ``distributed.Client`` if one is active, else ``scheduler``).

    ``trails``: ``{host: path}`` (or ``{host: [paths]}``), or a list of paths (host = the
    file's name). ``etc``: the audit_* directory, as ``--etc`` (a path every worker can
    read). Bad options raise ``ValueError`` before anything is scheduled; an unreadable
    trail raises ``arbiter.bsm.TrailError``."""
    if isinstance(trails, (str, os.PathLike)):
        raise TypeError("trails must be a mapping host -> path(s) or a list of paths, not one path")
    pairs: List[Tuple[str, str]] = []
    if isinstance(trails, Mapping):
        for host, paths in trails.items():
            if isinstance(paths, (str, os.PathLike)):
                paths = [paths]
            pairs.extend((str(host), os.path.abspath(os.fspath(p))) for p in paths)
    else:
        pairs = [(os.path.basename(os.fspath(p)), os.path.abspath(os.fspath(p))) for p in trails]
    if not pairs:
        raise ValueError("no trails given")
    options = [str(o) for o in options]
    etc = None if etc is None else os.path.abspath(os.fspath(etc))
    # Options are checked here, once, so that a typo fails before any task runs.
    _native._bsm_reduce([], options, etc=etc)
    for _, p in pairs:
        if not os.path.isfile(p):
            err = _native.TrailError(f"{p}: no such file")
            err.path = p
            raise err
    # One task per trail, the trail in the task itself: tasks with no dependency, which
    # Dask's distributed scheduler hands out as workers free up (not all placed at the
    # start, as tasks each depending on a data task are), by priority: here the trail's
    # rank by size, largest first (ties in trail order), so that the workers end on small
    # trails. Without priorities it is Dask's graph order, which groups the tasks by the
    # merge they feed, in no order of size. The local schedulers ignore them.
    sizes = [os.path.getsize(p) for _, p in pairs]
    rank = sorted(range(len(pairs)), key=lambda i: (-sizes[i], i))
    priority = [0] * len(pairs)
    for r, i in enumerate(rank):
        priority[i] = len(pairs) - r
    name = "arbiter-trails-digest-" + secrets.token_hex(8)
    digest = dask.delayed(_digest, pure=True)
    level = []
    for i, pair in enumerate(pairs):
        with dask.annotate(priority=priority[i]):
            level.append(digest([pair], options, etc, dask_key_name=(name, i)))
    # ``arbiter.dask`` imports this module, so its helper is taken when called.
    from .dask import _distributed_client

    client = _distributed_client(scheduler)
    if client is not None:
        # The trails' tasks submitted as a computation of their own, the merges after
        # them (see ``explain_fleet``): the scheduler takes up the tasks a graph's outputs
        # depend on in a set's order, so the first tasks sent would be any of one merge's
        # inputs, not the largest.
        level = client.compute(level)
    merge = dask.delayed(_merge, pure=True)
    # Above every trail's priority: a merge runs as soon as its parts are in.
    with dask.annotate(priority=len(pairs) + 1):
        while len(level) > 1:
            level = [merge(level[i:i + _SPLIT_EVERY]) for i in range(0, len(level), _SPLIT_EVERY)]
    top = level[0]
    if isinstance(top, Delayed):
        (records, selected, events, users, hosts, data), = dask.compute(top, scheduler=scheduler)
    else:
        # One trail on a distributed client: its future.
        records, selected, events, users, hosts, data = top.result()
    all_hosts = {h: 0 for h, _ in pairs}
    all_hosts.update(hosts)
    return TrailFleet(data=data, events=events, users=users, hosts=all_hosts,
                      records=records, selected=selected)

"""arbiter.dask on a generated fleet (60 hosts, every log format): a LocalCluster with two
worker processes gives the same aggregate as the single-process (synchronous) run, and the
same as the `arbiter why` binary over all the logs (rules text from --allow; per-host,
per-rule and verdict counts from --json)."""

import json
from collections import Counter

import pytest

pytest.importorskip("dask.bag")
distributed = pytest.importorskip("distributed")

import arbiter.dask  # noqa: E402
from arbiter.denials import LogError  # noqa: E402
from denial_logs import FORMATS, generate, run_cli  # noqa: E402

HOSTS = 60


@pytest.fixture(scope="module")
def fleet(debian_path, tmp_path_factory):
    d = tmp_path_factory.mktemp("fleet")
    logs = {}
    for i in range(HOSTS):
        fmt = FORMATS[i % len(FORMATS)]
        logs[f"host{i:02d}"] = generate(debian_path, fmt, 40 + (i * 37) % 200, 100 + i % 17,
                                        d / f"host{i:02d}.log")
    return logs


def cli_aggregate(debian_path, logs):
    paths = list(logs.values())
    host_of = {str(p): h for h, p in logs.items()}
    hosts, rules, verdicts = Counter({h: 0 for h in logs}), Counter(), Counter()
    for line in run_cli("--json", debian_path, *paths).splitlines():
        r = json.loads(line)
        hosts[host_of[r["source"]]] += 1
        verdicts[r["verdict"] or "UNKNOWN"] += 1
        if r["denied"]:
            rules[(r["scontext"].split(":")[2], r["tcontext"].split(":")[2], r["tclass"])] += 1
    return run_cli("--allow", debian_path, *paths), dict(hosts), dict(rules), dict(verdicts)


class PriorityRecorder(distributed.diagnostics.plugin.SchedulerPlugin):
    """The scheduler's priority of every task it queues or sends to a worker, and the tasks
    it sends to workers, in order."""

    name = "arbiter-test-priorities"

    def __init__(self, scheduler):
        self.scheduler = scheduler
        self.priorities = {}
        self.sent = []

    def transition(self, key, start, finish, *args, **kwargs):
        if finish in ("queued", "processing") and key in self.scheduler.tasks:
            self.priorities[key] = self.scheduler.tasks[key].priority
        if finish == "processing":
            self.sent.append(key)


def test_two_worker_cluster_equals_single_process_and_the_cli(debian_path, fleet):
    single = arbiter.dask.explain_fleet(fleet, debian_path, scheduler="sync", blocksize="16KiB")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    try:
        with distributed.Client(cluster) as client:
            client.run_on_scheduler(
                lambda dask_scheduler: dask_scheduler.add_plugin(PriorityRecorder(dask_scheduler)))
            multi = arbiter.dask.explain_fleet(fleet, debian_path, blocksize="16KiB")
            priorities, sent = client.run_on_scheduler(
                lambda dask_scheduler: (dask_scheduler.plugins[PriorityRecorder.name].priorities,
                                        dask_scheduler.plugins[PriorityRecorder.name].sent))
            # No more tasks than the client merges itself: no tree, the blobs gathered.
            few = arbiter.dask.explain_fleet(fleet, debian_path, blocksize="16KiB", partitions=5)
    finally:
        cluster.close()
    assert multi == single and few == single
    # The map tasks reach the scheduler in log order of priority, so its queue hands them
    # out largest first (Dask's graph order alone grouped them by the merge they feed, the
    # largest last); every merge above every map task, so it runs once its blobs are in.
    maps = sorted((k[1], p) for k, p in priorities.items()
                  if isinstance(k, tuple) and "fleet-digest" in k[0])
    merges = [p for k, p in priorities.items() if not isinstance(k, tuple)]
    assert [i for i, _ in maps] == list(range(16)) and len(merges) == 2
    assert all(a[1] < b[1] for a, b in zip(maps, maps[1:]))
    assert max(merges) < maps[0][1]
    # The tasks sent as the graph arrives (two per one-thread worker) are the four largest,
    # not any four of one merge's inputs.
    first = [k[1] for k in sent if isinstance(k, tuple)][:4]
    assert first == [0, 1, 2, 3]
    # Many small tasks (a merge tree on the workers) and one task: the same aggregate.
    assert arbiter.dask.explain_fleet(fleet, debian_path, scheduler="sync", blocksize="5KiB",
                                      partitions=37) == single
    assert arbiter.dask.explain_fleet(fleet, debian_path, scheduler="sync",
                                      partitions=1) == single
    allow, hosts, rules, verdicts = cli_aggregate(debian_path, fleet)
    assert single.allow == allow and allow.count("allow ") > 10
    assert single.hosts == hosts and len(hosts) == HOSTS
    assert single.rules == rules
    assert single.verdicts == verdicts and len(verdicts) >= 3


def test_generation_options_equal_the_cli(debian_path, fleet):
    sub = dict(list(fleet.items())[:10])
    got = arbiter.dask.explain_fleet(sub, debian_path, scheduler="sync", blocksize="8KiB",
                                     module="fleet", requires=True, dontaudit=True, xperms=True)
    assert got.allow == run_cli("--allow", "-m", "fleet", "-r", "-D", "-x", debian_path,
                                *sub.values())


def test_partitions_cover_every_byte_once_largest_first(tmp_path):
    """The client's cut: every byte of every log in exactly one range, in log order; no
    range over blocksize; empty logs left out; the shares equal within a round of as many
    tasks as threads (to a byte), each round's no larger than the one before, and the
    first round's SPREAD times the last's (to a byte each); equal shares when there are no
    more tasks than threads."""
    sizes = [1000, 0, 1, 4097, 333, 0, 12000]
    paths = []
    for i, n in enumerate(sizes):
        p = tmp_path / f"log{i}"
        p.write_bytes(b"x" * n)
        paths.append(str(p))
    total = sum(sizes)
    for count, blocksize, threads in [(1, 1 << 20, 1), (3, 1000, 1), (4, 7, 4), (8, 4096, 2),
                                      (16, 4096, 2), (50, 100, 3), (9, 64, 2),
                                      (20000, 64, 2)]:
        parts = arbiter.dask._partitions(paths, count, blocksize, threads)
        assert len(parts) == min(count, total)
        flat = [r for part in parts for r in part]
        for path, n in zip(paths, sizes):
            mine = [(o, ln) for p, o, ln in flat if p == path]
            assert sum(ln for _, ln in mine) == n
            assert all(a[0] + a[1] == b[0] for a, b in zip(mine, mine[1:]))
            assert not mine or mine[0][0] == 0
        assert all(0 < ln <= blocksize for _, _, ln in flat)
        shares = [sum(ln for _, _, ln in part) for part in parts]
        rounds = [shares[i:i + threads] for i in range(0, len(shares), threads)]
        assert all(max(r) - min(r) <= 1 for r in rounds)
        assert all(min(a) + 1 >= max(b) for a, b in zip(rounds, rounds[1:]))
        if count <= threads:
            assert max(shares) - min(shares) <= 1
        elif min(rounds[-1]) > 100:
            assert abs(max(rounds[0]) / max(rounds[-1]) - arbiter.dask.SPREAD) < 0.5
    # A larger fleet: 16 tasks over 2 threads, the last round a sixteenth of the first.
    bounds = arbiter.dask._bounds(10**9, 16, 2)
    shares = [b - a for a, b in zip(bounds, bounds[1:])]
    assert sum(shares) == 10**9 and shares[0] == shares[1] > shares[2]
    assert round(shares[0] / shares[-1]) == arbiter.dask.SPREAD


def test_bad_input(debian_path, tmp_path):
    with pytest.raises(LogError):
        arbiter.dask.explain_fleet({"h": tmp_path / "missing.log"}, debian_path, scheduler="sync")
    with pytest.raises(TypeError):
        arbiter.dask.explain_fleet({"h": tmp_path}, 42, scheduler="sync")
    with pytest.raises(TypeError):
        arbiter.dask.explain_fleet(str(tmp_path), debian_path, scheduler="sync")
    with pytest.raises(ValueError):
        arbiter.dask.explain_fleet({}, debian_path, scheduler="sync")
    log = tmp_path / "h.log"
    log.write_text("x\n")
    with pytest.raises(ValueError):
        arbiter.dask.explain_fleet({"h": log}, debian_path, scheduler="sync", partitions=0)

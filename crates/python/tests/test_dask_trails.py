"""arbiter.dask.trails_fleet on a fleet of 50 hosts' BSM trails (copies of the repository's
trails, damaged ones included): a LocalCluster with two worker processes gives the same
result as the single-process run; the selected trail is byte-identical to one
`arbiter bsm reduce` over every trail, and the per-event / per-user counts are those of the
records of that trail."""

import shutil
import subprocess
from collections import Counter

import pytest

pytest.importorskip("dask.bag")
distributed = pytest.importorskip("distributed")

import arbiter.dask  # noqa: E402
from arbiter import bsm  # noqa: E402
from conftest import REPO, arbiter_bin  # noqa: E402

DATA = REPO / "tests" / "data" / "bsm"
ETC = DATA / "etc"
SOURCES = [DATA / "synthetic" / n for n in ("small.bsm", "errno.bsm", "edge.bsm")] + [
    DATA / "reference" / "execve-long-args.trail"]
OPTIONS = [[], ["-m", "AUE_EXECVE", "-m", "AUE_OPEN_RW", "-c", "lo"], ["-u", "1001"]]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    d = tmp_path_factory.mktemp("trails")
    trails = {}
    for i in range(50):
        src = SOURCES[i % len(SOURCES)]
        dst = d / f"host{i:02d}.bsm"
        shutil.copyfile(src, dst)
        trails[f"host{i:02d}"] = dst
    trails["host07"] = [trails["host07"], DATA / "synthetic" / "medium.bsm"]
    return trails


def counts(data):
    events, users = Counter(), Counter()
    for r in bsm.records(data, etc=ETC):
        if r.event is not None:
            events[r.event] += 1
            users[r.auid if r.auid is not None else -1] += 1
    return dict(events), dict(users)


class SentRecorder(distributed.diagnostics.plugin.SchedulerPlugin):
    """The tasks the scheduler sends to workers, in order, with their priorities."""

    name = "arbiter-test-trails-sent"

    def __init__(self, scheduler):
        self.scheduler = scheduler
        self.sent = []

    def transition(self, key, start, finish, *args, **kwargs):
        if finish == "processing" and key in self.scheduler.tasks:
            self.sent.append((key, self.scheduler.tasks[key].priority))


def test_two_worker_cluster_equals_single_process_and_the_cli(fleet):
    single = {tuple(o): arbiter.dask.trails_fleet(fleet, o, etc=ETC, scheduler="sync")
              for o in OPTIONS}
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    try:
        with distributed.Client(cluster) as client:
            client.run_on_scheduler(
                lambda dask_scheduler: dask_scheduler.add_plugin(SentRecorder(dask_scheduler)))
            multi = {tuple(o): arbiter.dask.trails_fleet(fleet, o, etc=ETC) for o in OPTIONS}
            sent = client.run_on_scheduler(
                lambda dask_scheduler: dask_scheduler.plugins[SentRecorder.name].sent)
            # One trail: its task's future, no merge.
            one = arbiter.dask.trails_fleet({"host07": fleet["host07"][1]}, [], etc=ETC)
    finally:
        cluster.close()
    assert multi == single
    assert one == arbiter.dask.trails_fleet({"host07": fleet["host07"][1]}, [], etc=ETC,
                                            scheduler="sync")
    # Largest trail first: the first tasks sent (two per one-thread worker) are the largest
    # trail (medium.bsm, the ninth) and the next largest (errno.bsm: hosts 1, 5 and 9), not
    # any of one merge's inputs; every merge's priority above every trail's.
    run = [(k, p) for k, p in sent if isinstance(k, tuple) and "trails-digest" in k[0]]
    first_run = [(k[1], p) for k, p in run if k[0] == run[0][0][0]]
    assert len(first_run) == 51
    assert [i for i, _ in first_run[:4]] == [8, 1, 5, 10]
    merges = [p for k, p in sent if not isinstance(k, tuple)]
    # (Dask's priorities sort lowest first: the user's priority negated.)
    assert merges and max(merges) < min(p for _, p in first_run)
    paths = [p for v in fleet.values() for p in (v if isinstance(v, list) else [v])]
    b = arbiter_bin()
    for o in OPTIONS:
        got = single[tuple(o)]
        if b is None:
            assert got.data == bsm.auditreduce(paths, o, etc=ETC).data
        else:
            cli = subprocess.run([b, "bsm", "reduce", "--etc", str(ETC), *o, *map(str, paths)],
                                 capture_output=True, timeout=120)
            assert got.data == cli.stdout
        assert (got.events, got.users) == counts(got.data)
        assert got.selected == sum(got.hosts.values()) and len(got.hosts) == 50
    # Records after an undecodable one in its file are dropped, as auditreduce drops them.
    assert single[()].records > single[()].selected > 20000
    assert 0 < single[("-u", "1001")].selected < single[()].selected


def test_bad_input(fleet, tmp_path):
    with pytest.raises(ValueError):
        arbiter.dask.trails_fleet(fleet, ["-Q"], scheduler="sync")
    with pytest.raises(bsm.TrailError):
        arbiter.dask.trails_fleet({"h": tmp_path / "missing.bsm"}, scheduler="sync")
    with pytest.raises(TypeError):
        arbiter.dask.trails_fleet(str(tmp_path), scheduler="sync")
    with pytest.raises(ValueError):
        arbiter.dask.trails_fleet({}, scheduler="sync")

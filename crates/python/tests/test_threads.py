"""One Server and one Avc shared by threads that query them while another thread reloads
the policy and flips booleans: every answer must be one a consistent policy state gives,
and nothing may raise or crash."""

import threading

import arbiter
from conftest import DEBIAN, DEBIAN_MLS

RELOADS = 6


def workload():
    """(policies to alternate, booleans to flip together, queries)."""
    if DEBIAN.exists() and DEBIAN_MLS.exists():
        policies = [arbiter.Policy.open(DEBIAN), arbiter.Policy.open(DEBIAN_MLS)]
        flips = ["use_nfs_home_dirs", "httpd_enable_homedirs"]
        httpd = "system_u:system_r:httpd_t:s0"
        contexts = [httpd, "user_u:user_r:user_t:s0", "system_u:object_r:autofs_t:s0",
                    "system_u:object_r:shadow_t:s0", "system_u:object_r:etc_t:s0",
                    "user_u:object_r:user_home_t:s0"]
    else:
        policies = [arbiter.Policy.builtin(), arbiter.Policy.builtin()]
        flips = ["httpd_enable_homedirs"]
        contexts = ["system_u:system_r:httpd_t:s0", "user_u:user_r:user_t:s0",
                    "user_u:object_r:user_home_t:s0", "system_u:object_r:shadow_t:s0",
                    "system_u:object_r:etc_t:s0"]
    queries = [(s, t, c) for s in contexts for t in contexts for c in ("file", "dir", "process")]
    return policies, flips, queries


def expected_answers(policies, flips, queries):
    """For each query, the answers every (policy, boolean value) state gives."""
    allowed = {q: set() for q in queries}
    for p in policies:
        for value in (False, True):
            srv = arbiter.Server(p)
            srv.set_booleans({b: value for b in flips})
            for q, a in zip(queries, srv.compute_av_many(queries)):
                allowed[q].add(a)
    return allowed


def test_threads_query_while_policy_reloads_and_booleans_flip():
    policies, flips, queries = workload()
    allowed = expected_answers(policies, flips, queries)
    srv = arbiter.Server(policies[0])
    avc = arbiter.Avc(srv, slots=64, threshold=128)
    done = threading.Event()
    errors, bad, counts = [], [], {}

    def run(name, body):
        def loop():
            n, last_seqno = 0, 0
            try:
                while not done.is_set():
                    seqno = body()
                    if seqno is not None:
                        if seqno < last_seqno:
                            bad.append((name, "seqno went back", last_seqno, seqno))
                        last_seqno = seqno
                    n += 1
            except BaseException as e:  # noqa: BLE001 - any failure is reported
                errors.append((name, repr(e)))
            counts[name] = n
        return threading.Thread(target=loop, name=name)

    def server_single():
        for q in queries:
            d = srv.compute_av(*q)
            if d.as_tuple() not in allowed[q]:
                bad.append(("server", q, d.as_tuple()))
            srv.check(q[0], q[1], q[2], "getattr")
        return d.seqno

    def avc_single():
        for q in queries:
            d = avc.compute_av(*q)
            if d.as_tuple() not in allowed[q]:
                bad.append(("avc", q, d.as_tuple()))
            avc.check(q[0], q[1], q[2], ["read", "getattr"])
        return d.seqno

    def batches():
        for q, a in zip(queries * 40, srv.compute_av_many(queries * 40)):
            if a not in allowed[q]:
                bad.append(("batch", q, a))
        srv.check_many([(s, t, c, "read") for s, t, c in queries] * 20)
        return None

    workers = [run("server", server_single), run("avc", avc_single), run("batch", batches)]
    for w in workers:
        w.start()
    value = False
    for i in range(RELOADS):
        srv.load_policy(policies[(i + 1) % len(policies)])
        value = not value
        srv.set_booleans({b: value for b in flips})
    done.set()
    for w in workers:
        w.join()

    assert not errors
    assert not bad, bad[:5]
    assert srv.seqno == 1 + 2 * RELOADS
    assert all(counts[w.name] > 0 for w in workers)
    # After the storm, the cache and the server agree with a fresh server.
    fresh = arbiter.Server(policies[RELOADS % len(policies)])
    fresh.set_booleans({b: value for b in flips})
    assert srv.compute_av_many(queries) == fresh.compute_av_many(queries)
    assert [avc.compute_av(*q).as_tuple() for q in queries] == fresh.compute_av_many(queries)

//! The cache in front of the real security server, under concurrent load with boolean
//! commits (each a new policy sequence number): every answer a reader gets must equal the
//! uncached server's answer under the snapshot current at that moment, and never come
//! from a state older than one the reader has already seen.

use arbiter_avc::{Avc, AvcConfig};
use arbiter_decide::{ClassRef, SecurityServer, Sid};
use arbiter_policy::{ClassId, ValidPolicy, BUILTIN_POLICY};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The server's answer computed directly on one snapshot, bypassing every cache.
fn uncached(
    snap: &arbiter_decide::Snapshot,
    s: Sid,
    t: Sid,
    class: ClassRef,
) -> arbiter_decide::AvDecision {
    let sc = snap.sids().context(s).unwrap();
    let tc = snap.sids().context(t).unwrap();
    arbiter_decide::internals::compute_av(snap, sc, tc, class.known().unwrap())
}

fn policy() -> ValidPolicy {
    ValidPolicy::from_bytes(BUILTIN_POLICY).expect("embedded test policy")
}

#[test]
fn cached_answers_equal_uncached_server_across_boolean_commits() {
    let server = Arc::new(SecurityServer::new(policy()));
    let contexts = [
        "system_u:system_r:httpd_t:s0",
        "user_u:user_r:user_t:s0",
        "staff_u:staff_r:staff_t:s0",
        "system_u:object_r:httpd_content_t:s0",
        "user_u:object_r:user_home_t:s0",
        "system_u:object_r:shadow_t:s0",
        "user_u:object_r:user_tmp_t:s0",
        "system_u:object_r:ssh_port_t:s0",
    ];
    let sids: Vec<Sid> = contexts
        .iter()
        .map(|c| server.context_to_sid(c).unwrap())
        .collect();
    let classes: Vec<ClassId> = ["file", "dir", "tcp_socket", "process"]
        .iter()
        .map(|c| server.known_class(c).unwrap())
        .collect();
    // A small table so that inserts, evictions and reclaims happen all the time.
    let config = AvcConfig {
        slots: 16,
        threshold: 24,
        ..AvcConfig::default()
    };
    let avc = Avc::new(server.clone(), config).unwrap();
    let bools: Vec<&str> = vec![
        "httpd_enable_homedirs",
        "httpd_can_network_connect",
        "user_exec_tmp",
        "secure_mode",
    ];
    let stop = AtomicBool::new(false);
    let iterations = if cfg!(debug_assertions) {
        20_000
    } else {
        200_000
    };

    std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let mut x = 0x2545_f491_4f6c_dd1du64;
            let mut commits = 0u64;
            // Some commits even if the readers finish before this thread runs; and an end
            // even if a reader panics (its assertion, not a hang, must be the failure).
            let started = std::time::Instant::now();
            while (!stop.load(Ordering::Relaxed) || commits < 100)
                && started.elapsed() < std::time::Duration::from_secs(120)
            {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                server
                    .set_booleans(&[(bools[(x % 4) as usize], x & 16 != 0)])
                    .unwrap();
                commits += 1;
                std::thread::yield_now();
            }
            commits
        });
        let readers: Vec<_> = (0..2)
            .map(|r| {
                let (server, avc, sids, classes) = (&server, &avc, &sids, &classes);
                scope.spawn(move || {
                    let mut x = 0x9e37_79b9u64 + r;
                    let mut last_seqno = 0;
                    let mut checked = 0usize;
                    for _ in 0..iterations {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let s = sids[(x % 8) as usize];
                        let t = sids[((x >> 8) % 8) as usize];
                        let c = classes[((x >> 16) % 4) as usize];
                        let d = avc.compute_av(s, t, c).expect("decision");
                        assert!(
                            d.seqno >= last_seqno,
                            "went back from seqno {last_seqno} to {}",
                            d.seqno
                        );
                        last_seqno = d.seqno;
                        // The decision must be the server's under the snapshot it names.
                        let snap = server.snapshot();
                        if snap.seqno == d.seqno {
                            let want = uncached(&snap, s, t, ClassRef::Known(c));
                            assert_eq!(
                                (d.allowed, d.auditallow, d.auditdeny),
                                (want.allowed, want.auditallow, want.auditdeny),
                                "cached answer differs from the server at seqno {}",
                                d.seqno
                            );
                            checked += 1;
                        }
                    }
                    checked
                })
            })
            .collect();
        let checked: usize = readers.into_iter().map(|h| h.join().unwrap()).sum();
        stop.store(true, Ordering::Relaxed);
        let commits = writer.join().unwrap();
        eprintln!("{checked} answers checked against the server, {commits} boolean commits");
        assert!(checked > 0 && commits > 0);
    });
}

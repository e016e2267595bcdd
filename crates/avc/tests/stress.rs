//! Readers hammering the cache while a writer inserts, evicts, bumps the policy sequence
//! number and resets. Every answer is checked against the fake source's answer for the
//! sequence number the answer claims, that number against what the reader had already
//! observed, and nothing is timed.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use arbiter_avc::fake::{FakeSource, RawAvc};
use arbiter_avc::{Avc, AvcConfig, HashKind};
use arbiter_decide::DecisionSource;
use arbiter_testkit::Rng;

fn key(i: u64) -> (u32, u32, u16) {
    (
        (i % 53) as u32 + 1,
        (i / 53 % 17) as u32 + 1,
        (i % 5) as u16 + 1,
    )
}

fn hammer(cfg: AvcConfig, keys: u64, readers: usize, iters: usize) {
    let src = FakeSource::new();
    let avc = Avc::new(&src, cfg).unwrap();
    let stop = AtomicBool::new(false);
    let mut hits_total = 0usize;
    std::thread::scope(|s| {
        let writer = s.spawn(|| {
            let mut i = 0u64;
            let mut bumps = 0u64;
            // At least 2000 writes even if the readers finish before this thread is
            // scheduled (the machine may be busy), so the assertion below cannot flake.
            while !stop.load(Relaxed) || i < 2000 {
                i += 1;
                let (a, b, c) = key(i.wrapping_mul(7919) % keys);
                avc.decision_r(a, b, c).unwrap();
                if i % 997 == 0 {
                    src.bump();
                    bumps += 1;
                }
                if i % 4999 == 0 {
                    avc.reset();
                }
            }
            (i, bumps)
        });
        let handles: Vec<_> = (0..readers)
            .map(|t| {
                let (avc, src) = (&avc, &src);
                s.spawn(move || {
                    let mut rng = Rng::new(t as u64 + 1);
                    let mut last = 0u64;
                    let mut hits = 0usize;
                    for it in 0..iters {
                        let (a, b, c) = key(rng.below(keys as usize) as u64);
                        let observed = src.seqno();
                        let r = if it % 8 == 0 {
                            avc.decision_r(a, b, c).ok()
                        } else {
                            avc.lookup_r(a, b, c)
                        };
                        if let Some(d) = r {
                            assert_eq!(
                                d,
                                src.expected(a, b, c, d.seqno),
                                "torn or wrong answer for {:?}",
                                (a, b, c)
                            );
                            assert!(
                                d.seqno >= observed,
                                "answer from seqno {} after observing {observed}",
                                d.seqno
                            );
                            assert!(
                                d.seqno >= last,
                                "answer from seqno {} after an answer from {last}",
                                d.seqno
                            );
                            assert!(d.seqno <= src.seqno());
                            last = d.seqno;
                            hits += 1;
                        }
                    }
                    hits
                })
            })
            .collect();
        for h in handles {
            hits_total += h.join().unwrap();
        }
        stop.store(true, Relaxed);
        let (writes, bumps) = writer.join().unwrap();
        assert!(writes > 0);
        eprintln!("writer: {writes} inserts/lookups, {bumps} seqno bumps; readers: {hits_total} answers checked");
    });
    assert!(
        hits_total > iters / 10,
        "too few answers checked: {hits_total}"
    );
    let st = avc.stats();
    assert!(st.lookups >= (readers * iters) as u64);
    assert!(avc.len() <= avc.config().threshold);
}

#[test]
fn stress_default_layout() {
    hammer(AvcConfig::for_threshold(128), 160, 3, 150_000);
}

#[test]
fn stress_tiny_table_constant_eviction() {
    // One bucket of four entries for eight keys: every cell is rewritten constantly while
    // half the lookups hit.
    hammer(
        AvcConfig::for_threshold(4).with_layout(4, 1, HashKind::Original),
        8,
        3,
        150_000,
    );
}

#[test]
fn stress_each_hash() {
    for h in HashKind::ALL {
        hammer(
            AvcConfig::for_threshold(64).with_layout(64, 16, h),
            80,
            2,
            40_000,
        );
    }
}

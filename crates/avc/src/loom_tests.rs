//! loom models of the slot protocol and of generations, on tables of one or two buckets
//! of two cells. Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p arbiter-avc --release --lib loom`.
//!
//! Shape of every model: mutations run on the main thread, readers in spawned threads.
//! loom 0.7's DPOR keeps only the last access per object, so a writer whose store follows
//! its own load of the same word (as `Cell::write` does with the version) hides a reader's
//! earlier load and the race is never explored (tokio-rs/loom#392 is a relative); with the
//! writer first in loom's default schedule, each reader load is checked against the
//! writer's last store and the interleavings are explored. Each model prints how many
//! executions it explored, and the models were checked to fail on a broken protocol (no
//! version re-check in the reader; the enforcing flag read before the generation; lookups
//! ignoring the source's sequence number).

use loom::sync::atomic::AtomicU64;
use loom::sync::Arc;
use loom::thread;
use std::sync::atomic::Ordering::SeqCst;

use crate::fake::RawAvc;
use crate::hash::HashKind;
use crate::stats::StatBlock;
use crate::table::{Inserted, Table};
use crate::{Avc, AvcConfig};
use arbiter_decide::{
    AccessVector, AvDecision, AvdFlags, ClassRef, DecideError, DecisionSource, Sid,
};

/// Default preemption bound: enough for the interleavings that matter here (a reader
/// preempted inside a cell read, a writer preempted inside a cell write or between the
/// state store and a cell write) while keeping each model well under a minute.
const PREEMPTIONS: usize = 3;

fn model<F: Fn() + Sync + Send + 'static>(f: F) {
    model_bounded(PREEMPTIONS, f)
}

fn model_bounded<F: Fn() + Sync + Send + 'static>(bound: usize, f: F) {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let runs = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(bound);
    b.check(move || {
        counter.fetch_add(1, Relaxed);
        f()
    });
    eprintln!(
        "loom: {} executions explored (preemption bound {bound})",
        runs.load(Relaxed)
    );
}

const CLASS: u32 = 1;

/// Payload words tying every word to the key and a version: any mix of two writes is
/// detectable.
fn payload(key: u32, v: u32) -> [u64; 3] {
    [
        0,
        ((key.wrapping_mul(3).wrapping_add(v)) as u64) << 32,
        key as u64 | (v as u64) << 32,
    ]
}

/// The version of a consistent snapshot for `key`, or None if torn.
fn version_of(key: u32, w: &[u64; 3]) -> Option<u32> {
    let v = (w[2] >> 32) as u32;
    (w[0] == key as u64 | (7u64 << 32)
        && w[2] as u32 == key
        && (w[1] >> 32) as u32 == key.wrapping_mul(3).wrapping_add(v))
    .then_some(v)
}

/// Runs `write` on a table prepared by `setup` while a reader looks up each key of
/// `keys`; every answer must be an untorn (key, payload) pair of a version at least as
/// new as the previous answer for the same key.
fn race_one_write(
    buckets: usize,
    threshold: usize,
    setup: &'static [u32],
    keys: &'static [u32],
    write: fn(&Table<3>, &StatBlock),
) {
    model(move || {
        let t: Arc<Table<3>> = Arc::new(Table::new(buckets, threshold, HashKind::Original, 0xffff));
        let st = StatBlock::default();
        for &k in setup {
            t.insert(1, k, 7, CLASS, payload(k, 0), &st);
        }
        let r = t.clone();
        let reader = thread::spawn(move || {
            let mut last = [0u32; 8];
            for &key in keys {
                if let Some((hi, words)) = r.lookup(1, key, 7, CLASS) {
                    assert_eq!(hi & 0xffff, CLASS);
                    let v = version_of(key, &words).expect("torn key/payload pair");
                    assert!(v >= last[key as usize], "version went back");
                    last[key as usize] = v;
                }
            }
        });
        write(&t, &st);
        reader.join().unwrap();
    });
}

#[test]
fn loom_reader_vs_insert() {
    race_one_write(1, 2, &[], &[1], |t, st| {
        assert!(matches!(
            t.insert(1, 1, 7, CLASS, payload(1, 0), st),
            Inserted::New { evicted: 0 }
        ));
    });
}

#[test]
fn loom_reader_vs_eviction_reusing_the_cell() {
    // Full table of two cells: inserting 3 evicts 1 (oldest) and takes its cell.
    race_one_write(1, 2, &[1, 2], &[1, 3], |t, st| {
        assert_eq!(
            t.insert(1, 3, 7, CLASS, payload(3, 0), st),
            Inserted::New { evicted: 1 }
        );
        assert!(t.lookup(1, 1, 7, CLASS).is_none());
    });
}

#[test]
fn loom_reader_vs_update_in_place() {
    race_one_write(1, 2, &[2], &[2, 2], |t, _| {
        assert!(t.update(1, 2, 7, CLASS, |hi, _| (hi, payload(2, 1))));
    });
}

#[test]
fn loom_reader_vs_eviction_moving_an_entry() {
    // Two buckets of two cells, home = parity of ssid: 2 and 4 fill bucket 0, 6 spills
    // into bucket 1 (probed from the back). Inserting 1 evicts 2 (oldest); the repair
    // moves 6 home into 2's cell; 1 takes bucket 1.
    race_one_write(2, 3, &[2, 4, 6], &[6], |t, st| {
        assert_eq!(
            t.insert(1, 1, 7, CLASS, payload(1, 0), st),
            Inserted::New { evicted: 1 }
        );
        for key in [4u32, 6, 1] {
            assert!(t.lookup(1, key, 7, CLASS).is_some(), "{key} lost");
        }
        assert_eq!(t.stats(1).longest_probe, 2, "6 moved home");
    });
}

#[test]
fn loom_two_readers_vs_eviction() {
    // Bound 2: three threads multiply the interleavings.
    model_bounded(2, || {
        let t: Arc<Table<3>> = Arc::new(Table::new(1, 2, HashKind::Original, 0xffff));
        let st = StatBlock::default();
        t.insert(1, 1, 7, CLASS, payload(1, 0), &st);
        t.insert(1, 2, 7, CLASS, payload(2, 0), &st);
        let readers: Vec<_> = [1u32, 3]
            .into_iter()
            .map(|key| {
                let r = t.clone();
                thread::spawn(move || {
                    if let Some((_, words)) = r.lookup(1, key, 7, CLASS) {
                        version_of(key, &words).expect("torn");
                    }
                })
            })
            .collect();
        t.insert(1, 3, 7, CLASS, payload(3, 0), &st);
        for r in readers {
            r.join().unwrap();
        }
    });
}

/// A source whose decisions are a pure function of (key, seqno), with a loom seqno.
struct LoomSource {
    seq: AtomicU64,
}

impl LoomSource {
    fn expected(ssid: u32, tsid: u32, tclass: u16, seqno: u64) -> AvDecision {
        let x = (ssid as u64) << 20
            ^ (tsid as u64) << 8
            ^ tclass as u64
            ^ seqno.wrapping_mul(0x9e37_79b9);
        AvDecision {
            allowed: AccessVector((x as u32) & !0x8000_0000),
            auditallow: AccessVector::NONE,
            auditdeny: AccessVector((x >> 7) as u32),
            seqno,
            flags: AvdFlags::NONE,
        }
    }
}

impl DecisionSource for LoomSource {
    fn compute_av(&self, ssid: Sid, tsid: Sid, class: ClassRef) -> Result<AvDecision, DecideError> {
        let c = class.known().map_or(0, |c| c.value());
        Ok(Self::expected(ssid.get(), tsid.get(), c, self.seqno()))
    }
    fn seqno(&self) -> u64 {
        self.seq.load(SeqCst)
    }
}

fn tiny() -> AvcConfig {
    AvcConfig {
        slots: 1,
        threshold: 2,
        xperm_slots: 1,
        xperm_threshold: 1,
        create_slots: 1,
        create_threshold: 1,
        ..AvcConfig::for_threshold(2)
    }
}

#[test]
fn loom_policy_change_never_returns_stale() {
    model(|| {
        let avc = Arc::new(
            Avc::new(
                LoomSource {
                    seq: AtomicU64::new(1),
                },
                tiny(),
            )
            .unwrap(),
        );
        let r = avc.clone();
        let reader = thread::spawn(move || {
            let observed = r.source().seqno();
            let mut last = 0;
            if let Some(d) = r.lookup_r(5, 6, 1) {
                assert_eq!(d, LoomSource::expected(5, 6, 1, d.seqno));
                assert!(d.seqno >= observed);
                last = d.seqno;
            }
            let observed = r.source().seqno();
            if let Some(d) = r.lookup_r(5, 6, 1) {
                assert_eq!(d, LoomSource::expected(5, 6, 1, d.seqno));
                assert!(
                    d.seqno >= observed.max(last),
                    "seqno {} after observing {observed}/{last}",
                    d.seqno
                );
            }
        });
        avc.decision_r(5, 6, 1).unwrap();
        avc.source().seq.store(2, SeqCst);
        avc.decision_r(5, 6, 1).unwrap();
        reader.join().unwrap();
        // Settled: the cache answers for seqno 2.
        assert_eq!(
            avc.lookup_r(5, 6, 1),
            Some(LoomSource::expected(5, 6, 1, 2))
        );
    });
}

#[test]
fn loom_reset_races_reader() {
    model(|| {
        let avc = Arc::new(
            Avc::new(
                LoomSource {
                    seq: AtomicU64::new(1),
                },
                tiny(),
            )
            .unwrap(),
        );
        avc.decision_r(5, 6, 1).unwrap();
        let r = avc.clone();
        let reader = thread::spawn(move || {
            for _ in 0..2 {
                if let Some(d) = r.lookup_r(5, 6, 1) {
                    assert_eq!(d, LoomSource::expected(5, 6, 1, 1));
                }
            }
        });
        avc.reset();
        avc.decision_r(5, 6, 1).unwrap();
        reader.join().unwrap();
        assert_eq!(avc.len(), 1);
    });
}

#[test]
fn loom_setenforce_drops_permissive_grants() {
    model(|| {
        let cfg = AvcConfig {
            enforcing: false,
            ..tiny()
        };
        let avc = Arc::new(
            Avc::new(
                LoomSource {
                    seq: AtomicU64::new(1),
                },
                cfg,
            )
            .unwrap(),
        );
        let denied_bit = 0x8000_0000; // never allowed by LoomSource
        avc.decision_r(5, 6, 1).unwrap();
        let a = avc.clone();
        let checker = thread::spawn(move || {
            // Permissive: passes, and records a grant in the cache, racing setenforce 1.
            let _ = a.has_perm_noaudit_r(5, 6, 1, denied_bit);
        });
        avc.set_enforcing(true);
        // Once enforcing, no permissive grant may be visible, whatever the interleaving.
        assert!(avc.has_perm_noaudit_r(5, 6, 1, denied_bit).is_err());
        checker.join().unwrap();
        assert!(avc.has_perm_noaudit_r(5, 6, 1, denied_bit).is_err());
    });
}

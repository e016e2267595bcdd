//! The event → class map, three ways: add-only, and read without locks in (b) and (c).
//!
//! * [`RwLockMap`]: FreeBSD before review D53176 — 251 chained buckets under a
//!   reader-writer lock that every lookup takes (two atomic read-modify-writes on a
//!   shared cache line per lookup).
//! * [`LockFreeMap`]: FreeBSD after D53176 — the same 251 chains, but readers walk them
//!   without any lock; writers serialise on a mutex and publish each new node with one
//!   release store of the bucket head. Nodes are never removed, so a reader can never
//!   see a freed node. Nodes live in a fixed arena indexed by `u32` (16-bit event numbers
//!   bound it at 65,536), which keeps the crate free of `unsafe`.
//! * [`FlatMap`]: a 65,536-entry array of atomic class words indexed by the event number:
//!   one relaxed load per lookup, no hashing, no chain.
//!
//! Who writes: any thread, via `insert` (serialised by a mutex in (a) and (b); a single
//!   atomic store in (c)). Who reads: any thread, via `class_of`; readers of (b) and (c)
//!   never take a lock and never write shared memory.

use crate::sync::{lock, AtomicU32, Mutex, Ordering, RwLock};

/// FreeBSD's `EVCLASSMAP_HASH_TABLE_SIZE`.
pub const BUCKETS: usize = 251;

/// An event → class map; unknown events have class 0, as in the kernel.
pub trait ClassMap: Send + Sync {
    /// The class of `event` (0 if never inserted).
    fn class_of(&self, event: u16) -> u32;
    /// Sets the class of `event` (replacing any earlier one, as `au_evclassmap_insert`).
    fn insert(&self, event: u16, class: u32);
    /// A short name for reports.
    fn design(&self) -> &'static str;
}

/// (a) Chained hash under a reader-writer lock.
#[derive(Debug)]
pub struct RwLockMap {
    buckets: RwLock<Vec<Vec<(u16, u32)>>>,
}

impl Default for RwLockMap {
    fn default() -> Self {
        RwLockMap {
            buckets: RwLock::new(vec![Vec::new(); BUCKETS]),
        }
    }
}

impl ClassMap for RwLockMap {
    #[inline]
    fn class_of(&self, event: u16) -> u32 {
        let g = match self.buckets.read() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        g[event as usize % BUCKETS]
            .iter()
            .find(|(e, _)| *e == event)
            .map_or(0, |(_, c)| *c)
    }
    fn insert(&self, event: u16, class: u32) {
        let mut g = match self.buckets.write() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        let b = &mut g[event as usize % BUCKETS];
        match b.iter_mut().find(|(e, _)| *e == event) {
            Some(slot) => slot.1 = class,
            None => b.insert(0, (event, class)),
        }
    }
    fn design(&self) -> &'static str {
        "rwlock-hash"
    }
}

/// One chain node of [`LockFreeMap`]. `next` is an arena index plus one (0 ends the chain).
#[derive(Debug)]
struct Node {
    event: AtomicU32,
    class: AtomicU32,
    next: AtomicU32,
}

/// (b) Chained hash with lock-free readers and mutex-serialised writers.
///
/// Protocol: a writer (holding `writer`) fills a fresh arena node (`event`, `class`, `next`
/// = current head, all relaxed: nobody can reach the node yet), then stores the bucket
/// head with `Release`. A reader loads the head with `Acquire`, which makes the node's
/// fields (and, transitively through earlier publications, every older node's) visible;
/// it then walks `next` links with `Acquire` loads. An update of an existing event stores
/// `class` with `Release`; readers load it with `Acquire`, seeing the old or new class.
#[derive(Debug)]
pub struct LockFreeMap {
    heads: Box<[AtomicU32]>,
    nodes: Box<[Node]>,
    writer: Mutex<u32>,
}

impl LockFreeMap {
    /// A map with room for `capacity` distinct events (65,536 covers every event number).
    pub fn with_capacity(capacity: usize) -> LockFreeMap {
        LockFreeMap {
            heads: (0..BUCKETS).map(|_| AtomicU32::new(0)).collect(),
            nodes: (0..capacity)
                .map(|_| Node {
                    event: AtomicU32::new(0),
                    class: AtomicU32::new(0),
                    next: AtomicU32::new(0),
                })
                .collect(),
            writer: Mutex::new(0),
        }
    }

    #[inline]
    fn find(&self, event: u16) -> Option<&Node> {
        // Acquire pairs with the writer's Release publication of the head.
        let mut i = self.heads[event as usize % BUCKETS].load(Ordering::Acquire);
        while i != 0 {
            let n = &self.nodes[i as usize - 1];
            if n.event.load(Ordering::Relaxed) == event as u32 {
                return Some(n);
            }
            // Acquire: the link was written before the node was published; Acquire keeps
            // the model simple and is free on x86 and cheap on ARM.
            i = n.next.load(Ordering::Acquire);
        }
        None
    }
}

impl Default for LockFreeMap {
    fn default() -> Self {
        LockFreeMap::with_capacity(65536)
    }
}

impl ClassMap for LockFreeMap {
    #[inline]
    fn class_of(&self, event: u16) -> u32 {
        // Acquire pairs with the Release of an in-place class update.
        self.find(event)
            .map_or(0, |n| n.class.load(Ordering::Acquire))
    }
    fn insert(&self, event: u16, class: u32) {
        let mut used = lock(&self.writer);
        if let Some(n) = self.find(event) {
            n.class.store(class, Ordering::Release);
            return;
        }
        let Some(n) = self.nodes.get(*used as usize) else {
            // Full arena: only possible with a capacity below the number of distinct
            // events; the event keeps class 0, as an unmapped kernel event does.
            return;
        };
        let head = &self.heads[event as usize % BUCKETS];
        // Relaxed: the node is unreachable until the Release store of `head` below.
        n.event.store(event as u32, Ordering::Relaxed);
        n.class.store(class, Ordering::Relaxed);
        n.next
            .store(head.load(Ordering::Relaxed), Ordering::Relaxed);
        *used += 1;
        head.store(*used, Ordering::Release);
    }
    fn design(&self) -> &'static str {
        "lockfree-hash"
    }
}

/// (c) A flat array of 65,536 atomic class words indexed by event number.
///
/// `insert` is a single store and `class_of` a single load, both `Relaxed`: the class word
/// is self-contained (no other memory is published through it), so any value a reader sees
/// is one some writer stored, which is all preselection needs.
#[derive(Debug)]
pub struct FlatMap {
    classes: Box<[AtomicU32]>,
}

impl Default for FlatMap {
    fn default() -> Self {
        FlatMap {
            classes: (0..65536).map(|_| AtomicU32::new(0)).collect(),
        }
    }
}

impl ClassMap for FlatMap {
    #[inline]
    fn class_of(&self, event: u16) -> u32 {
        self.classes[event as usize].load(Ordering::Relaxed)
    }
    fn insert(&self, event: u16, class: u32) {
        self.classes[event as usize].store(class, Ordering::Relaxed);
    }
    fn design(&self) -> &'static str {
        "flat-array"
    }
}

/// Fills `map` from `(event, class)` pairs in order (later pairs replace earlier ones).
pub fn load<M: ClassMap + ?Sized>(map: &M, pairs: &[(u16, u32)]) {
    for &(e, c) in pairs {
        map.insert(e, c);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering as O};
    use std::sync::Arc;

    fn designs() -> Vec<Box<dyn ClassMap>> {
        vec![
            Box::new(RwLockMap::default()),
            Box::new(LockFreeMap::default()),
            Box::new(FlatMap::default()),
        ]
    }

    #[test]
    fn unknown_events_have_class_zero_and_inserts_replace() {
        for m in designs() {
            assert_eq!(m.class_of(23), 0, "{}", m.design());
            m.insert(23, 0x4000_0080);
            m.insert(23 + BUCKETS as u16, 7);
            assert_eq!(m.class_of(23), 0x4000_0080, "{}", m.design());
            m.insert(23, 0x1000);
            assert_eq!(m.class_of(23), 0x1000, "{}", m.design());
            assert_eq!(m.class_of(23 + BUCKETS as u16), 7, "{}", m.design());
        }
    }

    #[test]
    fn every_event_number_round_trips_in_every_design() {
        for m in designs() {
            for e in 0..=u16::MAX {
                m.insert(e, (e as u32).wrapping_mul(2_654_435_761) | 1);
            }
            for e in 0..=u16::MAX {
                assert_eq!(
                    m.class_of(e),
                    (e as u32).wrapping_mul(2_654_435_761) | 1,
                    "{} {e}",
                    m.design()
                );
            }
        }
    }

    /// Readers race writers adding events: a reader sees either 0 (not yet added) or the
    /// final class, never anything else, and after the writers finish sees every class.
    #[test]
    fn readers_racing_additions_see_zero_or_the_class() {
        let maps: Vec<Arc<dyn ClassMap>> = vec![
            Arc::new(RwLockMap::default()),
            Arc::new(LockFreeMap::default()),
            Arc::new(FlatMap::default()),
        ];
        let class = |e: u16| (e as u32) << 8 | 0x5a;
        for m in maps {
            let done = Arc::new(AtomicBool::new(false));
            let readers: Vec<_> = (0..2)
                .map(|r| {
                    let (m, done) = (m.clone(), done.clone());
                    std::thread::spawn(move || {
                        let mut bad = 0u64;
                        let mut e: u16 = r;
                        while !done.load(O::Acquire) {
                            let c = m.class_of(e);
                            if c != 0 && c != class(e) {
                                bad += 1;
                            }
                            e = e.wrapping_add(7919);
                        }
                        bad
                    })
                })
                .collect();
            let writers: Vec<_> = (0..2u16)
                .map(|w| {
                    let m = m.clone();
                    std::thread::spawn(move || {
                        for e in (w..=u16::MAX).step_by(2) {
                            m.insert(e, class(e));
                        }
                    })
                })
                .collect();
            for w in writers {
                w.join().expect("writer");
            }
            done.store(true, O::Release);
            for r in readers {
                assert_eq!(r.join().expect("reader"), 0, "{}", m.design());
            }
            for e in 0..=u16::MAX {
                assert_eq!(m.class_of(e), class(e), "{}", m.design());
            }
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    /// Two writers add events to the same bucket while a reader looks both up: the reader
    /// sees 0 or the inserted class, and after joining both are present.
    #[test]
    fn loom_lockfree_concurrent_additions_same_bucket() {
        loom::model(|| {
            let m = Arc::new(LockFreeMap::with_capacity(3));
            let a = BUCKETS as u16 + 1;
            let (m1, m2, m3) = (m.clone(), m.clone(), m.clone());
            let w1 = loom::thread::spawn(move || m1.insert(1, 10));
            let w2 = loom::thread::spawn(move || m2.insert(a, 20));
            let r = loom::thread::spawn(move || {
                let c1 = m3.class_of(1);
                let c2 = m3.class_of(a);
                assert!(c1 == 0 || c1 == 10);
                assert!(c2 == 0 || c2 == 20);
            });
            w1.join().unwrap();
            w2.join().unwrap();
            r.join().unwrap();
            assert_eq!(m.class_of(1), 10);
            assert_eq!(m.class_of(a), 20);
        });
    }

    /// An update in place races a reader: old or new class, never a torn or zero value.
    #[test]
    fn loom_lockfree_update_in_place() {
        loom::model(|| {
            let m = Arc::new(LockFreeMap::with_capacity(2));
            m.insert(5, 1);
            let m1 = m.clone();
            let w = loom::thread::spawn(move || m1.insert(5, 2));
            let c = m.class_of(5);
            assert!(c == 1 || c == 2);
            w.join().unwrap();
            assert_eq!(m.class_of(5), 2);
        });
    }

    /// The flat array under a racing writer.
    #[test]
    fn loom_flat_concurrent_addition() {
        loom::model(|| {
            let m = Arc::new(FlatMapSmall::new());
            let m1 = m.clone();
            let w = loom::thread::spawn(move || m1.0.store(3, Ordering::Relaxed));
            let c = m.0.load(Ordering::Relaxed);
            assert!(c == 0 || c == 3);
            w.join().unwrap();
        });
    }

    /// One cell of the flat map (loom cannot model 65,536 atomics cheaply; each cell is
    /// independent, so one cell is the whole protocol).
    struct FlatMapSmall(AtomicU32);
    impl FlatMapSmall {
        fn new() -> Self {
            FlatMapSmall(AtomicU32::new(0))
        }
    }
}

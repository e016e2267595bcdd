//! Cache statistics without shared writes on the hit path.
//!
//! Each (thread, cache) pair owns a cache-line-aligned block of counters. Only the owning
//! thread writes its block, and it does so with a relaxed load and a relaxed store (no
//! read-modify-write: there is no other writer to race with); readers of the statistics
//! sum all blocks with relaxed loads. A hit therefore writes only memory no other core
//! touches, and the kernel's per-CPU `avc_cache_stats` semantics (lookups, hits =
//! lookups − misses, misses, allocations, reclaims, frees) are kept. Blocks outlive their
//! threads, so counts of finished threads stay in the sums.
//!
//! Finding the block: the first `FAST_SLOTS` threads to use a cache get a slot in an
//! array inside it, and a thread remembers its last (cache id, slot) in a plain
//! thread-local `Cell` (no destructor, constant-initialised, so reading it is a single
//! thread-pointer-relative load). A thread switching between caches, or beyond the first
//! `FAST_SLOTS`, goes through a thread-local list of its blocks instead. Cache ids are
//! never reused, so a remembered id can only match the live cache that issued it.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, Weak};

pub use crate::table::TableStats as HashStats;

/// Counter index in a [`StatBlock`].
#[derive(Copy, Clone, Debug)]
pub(crate) enum Counter {
    Lookups,
    Misses,
    Allocations,
    Reclaims,
    Frees,
    XpermLookups,
    XpermMisses,
    CreateLookups,
    CreateMisses,
}

const NCOUNTERS: usize = 9;

/// One thread's counters for one cache. Aligned to two cache lines so that neighbouring
/// blocks (and the adjacent-line prefetcher) never make two threads share a line.
#[repr(align(128))]
#[derive(Default)]
pub(crate) struct StatBlock {
    c: [AtomicU64; NCOUNTERS],
}

/// Something counters can be added to: a thread's own block, or a cache's registry (which
/// finds the calling thread's block).
pub(crate) trait Count {
    fn add(&self, c: Counter, n: u64);

    #[inline(always)]
    fn inc(&self, c: Counter) {
        self.add(c, 1);
    }
}

impl Count for StatBlock {
    /// Owner-only increment: load + store, not `fetch_add` (see the module header).
    #[inline(always)]
    fn add(&self, c: Counter, n: u64) {
        let a = &self.c[c as usize];
        a.store(a.load(Relaxed).wrapping_add(n), Relaxed);
    }
}

static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

/// Threads per cache with a block in the cache's own array (the fast path).
pub(crate) const FAST_SLOTS: usize = 64;

/// Where a thread's block for one cache lives.
enum Slot {
    /// Index into the cache's `fast` array.
    Fast(usize),
    /// A block of its own, also held by the cache's `shared` list.
    Shared(Arc<StatBlock>),
}

thread_local! {
    /// (cache id, fast slot) of the last cache this thread used through its fast slot.
    static LAST: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
    /// Every cache this thread used: id, liveness token, slot.
    static LOCAL: RefCell<Vec<(usize, Weak<()>, Slot)>> = const { RefCell::new(Vec::new()) };
}

/// The blocks of one cache.
pub(crate) struct Registry {
    id: usize,
    /// Dropped with the cache: lets threads forget entries of dead caches.
    alive: Arc<()>,
    fast: Box<[StatBlock]>,
    /// Next free `fast` slot (taken once per thread, never on a lookup).
    next_fast: AtomicUsize,
    shared: Mutex<Vec<Arc<StatBlock>>>,
}

impl Registry {
    pub(crate) fn new() -> Registry {
        Registry {
            id: NEXT_ID.fetch_add(1, Relaxed),
            alive: Arc::new(()),
            fast: (0..FAST_SLOTS).map(|_| StatBlock::default()).collect(),
            next_fast: AtomicUsize::new(0),
            shared: Mutex::new(Vec::new()),
        }
    }

    /// The calling thread's block when it is not the one its `LAST` cell remembers: looked
    /// up in (or added to) the thread's list, and remembered if it is a fast slot.
    #[cold]
    #[inline(never)]
    fn add_slow(&self, c: Counter, n: u64) {
        let slot = LOCAL.with(|l| {
            let mut v = l.borrow_mut();
            if let Some((_, _, slot)) = v.iter().find(|(id, _, _)| *id == self.id) {
                return match slot {
                    Slot::Fast(i) => Slot::Fast(*i),
                    Slot::Shared(b) => Slot::Shared(b.clone()),
                };
            }
            // First use of this cache by this thread; forget caches that are gone.
            v.retain(|(_, alive, _)| alive.strong_count() > 0);
            let i = self.next_fast.fetch_add(1, Relaxed);
            let slot = if i < FAST_SLOTS {
                Slot::Fast(i)
            } else {
                let b = Arc::new(StatBlock::default());
                self.shared
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(b.clone());
                Slot::Shared(b)
            };
            let copy = match &slot {
                Slot::Fast(i) => Slot::Fast(*i),
                Slot::Shared(b) => Slot::Shared(b.clone()),
            };
            v.push((self.id, Arc::downgrade(&self.alive), slot));
            copy
        });
        match slot {
            Slot::Fast(i) => {
                LAST.with(|cell| cell.set((self.id, i)));
                self.fast[i].add(c, n);
            }
            Slot::Shared(b) => b.add(c, n),
        }
    }

    fn sum(&self) -> [u64; NCOUNTERS] {
        let mut s = [0u64; NCOUNTERS];
        let shared = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        for b in self.fast.iter().chain(shared.iter().map(|b| &**b)) {
            for (acc, c) in s.iter_mut().zip(b.c.iter()) {
                *acc = acc.wrapping_add(c.load(Relaxed));
            }
        }
        s
    }

    /// Sums of all threads' counters.
    pub(crate) fn snapshot(&self) -> CacheStats {
        let s = self.sum();
        let get = |c: Counter| s[c as usize];
        CacheStats {
            lookups: get(Counter::Lookups),
            hits: get(Counter::Lookups).saturating_sub(get(Counter::Misses)),
            misses: get(Counter::Misses),
            allocations: get(Counter::Allocations),
            reclaims: get(Counter::Reclaims),
            frees: get(Counter::Frees),
            xperm_lookups: get(Counter::XpermLookups),
            xperm_misses: get(Counter::XpermMisses),
            create_lookups: get(Counter::CreateLookups),
            create_misses: get(Counter::CreateMisses),
        }
    }
}

impl Count for Registry {
    /// The fast path: one thread-local load, one compare, the owner-only increment.
    #[inline(always)]
    fn add(&self, c: Counter, n: u64) {
        let (id, slot) = LAST.with(Cell::get);
        if id == self.id {
            self.fast[slot].add(c, n);
        } else {
            self.add_slow(c, n);
        }
    }
}

/// Counters summed over all threads, the kernel's `/sys/fs/selinux/avc/cache_stats` plus
/// the side tables. `hits` is derived (`lookups − misses`), as the kernel prints it, which
/// is what lets a hit bump a single counter.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Access-vector lookups.
    pub lookups: u64,
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups that went to the security server.
    pub misses: u64,
    /// Entries inserted (all tables).
    pub allocations: u64,
    /// Entries evicted to respect a threshold or a full bucket window (all tables).
    pub reclaims: u64,
    /// Entries dropped: reclaims plus entries invalidated by a reset (all tables).
    pub frees: u64,
    /// Extended-permission lookups.
    pub xperm_lookups: u64,
    /// Extended-permission lookups that went to the server.
    pub xperm_misses: u64,
    /// Label lookups.
    pub create_lookups: u64,
    /// Label lookups that went to the server.
    pub create_misses: u64,
}

impl fmt::Display for CacheStats {
    /// The kernel's `cache_stats` layout (one row: the sum over threads).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "lookups hits misses allocations reclaims frees")?;
        writeln!(
            f,
            "{} {} {} {} {} {}",
            self.lookups, self.hits, self.misses, self.allocations, self.reclaims, self.frees
        )
    }
}

impl fmt::Display for HashStats {
    /// The kernel's `hash_stats` layout, plus the probe length.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "entries: {}", self.entries)?;
        writeln!(f, "buckets used: {}/{}", self.buckets_used, self.buckets)?;
        writeln!(f, "longest chain: {}", self.longest_chain)?;
        writeln!(f, "longest probe: {}", self.longest_probe)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn per_thread_blocks_sum() {
        let r = Arc::new(Registry::new());
        r.inc(Counter::Lookups);
        std::thread::scope(|s| {
            for _ in 0..3 {
                let r = &r;
                s.spawn(move || {
                    for _ in 0..1000 {
                        r.inc(Counter::Lookups);
                    }
                    r.inc(Counter::Misses);
                });
            }
        });
        let st = r.snapshot();
        assert_eq!(st.lookups, 3001);
        assert_eq!(st.misses, 3);
        assert_eq!(st.hits, 2998);
        assert_eq!(r.next_fast.load(Relaxed), 4);
    }

    #[test]
    fn more_threads_than_fast_slots() {
        let r = Registry::new();
        std::thread::scope(|s| {
            for _ in 0..FAST_SLOTS + 5 {
                s.spawn(|| {
                    for _ in 0..10 {
                        r.inc(Counter::Lookups);
                    }
                });
            }
        });
        assert_eq!(r.snapshot().lookups, 10 * (FAST_SLOTS as u64 + 5));
        assert_eq!(r.shared.lock().unwrap().len(), 5);
    }

    #[test]
    fn two_registries_in_one_thread() {
        let a = Registry::new();
        let b = Registry::new();
        for i in 0..10 {
            a.inc(Counter::Lookups);
            if i % 2 == 0 {
                b.inc(Counter::Lookups);
            }
        }
        assert_eq!(a.snapshot().lookups, 10);
        assert_eq!(b.snapshot().lookups, 5);
    }
}

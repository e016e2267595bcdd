//! The lock-free cache table: buckets of seqlock-protected cells.
//!
//! # Layout
//!
//! A table is a power-of-two array of buckets. A bucket is `WAYS` cells; a cell is one
//! *meta* word followed by `N` data words, all `AtomicU64`:
//!
//! ```text
//! meta     = hi:32 | version:32      version odd = a writer is inside the cell
//! words[0] = ssid | tsid << 32       key
//! words[1] = gen:32 | payload:32     gen = cache generation the entry belongs to
//! words[2..N]                        payload
//! ```
//!
//! `hi` carries the rest of the key (the class value, plus driver and base for extended
//! permissions; selected by the table's `key_mask`) and a few payload bits (decision
//! flags). A class value of 0 never names a class, so `hi & 0xffff == 0` marks a cell that
//! was never written or was cleared. For access vectors `N = 3`: a cell is 32 bytes and
//! a bucket 128 bytes (aligned), two cache lines.
//!
//! A key's *home* bucket is `hash(key)`; its entry lives in the home bucket or, when that
//! is full, in one of the last `SPILL` (2) cells of the next bucket. The probe order is
//! the home bucket front to back, then those cells **back to front**: a bucket's own
//! entries fill it from the front, spill-over from its predecessor from the back, so the
//! two rarely compete and a spilled entry is found after `WAYS + k` cells, `k` being its
//! rank among the spilled. A lookup therefore examines at most `WAYS + SPILL` = 6 entries
//! (three cache lines), hit or miss; a home bucket with more than six keys evicts within
//! its window instead of growing a chain. A lookup stops at the first match. Deleting is
//! just clearing a cell (no tombstones, no backward shifting); an entry moves only when an
//! eviction lets a spilled entry come closer to its home (`Table::repair`), by being
//! written to its new cell before its old one is cleared.
//!
//! # Protocol and orderings
//!
//! *Writers* (insert, in-place update, eviction, clearing) are serialised by the table's
//! mutex, which also guards the writer-private bookkeeping (`Writer`: per-cell insertion
//! stamps, the FIFO, the live count). Readers never touch that mutex or that bookkeeping.
//!
//! A writer changing a cell (`Cell::write`):
//! 1. `meta.store(old_hi | version+1, Relaxed)` — marks the cell busy;
//! 2. `fence(Release)` — orders (1) before every data store below, so that a reader whose
//!    data load sees a new value also sees the busy version or later on its re-check
//!    (fence-to-fence synchronisation with the reader's acquire fence);
//! 3. `words[i].store(new, Relaxed)` for each data word;
//! 4. `meta.store(new_hi | version+2, Release)` — publishes: a reader that loads this meta
//!    with Acquire sees all of (3).
//!
//! A reader (`Cell::read_if`), per cell of the window:
//! 1. `m1 = meta.load(Acquire)` — pairs with writer step 4, so the data loads below see at
//!    least the data of the version read; odd → the cell is busy, skip it;
//! 2. compare `hi` with the key, `words[0].load(Relaxed)` with the key — mismatch, skip
//!    (a torn key can only cause a spurious skip, never a false match: see 4);
//! 3. `words[1..].load(Relaxed)`;
//! 4. `fence(Acquire)` then `m2 = meta.load(Relaxed)` — if any load in (2)–(3) saw a value
//!    from a later write, the writer's release fence (step 2) synchronises with this fence
//!    and `m2` is that write's busy version or later: `m1 != m2`, the snapshot is dropped;
//! 5. `m1 == m2` (same even version) → the key and the payload were written together;
//!    the entry counts only if its `gen` equals the generation the caller loaded.
//!
//! A reader therefore only loads: no lock, no read-modify-write, no store. A busy or
//! changing cell reads as absent, and an absent entry is a miss, which is always safe
//! (the slow path recomputes and re-inserts under the mutex). Versions are 32 bits: a
//! reader would have to stall across 2^31 writes to one cell to be fooled (the kernel's
//! seqcounts make the same bet).
//!
//! # Generations
//!
//! Every entry carries the 32-bit generation it was inserted under; the owner publishes
//! the current generation separately ([`crate::Avc`] pairs it with the policy sequence
//! number). Invalidating everything is one store of a new generation: old cells become
//! invisible to readers at once and free to writers, which notice the new generation on
//! their next operation and forget their bookkeeping (`Writer::sync`). Only when the
//! generation counter wraps are the cells cleared physically (`Table::clear`).
//!
//! # Reclaim: FIFO by insertion age
//!
//! The table holds at most `threshold` live entries. Inserting into a full table evicts
//! the oldest-inserted entry (a FIFO kept by the writer); inserting into a full window
//! evicts the oldest entry of that window; an entry that outlived twice the table's cell
//! count in insertions is evicted when its FIFO slot is reused. All are O(1) amortised and
//! touch no reader state.
//!
//! Why not LRU or CLOCK: both need to learn that an entry was *used*, i.e. a store on the
//! hit path (a referenced bit, a list move), which is exactly what the lock-free hit must
//! not do — a shared store per hit bounces cache lines between cores. Insertion age is
//! known to the writer alone. The cost of ignoring recency: a hot entry is evicted once
//! per `threshold` insertions and comes back after one miss. The kernel's own reclaim
//! (whole chains from a rotating bucket index) is just as blind to recency, and also
//! blind to age; random eviction would be as cheap as FIFO but sometimes evicts an entry
//! just inserted.

use crate::hash::HashKind;
#[cfg(all(test, not(loom)))]
use crate::stats::StatBlock;
use crate::stats::{Count, Counter};
use crate::sync::{fence, lock, AtomicU64, CachePadded, Mutex};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

/// Cells per bucket. Two under loom, to keep the model small.
pub(crate) const WAYS: usize = if cfg!(all(loom, test)) { 2 } else { 4 };
/// Buckets a key may occupy: its home bucket and the next one.
pub(crate) const WINDOW: usize = 2;
// `Table::lookup` unrolls the window as home bucket + next bucket.
const _: () = assert!(WINDOW == 2);
/// Cells of the next bucket a key may spill into (its last ones): a lookup examines at
/// most `WAYS + SPILL` entries.
pub(crate) const SPILL: usize = if cfg!(all(loom, test)) { 1 } else { 2 };

const LOW32: u64 = 0xffff_ffff;

#[inline(always)]
fn pack(ssid: u32, tsid: u32) -> u64 {
    ssid as u64 | (tsid as u64) << 32
}

/// One seqlock-protected entry.
#[repr(C)]
pub(crate) struct Cell<const N: usize> {
    meta: AtomicU64,
    words: [AtomicU64; N],
}

impl<const N: usize> Cell<N> {
    fn new() -> Self {
        Cell {
            meta: AtomicU64::new(0),
            words: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// Reader side (see the module header): the validated `(hi, words)` of this cell if it
    /// holds key (`k` under `key_mask`, `kw`) in generation `gen`.
    #[inline(always)]
    fn read_if(&self, k: u32, key_mask: u32, kw: u64, gen: u32) -> Option<(u32, [u64; N])> {
        let m1 = self.meta.load(Acquire);
        if m1 & 1 != 0 || ((m1 >> 32) as u32 & key_mask) != k {
            return None;
        }
        if self.words[0].load(Relaxed) != kw {
            return None;
        }
        let mut w = [0u64; N];
        w[0] = kw;
        for (dst, src) in w.iter_mut().zip(self.words.iter()).skip(1) {
            *dst = src.load(Relaxed);
        }
        fence(Acquire);
        if self.meta.load(Relaxed) != m1 || w[1] as u32 != gen {
            return None;
        }
        Some(((m1 >> 32) as u32, w))
    }

    /// Writer side (caller holds the table mutex): replaces the cell's content.
    fn write(&self, hi: u32, words: &[u64; N]) {
        let m = self.meta.load(Relaxed);
        let v = m as u32;
        debug_assert!(v & 1 == 0, "cell written concurrently");
        self.meta
            .store((m & !LOW32) | v.wrapping_add(1) as u64, Relaxed);
        fence(Release);
        for (dst, src) in self.words.iter().zip(words.iter()) {
            dst.store(*src, Relaxed);
        }
        self.meta
            .store((hi as u64) << 32 | v.wrapping_add(2) as u64, Release);
    }

    /// Writer side: the cell's current content. Plain relaxed loads suffice because the
    /// caller holds the mutex and is thus the only writer.
    fn peek(&self) -> (u32, [u64; N]) {
        let hi = (self.meta.load(Relaxed) >> 32) as u32;
        (hi, std::array::from_fn(|i| self.words[i].load(Relaxed)))
    }
}

/// [`WAYS`] cells, aligned so that an access-vector bucket is exactly two cache lines.
#[repr(C, align(128))]
pub(crate) struct Bucket<const N: usize> {
    cells: [Cell<N>; WAYS],
}

/// Writer-private bookkeeping, behind the table mutex.
///
/// Insertion stamps are consecutive, so the FIFO is a ring indexed by stamp: `ring[s % R]`
/// is the cell of the entry stamped `s`, valid while `stamp[cell] == s`. Finding the oldest
/// entry walks `head` forward over stale stamps (amortised O(1)); moving an entry is one
/// store into the ring. `R` is at least twice the cell count; an entry still live when its
/// ring slot is needed again (it survived `R` insertions, which only happens while
/// window-full evictions keep the table under its threshold) is evicted then.
struct Writer {
    /// Generation the bookkeeping describes.
    gen: u32,
    /// Live entries in `gen`.
    live: usize,
    /// Per cell: insertion stamp of its live entry, 0 = free.
    stamp: Vec<u64>,
    /// Cell of each stamp, modulo the ring size.
    ring: Vec<u32>,
    /// Oldest stamp that may still be live.
    head: u64,
    /// Stamp of the next insertion.
    next_stamp: u64,
}

impl Writer {
    fn new(cells: usize) -> Writer {
        Writer {
            gen: 0,
            live: 0,
            stamp: vec![0; cells],
            ring: vec![0; (2 * cells).next_power_of_two()],
            head: 1,
            next_stamp: 1,
        }
    }

    #[inline]
    fn ring_slot(&self, s: u64) -> usize {
        (s as usize) & (self.ring.len() - 1)
    }

    /// Forgets everything (the cells are cleared or belong to an older generation).
    fn forget(&mut self) {
        self.live = 0;
        self.stamp.iter_mut().for_each(|s| *s = 0);
        self.head = self.next_stamp;
    }

    /// Brings the bookkeeping to generation `gen`. Returns false if `gen` is older than
    /// what the table already serves (a caller that loaded the generation before a reset):
    /// such an entry must not be written.
    fn sync(&mut self, gen: u32) -> bool {
        if gen == self.gen {
            return true;
        }
        // Serial-number comparison: generations only move forward, and after the counter
        // wraps (the owner clears the table and restarts at 1) the old values count as
        // older, not newer.
        if (gen.wrapping_sub(self.gen) as i32) < 0 {
            return false;
        }
        self.gen = gen;
        self.forget();
        true
    }
}

/// What [`Table::insert`] did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Inserted {
    /// A new entry; `evicted` older ones were dropped to make room.
    New { evicted: usize },
    /// The key was present and its payload replaced.
    Replaced,
    /// The caller's generation is no longer current: nothing written.
    Stale,
}

/// Occupancy figures of one table, the kernel's `avc_get_hash_stats` plus probe length.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TableStats {
    /// Live entries.
    pub entries: usize,
    /// Buckets that are the home of at least one live entry (the kernel's non-empty
    /// chains).
    pub buckets_used: usize,
    /// Total buckets.
    pub buckets: usize,
    /// Most live entries sharing one home bucket (the kernel's longest chain).
    pub longest_chain: usize,
    /// Most cells a lookup examines to find a live entry (1 = first cell of its home).
    pub longest_probe: usize,
}

/// A lock-free-read cache table with `N` data words per cell.
pub(crate) struct Table<const N: usize> {
    buckets: Box<[Bucket<N>]>,
    bits: u32,
    hash: HashKind,
    key_mask: u32,
    threshold: usize,
    writer: CachePadded<Mutex<Writer>>,
}

impl<const N: usize> Table<N> {
    /// `slots` buckets (a power of two), at most `threshold` entries. `key_mask` selects
    /// the key bits of a cell's `hi` word.
    pub(crate) fn new(slots: usize, threshold: usize, hash: HashKind, key_mask: u32) -> Self {
        assert!(N >= 2 && slots.is_power_of_two());
        let buckets: Box<[Bucket<N>]> = (0..slots)
            .map(|_| Bucket {
                cells: std::array::from_fn(|_| Cell::new()),
            })
            .collect();
        let cells = slots * WAYS;
        Table {
            buckets,
            bits: slots.trailing_zeros(),
            hash,
            key_mask,
            threshold: threshold.min(cells),
            writer: CachePadded(Mutex::new(Writer::new(cells))),
        }
    }

    #[inline(always)]
    fn home(&self, ssid: u32, tsid: u32, k: u32) -> usize {
        self.hash.bucket(ssid, tsid, k, self.bits)
    }

    #[inline(always)]
    fn window_len(&self) -> usize {
        WINDOW.min(self.buckets.len())
    }

    #[inline(always)]
    fn cell(&self, idx: usize) -> &Cell<N> {
        &self.buckets[idx / WAYS].cells[idx % WAYS]
    }

    /// Cell indices of the window of `home`, in probe order (see the module header).
    fn window(&self, home: usize) -> impl Iterator<Item = usize> + '_ {
        let mask = self.buckets.len() - 1;
        (0..self.window_len()).flat_map(move |i| {
            let b = (home + i) & mask;
            (0..if i == 0 { WAYS } else { SPILL })
                .map(move |w| b * WAYS + if i == 0 { w } else { WAYS - 1 - w })
        })
    }

    /// Reader: the entry for the key in generation `gen`, as `(hi, words)`.
    #[inline(always)]
    pub(crate) fn lookup(&self, gen: u32, ssid: u32, tsid: u32, k: u32) -> Option<(u32, [u64; N])> {
        let kw = pack(ssid, tsid);
        let mask = self.buckets.len() - 1;
        let home = self.home(ssid, tsid, k);
        for cell in &self.buckets[home].cells {
            if let Some(hit) = cell.read_if(k, self.key_mask, kw, gen) {
                return Some(hit);
            }
        }
        if mask == 0 {
            return None;
        }
        // Same order as `window`: the next bucket's spill cells, from the back.
        for cell in self.buckets[(home + 1) & mask]
            .cells
            .iter()
            .rev()
            .take(SPILL)
        {
            if let Some(hit) = cell.read_if(k, self.key_mask, kw, gen) {
                return Some(hit);
            }
        }
        None
    }

    fn matches(&self, idx: usize, k: u32, kw: u64) -> bool {
        let (hi, w) = self.cell(idx).peek();
        hi & self.key_mask == k && w[0] == kw
    }

    /// Writer: inserts or replaces the key's entry in generation `gen`. `hi` holds the key
    /// bits and payload bits; `payload[1]`'s low half must be zero (it receives `gen`);
    /// `payload[0]` is ignored (it receives the key).
    pub(crate) fn insert(
        &self,
        gen: u32,
        ssid: u32,
        tsid: u32,
        hi: u32,
        mut payload: [u64; N],
        stats: &impl Count,
    ) -> Inserted {
        let k = hi & self.key_mask;
        let kw = pack(ssid, tsid);
        payload[0] = kw;
        payload[1] = (payload[1] & !LOW32) | gen as u64;
        let mut w = lock(&self.writer);
        if !w.sync(gen) {
            return Inserted::Stale;
        }
        let home = self.home(ssid, tsid, k);
        let mut cells = [0usize; WAYS + SPILL];
        let mut n = 0;
        for idx in self.window(home) {
            cells[n] = idx;
            n += 1;
        }
        let window = &cells[..n];
        if let Some(&idx) = window
            .iter()
            .find(|&&i| w.stamp[i] != 0 && self.matches(i, k, kw))
        {
            self.cell(idx).write(hi, &payload);
            return Inserted::Replaced;
        }
        let mut evicted = 0;
        // Before choosing a cell: the eviction's repair may move an entry into any free
        // cell, including the one this insert would pick. One eviction covers both causes
        // (it advances the ring's head past at least one stamp).
        if w.live >= self.threshold || w.next_stamp - w.head == w.ring.len() as u64 {
            // Over the threshold, or the ring slot about to be reused may hold a live entry:
            // either way the oldest entry goes.
            evicted += self.evict_oldest(&mut w, stats);
        }
        let idx = match window.iter().find(|&&i| w.stamp[i] == 0) {
            Some(&i) => i,
            None => {
                // Window full: its oldest entry makes room (no repair: the cell is reused
                // at once).
                let victim = *window
                    .iter()
                    .min_by_key(|&&i| w.stamp[i])
                    .expect("window is never empty");
                self.free_cell(&mut w, victim, stats, false);
                evicted += 1;
                victim
            }
        };
        debug_assert!(w.next_stamp - w.head < w.ring.len() as u64);
        self.cell(idx).write(hi, &payload);
        let s = w.next_stamp;
        w.next_stamp += 1;
        w.stamp[idx] = s;
        let slot = w.ring_slot(s);
        w.ring[slot] = idx as u32;
        w.live += 1;
        stats.inc(Counter::Allocations);
        Inserted::New { evicted }
    }

    /// Writer: rewrites the live entry for the key in generation `gen` with `f(hi, words)`.
    /// Returns false if there is no such entry.
    pub(crate) fn update(
        &self,
        gen: u32,
        ssid: u32,
        tsid: u32,
        k: u32,
        f: impl FnOnce(u32, [u64; N]) -> (u32, [u64; N]),
    ) -> bool {
        let kw = pack(ssid, tsid);
        let w = lock(&self.writer);
        if w.gen != gen {
            return false;
        }
        let home = self.home(ssid, tsid, k);
        for idx in self.window(home) {
            if w.stamp[idx] != 0 && self.matches(idx, k, kw) {
                let (hi, words) = self.cell(idx).peek();
                let (hi2, mut words2) = f(hi, words);
                // Key and generation are not the updater's to change.
                words2[0] = kw;
                words2[1] = (words2[1] & !LOW32) | gen as u64;
                self.cell(idx).write((hi2 & !self.key_mask) | k, &words2);
                return true;
            }
        }
        false
    }

    fn free_cell(&self, w: &mut Writer, idx: usize, stats: &impl Count, repair: bool) {
        self.cell(idx).write(0, &[0; N]);
        w.stamp[idx] = 0;
        w.live -= 1;
        stats.inc(Counter::Reclaims);
        stats.inc(Counter::Frees);
        if repair {
            self.repair(w, idx);
        }
    }

    /// Evicts the oldest live entry; returns how many were evicted (0 or 1).
    fn evict_oldest(&self, w: &mut Writer, stats: &impl Count) -> usize {
        while w.head < w.next_stamp {
            let s = w.head;
            w.head += 1;
            let cell = w.ring[w.ring_slot(s)] as usize;
            if w.stamp[cell] == s {
                self.free_cell(w, cell, stats, true);
                return 1;
            }
        }
        0
    }

    /// Home bucket of the entry in cell `idx` (writer side).
    fn home_of(&self, idx: usize) -> usize {
        let (hi, words) = self.cell(idx).peek();
        self.home(words[0] as u32, (words[0] >> 32) as u32, hi & self.key_mask)
    }

    /// Moves the live entry in `from` to the free cell `to`. Readers may miss it while it
    /// moves (a miss is always safe) but never see it torn: both steps are ordinary cell
    /// writes.
    fn move_entry(&self, w: &mut Writer, from: usize, to: usize) {
        let (hi, words) = self.cell(from).peek();
        self.cell(to).write(hi, &words);
        self.cell(from).write(0, &[0; N]);
        let s = std::mem::take(&mut w.stamp[from]);
        w.stamp[to] = s;
        let slot = w.ring_slot(s);
        w.ring[slot] = to as u32;
    }

    /// Keeps probes short after cell `hole` was freed by an eviction: an entry that spilled
    /// from the hole's bucket into the next one comes home, or else an entry spilled into
    /// the hole's bucket from the previous one moves to the hole if that is shallower for
    /// it (spilled entries are probed back to front). Each move frees another cell, which
    /// is repaired in turn, a few steps at most. Without this, entries spilled while their
    /// home was full would stay deep after it empties, and the longest probe would drift to
    /// the window's end instead of tracking the longest chain.
    fn repair(&self, w: &mut Writer, mut hole: usize) {
        let nb = self.buckets.len();
        if nb < 2 {
            return;
        }
        let mask = nb - 1;
        for _ in 0..4 {
            let b = hole / WAYS;
            let next = (b + 1) & mask;
            let prev = (b + mask) & mask;
            // Deepest first: among the next bucket's spill cells, the front one is probed last.
            let back_home = (WAYS - SPILL..WAYS)
                .map(|k| next * WAYS + k)
                .find(|&c| w.stamp[c] != 0 && self.home_of(c) == b);
            let shallower = || {
                (0..hole % WAYS)
                    .map(|k| b * WAYS + k)
                    .find(|&c| w.stamp[c] != 0 && self.home_of(c) == prev && prev != b)
            };
            match back_home.or_else(shallower) {
                Some(c) => {
                    self.move_entry(w, c, hole);
                    hole = c;
                }
                None => break,
            }
        }
    }

    /// Writer: empties every cell (used when the generation counter wraps, and by tests).
    pub(crate) fn clear(&self) {
        let mut w = lock(&self.writer);
        for idx in 0..w.stamp.len() {
            let (hi, _) = self.cell(idx).peek();
            if hi != 0 {
                self.cell(idx).write(0, &[0; N]);
            }
        }
        w.gen = 0;
        w.forget();
    }

    /// Live entries in generation `gen` (writer view).
    pub(crate) fn live(&self, gen: u32) -> usize {
        let w = lock(&self.writer);
        if w.gen == gen {
            w.live
        } else {
            0
        }
    }

    /// Occupancy in generation `gen`, computed under the writer mutex so it is exact.
    pub(crate) fn stats(&self, gen: u32) -> TableStats {
        let w = lock(&self.writer);
        let nb = self.buckets.len();
        let mut st = TableStats {
            buckets: nb,
            ..Default::default()
        };
        if w.gen != gen {
            return st;
        }
        let mut chain = vec![0usize; nb];
        for idx in 0..w.stamp.len() {
            if w.stamp[idx] == 0 {
                continue;
            }
            let (hi, words) = self.cell(idx).peek();
            let home = self.home(words[0] as u32, (words[0] >> 32) as u32, hi & self.key_mask);
            chain[home] += 1;
            st.entries += 1;
            let probe = self
                .window(home)
                .position(|c| c == idx)
                .map_or(usize::MAX, |p| p + 1);
            st.longest_probe = st.longest_probe.max(probe);
        }
        st.buckets_used = chain.iter().filter(|&&c| c > 0).count();
        st.longest_chain = chain.iter().copied().max().unwrap_or(0);
        st
    }
}

#[cfg(all(test, not(loom)))]
impl<const N: usize> Table<N> {
    /// Checks the writer's bookkeeping against the cells (test only).
    fn check_invariants(&self, gen: u32) {
        let w = lock(&self.writer);
        assert_eq!(w.gen, gen);
        let live: Vec<usize> = (0..w.stamp.len()).filter(|&i| w.stamp[i] != 0).collect();
        assert_eq!(live.len(), w.live, "live count");
        assert!(w.live <= self.threshold, "threshold");
        assert!(w.next_stamp - w.head <= w.ring.len() as u64, "ring overrun");
        let mut keys = std::collections::HashSet::new();
        for &i in &live {
            let s = w.stamp[i];
            assert!(s >= w.head && s < w.next_stamp, "stamp outside the ring");
            assert_eq!(w.ring[w.ring_slot(s)] as usize, i, "ring slot of cell {i}");
            let (hi, words) = self.cell(i).peek();
            let k = hi & self.key_mask;
            assert!(keys.insert((k, words[0])), "duplicate key");
            assert_eq!(words[1] as u32, gen);
            let home = self.home(words[0] as u32, (words[0] >> 32) as u32, k);
            assert!(
                self.window(home).any(|c| c == i),
                "entry outside its window"
            );
            assert!(self
                .lookup(gen, words[0] as u32, (words[0] >> 32) as u32, k)
                .is_some());
        }
        for i in 0..w.stamp.len() {
            if w.stamp[i] == 0 {
                assert_eq!(
                    self.cell(i).peek().0 & 0xffff,
                    0,
                    "free cell {i} not cleared"
                );
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn words(a: u64) -> [u64; 3] {
        [0, a << 32, a]
    }

    #[test]
    fn cell_and_bucket_sizes() {
        assert_eq!(std::mem::size_of::<Cell<3>>(), 32);
        assert_eq!(std::mem::size_of::<Bucket<3>>(), 128);
        assert_eq!(std::mem::align_of::<Bucket<3>>(), 128);
        assert_eq!(std::mem::size_of::<Bucket<15>>(), 512);
    }

    #[test]
    fn insert_lookup_replace() {
        let st = StatBlock::default();
        let t: Table<3> = Table::new(4, 16, HashKind::Arbiter, 0xffff);
        assert_eq!(
            t.insert(1, 10, 20, 3, words(7), &st),
            Inserted::New { evicted: 0 }
        );
        let (hi, w) = t.lookup(1, 10, 20, 3).unwrap();
        assert_eq!(hi, 3);
        assert_eq!(w, [pack(10, 20), 7 << 32 | 1, 7]);
        assert!(t.lookup(2, 10, 20, 3).is_none(), "other generation");
        assert!(t.lookup(1, 10, 20, 4).is_none(), "other class");
        assert!(t.lookup(1, 20, 10, 3).is_none(), "swapped SIDs");
        assert_eq!(
            t.insert(1, 10, 20, 3 | 1 << 16, words(8), &st),
            Inserted::Replaced
        );
        let (hi, w) = t.lookup(1, 10, 20, 3).unwrap();
        assert_eq!((hi, w[2]), (3 | 1 << 16, 8));
        assert_eq!(t.live(1), 1);
    }

    #[test]
    fn stale_generation_is_refused() {
        let st = StatBlock::default();
        let t: Table<3> = Table::new(4, 16, HashKind::Arbiter, 0xffff);
        assert!(matches!(
            t.insert(5, 1, 1, 1, words(1), &st),
            Inserted::New { .. }
        ));
        assert_eq!(t.insert(4, 1, 2, 1, words(1), &st), Inserted::Stale);
        // A newer generation forgets the old entries.
        assert!(matches!(
            t.insert(6, 1, 3, 1, words(1), &st),
            Inserted::New { .. }
        ));
        assert_eq!(t.live(6), 1);
        assert!(t.lookup(6, 1, 1, 1).is_none());
    }

    #[test]
    fn threshold_is_respected_fifo() {
        let st = StatBlock::default();
        let t: Table<3> = Table::new(8, 10, HashKind::Arbiter, 0xffff);
        for i in 0..100u32 {
            t.insert(1, i, i + 1, 1, words(i as u64), &st);
            assert!(t.live(1) <= 10);
        }
        assert_eq!(t.live(1), 10);
        // The most recent insertion is always present.
        assert!(t.lookup(1, 99, 100, 1).is_some());
        let s = t.stats(1);
        assert_eq!(s.entries, 10);
        assert!(s.longest_probe <= WAYS + SPILL);
    }

    #[test]
    fn window_full_evicts_within_window() {
        let st = StatBlock::default();
        // One bucket: window = 1 bucket of WAYS cells.
        let t: Table<3> = Table::new(1, 4, HashKind::Original, 0xffff);
        for i in 0..(WAYS as u32 + 3) {
            t.insert(1, i, 0, 1, words(0), &st);
        }
        assert_eq!(t.live(1), WAYS.min(4));
        let s = t.stats(1);
        assert_eq!(
            (s.buckets, s.buckets_used, s.longest_chain),
            (1, 1, WAYS.min(4))
        );
    }

    #[test]
    fn spilled_entry_comes_home_and_keeps_its_age() {
        let st = StatBlock::default();
        // Original hash, two buckets: the home is the parity of ssid (tsid << 2 and
        // class << 4 are even).
        let t: Table<3> = Table::new(2, 5, HashKind::Original, 0xffff);
        for ssid in [2, 4, 6, 8, 10] {
            t.insert(1, ssid, 0, 1, words(ssid as u64), &st);
        }
        // 10 spilled into bucket 1's last cell, the first one probed there: probe WAYS + 1.
        assert_eq!(t.stats(1).longest_probe, WAYS + 1);
        // A sixth entry evicts the oldest (2); 10 moves home into its cell.
        t.insert(1, 1, 0, 1, words(1), &st);
        let s = t.stats(1);
        assert_eq!((s.entries, s.longest_probe), (5, WAYS));
        assert!(t.lookup(1, 2, 0, 1).is_none());
        for ssid in [4, 6, 8, 10, 1] {
            assert_eq!(t.lookup(1, ssid, 0, 1).unwrap().1[2], ssid as u64);
        }
        // FIFO order survives the move: 4, 6, 8 go before 10, then 1.
        let mut order = Vec::new();
        for ssid in [3, 5, 7, 9, 11] {
            t.insert(1, ssid, 0, 1, words(ssid as u64), &st);
            for old in [4, 6, 8, 10, 1] {
                if t.lookup(1, old, 0, 1).is_none() && !order.contains(&old) {
                    order.push(old);
                }
            }
        }
        assert_eq!(order, [4, 6, 8, 10, 1]);
    }

    #[test]
    fn fifo_ring_bounds_age_under_window_churn() {
        let st = StatBlock::default();
        // Original hash, four buckets: home = ssid & 3 (tsid = 0, class 16 adds 0 mod 4).
        let t: Table<3> = Table::new(4, 16, HashKind::Original, 0xffff);
        let ring = 2 * 4 * WAYS;
        // A quiet entry in bucket 2, then churn in bucket 0's window: window-full
        // evictions keep the table under its threshold, so only the ring's age cap can
        // retire the quiet entry.
        t.insert(1, 2, 0, 16, words(2), &st);
        for i in 0..(ring as u32 - 1) {
            t.insert(1, 4 * (i + 1), 0, 16, words(i as u64), &st);
            assert!(t.live(1) <= 2 * WAYS + 1);
        }
        assert!(t.lookup(1, 2, 0, 16).is_some(), "younger than the ring");
        t.insert(1, 4 * ring as u32, 0, 16, words(0), &st);
        assert!(t.lookup(1, 2, 0, 16).is_none(), "retired by the age cap");
        assert!(t.lookup(1, 4 * ring as u32, 0, 16).is_some());
    }

    #[test]
    fn random_churn_keeps_the_bookkeeping_consistent() {
        let st = StatBlock::default();
        let mut rng = arbiter_testkit::Rng::new(11);
        for (buckets, threshold, keyspace) in [
            (1, 4, 9),
            (2, 8, 40),
            (2, 5, 12),
            (4, 16, 200),
            (8, 20, 60),
            (8, 32, 60),
            (16, 64, 1000),
        ] {
            for hash in [HashKind::Original, HashKind::Arbiter] {
                let t: Table<3> = Table::new(buckets, threshold, hash, 0xffff);
                for step in 0..3000 {
                    let k = rng.below(keyspace) as u32;
                    // Skewed SIDs so that some homes overflow; with the original hash every
                    // third step uses keys that all share bucket 0 (ssid a multiple of 16,
                    // tsid even), so window-full evictions keep the table under its
                    // threshold and the FIFO ring's age cap does the reclaiming.
                    let (ssid, tsid) = if hash == HashKind::Original && step % 3 == 0 {
                        (16 * (k % 5), 2 * (k / 5))
                    } else {
                        (k % 7 * 2, k / 7)
                    };
                    if step % 7 == 6 {
                        t.update(1, ssid, tsid, 1, |hi, w| (hi, w));
                        t.check_invariants(1);
                    } else {
                        t.insert(1, ssid, tsid, 1, words(k as u64), &st);
                        t.check_invariants(1);
                        let (_, w) = t.lookup(1, ssid, tsid, 1).expect("just inserted");
                        assert_eq!(w[2], k as u64);
                    }
                }
            }
        }
    }

    #[test]
    fn update_in_place() {
        let st = StatBlock::default();
        let t: Table<3> = Table::new(4, 16, HashKind::Arbiter, 0xffff);
        t.insert(1, 1, 2, 9, words(1), &st);
        assert!(t.update(1, 1, 2, 9, |hi, mut w| {
            w[2] |= 0x10;
            (hi | 0xff << 16, w)
        }));
        let (hi, w) = t.lookup(1, 1, 2, 9).unwrap();
        assert_eq!((hi, w[2]), (9 | 0xff << 16, 0x11));
        assert!(!t.update(1, 1, 3, 9, |hi, w| (hi, w)));
        assert!(!t.update(2, 1, 2, 9, |hi, w| (hi, w)));
    }

    #[test]
    fn clear_empties() {
        let st = StatBlock::default();
        let t: Table<3> = Table::new(2, 8, HashKind::Arbiter, 0xffff);
        for i in 0..8 {
            t.insert(1, i, i, 1, words(1), &st);
        }
        t.clear();
        assert_eq!(t.live(1), 0);
        for i in 0..8 {
            assert!(t.lookup(1, i, i, 1).is_none());
        }
        assert!(matches!(
            t.insert(1, 1, 1, 1, words(1), &st),
            Inserted::New { .. }
        ));
    }
}

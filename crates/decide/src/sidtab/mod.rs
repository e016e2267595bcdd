//! The SID table: security identifiers ⇄ contexts, add-only, read on every check.
//!
//! # Numbering
//!
//! The policy's initial SIDs keep their numbers (`sid kernel` is SID 1, ...), as in the
//! kernel and libsepol. Contexts inserted later are numbered from one past the highest
//! initial SID, in insertion order — the same numbers libsepol 3.4's sidtab gives when
//! contexts are added in the same order (its `next_sid` starts after the initial SIDs), so
//! single-threaded differential tests can compare SIDs directly. Our SIDs are our own,
//! though: with concurrent inserts the order, hence the numbers, depend on timing, and a
//! SID means nothing outside the table that issued it.
//!
//! A context equal to an initial SID's context maps to that initial SID (the lowest one if
//! several initial SIDs share the context), as the kernel's `sidtab_context_to_sid` (which
//! hashes initial SIDs too) and libsepol's sidtab search do.
//!
//! # Concurrency
//!
//! Readers ([`SidTable::context`], [`SidTable::lookup`], [`SidTable::sid_for_str`]) take no
//! lock and perform only atomic loads: no read-modify-write, no reference counting, so
//! readers on different cores never contend for a cache line. Writers
//! ([`SidTable::insert`], [`SidTable::insert_str`]) serialise on one mutex.
//!
//! Who writes what, and why readers are safe:
//!
//! * **Entries** live in an `Arena`: chunks of doubling size (`BASE`, `2*BASE`, ...), each
//!   allocated once and never moved or freed before the table is dropped, so a `&Context`
//!   handed out stays valid for the table's lifetime. The writer (holding the mutex) writes
//!   the chunk pointer (Release), then the entry into its never-used slot, then stores the
//!   new length with Release. A reader Acquire-loads the length and reads only entries
//!   below it, so it synchronises with the store that published them and sees them fully
//!   written. Entries are immutable once published.
//! * **Hash indexes** (context → entry, string → entry) are open-addressing tables of
//!   `AtomicU64` slots: 0 = empty, else `hash tag << 32 | entry + 1`. A slot goes from 0 to
//!   its final value exactly once, stored with Release by the writer *after* the entry is
//!   published; a reader Acquire-loads the slot, so the entry it names is visible. Nothing
//!   is ever removed, so a probe that meets an empty slot may stop.
//! * **Growth**: when a table is half full, the writer builds a table twice the size,
//!   fills it, and publishes it with a Release store of the table pointer; readers
//!   Acquire-load the pointer. The old table stays allocated (readers may still be probing
//!   it) until the `SidTable` is dropped — the tables halve in size going back, so retired
//!   tables cost at most as much as the current one. A reader probing an old table can miss
//!   an entry inserted after the swap; that insert is concurrent with the read, which may
//!   then linearise before it. Writers re-check under the mutex, so a context never gets
//!   two SIDs.
//! * **Strings**: `insert_str(s, sid)` checks that `sid` is published before publishing the
//!   string, so whoever finds the string (Acquire on its slot) also finds its context:
//!   the context's publication happens-before the string's.
//! * **Writers' own reads** of `len`, chunk pointers, table pointers and slots need no
//!   ordering: only writers store them, and the mutex orders writers (`WriterLoad`).
//! * The chunk pointer's own Release/Acquire is belt and braces: every path to an entry
//!   already synchronises with a store made after the chunk was published.
//!
//! The atomics, the mutex and the cells come from the `sync` shim, which is `std` normally
//! and `loom` under `--cfg loom`; the loom models at the end of this file check the above.

use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::num::NonZeroU32;
use std::ptr;

use arbiter_policy::mls::Context;
use arbiter_policy::Policy;

use crate::error::{DecideError, Result};
use sync::{AtomicPtr, AtomicU64, AtomicUsize, Mutex, Ordering, Slot, WriterLoad};

mod arena;
mod hash;
mod index;
mod sync;

use arena::*;
pub use hash::{KeyedHasher, Keys};
use index::*;

/// A security identifier issued by a [`SidTable`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Sid(NonZeroU32);

impl Sid {
    /// From its number; `None` for 0 (the kernel's `SECSID_NULL`).
    #[inline]
    pub fn new(value: u32) -> Option<Sid> {
        NonZeroU32::new(value).map(Sid)
    }
    /// Its number.
    #[inline]
    pub fn get(self) -> u32 {
        self.0.get()
    }
}

impl std::fmt::Display for Sid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

struct CtxEntry {
    /// The context decisions use. For an entry invalid under this table's policy it is the
    /// `unlabeled` initial SID's context (or `None` without one), as the kernel's
    /// `sidtab_search` answers for a context a reload invalidated.
    context: Option<Context>,
    sid: Sid,
    /// Set when the SID's context is not valid under this table's policy: its text from
    /// the policy that issued it, kept so a later policy that defines it again can revive
    /// it (the kernel's `context.str`).
    invalid: Option<Box<str>>,
}

impl CtxEntry {
    /// What the entry denotes.
    fn view(&self) -> Option<SidEntry<'_>> {
        Some(match &self.invalid {
            None => SidEntry::Valid(self.context.as_ref()?),
            Some(text) => SidEntry::Invalid {
                text,
                stand_in: self.context.as_ref(),
            },
        })
    }
}

/// What a SID denotes under one policy (see [`SidTable::entry`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SidEntry<'a> {
    /// A context valid under the table's policy.
    Valid(&'a Context),
    /// A context a policy reload invalidated: its text under the policy that issued it,
    /// and the context decisions use instead (the `unlabeled` initial SID's, if any).
    Invalid {
        /// The context's text under the policy that issued the SID.
        text: &'a str,
        /// What decisions use in its place.
        stand_in: Option<&'a Context>,
    },
}

struct StrEntry {
    text: Box<str>,
    sid: Sid,
}

struct Writer {
    contexts: IndexWriter,
    strings: IndexWriter,
}

/// Whether writers first probe without the lock (the common case of an already known
/// context or string costs no lock). Off under loom: the probe is a reader's operation, which
/// the models exercise in reader threads, and loom's DPOR remembers only the last access to
/// an atomic, so a writer's own probe just before its store would hide from it the races
/// between that store and other threads' earlier probes.
const LOCK_FREE_PRECHECK: bool = !cfg!(loom);

/// Most strings a SID table caches. Strings are a cache (the context table is
/// the truth) and clients can spell one context many ways (`c0,c1,c2` and `c0.c2`, aliases),
/// so the cache is bounded; past the bound strings are simply parsed again.
pub const MAX_CACHED_STRINGS: usize = 1 << 20;

/// SIDs ⇄ contexts, plus a string → SID cache; see the module documentation.
pub struct SidTable {
    /// `(sid, arena index)` of each initial SID, ascending by SID. Immutable after
    /// construction. Sparse: the policy chooses the numbers.
    initial: Box<[(u32, u32)]>,
    /// The SID of the first dynamic entry (highest initial SID + 1; `u32::MAX + 1` when a
    /// policy numbers an initial SID `u32::MAX`, which leaves no room for others).
    first_dynamic: u64,
    keys: Keys,
    entries: Arena<CtxEntry>,
    by_context: Index,
    strings: Arena<StrEntry>,
    by_string: Index,
    writer: Mutex<Writer>,
}

impl SidTable {
    /// A table holding the policy's initial SIDs under their own numbers.
    pub fn new(policy: &Policy) -> SidTable {
        SidTable::with_initial(
            policy
                .ocontexts
                .initial_sids
                .iter()
                .filter_map(|i| Some((Sid::new(i.sid)?, i.context.clone()))),
        )
    }

    /// A table holding the given initial SIDs (for tests and tools; [`SidTable::new`]
    /// takes them from a policy). A SID listed twice keeps its first context.
    pub fn with_initial(initial: impl IntoIterator<Item = (Sid, Context)>) -> SidTable {
        SidTable::with_initial_from(initial, 0)
    }

    /// A table holding the given initial SIDs whose dynamic SIDs start at
    /// `first_dynamic` or just above the highest initial SID, whichever is higher (a reload
    /// keeps the numbering of the table it replaces).
    pub(crate) fn with_initial_from(
        initial: impl IntoIterator<Item = (Sid, Context)>,
        first_dynamic: u64,
    ) -> SidTable {
        let mut list: Vec<(Sid, Context)> = initial.into_iter().collect();
        list.sort_by_key(|(sid, _)| *sid); // stable: the first of duplicates stays first
        list.dedup_by_key(|(sid, _)| *sid);
        let max = list.last().map_or(0, |(sid, _)| sid.get());
        let (by_context, mut wc) = Index::new();
        let (by_string, ws) = Index::new();
        let keys = Keys::random();
        let entries: Arena<CtxEntry> = Arena::new();
        let mut initial = Vec::with_capacity(list.len());
        // Ascending SID order: the first (lowest) SID of a shared context is indexed.
        for (sid, context) in list {
            let hash = keys.hash_context(&context);
            // SAFETY: the table is not shared yet, so we are the (locked) writer; `i` came
            // from the index, which only names published entries.
            let known = unsafe {
                by_context.find_locked(tag(hash), |i| {
                    entries.get_published(i as usize).context.as_ref() == Some(&context)
                })
            }
            .is_some();
            // SAFETY: the table is not shared yet: we are the only writer.
            let idx = unsafe {
                entries.push(CtxEntry {
                    context: Some(context),
                    sid,
                    invalid: None,
                })
            };
            initial.push((sid.get(), idx as u32));
            if !known {
                // SAFETY: only writer (not shared yet); entry `idx` is published.
                unsafe { by_context.insert(&mut wc, tag(hash), idx as u32) };
            }
        }
        SidTable {
            initial: initial.into_boxed_slice(),
            first_dynamic: (u64::from(max) + 1).max(first_dynamic),
            keys,
            entries,
            by_context,
            strings: Arena::new(),
            by_string,
            writer: Mutex::new(Writer {
                contexts: wc,
                strings: ws,
            }),
        }
    }

    /// The context of `sid`, if this table issued it.
    #[inline]
    pub fn context(&self, sid: Sid) -> Option<&Context> {
        self.entry_of(sid)?.context.as_ref()
    }

    #[inline]
    fn entry_of(&self, sid: Sid) -> Option<&CtxEntry> {
        let v = u64::from(sid.get());
        let idx = if v < self.first_dynamic {
            let at = self
                .initial
                .binary_search_by_key(&sid.get(), |e| e.0)
                .ok()?;
            self.initial[at].1 as usize
        } else {
            self.initial.len() + usize::try_from(v - self.first_dynamic).ok()?
        };
        self.entries.get(idx)
    }

    /// What `sid` denotes, if this table issued it.
    pub fn entry(&self, sid: Sid) -> Option<SidEntry<'_>> {
        self.entry_of(sid)?.view()
    }

    /// The number of the first SID that is not an initial SID.
    pub fn first_dynamic(&self) -> u64 {
        self.first_dynamic
    }

    /// The dynamic (non-initial) entries from the `skip`-th on, in SID order, as far as
    /// they are published now.
    pub(crate) fn dynamic_entries(&self, skip: usize) -> impl Iterator<Item = (Sid, SidEntry<'_>)> {
        let start = self.initial.len() + skip;
        (start..self.entries.len()).filter_map(move |i| {
            let e = self.entries.get(i)?;
            Some((e.sid, e.view()?))
        })
    }

    /// Number of dynamic (non-initial) entries.
    pub(crate) fn dynamic_len(&self) -> usize {
        self.entries.len() - self.initial.len()
    }

    /// Appends the next dynamic SID with a context converted from another policy's table:
    /// `Ok(context)` for a context valid here, `Err(text)` for one that is not (then it
    /// answers as `stand_in`). Used only while building a table for a reload, before it is
    /// published; `sid` must be the next number in sequence.
    pub(crate) fn push_converted(
        &self,
        sid: Sid,
        converted: std::result::Result<Context, Box<str>>,
        stand_in: Option<&Context>,
    ) -> Result<()> {
        let mut w = crate::sync::lock(&self.writer);
        // SAFETY: we hold the writer lock.
        let next = unsafe { self.entries.writer_len() };
        let expected = self.first_dynamic + (next - self.initial.len()) as u64;
        if u64::from(sid.get()) != expected {
            return Err(DecideError::UnknownSid(sid.get()));
        }
        let (entry, hash) = match converted {
            Ok(context) => {
                let hash = self.keys.hash_context(&context);
                // A context two old SIDs converge on keeps the first SID in the index.
                // SAFETY: we hold the writer lock.
                let known = unsafe { self.find_context_locked(hash, &context) }.is_some();
                let entry = CtxEntry {
                    context: Some(context),
                    sid,
                    invalid: None,
                };
                (entry, (!known).then_some(hash))
            }
            Err(text) => {
                let entry = CtxEntry {
                    context: stand_in.cloned(),
                    sid,
                    invalid: Some(text),
                };
                (entry, None)
            }
        };
        // SAFETY: we hold the writer lock.
        let idx = unsafe { self.entries.push(entry) };
        if let Some(hash) = hash {
            // SAFETY: we hold the writer lock; entry `idx` is published by `push`.
            unsafe {
                self.by_context
                    .insert(&mut w.contexts, tag(hash), idx as u32)
            };
        }
        Ok(())
    }

    /// The SID of `context`, if it has one.
    #[inline]
    pub fn lookup(&self, context: &Context) -> Option<Sid> {
        self.find_context(self.keys.hash_context(context), context)
    }

    fn find_context(&self, hash: u64, context: &Context) -> Option<Sid> {
        let idx = self.by_context.find(tag(hash), |i| {
            // SAFETY: `i` came from an index slot loaded with Acquire, stored (Release)
            // after entry `i` was published.
            unsafe { self.entries.get_published(i as usize).context.as_ref() == Some(context) }
        })?;
        // SAFETY: as above.
        Some(unsafe { self.entries.get_published(idx as usize).sid })
    }

    /// [`SidTable::find_context`] for a writer.
    ///
    /// # Safety
    /// The caller holds the writer lock.
    unsafe fn find_context_locked(&self, hash: u64, context: &Context) -> Option<Sid> {
        // SAFETY: lock held (caller); entries named by the index are published.
        let idx = unsafe {
            self.by_context.find_locked(tag(hash), |i| {
                self.entries.get_published(i as usize).context.as_ref() == Some(context)
            })
        }?;
        // SAFETY: as above.
        Some(unsafe { self.entries.get_published(idx as usize).sid })
    }

    /// The SID of `context`, allocating the next one if the context is new. The context
    /// is stored as given: validate it first (the table does not know the policy).
    ///
    /// Fails with [`DecideError::SidTableFull`] when no SID number is left (after
    /// `u32::MAX` SIDs, as the kernel's sidtab fails past `SIDTAB_MAX`).
    pub(crate) fn insert(&self, context: Context) -> Result<Sid> {
        let hash = self.keys.hash_context(&context);
        if LOCK_FREE_PRECHECK {
            if let Some(sid) = self.find_context(hash, &context) {
                return Ok(sid);
            }
        }
        let mut w = crate::sync::lock(&self.writer);
        // Another writer may have inserted it since the lock-free probe.
        // SAFETY: we hold the writer lock.
        if let Some(sid) = unsafe { self.find_context_locked(hash, &context) } {
            return Ok(sid);
        }
        // SAFETY: we hold the writer lock.
        let next = unsafe { self.entries.writer_len() };
        let sid = u32::try_from(self.first_dynamic + (next - self.initial.len()) as u64)
            .ok()
            .and_then(Sid::new)
            .ok_or(DecideError::SidTableFull)?;
        // SAFETY: we hold the writer lock.
        let idx = unsafe {
            self.entries.push(CtxEntry {
                context: Some(context),
                sid,
                invalid: None,
            })
        };
        debug_assert_eq!(idx, next);
        // SAFETY: we hold the writer lock, and entry `idx` is published (by `push`), so
        // the index may name it.
        unsafe {
            self.by_context
                .insert(&mut w.contexts, tag(hash), idx as u32)
        };
        Ok(sid)
    }

    /// The SID cached for the exact string `s` (see [`SidTable::insert_str`]); no parsing.
    #[inline]
    pub fn sid_for_str(&self, s: &str) -> Option<Sid> {
        let hash = self.keys.hash_str(s);
        let idx = self.by_string.find(tag(hash), |i| {
            // SAFETY: `i` came from an index slot loaded with Acquire, stored (Release)
            // after string entry `i` was published.
            unsafe { &*self.strings.get_published(i as usize).text == s }
        })?;
        // SAFETY: as above.
        Some(unsafe { self.strings.get_published(idx as usize).sid })
    }

    /// Caches `s` as a spelling of `sid`'s context, so later [`SidTable::sid_for_str`]
    /// calls skip parsing. The caller vouches that `s` parses to that context (any string
    /// that parsed to it may be cached, canonical or not).
    ///
    /// Returns the SID the string now maps to: `sid`, or the SID already cached for `s`.
    /// When [`MAX_CACHED_STRINGS`] strings are cached, `s` is not cached and `sid` is
    /// returned. Fails if this table did not issue `sid`.
    pub(crate) fn insert_str(&self, s: String, sid: Sid) -> Result<Sid> {
        // Checked before publishing the string: whoever finds the string finds the context.
        if !matches!(self.entry(sid), Some(SidEntry::Valid(_))) {
            return Err(DecideError::UnknownSid(sid.get()));
        }
        let hash = self.keys.hash_str(&s);
        if LOCK_FREE_PRECHECK {
            if let Some(existing) = self.sid_for_str(&s) {
                return Ok(existing);
            }
        }
        let mut w = crate::sync::lock(&self.writer);
        let is_it = |i: u32| {
            // SAFETY: `i` came from the index, which names only published entries.
            unsafe { *self.strings.get_published(i as usize).text == *s }
        };
        // SAFETY: we hold the writer lock.
        if let Some(idx) = unsafe { self.by_string.find_locked(tag(hash), is_it) } {
            // SAFETY: as in `is_it`.
            return Ok(unsafe { self.strings.get_published(idx as usize).sid });
        }
        // SAFETY: we hold the writer lock.
        if unsafe { self.strings.writer_len() } >= MAX_CACHED_STRINGS {
            return Ok(sid);
        }
        let entry = StrEntry {
            text: s.into_boxed_str(),
            sid,
        };
        // SAFETY: we hold the writer lock.
        let idx = unsafe { self.strings.push(entry) };
        // SAFETY: we hold the writer lock, and entry `idx` is published (by `push`), so
        // the index may name it.
        unsafe { self.by_string.insert(&mut w.strings, tag(hash), idx as u32) };
        Ok(sid)
    }

    /// Number of SIDs issued (initial ones included).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table is empty (no initial SIDs, nothing inserted).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of cached strings.
    pub fn cached_strings(&self) -> usize {
        self.strings.len()
    }

    /// The number the next new context would get if inserted now (for tests and tools;
    /// above `u32::MAX` when the table is full).
    pub fn next_sid(&self) -> u64 {
        self.first_dynamic + (self.entries.len() - self.initial.len()) as u64
    }

    /// The initial SIDs, ascending.
    pub fn initial_sids(&self) -> impl Iterator<Item = (Sid, &Context)> + '_ {
        self.initial.iter().filter_map(|&(sid, idx)| {
            Some((
                Sid::new(sid)?,
                self.entries.get(idx as usize)?.context.as_ref()?,
            ))
        })
    }
}

impl std::fmt::Debug for SidTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SidTable")
            .field("sids", &self.len())
            .field("first_dynamic", &self.first_dynamic)
            .field("cached_strings", &self.cached_strings())
            .finish()
    }
}

/// The index tag of a hash: its high half (the better-mixed bits of the final fold).
#[inline]
fn tag(hash: u64) -> u32 {
    (hash >> 32) as u32
}

#[allow(dead_code)]
fn assert_send_sync() {
    fn is<T: Send + Sync>() {}
    is::<SidTable>();
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use arbiter_policy::mls::{MlsLevel, MlsRange};
    use arbiter_policy::{Ebitmap, RoleId, TypeId, UserId};
    use std::sync::Arc;

    fn ctx(n: u32) -> Context {
        Context {
            user: UserId::new(1 + n % 7).unwrap(),
            role: RoleId::new(1 + n % 3).unwrap(),
            ty: TypeId::new(1 + (n % 60000) as u16).unwrap(),
            range: MlsRange {
                low: MlsLevel {
                    sens: 1,
                    cats: Ebitmap::from_bits([n % 1024]),
                },
                high: MlsLevel {
                    sens: 1 + n / 60000,
                    cats: Ebitmap::from_bits(0..n % 5),
                },
            },
        }
    }

    fn sid(n: u32) -> Sid {
        Sid::new(n).unwrap()
    }

    #[test]
    fn locate_covers_every_index_once() {
        let mut expect = (0, 0);
        for i in 0..10_000 {
            assert_eq!(locate(i), expect, "index {i}");
            expect.1 += 1;
            if expect.1 == BASE << expect.0 {
                expect = (expect.0 + 1, 0);
            }
        }
        let (k, _) = locate(u32::MAX as usize);
        assert!(k < NCHUNKS);
    }

    #[test]
    fn initial_sids_keep_their_numbers_and_new_ones_follow() {
        let t = SidTable::with_initial([(sid(3), ctx(3)), (sid(1), ctx(1)), (sid(5), ctx(1))]);
        assert_eq!(t.context(sid(1)), Some(&ctx(1)));
        assert_eq!(t.context(sid(2)), None);
        assert_eq!(t.context(sid(3)), Some(&ctx(3)));
        assert_eq!(t.context(sid(5)), Some(&ctx(1)));
        // A context shared by two initial SIDs maps to the lower.
        assert_eq!(t.lookup(&ctx(1)), Some(sid(1)));
        assert_eq!(t.insert(ctx(1)), Ok(sid(1)));
        assert_eq!(t.next_sid(), 6);
        assert_eq!(t.insert(ctx(10)), Ok(sid(6)));
        assert_eq!(t.insert(ctx(11)), Ok(sid(7)));
        assert_eq!(t.insert(ctx(10)), Ok(sid(6)));
        assert_eq!(t.context(sid(7)), Some(&ctx(11)));
        assert_eq!(t.context(sid(8)), None);
        assert_eq!(t.len(), 5);
        let isids: Vec<u32> = t.initial_sids().map(|(s, _)| s.get()).collect();
        assert_eq!(isids, [1, 3, 5]);
    }

    #[test]
    fn strings_map_to_published_sids_only() {
        let t = SidTable::with_initial([]);
        let s = t.insert(ctx(1)).unwrap();
        assert_eq!(s, sid(1));
        assert_eq!(t.sid_for_str("a:b:c"), None);
        assert_eq!(t.insert_str("a:b:c".into(), s), Ok(s));
        assert_eq!(t.insert_str("a:b:c2".into(), s), Ok(s));
        assert_eq!(t.sid_for_str("a:b:c"), Some(s));
        assert_eq!(t.sid_for_str("a:b:c2"), Some(s));
        assert_eq!(t.sid_for_str("a:b:c3"), None);
        assert_eq!(
            t.insert_str("x".into(), sid(99)),
            Err(DecideError::UnknownSid(99))
        );
        // First mapping wins.
        let s2 = t.insert(ctx(2)).unwrap();
        assert_eq!(t.insert_str("a:b:c".into(), s2), Ok(s));
        assert_eq!(t.cached_strings(), 2);
    }

    #[test]
    fn many_inserts_grow_storage_and_index() {
        let t = SidTable::with_initial([]);
        let n = 20_000;
        for i in 0..n {
            assert_eq!(t.insert(ctx(i)).unwrap().get(), i + 1);
            t.insert_str(format!("ctx{i}"), sid(i + 1)).unwrap();
        }
        for i in 0..n {
            assert_eq!(t.lookup(&ctx(i)), Some(sid(i + 1)));
            assert_eq!(t.context(sid(i + 1)), Some(&ctx(i)));
            assert_eq!(t.sid_for_str(&format!("ctx{i}")), Some(sid(i + 1)));
        }
        assert_eq!(t.lookup(&ctx(n)), None);
    }

    /// 4 threads insert and read 100k contexts (overlapping ranges, so threads race on the
    /// same contexts); every read must be consistent: a SID always names the context it
    /// was issued for, a context has exactly one SID, a cached string its context's SID.
    #[test]
    fn concurrent_inserts_and_reads_are_consistent() {
        const N: u32 = 100_000;
        const THREADS: u32 = 4;
        let t = Arc::new(SidTable::with_initial([(sid(1), ctx(N + 1))]));
        let handles: Vec<_> = (0..THREADS)
            .map(|th| {
                let t = Arc::clone(&t);
                std::thread::spawn(move || {
                    let mut seen = Vec::with_capacity(N as usize);
                    // Each thread walks all contexts from a different starting point.
                    for k in 0..N {
                        let i = (k + th * N / THREADS) % N;
                        let c = ctx(i);
                        let s = t.insert(c.clone()).unwrap();
                        assert_eq!(t.context(s), Some(&c));
                        assert_eq!(t.lookup(&c), Some(s));
                        let text = format!("c{i}");
                        assert_eq!(t.insert_str(text.clone(), s), Ok(s));
                        assert_eq!(t.sid_for_str(&text), Some(s));
                        // Read something another thread may be inserting right now.
                        let j = (i + 7) % N;
                        if let Some(s2) = t.sid_for_str(&format!("c{j}")) {
                            assert_eq!(t.context(s2), Some(&ctx(j)));
                        }
                        if let Some(other) = t.context(sid(2 + (k * 31) % N)) {
                            assert_eq!(t.lookup(other), Some(sid(2 + (k * 31) % N)));
                        }
                        seen.push(s);
                    }
                    seen
                })
            })
            .collect();
        let results: Vec<Vec<Sid>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(t.len(), N as usize + 1);
        for (th, seen) in results.iter().enumerate() {
            for (k, s) in seen.iter().enumerate() {
                let i = (k as u32 + th as u32 * N / THREADS) % N;
                assert_eq!(t.lookup(&ctx(i)), Some(*s));
            }
        }
        let mut all: Vec<u32> = (0..N).map(|i| t.lookup(&ctx(i)).unwrap().get()).collect();
        all.sort_unstable();
        assert_eq!(all, (2..N + 2).collect::<Vec<_>>());
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use arbiter_policy::{RoleId, TypeId, UserId};
    use loom::sync::Arc;

    fn ctx(n: u16) -> Context {
        Context {
            user: UserId::new(1).unwrap(),
            role: RoleId::new(1).unwrap(),
            ty: TypeId::new(n).unwrap(),
            range: Default::default(),
        }
    }

    /// Runs a model exhaustively (preemption bound 3) and reports how many executions
    /// loom explored, so a model that stops exploring shows up in the test output.
    fn model(name: &str, f: impl Fn() + Sync + Send + 'static) {
        use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
        let runs = std::sync::Arc::new(AtomicUsize::new(0));
        let counter = std::sync::Arc::clone(&runs);
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(3);
        b.check(move || {
            counter.fetch_add(1, Relaxed);
            f()
        });
        eprintln!("loom: {name}: {} executions", runs.load(Relaxed));
    }

    /// A reader racing inserts (which allocate a chunk and grow the index) sees either
    /// nothing or the complete entry; loom flags any read of a slot not yet published.
    #[test]
    fn sidtab_reader_never_sees_torn_entry() {
        model("torn entry", || {
            let t = Arc::new(SidTable::with_initial([]));
            let w = {
                let t = Arc::clone(&t);
                loom::thread::spawn(move || {
                    for n in 1..=3 {
                        t.insert(ctx(n)).unwrap();
                    }
                })
            };
            for n in 1..=3 {
                if let Some(s) = t.lookup(&ctx(n)) {
                    assert_eq!(t.context(s), Some(&ctx(n)));
                }
            }
            for s in 1..=3 {
                if let Some(c) = t.context(Sid::new(s).unwrap()) {
                    assert_eq!(c, &ctx(s as u16));
                }
            }
            w.join().unwrap();
            assert_eq!(t.len(), 3);
        });
    }

    /// Whoever finds a cached string finds its context, also while the string index grows
    /// (the third string doubles it) and the string arena allocates its second chunk.
    #[test]
    fn sidtab_string_is_paired_with_its_context() {
        const TEXT: [&str; 3] = ["one", "two", "three"];
        model("string pairing", || {
            let t = Arc::new(SidTable::with_initial([]));
            let w = {
                let t = Arc::clone(&t);
                loom::thread::spawn(move || {
                    for (n, text) in (1..).zip(TEXT) {
                        let s = t.insert(ctx(n)).unwrap();
                        t.insert_str(text.into(), s).unwrap();
                    }
                })
            };
            for (n, text) in (1..=3).zip(TEXT).rev() {
                if let Some(s) = t.sid_for_str(text) {
                    assert_eq!(t.context(s), Some(&ctx(n)));
                }
            }
            w.join().unwrap();
            assert!(TEXT.iter().all(|s| t.sid_for_str(s).is_some()));
        });
    }

    /// Two writers inserting the same context get the same SID.
    #[test]
    fn sidtab_racing_writers_agree() {
        model("racing writers", || {
            let t = Arc::new(SidTable::with_initial([]));
            let other = {
                let t = Arc::clone(&t);
                loom::thread::spawn(move || t.insert(ctx(7)).unwrap())
            };
            let mine = t.insert(ctx(7)).unwrap();
            assert_eq!(other.join().unwrap(), mine);
            assert_eq!(t.len(), 1);
        });
    }
}

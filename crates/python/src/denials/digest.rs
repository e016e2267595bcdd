//! The map step of fleet analysis: one log chunk digested into counts and the denials that
//! decide audit2allow's output ([`Digest`]), with what the worker learnt from its earlier
//! chunks ([`DigestCache`]).
//!
//! A fleet worker runs this over every line of the fleet, so the per-record work is kept
//! small and local: lines are read in place, a record's strings become dense ids in a
//! small table, and one lookup of a few words finds everything known about the denial
//! (verdict, rule, whether this chunk or an earlier one kept it). Two workers on two cores
//! that share their caches slowed each other by 5–19 % when each walked several tables
//! keyed by 100-byte strings per record.
//!
//! A digest's result ([`Chunk`]) is itself ids: its rule counts and kept denials refer to
//! the cache's names, and turn into strings only where they leave, once per distinct name
//! ([`Chunk::digest`] for Python, the fleet blob's encoder for a fleet worker). Spelling
//! every counted rule and kept denial out as owned strings first made allocation a fifth
//! of a fleet worker's CPU.

use super::{plain, Digest};
use arbiter_decide::KeyedState;
use arbiter_denials::{
    parse_line, split_context, BlockLine, BlockLines, Engine, Line, Unknown, Verdict,
};
use hashbrown::HashTable;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;

/// The digest's maps, keyed by text from logs: decide's keyed folded-multiply hasher (random
/// keys per map) instead of SipHash, which was a tenth of a fleet worker's instructions
/// (three names and a denial's key hashed per record).
type Map<K, V> = HashMap<K, V, KeyedState>;

/// A chunk's place in one fleet run: the run's random token and the chunk's index in log
/// order.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Position {
    pub(crate) run: u64,
    pub(crate) chunk: u64,
}

/// Strings (contexts, classes, permission and type names) as dense ids, so that a denial's
/// key is a few words instead of its text.
///
/// The names are held once, end to end in one string, and the table holds only their ids
/// (4 bytes a slot): a table of boxed strings, with every name also boxed a second time
/// for its id, held each name twice in two allocations of its own, and grew to megabytes
/// that every worker of a fleet faults in and walks on its own.
#[derive(Default)]
struct Names {
    /// Ids, found by the hash of their name.
    ids: HashTable<u32>,
    state: KeyedState,
    /// Every name, end to end, in id order.
    text: String,
    /// Where each name ends in `text` (it starts where the one before it ends).
    ends: Vec<usize>,
}

impl Names {
    fn id(&mut self, s: &str) -> u32 {
        let hash = self.state.hash_one(s);
        let (text, ends) = (&self.text, &self.ends);
        if let Some(&i) = self.ids.find(hash, |&i| name_at(text, ends, i) == s) {
            return i;
        }
        // At most MAX_ENTRIES names plus one chunk's, far below u32::MAX.
        let i = self.ends.len() as u32;
        self.text.push_str(s);
        self.ends.push(self.text.len());
        let (text, ends, state) = (&self.text, &self.ends, &self.state);
        self.ids
            .insert_unique(hash, i, |&j| state.hash_one(name_at(text, ends, j)));
        i
    }

    fn name(&self, id: u32) -> &str {
        name_at(&self.text, &self.ends, id)
    }

    fn len(&self) -> usize {
        self.ends.len()
    }
}

/// Name `id` of a [`Names`]' text and ends.
fn name_at<'t>(text: &'t str, ends: &[usize], id: u32) -> &'t str {
    let i = id as usize;
    let start = if i == 0 { 0 } else { ends[i - 1] };
    &text[start..ends[i]]
}

/// The verdict counters of a chunk: audit2why's codes 0–6, then "UNKNOWN".
const UNKNOWN_SLOT: usize = 7;

/// Each verdict counter's name ([`Verdict::name`] of its code, then "UNKNOWN").
const SLOT_NAMES: [&str; UNKNOWN_SLOT + 1] = [
    "ALLOW",
    "DONTAUDIT",
    "TERULE",
    "BOOLEAN",
    "CONSTRAINT",
    "RBAC",
    "BOUNDS",
    "UNKNOWN",
];

/// What a worker knows of one distinct denial (scontext, tcontext, tclass, permissions,
/// ioctl command).
struct Entry {
    /// Its verdict, in [`DigestCache::verdicts`].
    verdict: u32,
    /// The verdict counter it adds to ([`SLOT_NAMES`]).
    slot: u8,
    /// Whether audit2allow writes a rule for it (decided, or only its class unknown).
    keepable: bool,
    /// Its (source type, target type, class) in [`DigestCache::rule_keys`].
    rule: u32,
    /// Its key: `DigestCache::entry_keys[key_start..][..key_len]`.
    key_start: usize,
    key_len: u32,
    /// The digest (a [`DigestCache::digests`] stamp) that last met it as a denial, so a
    /// chunk keeps it once.
    met: u64,
    /// The earliest chunk of a run whose digest kept it on this worker.
    kept: Option<Position>,
}

/// What the digests of one `Denials` share: each distinct denial's verdict (a fleet
/// worker digests many chunks whose hosts repeat each other's denials, and decides each
/// once) and, per fleet run, the earliest chunk in log order whose digest on this worker
/// kept it ([`Position`]). A later chunk need not keep that denial again, since the merge
/// keeps only the first occurrence in log order, and the chunk that holds a denial's first
/// occurrence in the whole fleet never drops it (no earlier chunk has it). That shrinks
/// every blob of a fleet whose hosts repeat each other to about one copy of each distinct
/// denial per worker, which is what the merges and the final step read.
///
/// Bounded: when a digest starts with more than [`DigestCache::MAX_ENTRIES`] denials or
/// names, or [`DigestCache::MAX_NAME_BYTES`] of names, known, the cache starts over
/// (correctness never depends on it); within one digest it grows with the chunk only (a
/// fleet task checks [`DigestCache::is_full`] between its ranges).
#[derive(Default)]
pub(crate) struct DigestCache {
    names: Names,
    /// Every distinct denial met, found by the hash of its key: the ids of scontext,
    /// tcontext, tclass, then the ioctl command (a flag and two words), then the
    /// permissions in log order. The table holds indexes of `entry_list` (4 bytes a slot),
    /// the keys are end to end in `entry_keys`: a table of entries and boxed keys took 80
    /// bytes a slot and a box per key, about 12 MB for a fleet's 59,000 distinct denials
    /// (grown by doubling: every resize a fresh table faulted in), in each worker.
    entries: HashTable<u32>,
    entry_list: Vec<Entry>,
    entry_keys: Vec<u32>,
    verdicts: Vec<Result<Verdict, Unknown>>,
    /// The hasher of `entries`.
    state: KeyedState,
    rules: Map<[u32; 3], u32>,
    rule_keys: Vec<[u32; 3]>,
    /// Digests run so far, the stamp of [`Entry::met`].
    digests: u64,
    /// A fleet worker's read buffer: each range of its tasks is read into it in turn (see
    /// `fleet::ranges::read_range_into`), so its pages are the kernel's once per worker,
    /// not once per range. Kept when the cache starts over.
    pub(crate) read_buf: Vec<u8>,
}

impl DigestCache {
    /// Distinct denials (and names) known at most before starting over: an entry, its
    /// slot and its key take about 90 bytes, so with names a worker holds a few tens of MB
    /// at most.
    const MAX_ENTRIES: usize = 1 << 18;
    /// Bytes of names known at most before starting over (contexts can be long).
    const MAX_NAME_BYTES: usize = 64 << 20;

    /// Whether the cache is past its bounds, so that the next digest starts it over. A
    /// task of several ranges checks between ranges and, when it is, ends its chunk there
    /// and starts another, so a task's cache grows by one range's text at most.
    pub(crate) fn is_full(&self) -> bool {
        self.entry_list.len() >= Self::MAX_ENTRIES
            || self.names.len() >= Self::MAX_ENTRIES
            || self.names.text.len() >= Self::MAX_NAME_BYTES
    }

    fn start_digest(&mut self) -> u64 {
        if self.is_full() {
            let digests = self.digests;
            let read_buf = std::mem::take(&mut self.read_buf);
            *self = DigestCache {
                digests,
                read_buf,
                ..DigestCache::default()
            };
        }
        self.digests += 1;
        self.digests
    }

    /// The denial `key` (see [`DigestCache::entries`]) of `rec`, decided on first sight.
    fn entry(
        &mut self,
        engine: &Engine,
        key: &[u32],
        rec: &arbiter_denials::AvcRecord<'_>,
    ) -> &mut Entry {
        let hash = self.state.hash_one(key);
        let (list, keys) = (&self.entry_list, &self.entry_keys);
        let found = self
            .entries
            .find(hash, |&i| entry_key(list, keys, i) == key)
            .copied();
        let i = match found {
            Some(i) => i,
            None => self.insert_entry(engine, key, rec, hash),
        };
        &mut self.entry_list[i as usize]
    }

    /// Decides the denial `key` of `rec`, met for the first time, and keeps it.
    #[cold]
    fn insert_entry(
        &mut self,
        engine: &Engine,
        key: &[u32],
        rec: &arbiter_denials::AvcRecord<'_>,
        hash: u64,
    ) -> u32 {
        let v = engine.analyze(rec.scontext, rec.tcontext, rec.tclass, &rec.perms);
        let (slot, keepable) = match &v {
            Ok(v) => (v.code() as u8, true),
            Err(u) => (UNKNOWN_SLOT as u8, matches!(u, Unknown::Tclass(_))),
        };
        let rule_key = [
            self.names.id(split_context(rec.scontext).2),
            self.names.id(split_context(rec.tcontext).2),
            key[2],
        ];
        let next = self.rule_keys.len() as u32;
        let rule = *self.rules.entry(rule_key).or_insert(next);
        if rule == next {
            self.rule_keys.push(rule_key);
        }
        self.verdicts.push(v);
        // At most MAX_ENTRIES entries plus one chunk's, far below u32::MAX; a key is
        // a line's words at most.
        let i = self.entry_list.len() as u32;
        self.entry_list.push(Entry {
            verdict: self.verdicts.len() as u32 - 1,
            slot,
            keepable,
            rule,
            key_start: self.entry_keys.len(),
            key_len: key.len() as u32,
            met: 0,
            kept: None,
        });
        self.entry_keys.extend_from_slice(key);
        let (list, keys, state) = (&self.entry_list, &self.entry_keys, &self.state);
        self.entries
            .insert_unique(hash, i, |&j| state.hash_one(entry_key(list, keys, j)));
        i
    }
}

/// The key of entry `i` of a [`DigestCache`]'s entries and keys.
fn entry_key<'k>(list: &[Entry], keys: &'k [u32], i: u32) -> &'k [u32] {
    let e = &list[i as usize];
    &keys[e.key_start..e.key_start + e.key_len as usize]
}

/// Whether a chunk before `at` of the same run already kept the denial whose earliest
/// keeping chunk is `kept`; else records `at` there.
fn kept_before(kept: &mut Option<Position>, at: Position) -> bool {
    match kept {
        Some(p) if p.run == at.run && p.chunk < at.chunk => true,
        _ => {
            *kept = Some(at);
            false
        }
    }
}

/// One kept denial of a [`Chunk`]: its key in [`Chunk::keys`] and its verdict.
#[derive(Clone, Copy)]
struct KeptKey {
    /// `Chunk::keys[start..end]`: the denial's key (see [`DigestCache::entries`]).
    start: usize,
    end: usize,
    /// Its verdict in [`DigestCache::verdicts`].
    verdict: u32,
    /// Its (source type, target type, class) in [`DigestCache::rule_keys`].
    rule: u32,
}

/// What one chunk of log text holds, as ids into the [`DigestCache`] that digested it
/// (valid until that cache's next digest, which may start it over).
pub(crate) struct Chunk {
    pub(crate) lines: u64,
    pub(crate) records: u64,
    pub(crate) denials: u64,
    pub(crate) malformed: u64,
    pub(crate) unknown: u64,
    pub(crate) selinux_seen: bool,
    /// Records per verdict slot (audit2why's codes 0–6, then "UNKNOWN"), with the slots'
    /// names.
    verdicts: [u64; UNKNOWN_SLOT + 1],
    verdict_names: [&'static str; UNKNOWN_SLOT + 1],
    /// Denials per rule id ([`DigestCache::rule_keys`]), in first-counted order.
    rules: Vec<(u32, u64)>,
    /// The kept denials' keys, end to end.
    keys: Vec<u32>,
    kept: Vec<KeptKey>,
    pub(crate) roles: Vec<(String, String)>,
}

/// One kept denial read back from ids: contexts, class, permissions, ioctl command and
/// verdict (`None`: a class the policy lacks).
pub(crate) struct KeptView<'c> {
    pub(crate) scontext: &'c str,
    pub(crate) tcontext: &'c str,
    pub(crate) tclass: &'c str,
    /// Its source type, target type and class as ids of the cache's names (audit2allow's
    /// access vector, with the verdict's code).
    pub(crate) rule: [u32; 3],
    /// The permissions in log order, as ids of the cache's names.
    pub(crate) perm_ids: &'c [u32],
    names: &'c Names,
    pub(crate) ioctlcmd: Option<i64>,
    pub(crate) verdict: Option<&'c Verdict>,
}

impl<'c> KeptView<'c> {
    /// The permissions in log order.
    pub(crate) fn perms(&self) -> impl ExactSizeIterator<Item = &'c str> + 'c {
        let names = self.names;
        self.perm_ids.iter().map(move |&p| names.name(p))
    }
}

impl Chunk {
    /// Verdict names and record counts, for the verdicts met.
    pub(crate) fn verdicts(&self) -> impl ExactSizeIterator<Item = (&'static str, u64)> + '_ {
        let met: Vec<(&'static str, u64)> = self
            .verdicts
            .iter()
            .zip(self.verdict_names)
            .filter(|(n, _)| **n > 0)
            .map(|(n, name)| (name, *n))
            .collect();
        met.into_iter()
    }

    /// Counted rules in first-counted order: (source type, target type, class) as ids of
    /// `cache`'s names, and the denials.
    pub(crate) fn rules<'c>(
        &'c self,
        cache: &'c DigestCache,
    ) -> impl ExactSizeIterator<Item = ([u32; 3], u64)> + 'c {
        self.rules
            .iter()
            .map(|&(r, n)| (cache.rule_keys[r as usize], n))
    }

    /// The name of an id of `cache`'s names (as [`Chunk::rules`] gives them).
    pub(crate) fn name(cache: &DigestCache, id: u32) -> &str {
        cache.names.name(id)
    }

    /// The number of `cache`'s names: every id is below it.
    pub(crate) fn names_len(cache: &DigestCache) -> usize {
        cache.names.len()
    }

    /// The kept denials, first occurrence order.
    pub(crate) fn kept<'c>(
        &'c self,
        cache: &'c DigestCache,
    ) -> impl ExactSizeIterator<Item = KeptView<'c>> + 'c {
        self.kept.iter().map(move |k| {
            let key = &self.keys[k.start..k.end];
            let (ioctlcmd, perms) = if key[3] == 1 {
                // The command's two halves, as the key holds them.
                let c = (u64::from(key[5]) << 32 | u64::from(key[4])) as i64;
                (Some(c), &key[6..])
            } else {
                (None, &key[4..])
            };
            KeptView {
                scontext: cache.names.name(key[0]),
                tcontext: cache.names.name(key[1]),
                tclass: cache.names.name(key[2]),
                rule: cache.rule_keys[k.rule as usize],
                perm_ids: perms,
                names: &cache.names,
                ioctlcmd,
                verdict: cache.verdicts[k.verdict as usize].as_ref().ok(),
            }
        })
    }

    /// The chunk as the Python `Digest` (owned strings).
    pub(crate) fn digest(self, cache: &DigestCache) -> Digest {
        Digest {
            lines: self.lines,
            records: self.records,
            denials: self.denials,
            malformed: self.malformed,
            unknown: self.unknown,
            selinux_seen: self.selinux_seen,
            verdicts: self.verdicts().map(|(v, n)| (v.to_string(), n)).collect(),
            rules: self
                .rules(cache)
                .map(|(ids, n)| {
                    let [s, t, c] = ids.map(|id| cache.names.name(id).to_string());
                    ((s, t, c), n)
                })
                .collect(),
            kept: self
                .kept(cache)
                .map(|k| {
                    (
                        k.scontext.to_string(),
                        k.tcontext.to_string(),
                        k.tclass.to_string(),
                        k.perms().map(str::to_string).collect(),
                        k.ioctlcmd,
                        k.verdict.map(plain),
                    )
                })
                .collect(),
            roles: self.roles,
        }
    }
}

/// Digests one chunk of log text; `cache` holds what earlier chunks learnt. With `at` (the
/// chunk's place in a fleet run), denials an earlier chunk of the run kept on this worker
/// are not kept again (see [`DigestCache`]).
pub(crate) fn digest(
    engine: &Engine,
    cache: &mut DigestCache,
    bytes: &[u8],
    at: Option<Position>,
) -> std::io::Result<Chunk> {
    let mut d = Digester::start(cache, at);
    d.block(engine, cache, bytes);
    Ok(d.finish())
}

/// One chunk digested block by block: a fleet task reads its byte ranges (of one log or
/// several) one at a time and digests them into one [`Chunk`], so a task of many ranges
/// writes one blob and holds one range's text at a time.
pub(crate) struct Digester {
    chunk: Chunk,
    /// The stamp of this digest ([`Entry::met`]) and its place in a fleet run.
    stamp: u64,
    at: Option<Position>,
    /// Denials per rule id, and the ids counted, in first-counted order.
    rules: Vec<u64>,
    counted: Vec<u32>,
    roles: HashSet<(String, String)>,
    /// The record being digested's key (reused).
    key: Vec<u32>,
}

impl Digester {
    /// A new chunk: `cache` starts over here if it is past its bounds, and its ids stay
    /// valid until the next `start`.
    pub(crate) fn start(cache: &mut DigestCache, at: Option<Position>) -> Digester {
        Digester {
            chunk: Chunk {
                lines: 0,
                records: 0,
                denials: 0,
                malformed: 0,
                unknown: 0,
                selinux_seen: false,
                verdicts: [0; UNKNOWN_SLOT + 1],
                verdict_names: [""; UNKNOWN_SLOT + 1],
                rules: Vec::new(),
                keys: Vec::new(),
                kept: Vec::new(),
                roles: Vec::new(),
            },
            stamp: cache.start_digest(),
            at,
            rules: Vec::new(),
            counted: Vec::new(),
            roles: HashSet::new(),
            key: Vec::new(),
        }
    }

    /// Whether the chunk has read any line yet.
    pub(crate) fn is_empty(&self) -> bool {
        self.chunk.lines == 0
    }

    /// Digests one block of whole lines into the chunk; returns the block's AVC records.
    pub(crate) fn block(&mut self, engine: &Engine, cache: &mut DigestCache, bytes: &[u8]) -> u64 {
        let (d, stamp, at) = (&mut self.chunk, self.stamp, self.at);
        let records = d.records;
        let key = &mut self.key;
        for line in BlockLines::new(bytes) {
            d.lines += 1;
            let text = match line {
                // As the CLI's session: the line counts as a problem, and a record found
                // near its first record token is still explained.
                BlockLine::TooLong { salvaged } => {
                    d.selinux_seen = true;
                    d.malformed += 1;
                    match salvaged {
                        Some(text) => std::borrow::Cow::Owned(text),
                        None => continue,
                    }
                }
                BlockLine::Text(text) => text,
            };
            match parse_line(&text) {
                Line::Other => {}
                Line::Notice => d.selinux_seen = true,
                Line::Malformed(_) => {
                    d.selinux_seen = true;
                    d.malformed += 1;
                }
                Line::ComputeSid(c) => {
                    d.selinux_seen = true;
                    let pair = (c.role.to_string(), c.ty.to_string());
                    if self.roles.insert(pair.clone()) {
                        d.roles.push(pair);
                    }
                }
                Line::Avc(rec) => {
                    d.selinux_seen = true;
                    d.records += 1;
                    key.clear();
                    for s in [rec.scontext, rec.tcontext, rec.tclass] {
                        key.push(cache.names.id(s));
                    }
                    match rec.ioctlcmd {
                        // The command's two halves (truncation intended).
                        Some(c) => key.extend([1, c as u32, (c >> 32) as u32]),
                        None => key.push(0),
                    }
                    for p in &rec.perms {
                        key.push(cache.names.id(p));
                    }
                    let e = cache.entry(engine, key, &rec);
                    let slot = usize::from(e.slot);
                    d.verdicts[slot] += 1;
                    d.verdict_names[slot] = SLOT_NAMES[slot];
                    if slot == UNKNOWN_SLOT {
                        d.unknown += 1;
                    }
                    if !rec.denied {
                        continue;
                    }
                    d.denials += 1;
                    let rule = e.rule as usize;
                    if rule >= self.rules.len() {
                        self.rules.resize(rule + 1, 0);
                    }
                    if self.rules[rule] == 0 {
                        self.counted.push(e.rule);
                    }
                    self.rules[rule] += 1;
                    // As the session in allow mode: an unknown class still makes a rule,
                    // other unknown names do not.
                    if !e.keepable || e.met == stamp {
                        continue;
                    }
                    e.met = stamp;
                    if at.is_some_and(|at| kept_before(&mut e.kept, at)) {
                        continue;
                    }
                    // Bounded by the chunk's size (a key is a few words per record).
                    let start = d.keys.len();
                    d.keys.extend_from_slice(key);
                    d.kept.push(KeptKey {
                        start,
                        end: d.keys.len(),
                        verdict: e.verdict,
                        rule: e.rule,
                    });
                }
            }
        }
        d.records - records
    }

    /// The chunk, its rule counts in first-counted order.
    pub(crate) fn finish(self) -> Chunk {
        let Digester {
            mut chunk,
            rules,
            counted,
            ..
        } = self;
        chunk.rules = counted
            .into_iter()
            .map(|r| (r, rules[r as usize]))
            .collect();
        chunk
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_keeps_its_id_and_text_while_the_table_grows() {
        let mut names = Names::default();
        // Names that run into each other end to end ("ab" + "c" is "abc"), the empty name,
        // non-ASCII text, and enough of them that the table is rebuilt several times.
        let mut texts: Vec<String> = vec!["ab".into(), "c".into(), "abc".into(), "".into()];
        texts.push("sýstem_u:object_r:tmp_t:s0".into());
        texts.extend((0..5000).map(|i| format!("system_u:system_r:t{i}_t:s0")));
        for (i, t) in texts.iter().enumerate() {
            assert_eq!(names.id(t), i as u32, "{t:?} met first");
        }
        for (i, t) in texts.iter().enumerate().rev() {
            assert_eq!(names.id(t), i as u32, "{t:?} met again");
            assert_eq!(names.name(i as u32), t);
        }
        assert_eq!(names.len(), texts.len());
    }
}

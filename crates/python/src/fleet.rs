//! Fleet digests as compact byte blobs, so that `arbiter.dask` reduces on its workers.
//!
//! Shipping a [`Digest`](crate::denials::Digest) as Python tuples made a Dask run spend more
//! time pickling and unpickling per-denial objects than explaining them. Here a log chunk's
//! digest is encoded in Rust into one `bytes` object ([`fleet_digest`]), digests merge
//! blob-to-blob in Rust ([`fleet_merge`], associative and order-keeping, so Dask's tree
//! reduction can run it on the workers), and the client decodes one blob
//! ([`fleet_finish`]) into audit2allow's text and the counts.
//!
//! A blob holds audit2allow's access vectors, not the denials behind them: each worker
//! adds its chunk's distinct denials to per-(source type, target type, class, verdict)
//! vectors (in first-seen order, the first denial's verdict, the union of permissions and
//! ioctl commands), and merging appends the vectors a blob adds and unites the rest, which
//! is what audit2allow's generator does with the denials themselves. So the merged blob
//! renders what one run over every log renders, and the client's final step adds about
//! half as many vectors as there were distinct denials, with no context to split and no
//! permission to intern (an 80,000-line fleet: 111,921 vectors for 206,437 denials).
//!
//! The format is private to this module (a magic, then little-endian length-prefixed
//! fields); a blob that does not decode raises `ValueError`. The per-rule counts and the
//! access vectors name their types, classes and permissions by index into a table of the
//! blob's names: a chunk counts tens of thousands of rules over a few thousand names, and
//! spelling each rule out made them three quarters of every blob and most of the merges'
//! work.

mod ranges;

use crate::denials::{
    fleet_generation, verdict_from_plain, Chunk, Denials, DigestCache, Digester, Position,
};
use crate::errors::panic_error;
use arbiter_decide::KeyedState;
use arbiter_denials::{AllowGenerator, Engine, Generation, Verdict};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};
use std::collections::{HashMap, HashSet};

/// The merge's maps and sets: keyed by names and denials from logs, so with random keys; a
/// folded-multiply hash, because the merge of a fleet's blobs is on its serial end (with
/// SipHash, the calling thread's half of the final step's merge of eight blobs of an
/// 80,000-line fleet took 249 M instructions; 84 M with this hash).
type Map<K, V> = HashMap<K, V, KeyedState>;
type Set<T> = HashSet<T, KeyedState>;

const MAGIC: &[u8; 8] = b"ARBFLT4\0";

/// Registers the private fleet functions in the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fleet_digest, m)?)?;
    m.add_function(wrap_pyfunction!(fleet_digest_ranges, m)?)?;
    m.add_function(wrap_pyfunction!(fleet_merge, m)?)?;
    m.add_function(wrap_pyfunction!(fleet_finish, m)?)?;
    Ok(())
}

/// Why a blob did not decode.
#[derive(Debug, thiserror::Error)]
enum BlobError {
    #[error("not a fleet digest (bad magic)")]
    Magic,
    #[error("fleet digest truncated at byte {0}")]
    Truncated(usize),
    #[error("fleet digest has a string that is not UTF-8 at byte {0}")]
    Utf8(usize),
    #[error("fleet digest has verdict code {0}, not 0-6")]
    Verdict(i32),
    #[error("fleet digest names rule name {0}, beyond its table")]
    RuleName(u64),
    #[error("fleet digest has an access vector of verdict byte {0}, not 0-10")]
    VectorCode(u8),
    #[error("fleet digest has a number over 64 bits at byte {0}")]
    Varint(usize),
}

struct Writer(Vec<u8>);

impl Writer {
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn len(&mut self, n: usize) {
        self.0.extend_from_slice(&(n as u32).to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }
    fn flag(&mut self, b: bool) {
        self.0.push(u8::from(b));
    }
    /// LEB128: seven bits a byte, low first. A rule's name ids and count are small, so its
    /// three ids and count take 5–7 bytes instead of 20; the rule counts are two thirds of a
    /// chunk's blob, which travels between workers and is read by every merge.
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], BlobError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or(BlobError::Truncated(self.pos))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u64(&mut self) -> Result<u64, BlobError> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    }
    /// A [`Writer::varint`]; one that runs past ten bytes or 64 bits is refused. Read
    /// straight from the slice (no bounds check per byte): the rule counts and access
    /// vectors are most of a blob, and reading them byte by byte through [`Reader::take`]
    /// was a fifth of a merge.
    #[inline]
    fn varint(&mut self) -> Result<u64, BlobError> {
        let at = self.pos;
        let mut v: u64 = 0;
        for (i, &b) in self.buf[at..].iter().take(10).enumerate() {
            let bits = u64::from(b & 0x7f);
            let shift = 7 * i as u32;
            if shift == 63 && bits > 1 {
                return Err(BlobError::Varint(at));
            }
            v |= bits << shift;
            if b & 0x80 == 0 {
                self.pos = at + i + 1;
                return Ok(v);
            }
        }
        if self.buf.len() - at >= 10 {
            Err(BlobError::Varint(at))
        } else {
            Err(BlobError::Truncated(self.buf.len()))
        }
    }
    /// A count, bounded by the bytes left so that a corrupt blob cannot ask for huge
    /// allocations (every counted item takes at least one byte).
    fn len(&mut self) -> Result<usize, BlobError> {
        let b = self.take(4)?;
        let n = u32::from_le_bytes(b.try_into().unwrap_or([0; 4])) as usize;
        if n > self.buf.len() - self.pos {
            return Err(BlobError::Truncated(self.pos));
        }
        Ok(n)
    }
    fn str(&mut self) -> Result<String, BlobError> {
        self.str_ref().map(str::to_owned)
    }
    /// A string borrowed from the blob (merging copies no string).
    fn str_ref(&mut self) -> Result<&'a str, BlobError> {
        let n = self.len()?;
        let at = self.pos;
        let b = self.take(n)?;
        std::str::from_utf8(b).map_err(|_| BlobError::Utf8(at))
    }
    fn flag(&mut self) -> Result<bool, BlobError> {
        Ok(self.take(1)?[0] != 0)
    }
    /// Steps over a string without checking its UTF-8 (see [`Reader::kept_raw`]).
    fn skip_str(&mut self) -> Result<(), BlobError> {
        let n = self.len()?;
        self.take(n).map(|_| ())
    }
}

/// The five counters of a part, in blob order.
type Counts = [u64; 5];

/// The byte of a vector's verdict code: audit2why's 0–6 as 4–10, sepolgen's `BADTCLASS`
/// (-4, a class the policy lacks) as 0.
const CODE_BIAS: i32 = 4;
/// sepolgen's `BADTCLASS`: the vector of a class the policy lacks (no verdict).
const UNKNOWN_CLASS: i32 = -4;

/// What a blob counts, read in place (every string borrowed from it): what merges by
/// adding up or by first occurrence, and the table of names its rules and access vectors
/// refer to.
#[derive(Default)]
struct Counted<'a> {
    counts: Counts,
    selinux_seen: bool,
    paths: Vec<(&'a str, u64)>,
    verdicts: Vec<(&'a str, u64)>,
    /// The names the rules and access vectors refer to by index: types, classes and
    /// permissions.
    names: Vec<&'a str>,
    /// (source type, target type, class) as indexes into `names`, and the count.
    rules: Vec<([u32; 3], u64)>,
    roles: Vec<(&'a str, &'a str)>,
}

/// One access vector of a blob, read in place.
struct Vector<'a> {
    /// Source type, target type and class, as indexes into the blob's names.
    key: [u32; 3],
    /// The verdict's code (audit2why's 0–6, or [`UNKNOWN_CLASS`]).
    code: i32,
    /// Its permissions: `View::perm_ids[perms]`, indexes into the blob's names.
    perms: std::ops::Range<usize>,
    /// Its ioctl commands (none zero), little-endian `i64`s.
    ioctls: &'a [u8],
    /// Its first denial's verdict details as encoded (see [`write_first`]).
    first: &'a [u8],
}

/// A blob read in place. Merging works on views, so a reduce task copies each access
/// vector's details once and allocates no string (decoding into owned values made the
/// merges a quarter of a fleet run's CPU, and the last merge runs alone).
struct View<'a> {
    counted: Counted<'a>,
    /// The access vectors in first-seen order.
    vectors: Vec<Vector<'a>>,
    /// The vectors' permissions, end to end.
    perm_ids: Vec<u32>,
}

impl<'a> Reader<'a> {
    /// A name's index, below `names` (the table's length).
    #[inline]
    fn name_id(&mut self, names: usize) -> Result<u32, BlobError> {
        let n = self.varint()?;
        if n >= names as u64 {
            return Err(BlobError::RuleName(n));
        }
        // Below the table's length, so within u32.
        Ok(n as u32)
    }

    /// A varint count of items of at least `size` bytes each, bounded by the bytes left.
    fn count(&mut self, size: usize) -> Result<usize, BlobError> {
        let at = self.pos;
        let n = self.varint()?;
        if n > ((self.buf.len() - self.pos) / size) as u64 {
            return Err(BlobError::Truncated(at));
        }
        Ok(n as usize)
    }

    /// One access vector (see [`write_vector`]), its layout checked; the strings of its
    /// first denial's details are checked where they are read, by [`first_denial`]: the
    /// merges only copy them, and most vectors of a fleet's blobs are met again there.
    fn vector(&mut self, names: usize, perm_ids: &mut Vec<u32>) -> Result<Vector<'a>, BlobError> {
        let mut key = [0u32; 3];
        for id in &mut key {
            *id = self.name_id(names)?;
        }
        let b = self.take(1)?[0];
        let code = i32::from(b) - CODE_BIAS;
        if code != UNKNOWN_CLASS && !(0..=6).contains(&code) {
            return Err(BlobError::VectorCode(b));
        }
        let start = perm_ids.len();
        for _ in 0..self.count(1)? {
            perm_ids.push(self.name_id(names)?);
        }
        let perms = start..perm_ids.len();
        let n = self.count(8)?;
        let ioctls = self.take(8 * n)?;
        let first = self.pos;
        match code {
            3 => {
                for _ in 0..self.len()? {
                    self.skip_str()?;
                    self.flag()?;
                }
            }
            4 => {
                for _ in 0..3 {
                    self.skip_str()?;
                }
            }
            _ => {}
        }
        Ok(Vector {
            key,
            code,
            perms,
            ioctls,
            first: &self.buf[first..self.pos],
        })
    }
}

impl<'a> View<'a> {
    fn parse(buf: &'a [u8]) -> Result<View<'a>, BlobError> {
        let mut r = Reader { buf, pos: 0 };
        if r.take(MAGIC.len()).map_err(|_| BlobError::Magic)? != MAGIC {
            return Err(BlobError::Magic);
        }
        let mut c = Counted::default();
        for n in &mut c.counts {
            *n = r.u64()?;
        }
        c.selinux_seen = r.flag()?;
        for _ in 0..r.len()? {
            c.paths.push((r.str_ref()?, r.u64()?));
        }
        for _ in 0..r.len()? {
            c.verdicts.push((r.str_ref()?, r.u64()?));
        }
        for _ in 0..r.len()? {
            c.names.push(r.str_ref()?);
        }
        let names = c.names.len();
        // Sized once: a large blob's rules grown by doubling allocated and copied twice
        // their size, in fresh pages, on every merge.
        let n = r.len()?;
        c.rules.reserve_exact(n);
        for _ in 0..n {
            let mut key = [0u32; 3];
            for id in &mut key {
                *id = r.name_id(names)?;
            }
            c.rules.push((key, r.varint()?));
        }
        let n = r.len()?;
        let mut vectors = Vec::with_capacity(n);
        let mut perm_ids = Vec::with_capacity(2 * n);
        for _ in 0..n {
            vectors.push(r.vector(names, &mut perm_ids)?);
        }
        for _ in 0..r.len()? {
            c.roles.push((r.str_ref()?, r.str_ref()?));
        }
        if r.pos != buf.len() {
            return Err(BlobError::Truncated(r.pos));
        }
        Ok(View {
            counted: c,
            vectors,
            perm_ids,
        })
    }
}

/// Writes a blob from its counted part; `vectors` (their number, and the writer of their
/// records) writes the access vectors.
fn encode(
    c: &Counted<'_>,
    vectors: (usize, impl FnOnce(&mut Writer)),
    size_hint: usize,
) -> Vec<u8> {
    let mut w = Writer(Vec::with_capacity(64 + size_hint));
    w.0.extend_from_slice(MAGIC);
    for v in c.counts {
        w.u64(v);
    }
    w.flag(c.selinux_seen);
    w.len(c.paths.len());
    for (p, n) in &c.paths {
        w.str(p);
        w.u64(*n);
    }
    w.len(c.verdicts.len());
    for (v, n) in &c.verdicts {
        w.str(v);
        w.u64(*n);
    }
    w.len(c.names.len());
    for name in &c.names {
        w.str(name);
    }
    w.len(c.rules.len());
    for &(ids, n) in &c.rules {
        for id in ids {
            w.varint(u64::from(id));
        }
        w.varint(n);
    }
    w.len(vectors.0);
    (vectors.1)(&mut w);
    w.len(c.roles.len());
    for (r, t) in &c.roles {
        w.str(r);
        w.str(t);
    }
    w.0
}

/// One access vector's record: its key's three name indexes, its code's byte, its
/// permissions' indexes, its ioctl commands, then its first denial's details
/// ([`write_first`]).
fn write_vector(
    w: &mut Writer,
    key: [u32; 3],
    code: i32,
    perms: &[u32],
    ioctls: &[i64],
    first: impl FnOnce(&mut Writer),
) {
    for id in key {
        w.varint(u64::from(id));
    }
    // A code of 0-6 or UNKNOWN_CLASS: 0-10.
    w.0.push((code + CODE_BIAS) as u8);
    w.varint(perms.len() as u64);
    for &p in perms {
        w.varint(u64::from(p));
    }
    w.varint(ioctls.len() as u64);
    for c in ioctls {
        w.0.extend_from_slice(&c.to_le_bytes());
    }
    first(w);
}

/// The details of a vector's first denial that audit2allow's text shows: a boolean
/// verdict's booleans (code 3), a constraint verdict's text and the denial's two contexts
/// (code 4, for the possible causes); nothing for other codes.
fn write_first(w: &mut Writer, verdict: Option<&Verdict>, scontext: &str, tcontext: &str) {
    match verdict {
        Some(Verdict::Boolean(fixes)) => {
            w.len(fixes.len());
            for f in fixes {
                w.str(&f.name);
                w.flag(f.value);
            }
        }
        Some(Verdict::Constraint(text)) => {
            w.str(text);
            w.str(scontext);
            w.str(tcontext);
        }
        _ => {}
    }
}

/// A vector's first denial as [`AllowGenerator::add_vector`] takes it: its verdict and, for
/// a constraint, its contexts.
type FirstDenial = (Option<Verdict>, Option<(String, String)>);

/// A vector's first denial read back (see [`write_first`]): its verdict (`None` for a class
/// the policy lacks) and, for a constraint, its contexts.
fn first_denial(v: &Vector<'_>) -> Result<FirstDenial, BlobError> {
    if v.code == UNKNOWN_CLASS {
        return Ok((None, None));
    }
    let mut r = Reader {
        buf: v.first,
        pos: 0,
    };
    let (mut booleans, mut constraint, mut contexts) = (Vec::new(), None, None);
    match v.code {
        3 => {
            for _ in 0..r.len()? {
                booleans.push((r.str()?, r.flag()?));
            }
        }
        4 => {
            constraint = Some(r.str()?);
            contexts = Some((r.str()?, r.str()?));
        }
        _ => {}
    }
    let verdict = verdict_from_plain((v.code, booleans, constraint)).map_err(BlobError::Verdict)?;
    Ok((Some(verdict), contexts))
}

/// The ioctl commands of a vector's record.
fn ioctls(raw: &[u8]) -> impl Iterator<Item = i64> + '_ {
    raw.chunks_exact(8)
        .map(|b| i64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
}

/// The table of a blob's names, built as rules and vectors are added.
#[derive(Default)]
struct RuleNames<'s> {
    ids: Map<&'s str, u32>,
    names: Vec<&'s str>,
}

impl<'s> RuleNames<'s> {
    fn id(&mut self, name: &'s str) -> u32 {
        let next = self.names.len() as u32;
        let id = *self.ids.entry(name).or_insert(next);
        if id == next {
            self.names.push(name);
        }
        id
    }
}

/// The cache's name ids → a chunk blob's table of names, in first-use order.
struct LocalNames<'c> {
    cache: &'c DigestCache,
    local: Vec<u32>,
    names: Vec<&'c str>,
}

impl<'c> LocalNames<'c> {
    fn id(&mut self, id: u32) -> u32 {
        let slot = &mut self.local[id as usize];
        if *slot == u32::MAX {
            *slot = self.names.len() as u32;
            self.names.push(Chunk::name(self.cache, id));
        }
        *slot
    }
}

/// An access vector being built from a chunk's kept denials, or merged from blobs' vectors.
struct Building<F> {
    key: [u32; 3],
    code: i32,
    perms: Vec<u32>,
    ioctls: Vec<i64>,
    /// Its first denial (a chunk's kept denial, or a blob's encoded details).
    first: F,
}

impl<F> Building<F> {
    /// Permissions and commands as sets (sorted, each once): audit2allow's vectors hold
    /// sets, so adding them repeated or in another order changes nothing.
    fn settle(&mut self) {
        self.perms.sort_unstable();
        self.perms.dedup();
        self.ioctls.sort_unstable();
        self.ioctls.dedup();
    }
}

/// Access vectors in first-seen order: `(key, code)` → index into `list`.
struct Vectors<F> {
    index: Map<([u32; 3], i32), usize>,
    list: Vec<Building<F>>,
}

impl<F> Vectors<F> {
    fn new() -> Vectors<F> {
        Vectors {
            index: Map::default(),
            list: Vec::new(),
        }
    }

    /// The vector `(key, code)`, appended with `first` if new.
    fn get(&mut self, key: [u32; 3], code: i32, first: impl FnOnce() -> F) -> &mut Building<F> {
        let next = self.list.len();
        let i = *self.index.entry((key, code)).or_insert(next);
        if i == next {
            self.list.push(Building {
                key,
                code,
                perms: Vec::new(),
                ioctls: Vec::new(),
                first: first(),
            });
        }
        &mut self.list[i]
    }
}

/// The blob of one digested chunk, written from the chunk's ids: each name the rule counts
/// and the access vectors use is written once, the kept denials added to their vectors as
/// audit2allow's generator adds them (first-seen order, the first denial's verdict, the
/// permissions and commands united). `paths` are the logs the chunk read, in log order,
/// with their AVC records.
fn encode_chunk(chunk: &Chunk, cache: &DigestCache, paths: &[(&str, u64)]) -> Vec<u8> {
    let mut names = LocalNames {
        cache,
        local: vec![u32::MAX; Chunk::names_len(cache)],
        names: Vec::new(),
    };
    let rules: Vec<([u32; 3], u64)> = chunk
        .rules(cache)
        .map(|(ids, n)| (ids.map(|id| names.id(id)), n))
        .collect();
    let mut vectors = Vectors::new();
    for k in chunk.kept(cache) {
        let code = k.verdict.map_or(UNKNOWN_CLASS, Verdict::code);
        let key = k.rule.map(|id| names.id(id));
        let v = vectors.get(key, code, || (k.verdict, k.scontext, k.tcontext));
        v.perms.extend(k.perm_ids.iter().map(|&p| names.id(p)));
        v.ioctls.extend(k.ioctlcmd.filter(|&c| c != 0));
    }
    for v in &mut vectors.list {
        v.settle();
    }
    let counted = Counted {
        counts: [
            chunk.lines,
            chunk.records,
            chunk.denials,
            chunk.malformed,
            chunk.unknown,
        ],
        selinux_seen: chunk.selinux_seen,
        paths: paths.to_vec(),
        verdicts: chunk.verdicts().collect(),
        names: names.names,
        rules,
        roles: chunk
            .roles
            .iter()
            .map(|(r, t)| (r.as_str(), t.as_str()))
            .collect(),
    };
    let list = vectors.list;
    encode(
        &counted,
        (list.len(), |w: &mut Writer| {
            for v in &list {
                let (verdict, s, t) = v.first;
                write_vector(w, v.key, v.code, &v.perms, &v.ioctls, |w| {
                    write_first(w, verdict, s, t)
                });
            }
        }),
        list.len() * 12,
    )
}

fn blob_error(e: BlobError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Merges blobs given in log order into one blob (the blobs' digests concatenated):
/// counts added, paths in first-seen order, access vectors as audit2allow's generator
/// merges them (see [`merge_vectors`]), role pairs at their first occurrence.
fn merge<B: AsRef<[u8]>>(blobs: &[B]) -> Result<Vec<u8>, BlobError> {
    let views = blobs
        .iter()
        .map(|b| View::parse(b.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    let counted: Vec<&Counted<'_>> = views.iter().map(|v| &v.counted).collect();
    let (c, remaps) = merge_counted(&counted);
    let m = merge_vectors(&views, &remaps);
    let size: usize = m.list.iter().map(|(_, _, v)| 12 + v.first.len()).sum();
    Ok(encode(
        &c,
        (m.list.len(), |w: &mut Writer| {
            let (mut perms, mut cmds) = (Vec::new(), Vec::new());
            for (i, &(key, view, v)) in m.list.iter().enumerate() {
                let ids = &remaps[view];
                perms.clear();
                perms.extend(
                    views[view].perm_ids[v.perms.clone()]
                        .iter()
                        .map(|&p| ids[p as usize]),
                );
                perms.extend(m.added_perms(i));
                cmds.clear();
                cmds.extend(ioctls(v.ioctls));
                cmds.extend(m.added_ioctls(i));
                write_vector(w, key, v.code, &perms, &cmds, |w| {
                    w.0.extend_from_slice(v.first)
                });
            }
        }),
        size,
    ))
}

/// Blobs' access vectors merged (see [`merge_vectors`]): each vector's first occurrence,
/// and the permissions and commands later blobs add to it, chained per vector in one
/// array each (a vector of its own per merged vector made allocation a tenth of a merge;
/// most vectors of a fleet's blobs are met again with nothing to add).
struct MergedVectors<'v, 'a> {
    /// The merged key, the view the vector was first met in, and that vector.
    list: Vec<([u32; 3], usize, &'v Vector<'a>)>,
    /// Per vector, the first of its added permissions and commands (`u32::MAX`: none).
    heads: Vec<[u32; 2]>,
    /// Added permissions (merged names' indexes) and commands, each with the next of its
    /// vector's.
    perms: Vec<(u32, u32)>,
    ioctls: Vec<(i64, u32)>,
}

impl MergedVectors<'_, '_> {
    fn added_perms(&self, i: usize) -> impl Iterator<Item = u32> + '_ {
        let mut at = self.heads[i][0];
        std::iter::from_fn(move || {
            let &(p, next) = self.perms.get(at as usize)?;
            at = next;
            Some(p)
        })
    }

    fn added_ioctls(&self, i: usize) -> impl Iterator<Item = i64> + '_ {
        let mut at = self.heads[i][1];
        std::iter::from_fn(move || {
            let &(c, next) = self.ioctls.get(at as usize)?;
            at = next;
            Some(c)
        })
    }
}

/// The blobs' access vectors merged in log order, as audit2allow's generator merges
/// denials: a vector first met in a later blob is appended (with its first denial's
/// details), one met before gets the permissions and commands it lacks. `remaps` takes
/// each view's name indexes to the merged table's ([`merge_counted`]).
fn merge_vectors<'v, 'a>(views: &'v [View<'a>], remaps: &[Vec<u32>]) -> MergedVectors<'v, 'a> {
    // At least the largest blob's vectors (the first, in a fleet's log order).
    let most = views.iter().map(|v| v.vectors.len()).max().unwrap_or(0);
    let mut index: Map<([u32; 3], i32), usize> =
        Map::with_capacity_and_hasher(most, KeyedState::default());
    let mut m = MergedVectors {
        list: Vec::with_capacity(most),
        heads: Vec::with_capacity(most),
        perms: Vec::new(),
        ioctls: Vec::new(),
    };
    for (vi, (view, ids)) in views.iter().zip(remaps).enumerate() {
        for x in &view.vectors {
            let key = x.key.map(|i| ids[i as usize]);
            let next = m.list.len();
            let i = *index.entry((key, x.code)).or_insert(next);
            if i == next {
                m.list.push((key, vi, x));
                m.heads.push([u32::MAX; 2]);
                continue;
            }
            let (_, first_view, first) = m.list[i];
            let first_ids = &remaps[first_view];
            for &p in &view.perm_ids[x.perms.clone()] {
                let p = ids[p as usize];
                let known = views[first_view].perm_ids[first.perms.clone()]
                    .iter()
                    .any(|&q| first_ids[q as usize] == p)
                    || m.added_perms(i).any(|q| q == p);
                if !known {
                    m.perms.push((p, m.heads[i][0]));
                    m.heads[i][0] = (m.perms.len() - 1) as u32;
                }
            }
            for c in ioctls(x.ioctls) {
                let known =
                    ioctls(first.ioctls).any(|d| d == c) || m.added_ioctls(i).any(|d| d == c);
                if !known {
                    m.ioctls.push((c, m.heads[i][1]));
                    m.heads[i][1] = (m.ioctls.len() - 1) as u32;
                }
            }
        }
    }
    m
}

/// [`merge_counted`] for the final step, which runs alone on idle cores: past 4 parts,
/// each half is merged on a thread of its own and the two results are merged (in log
/// order, the first half first; merging is associative). Merging the 16 blobs of a
/// two-worker run cost 0.12 CPU-s on the calling thread, most of it adding up the rule
/// counts of every blob (up to 39,000 rules each), all of it on a fleet run's serial end.
fn merge_counted_halves<'a>(parts: &[&Counted<'a>]) -> Counted<'a> {
    if parts.len() <= 4 {
        return merge_counted(parts).0;
    }
    let (first, second) = parts.split_at(parts.len() / 2);
    let (a, b) = std::thread::scope(|scope| {
        let a = scope.spawn(|| merge_counted(first).0);
        let b = merge_counted(second).0;
        (a.join(), b)
    });
    match a {
        Ok(a) => merge_counted(&[&a, &b]).0,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// The counted parts of blobs given in log order, merged (see [`merge`]), and for each
/// part the merged table's index of each of its names.
fn merge_counted<'a>(parts: &[&Counted<'a>]) -> (Counted<'a>, Vec<Vec<u32>>) {
    let mut counts: Counts = [0; 5];
    let mut selinux_seen = false;
    let mut paths: Vec<(&str, u64)> = Vec::new();
    let mut verdicts: Map<&str, u64> = Map::default();
    let mut names = RuleNames::default();
    let most_rules = parts.iter().map(|v| v.rules.len()).max().unwrap_or(0);
    let mut rules: Map<[u32; 3], u64> =
        Map::with_capacity_and_hasher(most_rules, KeyedState::default());
    let mut roles_seen: Set<(&str, &str)> = Set::default();
    let mut roles: Vec<(&str, &str)> = Vec::new();
    let mut remaps = Vec::with_capacity(parts.len());
    for v in parts {
        for (c, n) in counts.iter_mut().zip(v.counts) {
            *c += n;
        }
        selinux_seen |= v.selinux_seen;
        for &(path, n) in &v.paths {
            match paths.iter_mut().find(|(p, _)| *p == path) {
                Some((_, m)) => *m += n,
                None => paths.push((path, n)),
            }
        }
        for &(k, n) in &v.verdicts {
            *verdicts.entry(k).or_insert(0) += n;
        }
        let ids: Vec<u32> = v.names.iter().map(|n| names.id(n)).collect();
        for &(k, n) in &v.rules {
            *rules.entry(k.map(|i| ids[i as usize])).or_insert(0) += n;
        }
        for &pair in &v.roles {
            if roles_seen.insert(pair) {
                roles.push(pair);
            }
        }
        remaps.push(ids);
    }
    let merged = Counted {
        counts,
        selinux_seen,
        paths,
        verdicts: verdicts.into_iter().collect(),
        names: names.names,
        rules: rules.into_iter().collect(),
        roles,
    };
    (merged, remaps)
}

/// The digest of one chunk of the log at `path`, as a blob. `run` and `chunk` (both or
/// neither) place the chunk in a fleet run: a random token of the run and the chunk's
/// index in log order, so that denials an earlier chunk of the run kept on this worker are
/// not kept again.
#[pyfunction]
#[pyo3(name = "_fleet_digest", signature = (denials, data, path, *, run=None, chunk=None))]
fn fleet_digest<'py>(
    py: Python<'py>,
    denials: PyRef<'py, Denials>,
    data: &[u8],
    path: String,
    run: Option<u64>,
    chunk: Option<u64>,
) -> PyResult<Bound<'py, PyBytes>> {
    let at = position(run, chunk)?;
    let blob = with_worker_state(py, &denials, move |engine, cache| {
        let mut d = Digester::start(cache, at);
        let records = d.block(engine, cache, data);
        encode_chunk(&d.finish(), cache, &[(&path, records)])
    })?;
    Ok(PyBytes::new(py, &blob))
}

/// Runs `f` on the worker's engine and digest cache without the GIL, a panic reported as
/// an error (both map steps). A lock poisoned by an earlier panic is recovered rather than
/// failing every later task on this worker.
fn with_worker_state<T: Send>(
    py: Python<'_>,
    denials: &Denials,
    f: impl FnOnce(&Engine, &mut DigestCache) -> T + Send,
) -> PyResult<T> {
    let engine = denials.engine.clone();
    let cache = denials.verdicts.clone();
    py.detach(move || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let engine = engine.lock().unwrap_or_else(|p| p.into_inner());
            let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
            f(&engine, &mut cache)
        }))
    })
    .map_err(panic_error)
}

fn position(run: Option<u64>, chunk: Option<u64>) -> PyResult<Option<Position>> {
    match (run, chunk) {
        (Some(run), Some(chunk)) => Ok(Some(Position { run, chunk })),
        (None, None) => Ok(None),
        _ => Err(PyValueError::new_err("give both run and chunk, or neither")),
    }
}

/// The map step of `arbiter.dask`: one task's byte ranges `(path, offset, length)`, in log
/// order, read here (each widened to the lines that start in it, see [`ranges`]) and
/// digested into one blob. `run` and `chunk` as for `_fleet_digest`, `chunk` being the
/// task's index in log order.
///
/// One task reads many ranges, one at a time (into the worker's one read buffer), so a
/// fleet run is a few tasks per worker instead of one per range: each task costs the
/// client, the scheduler and the worker's event loop messages and transitions, on the
/// cores the workers compute on. The ranges'
/// digests accumulate into one chunk (one blob, no merge); should the worker's cache pass
/// its bounds between two ranges, the chunk ends there, another starts, and the task
/// merges their blobs.
#[pyfunction]
#[pyo3(name = "_fleet_digest_ranges", signature = (denials, ranges, *, run=None, chunk=None))]
fn fleet_digest_ranges<'py>(
    py: Python<'py>,
    denials: PyRef<'py, Denials>,
    ranges: Vec<(String, u64, u64)>,
    run: Option<u64>,
    chunk: Option<u64>,
) -> PyResult<Bound<'py, PyBytes>> {
    let at = position(run, chunk)?;
    let blob = with_worker_state(py, &denials, move |engine, cache| {
        let mut blobs = Vec::new();
        let mut paths: Vec<(&str, u64)> = Vec::new();
        let mut d = Digester::start(cache, at);
        for (path, offset, len) in &ranges {
            if cache.is_full() && !d.is_empty() {
                blobs.push(encode_chunk(&d.finish(), cache, &paths));
                paths.clear();
                d = Digester::start(cache, at);
            }
            // The worker's buffer, out of the cache while the digest borrows the cache.
            let mut text = std::mem::take(&mut cache.read_buf);
            let read = ranges::read_range_into(path, *offset, *len, &mut text);
            let records = read.map(|()| d.block(engine, cache, &text));
            cache.read_buf = text;
            let records = records?;
            match paths.last_mut() {
                Some((p, n)) if *p == path.as_str() => *n += records,
                _ => paths.push((path, records)),
            }
        }
        blobs.push(encode_chunk(&d.finish(), cache, &paths));
        if blobs.len() == 1 {
            return Ok(blobs.swap_remove(0));
        }
        // Blobs written just above decode; an error here would be a bug, reported.
        merge(&blobs).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    })??;
    Ok(PyBytes::new(py, &blob))
}

/// The reduce step: blobs in log order merged into one blob. The blobs are read in place
/// (borrowed from the Python objects, which live until this call returns), not copied.
#[pyfunction]
#[pyo3(name = "_fleet_merge")]
fn fleet_merge<'py>(
    py: Python<'py>,
    blobs: Vec<Bound<'py, PyBytes>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let blobs: Vec<&[u8]> = blobs.iter().map(|b| b.as_bytes()).collect();
    let blob = py
        .detach(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| merge(&blobs))))
        .map_err(panic_error)?
        .map_err(blob_error)?;
    Ok(PyBytes::new(py, &blob))
}

/// The final step: audit2allow's text and the counts from one merged blob, as
/// `(allow, {path: records}, {rule: denials}, {verdict: records}, {count name: value})`.
///
/// It runs alone at the end of a fleet run, when the workers' cores are idle, so the two
/// halves run at once: audit2allow's text is rendered on a thread of its own (denials go to
/// audit2allow's generator as strings borrowed from the blob) while this thread builds the
/// Python dictionaries, whose rule keys' type and class names become one Python string each
/// (the blob's table of names), however many rules share them. The dictionaries were a sixth
/// of this step, which is serial time in every fleet run.
///
/// `blobs` is one blob, or blobs in log order merged here first (as [`fleet_merge`] would,
/// without writing the merged blob and reading it again): `arbiter.dask` passes the top
/// level of its reduction tree, so the last merge is part of this step instead of a task
/// whose 7 MB result travels to the client to be read again.
#[pyfunction]
#[pyo3(name = "_fleet_finish", signature = (blobs, *, module=None, requires=false,
    dontaudit=false, xperms=false))]
fn fleet_finish<'py>(
    py: Python<'py>,
    blobs: &Bound<'py, PyAny>,
    module: Option<&str>,
    requires: bool,
    dontaudit: bool,
    xperms: bool,
) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
    let generation = fleet_generation(module, requires, dontaudit, xperms)?;
    // Borrowed from the Python bytes objects, which live until this call returns.
    let blobs: Vec<Bound<'py, PyBytes>> = match blobs.extract::<Bound<'py, PyBytes>>() {
        Ok(one) => vec![one],
        Err(_) => blobs.extract().map_err(|_| {
            PyTypeError::new_err("_fleet_finish takes a blob (bytes) or a list of blobs")
        })?,
    };
    let views = blobs
        .iter()
        .map(|b| View::parse(b.as_bytes()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(blob_error)?;
    // As the command line: nothing at all when no SELinux line was seen.
    let selinux_seen = views.iter().any(|v| v.counted.selinux_seen);
    let (allow, dicts) = std::thread::scope(|scope| {
        let (views, generation) = (&views, &generation);
        let render = scope.spawn(move || {
            if selinux_seen {
                render_views(views, generation)
            } else {
                Ok(String::new())
            }
        });
        let parts: Vec<&Counted<'_>> = views.iter().map(|v| &v.counted).collect();
        let merged;
        let counted = match parts[..] {
            [one] => one,
            _ => {
                merged = py.detach(|| merge_counted_halves(&parts));
                &merged
            }
        };
        let dicts = finish_dicts(py, counted);
        // The GIL is released while the text is still being rendered.
        (py.detach(move || render.join()), dicts)
    });
    let allow = allow.map_err(panic_error)?.map_err(blob_error)?;
    let (paths, rules, verdicts, counts) = dicts?;
    (allow, paths, rules, verdicts, counts).into_pyobject(py)
}

/// The dictionaries of [`fleet_finish`]: records per path, denials per rule, records per
/// verdict, and the counters.
type FinishDicts<'py> = (
    Bound<'py, PyDict>,
    Bound<'py, PyDict>,
    Bound<'py, PyDict>,
    Bound<'py, PyDict>,
);

fn finish_dicts<'py>(py: Python<'py>, c: &Counted<'_>) -> PyResult<FinishDicts<'py>> {
    let counts = PyDict::new(py);
    for (k, v) in ["lines", "records", "denials", "malformed", "unknown"]
        .into_iter()
        .zip(c.counts)
    {
        counts.set_item(k, v)?;
    }
    let paths = PyDict::new(py);
    for &(p, n) in &c.paths {
        paths.set_item(p, n)?;
    }
    let verdicts = PyDict::new(py);
    for &(v, n) in &c.verdicts {
        verdicts.set_item(v, n)?;
    }
    // The blob names each type and class once: one Python string each (made when a rule
    // first uses it, as the table holds permissions too).
    let mut names: Vec<Option<Bound<'py, PyString>>> = vec![None; c.names.len()];
    let rules = PyDict::new(py);
    for &(ids, n) in &c.rules {
        let key = PyTuple::new(
            py,
            ids.map(|i| {
                names[i as usize]
                    .get_or_insert_with(|| PyString::new(py, c.names[i as usize]))
                    .clone()
            }),
        )?;
        rules.set_item(key, n)?;
    }
    Ok((paths, rules, verdicts, counts))
}

/// audit2allow's text from blobs' access vectors and roles, read in place, in log order:
/// each blob's vectors added to one generator (as [`merge_vectors`] merges them).
fn render_views(views: &[View<'_>], generation: &Generation) -> Result<String, BlobError> {
    let mut g = AllowGenerator::new();
    // At most every blob's vectors, most of them the first (largest) blob's.
    g.reserve(views.iter().map(|v| v.vectors.len()).sum());
    for view in views {
        // The blob's names (types, classes, permissions) → the generator's, looked up once
        // per name.
        let mut ids = vec![u32::MAX; view.counted.names.len()];
        let mut id = |g: &mut AllowGenerator, i: u32| {
            let slot = &mut ids[i as usize];
            if *slot == u32::MAX {
                *slot = g.name_id(view.counted.names[i as usize]);
            }
            *slot
        };
        let mut perms = Vec::new();
        for v in &view.vectors {
            let key = v.key.map(|i| id(&mut g, i));
            perms.clear();
            perms.extend(
                view.perm_ids[v.perms.clone()]
                    .iter()
                    .map(|&p| id(&mut g, p)),
            );
            g.add_vector(
                key,
                v.code,
                || first_denial(v),
                perms.iter().copied(),
                ioctls(v.ioctls),
            )?;
        }
    }
    for view in views {
        for &(role, ty) in &view.counted.roles {
            g.add_role(role, ty);
        }
    }
    let text = g.render(generation);
    // Freeing a fleet's generator (a hundred thousand access vectors, their permission
    // sets) took a tenth of this thread, the final step's critical path: it is freed on a
    // thread of its own while the result goes back (inline if no thread can be started).
    let _ = std::thread::Builder::new()
        .name("arbiter-fleet-free".into())
        .spawn(move || drop(g));
    Ok(text)
}

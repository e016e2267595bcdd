//! Fleet digests as compact byte blobs, so that `arbiter.dask` reduces on its workers.
//!
//! Shipping a [`Digest`](crate::denials::Digest) as Python tuples made a Dask run spend more
//! time pickling and unpickling per-denial objects than explaining them. Here a log chunk's
//! digest is encoded in Rust into one `bytes` object ([`fleet_digest`]), digests merge
//! blob-to-blob in Rust ([`fleet_merge`], associative and order-keeping, so Dask's tree
//! reduction can run it on the workers), and the client decodes one blob
//! ([`fleet_finish`]) into audit2allow's text and the counts.
//!
//! Merging keeps the first occurrence of every distinct denial: audit2allow's state after a
//! repeated denial is the one before it, so the merged blob renders what one run over every
//! log renders. The format is private to this module (a magic, then little-endian
//! length-prefixed fields); a blob that does not decode raises `ValueError`. The per-rule
//! counts name their types and classes by index into a table of the blob's names: a
//! chunk counts tens of thousands of rules over a few thousand names, and spelling each
//! rule out made them three quarters of every blob and most of the merges' work.

mod ranges;

use crate::denials::{
    fleet_generation, plain, verdict_from_plain, Chunk, Denials, DigestCache, Digester, Position,
};
use crate::errors::panic_error;
use arbiter_decide::KeyedState;
use arbiter_denials::{AllowGenerator, Engine, Generation};
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

const MAGIC: &[u8; 8] = b"ARBFLT3\0";

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
    /// A [`Writer::varint`]; one that runs past ten bytes or 64 bits is refused.
    fn varint(&mut self) -> Result<u64, BlobError> {
        let at = self.pos;
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.take(1)?[0];
            let bits = u64::from(b & 0x7f);
            if shift == 63 && bits > 1 {
                return Err(BlobError::Varint(at));
            }
            v |= bits << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(BlobError::Varint(at))
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

/// A blob read in place: every string borrowed from it, each kept denial its raw bytes.
/// Merging works on views, so a reduce task copies each distinct denial's bytes once and
/// allocates no string (decoding into owned values made the merges a quarter of a fleet
/// run's CPU, and the last merge runs alone).
struct View<'a> {
    counts: Counts,
    selinux_seen: bool,
    paths: Vec<(&'a str, u64)>,
    verdicts: Vec<(&'a str, u64)>,
    /// The names the rules refer to by index.
    rule_names: Vec<&'a str>,
    /// (source type, target type, class) as indexes into `rule_names`, and the count.
    rules: Vec<([u32; 3], u64)>,
    kept: Vec<KeptRaw<'a>>,
    roles: Vec<(&'a str, &'a str)>,
}

/// One kept denial as encoded: `key` is the part that makes two denials the same for
/// audit2allow (source, target, class, permissions, ioctl; the verdict follows from
/// them), `raw` the whole record.
#[derive(Clone, Copy)]
struct KeptRaw<'a> {
    key: &'a [u8],
    raw: &'a [u8],
}

impl<'a> Reader<'a> {
    /// Reads one kept denial's record, checking its layout, and returns its spans. Its
    /// strings' UTF-8 is checked where they are read, by [`render_view`]: the merges only
    /// compare and copy records' bytes, most records of a fleet's blobs are dropped there
    /// as repeats, and checking every one on the way in was a fifth of the final step's
    /// calling thread (the records a merge writes are checked when the client reads them).
    fn kept_raw(&mut self) -> Result<KeptRaw<'a>, BlobError> {
        let start = self.pos;
        for _ in 0..3 {
            self.skip_str()?;
        }
        for _ in 0..self.len()? {
            self.skip_str()?;
        }
        if self.flag()? {
            self.take(8)?;
        }
        let key_end = self.pos;
        if self.flag()? {
            self.take(4)?;
            for _ in 0..self.len()? {
                self.skip_str()?;
                self.flag()?;
            }
            if self.flag()? {
                self.skip_str()?;
            }
        }
        Ok(KeptRaw {
            key: &self.buf[start..key_end],
            raw: &self.buf[start..self.pos],
        })
    }
}

impl<'a> View<'a> {
    fn parse(buf: &'a [u8]) -> Result<View<'a>, BlobError> {
        let mut r = Reader { buf, pos: 0 };
        if r.take(MAGIC.len()).map_err(|_| BlobError::Magic)? != MAGIC {
            return Err(BlobError::Magic);
        }
        let mut counts = [0; 5];
        for c in &mut counts {
            *c = r.u64()?;
        }
        let selinux_seen = r.flag()?;
        let mut v = View {
            counts,
            selinux_seen,
            paths: Vec::new(),
            verdicts: Vec::new(),
            rule_names: Vec::new(),
            rules: Vec::new(),
            kept: Vec::new(),
            roles: Vec::new(),
        };
        for _ in 0..r.len()? {
            v.paths.push((r.str_ref()?, r.u64()?));
        }
        for _ in 0..r.len()? {
            v.verdicts.push((r.str_ref()?, r.u64()?));
        }
        for _ in 0..r.len()? {
            v.rule_names.push(r.str_ref()?);
        }
        for _ in 0..r.len()? {
            let mut key = [0u32; 3];
            for id in &mut key {
                let n = r.varint()?;
                if n >= v.rule_names.len() as u64 {
                    return Err(BlobError::RuleName(n));
                }
                // Below the table's length, so within u32.
                *id = n as u32;
            }
            v.rules.push((key, r.varint()?));
        }
        let n = r.len()?;
        v.kept.reserve(n);
        for _ in 0..n {
            v.kept.push(r.kept_raw()?);
        }
        for _ in 0..r.len()? {
            v.roles.push((r.str_ref()?, r.str_ref()?));
        }
        if r.pos != buf.len() {
            return Err(BlobError::Truncated(r.pos));
        }
        Ok(v)
    }
}

/// Writes a blob from its parts; `kept` writes the kept denials' records.
#[allow(clippy::too_many_arguments)]
fn encode<'s>(
    counts: Counts,
    selinux_seen: bool,
    paths: &[(impl AsRef<str>, u64)],
    verdicts: impl ExactSizeIterator<Item = (&'s str, u64)>,
    rule_names: &[&str],
    rules: impl ExactSizeIterator<Item = ([u32; 3], u64)>,
    kept: (usize, impl FnOnce(&mut Writer)),
    roles: &[(impl AsRef<str>, impl AsRef<str>)],
    size_hint: usize,
) -> Vec<u8> {
    let mut w = Writer(Vec::with_capacity(64 + size_hint));
    w.0.extend_from_slice(MAGIC);
    for v in counts {
        w.u64(v);
    }
    w.flag(selinux_seen);
    w.len(paths.len());
    for (p, n) in paths {
        w.str(p.as_ref());
        w.u64(*n);
    }
    w.len(verdicts.len());
    for (v, n) in verdicts {
        w.str(v);
        w.u64(n);
    }
    w.len(rule_names.len());
    for name in rule_names {
        w.str(name);
    }
    w.len(rules.len());
    for (ids, n) in rules {
        for id in ids {
            w.varint(u64::from(id));
        }
        w.varint(n);
    }
    w.len(kept.0);
    (kept.1)(&mut w);
    w.len(roles.len());
    for (r, t) in roles {
        w.str(r.as_ref());
        w.str(t.as_ref());
    }
    w.0
}

/// The blob of one digested chunk, written from the chunk's ids: each name the rule counts
/// use is written once, and each kept denial's strings straight from the cache's names.
/// `paths` are the logs the chunk read, in log order, with their AVC records.
fn encode_chunk(chunk: &Chunk, cache: &DigestCache, paths: &[(&str, u64)]) -> Vec<u8> {
    // The cache's name ids → the blob's table of rule names.
    let mut local = vec![u32::MAX; Chunk::names_len(cache)];
    let mut names: Vec<&str> = Vec::new();
    let rules: Vec<([u32; 3], u64)> = chunk
        .rules(cache)
        .map(|(ids, n)| {
            let ids = ids.map(|id| {
                let slot = &mut local[id as usize];
                if *slot == u32::MAX {
                    *slot = names.len() as u32;
                    names.push(Chunk::name(cache, id));
                }
                *slot
            });
            (ids, n)
        })
        .collect();
    let kept = chunk.kept(cache);
    let kept_len = kept.len();
    encode(
        [
            chunk.lines,
            chunk.records,
            chunk.denials,
            chunk.malformed,
            chunk.unknown,
        ],
        chunk.selinux_seen,
        paths,
        chunk.verdicts(),
        &names,
        rules.into_iter(),
        (kept_len, |w: &mut Writer| {
            for k in kept {
                w.str(k.scontext);
                w.str(k.tcontext);
                w.str(k.tclass);
                let perms = k.perms();
                w.len(perms.len());
                for p in perms {
                    w.str(p);
                }
                w.flag(k.ioctlcmd.is_some());
                if let Some(i) = k.ioctlcmd {
                    w.0.extend_from_slice(&i.to_le_bytes());
                }
                w.flag(k.verdict.is_some());
                if let Some(v) = k.verdict {
                    let (code, booleans, constraint) = plain(v);
                    w.0.extend_from_slice(&code.to_le_bytes());
                    w.len(booleans.len());
                    for (b, v) in &booleans {
                        w.str(b);
                        w.flag(*v);
                    }
                    w.flag(constraint.is_some());
                    if let Some(c) = &constraint {
                        w.str(c);
                    }
                }
            }
        }),
        &chunk.roles,
        kept_len * 128,
    )
}

/// The table of a blob's rule names, built as rules are added.
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

fn blob_error(e: BlobError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Merges blobs given in log order into one blob (the blobs' digests concatenated):
/// counts added, paths in first-seen order, the first occurrence of each distinct denial
/// and role pair kept — audit2allow's state after a repeated denial is the one before it.
fn merge(blobs: &[Vec<u8>]) -> Result<Vec<u8>, BlobError> {
    let views = blobs
        .iter()
        .map(|b| View::parse(b))
        .collect::<Result<Vec<_>, _>>()?;
    let m = merge_views(&views);
    let size: usize = m.kept.iter().map(|k| k.raw.len()).sum();
    Ok(encode(
        m.counts,
        m.selinux_seen,
        &m.paths,
        m.verdicts.iter().copied(),
        &m.rule_names,
        m.rules.iter().copied(),
        (m.kept.len(), |w: &mut Writer| {
            for k in &m.kept {
                w.0.extend_from_slice(k.raw);
            }
        }),
        &m.roles,
        size,
    ))
}

/// [`merge_views`] for the final step, which runs alone on idle cores: past 4 views, each
/// half is merged on a thread of its own and the two results are merged (in log order, the
/// first half first; merging is associative). Merging the 16 blobs of a two-worker run
/// cost 0.12 CPU-s on the calling thread, most of it adding up the rule counts of every
/// blob (up to 39,000 rules each), all of it on a fleet run's serial end.
fn merge_views_halves<'a>(views: &[View<'a>]) -> View<'a> {
    if views.len() <= 4 {
        return merge_views(views);
    }
    let (first, second) = views.split_at(views.len() / 2);
    let (a, b) = std::thread::scope(|scope| {
        let a = scope.spawn(|| merge_views(first));
        let b = merge_views(second);
        (a.join(), b)
    });
    match a {
        Ok(a) => merge_views(&[a, b]),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// Views given in log order merged into one view of the same blobs (see [`merge`]).
fn merge_views<'a>(views: &[View<'a>]) -> View<'a> {
    let mut counts: Counts = [0; 5];
    let mut selinux_seen = false;
    let mut paths: Vec<(&str, u64)> = Vec::new();
    let mut verdicts: Map<&str, u64> = Map::default();
    let mut rule_names = RuleNames::default();
    let most_rules = views.iter().map(|v| v.rules.len()).max().unwrap_or(0);
    let mut rules: Map<[u32; 3], u64> =
        Map::with_capacity_and_hasher(most_rules, KeyedState::default());
    let kept_total: usize = views.iter().map(|v| v.kept.len()).sum();
    let mut seen: Set<&[u8]> = Set::with_capacity_and_hasher(kept_total, KeyedState::default());
    let mut kept: Vec<KeptRaw<'a>> = Vec::with_capacity(kept_total);
    let mut roles_seen: Set<(&str, &str)> = Set::default();
    let mut roles: Vec<(&str, &str)> = Vec::new();
    for v in views {
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
        let ids: Vec<u32> = v.rule_names.iter().map(|n| rule_names.id(n)).collect();
        for &(k, n) in &v.rules {
            *rules.entry(k.map(|i| ids[i as usize])).or_insert(0) += n;
        }
        for &k in &v.kept {
            if seen.insert(k.key) {
                kept.push(k);
            }
        }
        for &pair in &v.roles {
            if roles_seen.insert(pair) {
                roles.push(pair);
            }
        }
    }
    View {
        counts,
        selinux_seen,
        paths,
        verdicts: verdicts.into_iter().collect(),
        rule_names: rule_names.names,
        rules: rules.into_iter().collect(),
        kept,
        roles,
    }
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
/// One task reads many ranges, one at a time, so a fleet run is a few tasks per worker
/// instead of one per range: each task costs the client, the scheduler and the worker's
/// event loop messages and transitions, on the cores the workers compute on. The ranges'
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
            let text = ranges::read_range(path, *offset, *len)?;
            let records = d.block(engine, cache, &text);
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

/// The reduce step: blobs in log order merged into one blob.
#[pyfunction]
#[pyo3(name = "_fleet_merge")]
fn fleet_merge<'py>(py: Python<'py>, blobs: Vec<Vec<u8>>) -> PyResult<Bound<'py, PyBytes>> {
    let blob = py
        .detach(move || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || merge(&blobs)))
        })
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
    let mut views = blobs
        .iter()
        .map(|b| View::parse(b.as_bytes()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(blob_error)?;
    let view = if views.len() == 1 {
        views.remove(0)
    } else {
        py.detach(|| merge_views_halves(&views))
    };
    let (allow, dicts) = std::thread::scope(|scope| {
        let (view, generation) = (&view, &generation);
        let render = scope.spawn(move || {
            // As the command line: nothing at all when no SELinux line was seen.
            if view.selinux_seen {
                render_view(view, generation)
            } else {
                Ok(String::new())
            }
        });
        let dicts = finish_dicts(py, view);
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

fn finish_dicts<'py>(py: Python<'py>, view: &View<'_>) -> PyResult<FinishDicts<'py>> {
    let counts = PyDict::new(py);
    for (k, v) in ["lines", "records", "denials", "malformed", "unknown"]
        .into_iter()
        .zip(view.counts)
    {
        counts.set_item(k, v)?;
    }
    let paths = PyDict::new(py);
    for &(p, n) in &view.paths {
        paths.set_item(p, n)?;
    }
    let verdicts = PyDict::new(py);
    for &(v, n) in &view.verdicts {
        verdicts.set_item(v, n)?;
    }
    // The blob names each type and class once: one Python string each.
    let names: Vec<Bound<'py, PyString>> = view
        .rule_names
        .iter()
        .map(|s| PyString::new(py, s))
        .collect();
    let rules = PyDict::new(py);
    for &(ids, n) in &view.rules {
        let key = PyTuple::new(py, ids.map(|i| names[i as usize].clone()))?;
        rules.set_item(key, n)?;
    }
    Ok((paths, rules, verdicts, counts))
}

/// audit2allow's text from a blob's kept denials and roles, read in place.
fn render_view(view: &View<'_>, generation: &Generation) -> Result<String, BlobError> {
    let mut g = AllowGenerator::new();
    let mut perms: Vec<&str> = Vec::new();
    for k in &view.kept {
        let mut r = Reader { buf: k.raw, pos: 0 };
        let (s, t, c) = (r.str_ref()?, r.str_ref()?, r.str_ref()?);
        perms.clear();
        for _ in 0..r.len()? {
            perms.push(r.str_ref()?);
        }
        let ioctl = if r.flag()? {
            Some(i64::from_le_bytes(r.take(8)?.try_into().unwrap_or([0; 8])))
        } else {
            None
        };
        let verdict = if r.flag()? {
            let code = i32::from_le_bytes(r.take(4)?.try_into().unwrap_or([0; 4]));
            let mut booleans = Vec::new();
            for _ in 0..r.len()? {
                booleans.push((r.str()?, r.flag()?));
            }
            let constraint = if r.flag()? { Some(r.str()?) } else { None };
            Some(verdict_from_plain((code, booleans, constraint)).map_err(BlobError::Verdict)?)
        } else {
            None
        };
        g.add(s, t, c, &perms, verdict.as_ref(), ioctl);
    }
    for &(role, ty) in &view.roles {
        g.add_role(role, ty);
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

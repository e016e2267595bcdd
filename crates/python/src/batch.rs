//! The batch calls (`compute_av_many`, `check_many`): read the queries under the GIL, answer
//! them on every core without it, build the result list under it again.
//!
//! Reading is the part no thread can share, so it is kept to pointer work: each string is
//! looked up in a per-batch table and copied only the first time it is seen (a batch of
//! random queries over one policy repeats its contexts and classes many times), and a
//! column that repeats the very same string object skips even the lookup. Contexts are
//! then turned into SIDs once per distinct string, permission sets resolved once per
//! distinct (class, names), and the queries split into one contiguous range per core, each
//! thread answering through its own `SecurityServer::query()` handle. Identical answers
//! share one result tuple (tuples are immutable), so building the list allocates once per
//! distinct answer rather than once per query.

use crate::avc::lock;
use crate::errors::{context_error, decide_error, panic_error};
use arbiter_decide::{DecideError, PermSet, SecurityServer, Sid};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;
use std::sync::{mpsc, Mutex, OnceLock};

/// Below this many items per thread, a batch runs on the calling thread only (spawning
/// costs tens of microseconds).
const MIN_PER_THREAD: usize = 2048;

/// A small multiplicative hasher for the per-batch tables (keys are short strings and
/// small integer slices built by this module, not attacker-chosen map keys that persist).
#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w) ^ (rest.len() as u64) << 59);
        }
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(n as u64);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

impl FxHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type Fx = BuildHasherDefault<FxHasher>;

/// Distinct strings of a batch, numbered in order of first appearance.
#[derive(Default)]
struct Interner {
    ids: HashMap<Box<str>, u32, Fx>,
    strings: Vec<Box<str>>,
}

impl Interner {
    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.strings.len() as u32;
        self.strings.push(s.into());
        self.ids.insert(s.into(), id);
        id
    }
}

/// One field position of the queries: remembers the last string object it saw, so a
/// column repeating one object costs a pointer comparison.
struct Column<'py> {
    last: Option<(Bound<'py, PyAny>, u32)>,
}

impl<'py> Column<'py> {
    fn new() -> Column<'py> {
        Column { last: None }
    }

    fn id(&mut self, obj: Bound<'py, PyAny>, strings: &mut Interner, what: &str) -> PyResult<u32> {
        if let Some((o, id)) = &self.last {
            if o.is(&obj) {
                return Ok(*id);
            }
        }
        let s = obj
            .cast::<PyString>()
            .map_err(|_| PyTypeError::new_err(format!("{what} must be a str")))?
            .to_str()?;
        let id = strings.intern(s);
        // Holding the object keeps its address from being reused by another string.
        self.last = Some((obj, id));
        Ok(id)
    }
}

/// A context column of a `compute_av_many` chunk: a run of the same string object is
/// copied once.
struct SpanColumn<'py> {
    last: Option<(Bound<'py, PyAny>, [u32; 2])>,
}

impl<'py> SpanColumn<'py> {
    fn new() -> SpanColumn<'py> {
        SpanColumn { last: None }
    }

    fn copy(
        &mut self,
        obj: Bound<'py, PyAny>,
        chunk: &mut AvChunk,
        what: &str,
    ) -> PyResult<[u32; 2]> {
        if let Some((o, span)) = &self.last {
            if o.is(&obj) {
                return Ok(*span);
            }
        }
        let s = obj
            .cast::<PyString>()
            .map_err(|_| PyTypeError::new_err(format!("{what} must be a str")))?
            .to_str()?;
        let span = chunk.copy(s);
        self.last = Some((obj, span));
        Ok(span)
    }
}

/// The class column of a `compute_av_many` chunk.
struct ClassColumn<'py> {
    last: Option<(Bound<'py, PyAny>, u16)>,
}

impl<'py> ClassColumn<'py> {
    fn new() -> ClassColumn<'py> {
        ClassColumn { last: None }
    }

    fn class(&mut self, obj: Bound<'py, PyAny>, chunk: &mut AvChunk) -> PyResult<u16> {
        if let Some((o, id)) = &self.last {
            if o.is(&obj) {
                return Ok(*id);
            }
        }
        let s = obj
            .cast::<PyString>()
            .map_err(|_| PyTypeError::new_err("tclass must be a str"))?
            .to_str()?;
        let id = chunk.class(s)?;
        self.last = Some((obj, id));
        Ok(id)
    }
}

/// The `N` fields of one query (a tuple, or any other sequence).
fn fields<'py, const N: usize>(
    item: &Bound<'py, PyAny>,
    index: usize,
) -> PyResult<[Bound<'py, PyAny>; N]> {
    let wrong = || {
        PyTypeError::new_err(format!(
            "query {index}: expected a tuple of {N} items ({})",
            if N == 3 {
                "scontext, tcontext, tclass"
            } else {
                "scontext, tcontext, tclass, perms"
            }
        ))
    };
    if let Ok(t) = item.cast::<PyTuple>() {
        if t.len() != N {
            return Err(wrong());
        }
        let mut out: [Option<Bound<'py, PyAny>>; N] = std::array::from_fn(|_| None);
        for (k, slot) in out.iter_mut().enumerate() {
            *slot = Some(t.get_borrowed_item(k)?.to_owned());
        }
        return Ok(out.map(|o| o.expect("every field was set")));
    }
    if item.is_instance_of::<PyString>() {
        return Err(wrong());
    }
    let items = item
        .try_iter()
        .map_err(|_| wrong())?
        .collect::<PyResult<Vec<_>>>()?;
    items.try_into().map_err(|_| wrong())
}

/// Calls `f` on each element of an iterable (a list is walked directly).
fn for_each<'py>(
    items: &Bound<'py, PyAny>,
    mut f: impl FnMut(usize, Bound<'py, PyAny>) -> PyResult<()>,
) -> PyResult<()> {
    if let Ok(list) = items.cast::<PyList>() {
        for (i, item) in list.iter().enumerate() {
            f(i, item)?;
        }
    } else {
        for (i, item) in items.try_iter()?.enumerate() {
            f(i, item?)?;
        }
    }
    Ok(())
}

/// Why one query got no answer (made an exception only if it is reported).
enum Failure {
    /// A context the server could not turn into a SID.
    Context {
        which: &'static str,
        context: Box<str>,
        error: DecideError,
    },
    /// A class or permission name, or the decision itself.
    Name(DecideError),
}

impl Failure {
    /// The exception for query `index`, its message prefixed with `query N: `.
    fn into_error(self, index: usize) -> PyErr {
        match self {
            Failure::Context {
                which,
                context,
                error,
            } => context_error(error, &format!("query {index}: {which}"), &context),
            Failure::Name(e) => {
                let err = decide_error(e);
                Python::attach(|py| {
                    let msg = format!("query {index}: {}", err.value(py));
                    let _ = err.value(py).setattr("args", (msg,));
                });
                err
            }
        }
    }
}

type Outcome<T> = Result<T, Box<Failure>>;

fn threads() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Runs `work` over `0..n` split into one contiguous range per thread (the calling thread
/// takes the last) and concatenates the results in order. A panic in any thread comes
/// back as an error.
fn par_ranges<R: Send>(n: usize, work: impl Fn(Range<usize>) -> Vec<R> + Sync) -> PyResult<Vec<R>> {
    let t = threads().min(n.div_ceil(MIN_PER_THREAD)).max(1);
    let run = |r: Range<usize>| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(r)));
    if t == 1 {
        return run(0..n).map_err(panic_error);
    }
    let chunk = n.div_ceil(t);
    let parts = std::thread::scope(|s| {
        let handles: Vec<_> = (0..t - 1)
            .map(|i| {
                let run = &run;
                s.spawn(move || run(i * chunk..((i + 1) * chunk).min(n)))
            })
            .collect();
        let last = run((t - 1) * chunk..n);
        let mut parts: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(Err))
            .collect();
        parts.push(last);
        parts
    });
    let mut out = Vec::with_capacity(n);
    for p in parts {
        out.extend(p.map_err(panic_error)?);
    }
    Ok(out)
}

/// The SIDs of a batch's distinct contexts, resolved in parallel.
fn resolve_contexts(
    srv: &SecurityServer,
    contexts: &[Box<str>],
) -> PyResult<Vec<Result<Sid, DecideError>>> {
    par_ranges(contexts.len(), |r| {
        contexts[r].iter().map(|c| srv.context_to_sid(c)).collect()
    })
}

/// Queries per chunk of a `compute_av_many` batch: large enough that handing one to a
/// worker costs nothing next to answering it, small enough that workers start early.
const AV_CHUNK: usize = 8192;

/// One chunk of a `compute_av_many` batch, self-contained so a worker can answer it while
/// the reader (holding the GIL) fills the next: the contexts are copied back to back into
/// one buffer, the classes numbered within the chunk.
struct AvChunk {
    index: usize,
    text: String,
    classes: Vec<Box<str>>,
    class_ids: HashMap<Box<str>, u16, Fx>,
    /// (source span, target span, class) per query; spans index `text`.
    queries: Vec<([u32; 2], [u32; 2], u16)>,
}

impl AvChunk {
    /// An empty chunk whose buffer holds `text` bytes before it must grow.
    fn new(index: usize, text: usize) -> AvChunk {
        AvChunk {
            index,
            text: String::with_capacity(text),
            classes: Vec::new(),
            class_ids: HashMap::default(),
            queries: Vec::with_capacity(AV_CHUNK),
        }
    }

    fn copy(&mut self, s: &str) -> [u32; 2] {
        let start = self.text.len() as u32;
        self.text.push_str(s);
        [start, s.len() as u32]
    }

    fn class(&mut self, c: &str) -> PyResult<u16> {
        if let Some(&id) = self.class_ids.get(c) {
            return Ok(id);
        }
        let id = u16::try_from(self.classes.len())
            .map_err(|_| PyValueError::new_err("too many distinct classes in one batch"))?;
        self.classes.push(c.into());
        self.class_ids.insert(c.into(), id);
        Ok(id)
    }

    fn span(&self, [start, len]: [u32; 2]) -> &str {
        &self.text[start as usize..(start + len) as usize]
    }

    /// Answers the chunk through the thread's query handle; `sids` is the worker's memory
    /// of the contexts it resolved so far in this batch.
    fn answer(&self, srv: &SecurityServer, sids: &mut SidCache) -> Vec<Outcome<[u32; 3]>> {
        let mut q = srv.query();
        let classes: Vec<_> = self.classes.iter().map(|c| srv.class(c)).collect();
        let mut last: [Option<([u32; 2], Sid)>; 2] = [None, None];
        let mut sid = |slot: usize, span: [u32; 2], which: &'static str| -> Outcome<Sid> {
            if let Some((s, id)) = last[slot] {
                if s == span {
                    return Ok(id);
                }
            }
            let text = self.span(span);
            let id = match sids.get(text) {
                Some(&id) => id,
                None => {
                    let id = srv.context_to_sid(text).map_err(|error| {
                        Box::new(Failure::Context {
                            which,
                            context: text.into(),
                            error,
                        })
                    })?;
                    sids.insert(text.into(), id);
                    id
                }
            };
            last[slot] = Some((span, id));
            Ok(id)
        };
        self.queries
            .iter()
            .map(|&(s, t, c)| {
                let ssid = sid(0, s, "source context")?;
                let tsid = sid(1, t, "target context")?;
                let class = match &classes[c as usize] {
                    Ok(class) => *class,
                    Err(e) => return Err(Box::new(Failure::Name(e.clone()))),
                };
                let d = q
                    .compute_av(ssid, tsid, class)
                    .map_err(|e| Box::new(Failure::Name(e)))?;
                Ok([d.allowed.0, d.auditallow.0, d.auditdeny.0])
            })
            .collect()
    }
}

/// Answered chunks, by chunk index.
type Done = Mutex<Vec<(usize, PyResult<Vec<Outcome<[u32; 3]>>>)>>;

/// A worker's contexts already resolved in this batch (a batch resolves each context
/// once per worker, as if its strings were interned).
type SidCache = HashMap<Box<str>, Sid, Fx>;

/// Takes chunks from the queue until it is closed and empty, answering each.
fn av_worker(queue: &Mutex<mpsc::Receiver<AvChunk>>, srv: &SecurityServer, done: &Done) {
    let mut sids = SidCache::default();
    loop {
        let next = lock(queue).recv();
        let Ok(chunk) = next else { return };
        let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            chunk.answer(srv, &mut sids)
        }))
        .map_err(panic_error);
        lock(done).push((chunk.index, answer));
    }
}

/// `Server.compute_av_many`: reads the queries chunk by chunk under the GIL while workers
/// (one per core but the reader's) answer the chunks already read; once reading is done
/// the calling thread releases the GIL and answers chunks too. A batch of one chunk starts
/// no thread.
pub fn compute_av_many<'py>(
    py: Python<'py>,
    srv: &SecurityServer,
    items: &Bound<'py, PyAny>,
    strict: bool,
) -> PyResult<Bound<'py, PyList>> {
    let (tx, rx) = mpsc::channel::<AvChunk>();
    let queue = Mutex::new(rx);
    let done: Done = Mutex::new(Vec::new());
    let read = std::thread::scope(|scope| {
        let mut started = false;
        // Sized like a chunk of 64-byte contexts; later chunks like the one before.
        let mut chunk = AvChunk::new(0, AV_CHUNK * 2 * 64);
        let (mut sc, mut tc, mut cc) = (SpanColumn::new(), SpanColumn::new(), ClassColumn::new());
        let read = for_each(items, |i, item| {
            let [s, t, c] = fields::<3>(&item, i)?;
            let s = sc.copy(s, &mut chunk, "scontext")?;
            let t = tc.copy(t, &mut chunk, "tcontext")?;
            let c = cc.class(c, &mut chunk)?;
            chunk.queries.push((s, t, c));
            if chunk.queries.len() == AV_CHUNK {
                let next = AvChunk::new(chunk.index + 1, chunk.text.len() + chunk.text.len() / 8);
                // Spans refer to the chunk's own buffer: forget the old chunk's.
                (sc, tc, cc) = (SpanColumn::new(), SpanColumn::new(), ClassColumn::new());
                if !started {
                    started = true;
                    for _ in 1..threads() {
                        scope.spawn(|| av_worker(&queue, srv, &done));
                    }
                }
                // The receiver lives until the scope ends: sending cannot fail.
                let _ = tx.send(std::mem::replace(&mut chunk, next));
            }
            Ok(())
        });
        if !chunk.queries.is_empty() {
            let _ = tx.send(chunk);
        }
        drop(tx);
        // Without the GIL, the caller helps with the chunks still queued.
        py.detach(|| av_worker(&queue, srv, &done));
        read
    });
    read?;
    let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    done.sort_unstable_by_key(|(i, _)| *i);
    let mut shared: HashMap<[u32; 3], Bound<'py, PyTuple>, Fx> = HashMap::default();
    let mut out = Vec::with_capacity(done.len() * AV_CHUNK);
    for (chunk, answers) in done {
        for (k, o) in answers?.into_iter().enumerate() {
            match o {
                Ok(v) => {
                    let t = match shared.get(&v) {
                        Some(t) => t.clone(),
                        None => {
                            let t = PyTuple::new(py, v)?;
                            shared.insert(v, t.clone());
                            t
                        }
                    };
                    out.push(t.into_any());
                }
                Err(f) if strict => return Err(f.into_error(chunk * AV_CHUNK + k)),
                Err(_) => out.push(py.None().into_bound(py)),
            }
        }
    }
    PyList::new(py, out)
}

/// The queries of a `check_many` call.
#[derive(Default)]
struct CheckBatch {
    contexts: Interner,
    classes: Interner,
    perm_names: Interner,
    /// Distinct requests, each `[class, perm, perm, ...]` as interned ids.
    requests: HashMap<Box<[u32]>, u32, Fx>,
    request_list: Vec<Box<[u32]>>,
    queries: Vec<[u32; 3]>,
}

impl CheckBatch {
    /// Reads `(scontext, tcontext, tclass, perms)` items; `perms` is a str or an iterable
    /// of str.
    fn read(items: &Bound<'_, PyAny>) -> PyResult<CheckBatch> {
        let mut b = CheckBatch::default();
        if let Ok(n) = items.len() {
            b.queries.reserve(n);
        }
        let (mut sc, mut tc, mut cc, mut pc) =
            (Column::new(), Column::new(), Column::new(), Column::new());
        let mut key: Vec<u32> = Vec::with_capacity(8);
        let mut last_perms: Option<(Bound<'_, PyAny>, u32, u32)> = None;
        for_each(items, |i, item| {
            let [s, t, c, p] = fields::<4>(&item, i)?;
            let s = sc.id(s, &mut b.contexts, "scontext")?;
            let t = tc.id(t, &mut b.contexts, "tcontext")?;
            let c = cc.id(c, &mut b.classes, "tclass")?;
            let request = match &last_perms {
                Some((o, class, req)) if o.is(&p) && *class == c => *req,
                _ => {
                    key.clear();
                    key.push(c);
                    if p.is_instance_of::<PyString>() {
                        key.push(pc.id(p.clone(), &mut b.perm_names, "perms")?);
                    } else {
                        for name in p.try_iter().map_err(|_| {
                            PyTypeError::new_err(format!(
                                "query {i}: perms must be a str or an iterable of str"
                            ))
                        })? {
                            key.push(pc.id(name?, &mut b.perm_names, "each permission")?);
                        }
                    }
                    let req = match b.requests.get(key.as_slice()) {
                        Some(&r) => r,
                        None => {
                            let r = b.request_list.len() as u32;
                            b.request_list.push(key.as_slice().into());
                            b.requests.insert(key.as_slice().into(), r);
                            r
                        }
                    };
                    // Only an immutable str may be remembered by identity: a list could be
                    // changed between two queries.
                    if p.is_instance_of::<PyString>() || p.is_instance_of::<PyTuple>() {
                        last_perms = Some((p, c, req));
                    }
                    req
                }
            };
            b.queries.push([s, t, request]);
            Ok(())
        })?;
        Ok(b)
    }

    /// Answers every query (call without the GIL).
    fn run(&self, srv: &SecurityServer) -> PyResult<Vec<Outcome<bool>>> {
        let sids = resolve_contexts(srv, &self.contexts.strings)?;
        let permsets: Vec<Result<PermSet, DecideError>> = self
            .request_list
            .iter()
            .map(|key| {
                let class = &self.classes.strings[key[0] as usize];
                let names: Vec<&str> = key[1..]
                    .iter()
                    .map(|&p| &*self.perm_names.strings[p as usize])
                    .collect();
                srv.perm_set(class, &names)
            })
            .collect();
        let outcomes = par_ranges(self.queries.len(), |r| {
            let mut q = srv.query();
            self.queries[r]
                .iter()
                .map(|&[s, t, p]| {
                    let ssid = self.sid(&sids, s, "source context")?;
                    let tsid = self.sid(&sids, t, "target context")?;
                    let ps = permsets[p as usize]
                        .as_ref()
                        .map_err(|e| Box::new(Failure::Name(e.clone())))?;
                    q.check(ssid, tsid, ps)
                        .map(|v| v.allowed())
                        .map_err(|e| Box::new(Failure::Name(e)))
                })
                .collect()
        })?;
        Ok(outcomes)
    }

    fn sid(&self, sids: &[Result<Sid, DecideError>], id: u32, which: &'static str) -> Outcome<Sid> {
        sids[id as usize].clone().map_err(|error| {
            Box::new(Failure::Context {
                which,
                context: self.contexts.strings[id as usize].clone(),
                error,
            })
        })
    }

    /// The result list: one bool per query; a failed query raises (`strict`) or gives None.
    fn result_list<'py>(
        &self,
        py: Python<'py>,
        answers: Vec<Outcome<bool>>,
        strict: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut out = Vec::with_capacity(answers.len());
        for (i, o) in answers.into_iter().enumerate() {
            match o {
                Ok(b) => out.push(pyo3::types::PyBool::new(py, b).to_owned().into_any()),
                Err(f) if strict => return Err(f.into_error(i)),
                Err(_) => out.push(py.None().into_bound(py)),
            }
        }
        PyList::new(py, out)
    }
}

/// `Server.check_many`: reads every query under the GIL (each distinct string and
/// permission request once), then answers them on every core without it.
pub fn check_many<'py>(
    py: Python<'py>,
    srv: &SecurityServer,
    items: &Bound<'py, PyAny>,
    strict: bool,
) -> PyResult<Bound<'py, PyList>> {
    let batch = CheckBatch::read(items)?;
    let answers = py.detach(|| batch.run(srv))?;
    batch.result_list(py, answers, strict)
}

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

use crate::errors::{context_error, decide_error, panic_error};
use arbiter_decide::{ClassRef, DecideError, PermSet, SecurityServer, Sid};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;
use std::sync::OnceLock;

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

/// Why one query got no answer (resolved to an exception only if it is reported).
enum Failure {
    Source(u32),
    Target(u32),
    Class(u32),
    Decide(Box<DecideError>),
}

type Outcome<T> = Result<T, Failure>;

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

/// The queries of a `compute_av_many` call.
#[derive(Default)]
pub struct AvBatch {
    contexts: Interner,
    classes: Interner,
    queries: Vec<[u32; 3]>,
}

impl AvBatch {
    /// Reads `(scontext, tcontext, tclass)` items.
    pub fn read(items: &Bound<'_, PyAny>) -> PyResult<AvBatch> {
        let mut b = AvBatch::default();
        if let Ok(n) = items.len() {
            b.queries.reserve(n);
        }
        let (mut sc, mut tc, mut cc) = (Column::new(), Column::new(), Column::new());
        for_each(items, |i, item| {
            let [s, t, c] = fields::<3>(&item, i)?;
            let s = sc.id(s, &mut b.contexts, "scontext")?;
            let t = tc.id(t, &mut b.contexts, "tcontext")?;
            let c = cc.id(c, &mut b.classes, "tclass")?;
            b.queries.push([s, t, c]);
            Ok(())
        })?;
        Ok(b)
    }

    /// Answers every query (call without the GIL).
    pub fn run(&self, srv: &SecurityServer) -> PyResult<Answers<[u32; 3]>> {
        let sids = resolve_contexts(srv, &self.contexts.strings)?;
        let classes: Vec<_> = self.classes.strings.iter().map(|c| srv.class(c)).collect();
        let outcomes = par_ranges(self.queries.len(), |r| {
            let mut q = srv.query();
            self.queries[r]
                .iter()
                .map(|&[s, t, c]| {
                    let ssid = *sids[s as usize].as_ref().map_err(|_| Failure::Source(s))?;
                    let tsid = *sids[t as usize].as_ref().map_err(|_| Failure::Target(t))?;
                    let class: ClassRef = *classes[c as usize]
                        .as_ref()
                        .map_err(|_| Failure::Class(c))?;
                    let d = q
                        .compute_av(ssid, tsid, class)
                        .map_err(|e| Failure::Decide(Box::new(e)))?;
                    Ok([d.allowed.0, d.auditallow.0, d.auditdeny.0])
                })
                .collect()
        })?;
        Ok(Answers {
            outcomes,
            sids,
            classes,
            permsets: Vec::new(),
        })
    }

    /// The error for a failed query.
    fn error(&self, answers: &Answers<[u32; 3]>, index: usize, f: &Failure) -> PyErr {
        answers.error(&self.contexts, &self.classes.strings, index, f)
    }

    /// The result list: `(allowed, auditallow, auditdeny)` per query; a failed query raises
    /// (`strict`) or gives None.
    pub fn into_list<'py>(
        &self,
        py: Python<'py>,
        answers: Answers<[u32; 3]>,
        strict: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut shared: HashMap<[u32; 3], Bound<'py, PyTuple>, Fx> = HashMap::default();
        let mut out = Vec::with_capacity(answers.outcomes.len());
        for (i, o) in answers.outcomes.iter().enumerate() {
            match o {
                Ok(v) => {
                    let t = match shared.get(v) {
                        Some(t) => t.clone(),
                        None => {
                            let t = PyTuple::new(py, v)?;
                            shared.insert(*v, t.clone());
                            t
                        }
                    };
                    out.push(t.into_any());
                }
                Err(f) if strict => return Err(self.error(&answers, i, f)),
                Err(_) => out.push(py.None().into_bound(py)),
            }
        }
        PyList::new(py, out)
    }
}

/// The queries of a `check_many` call.
#[derive(Default)]
pub struct CheckBatch {
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
    pub fn read(items: &Bound<'_, PyAny>) -> PyResult<CheckBatch> {
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
    pub fn run(&self, srv: &SecurityServer) -> PyResult<Answers<bool>> {
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
                    let ssid = *sids[s as usize].as_ref().map_err(|_| Failure::Source(s))?;
                    let tsid = *sids[t as usize].as_ref().map_err(|_| Failure::Target(t))?;
                    let ps = permsets[p as usize]
                        .as_ref()
                        .map_err(|_| Failure::Class(p))?;
                    q.check(ssid, tsid, ps)
                        .map(|v| v.allowed())
                        .map_err(|e| Failure::Decide(Box::new(e)))
                })
                .collect()
        })?;
        Ok(Answers {
            outcomes,
            sids,
            classes: Vec::new(),
            permsets,
        })
    }

    /// The result list: one bool per query; a failed query raises (`strict`) or gives None.
    pub fn into_list<'py>(
        &self,
        py: Python<'py>,
        answers: Answers<bool>,
        strict: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut out = Vec::with_capacity(answers.outcomes.len());
        for (i, o) in answers.outcomes.iter().enumerate() {
            match o {
                Ok(b) => out.push(pyo3::types::PyBool::new(py, *b).to_owned().into_any()),
                Err(f) if strict => {
                    return Err(answers.error(&self.contexts, &self.classes.strings, i, f))
                }
                Err(_) => out.push(py.None().into_bound(py)),
            }
        }
        PyList::new(py, out)
    }
}

/// The outcome of every query of a batch, plus what the queries were resolved to (kept to
/// name the cause of a failure).
pub struct Answers<T> {
    outcomes: Vec<Outcome<T>>,
    sids: Vec<Result<Sid, DecideError>>,
    classes: Vec<Result<ClassRef, DecideError>>,
    permsets: Vec<Result<PermSet, DecideError>>,
}

impl<T> Answers<T> {
    fn error(
        &self,
        contexts: &Interner,
        _classes: &[Box<str>],
        index: usize,
        f: &Failure,
    ) -> PyErr {
        let prefix = |e: PyErr| -> PyErr {
            Python::attach(|py| {
                let msg = format!("query {index}: {}", e.value(py));
                let new = PyErr::from_type(e.get_type(py), msg);
                // Carry the attributes (.context, .name) over to the new instance.
                if let Ok(dict) = e.value(py).getattr("__dict__") {
                    let _ = new.value(py).setattr("__dict__", dict);
                }
                new
            })
        };
        let context = |id: u32, which: &str| {
            let text = &contexts.strings[id as usize];
            match &self.sids[id as usize] {
                Err(e) => context_error(e.clone(), which, text),
                Ok(_) => PyValueError::new_err(format!("{which} {text:?}")),
            }
        };
        prefix(match f {
            Failure::Source(id) => context(*id, "source context"),
            Failure::Target(id) => context(*id, "target context"),
            Failure::Class(id) => {
                let e = if self.permsets.is_empty() {
                    self.classes[*id as usize].as_ref().err()
                } else {
                    self.permsets[*id as usize].as_ref().err()
                };
                match e {
                    Some(e) => decide_error(e.clone()),
                    None => PyValueError::new_err("unresolved class"),
                }
            }
            Failure::Decide(e) => decide_error((**e).clone()),
        })
    }
}

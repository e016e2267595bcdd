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
//! length-prefixed fields); a blob that does not decode raises `ValueError`.

use crate::denials::{
    digest, fleet_generation, render_allow, verdict_from_plain, DecidedDenial, Denials, KeptDenial,
    PlainVerdict,
};
use crate::errors::{panic_error, Error};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::collections::{HashMap, HashSet};

const MAGIC: &[u8; 8] = b"ARBFLT1\0";

/// Registers the private fleet functions in the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fleet_digest, m)?)?;
    m.add_function(wrap_pyfunction!(fleet_merge, m)?)?;
    m.add_function(wrap_pyfunction!(fleet_finish, m)?)?;
    Ok(())
}

/// The aggregate of some log chunks, in log order.
#[derive(Default)]
struct Part {
    lines: u64,
    records: u64,
    denials: u64,
    malformed: u64,
    unknown: u64,
    selinux_seen: bool,
    /// AVC records per log path, first-seen order.
    paths: Vec<(String, u64)>,
    verdicts: HashMap<String, u64>,
    rules: HashMap<(String, String, String), u64>,
    kept: Vec<KeptDenial>,
    roles: Vec<(String, String)>,
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
        let n = self.len()?;
        let at = self.pos;
        let b = self.take(n)?;
        String::from_utf8(b.to_vec()).map_err(|_| BlobError::Utf8(at))
    }
    fn flag(&mut self) -> Result<bool, BlobError> {
        Ok(self.take(1)?[0] != 0)
    }
}

impl Part {
    fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::with_capacity(64 + self.kept.len() * 128));
        w.0.extend_from_slice(MAGIC);
        for v in [
            self.lines,
            self.records,
            self.denials,
            self.malformed,
            self.unknown,
        ] {
            w.u64(v);
        }
        w.flag(self.selinux_seen);
        w.len(self.paths.len());
        for (p, n) in &self.paths {
            w.str(p);
            w.u64(*n);
        }
        w.len(self.verdicts.len());
        for (v, n) in &self.verdicts {
            w.str(v);
            w.u64(*n);
        }
        w.len(self.rules.len());
        for ((s, t, c), n) in &self.rules {
            w.str(s);
            w.str(t);
            w.str(c);
            w.u64(*n);
        }
        w.len(self.kept.len());
        for (s, t, c, perms, ioctl, verdict) in &self.kept {
            w.str(s);
            w.str(t);
            w.str(c);
            w.len(perms.len());
            for p in perms {
                w.str(p);
            }
            w.flag(ioctl.is_some());
            if let Some(i) = ioctl {
                w.0.extend_from_slice(&i.to_le_bytes());
            }
            w.flag(verdict.is_some());
            if let Some((code, booleans, constraint)) = verdict {
                w.0.extend_from_slice(&code.to_le_bytes());
                w.len(booleans.len());
                for (b, v) in booleans {
                    w.str(b);
                    w.flag(*v);
                }
                w.flag(constraint.is_some());
                if let Some(c) = constraint {
                    w.str(c);
                }
            }
        }
        w.len(self.roles.len());
        for (r, t) in &self.roles {
            w.str(r);
            w.str(t);
        }
        w.0
    }

    fn decode(buf: &[u8]) -> Result<Part, BlobError> {
        let mut r = Reader { buf, pos: 0 };
        if r.take(MAGIC.len()).map_err(|_| BlobError::Magic)? != MAGIC {
            return Err(BlobError::Magic);
        }
        let mut p = Part {
            lines: r.u64()?,
            records: r.u64()?,
            denials: r.u64()?,
            malformed: r.u64()?,
            unknown: r.u64()?,
            selinux_seen: r.flag()?,
            ..Part::default()
        };
        for _ in 0..r.len()? {
            p.paths.push((r.str()?, r.u64()?));
        }
        for _ in 0..r.len()? {
            p.verdicts.insert(r.str()?, r.u64()?);
        }
        for _ in 0..r.len()? {
            p.rules.insert((r.str()?, r.str()?, r.str()?), r.u64()?);
        }
        for _ in 0..r.len()? {
            let (s, t, c) = (r.str()?, r.str()?, r.str()?);
            let mut perms = Vec::new();
            for _ in 0..r.len()? {
                perms.push(r.str()?);
            }
            let ioctl = if r.flag()? {
                Some(i64::from_le_bytes(r.take(8)?.try_into().unwrap_or([0; 8])))
            } else {
                None
            };
            let verdict: Option<PlainVerdict> = if r.flag()? {
                let code = i32::from_le_bytes(r.take(4)?.try_into().unwrap_or([0; 4]));
                let mut booleans = Vec::new();
                for _ in 0..r.len()? {
                    booleans.push((r.str()?, r.flag()?));
                }
                let constraint = if r.flag()? { Some(r.str()?) } else { None };
                Some((code, booleans, constraint))
            } else {
                None
            };
            p.kept.push((s, t, c, perms, ioctl, verdict));
        }
        for _ in 0..r.len()? {
            p.roles.push((r.str()?, r.str()?));
        }
        if r.pos != buf.len() {
            return Err(BlobError::Truncated(r.pos));
        }
        Ok(p)
    }

    /// Appends `other`, which comes after `self` in log order.
    fn absorb(
        &mut self,
        other: Part,
        seen: &mut HashSet<String>,
        roles: &mut HashSet<(String, String)>,
    ) {
        self.lines += other.lines;
        self.records += other.records;
        self.denials += other.denials;
        self.malformed += other.malformed;
        self.unknown += other.unknown;
        self.selinux_seen |= other.selinux_seen;
        for (path, n) in other.paths {
            match self.paths.iter_mut().find(|(p, _)| *p == path) {
                Some((_, m)) => *m += n,
                None => self.paths.push((path, n)),
            }
        }
        for (v, n) in other.verdicts {
            *self.verdicts.entry(v).or_insert(0) += n;
        }
        for (k, n) in other.rules {
            *self.rules.entry(k).or_insert(0) += n;
        }
        for k in other.kept {
            if seen.insert(kept_key(&k)) {
                self.kept.push(k);
            }
        }
        for pair in other.roles {
            if roles.insert(pair.clone()) {
                self.roles.push(pair);
            }
        }
    }
}

/// What makes two kept denials the same for audit2allow (the verdict follows from them).
fn kept_key((s, t, c, perms, ioctl, _): &KeptDenial) -> String {
    let mut k = String::with_capacity(s.len() + t.len() + c.len() + 32);
    for part in [s, t, c].into_iter().chain(perms) {
        k.push_str(part);
        k.push('\0');
    }
    k.push_str(&format!("{ioctl:?}"));
    k
}

fn blob_error(e: BlobError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Merges blobs given in log order into one (the blobs' digests concatenated).
fn merge(blobs: &[Vec<u8>]) -> Result<Part, BlobError> {
    let mut out = Part::default();
    let mut seen = HashSet::new();
    let mut roles = HashSet::new();
    for b in blobs {
        out.absorb(Part::decode(b)?, &mut seen, &mut roles);
    }
    Ok(out)
}

/// The map step: the digest of one chunk of the log at `path`, as a blob.
#[pyfunction]
#[pyo3(name = "_fleet_digest")]
fn fleet_digest<'py>(
    py: Python<'py>,
    denials: PyRef<'py, Denials>,
    data: Vec<u8>,
    path: String,
) -> PyResult<Bound<'py, PyBytes>> {
    let engine = denials.engine.clone();
    let blob = py
        .detach(move || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                let engine = engine.lock().unwrap_or_else(|p| p.into_inner());
                digest(&engine, &data).map(|d| {
                    Part {
                        lines: d.lines,
                        records: d.records,
                        denials: d.denials,
                        malformed: d.malformed,
                        unknown: d.unknown,
                        selinux_seen: d.selinux_seen,
                        paths: vec![(path, d.records)],
                        verdicts: d.verdicts,
                        rules: d.rules,
                        kept: d.kept,
                        roles: d.roles,
                    }
                    .encode()
                })
            }))
        })
        .map_err(panic_error)?
        .map_err(|e| Error::new_err(e.to_string()))?;
    Ok(PyBytes::new(py, &blob))
}

/// The reduce step: blobs in log order merged into one blob.
#[pyfunction]
#[pyo3(name = "_fleet_merge")]
fn fleet_merge<'py>(py: Python<'py>, blobs: Vec<Vec<u8>>) -> PyResult<Bound<'py, PyBytes>> {
    let blob = py
        .detach(move || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                merge(&blobs).map(|p| p.encode())
            }))
        })
        .map_err(panic_error)?
        .map_err(blob_error)?;
    Ok(PyBytes::new(py, &blob))
}

/// The final step: audit2allow's text and the counts from one merged blob, as
/// `(allow, {path: records}, {rule: denials}, {verdict: records}, {count name: value})`.
#[pyfunction]
#[pyo3(name = "_fleet_finish", signature = (blob, *, module=None, requires=false,
    dontaudit=false, xperms=false))]
fn fleet_finish<'py>(
    py: Python<'py>,
    blob: Vec<u8>,
    module: Option<&str>,
    requires: bool,
    dontaudit: bool,
    xperms: bool,
) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
    let generation = fleet_generation(module, requires, dontaudit, xperms)?;
    let (part, allow) = py
        .detach(move || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                let mut part = Part::decode(&blob)?;
                let mut entries: Vec<DecidedDenial> = Vec::with_capacity(part.kept.len());
                for (s, t, c, perms, ioctl, v) in std::mem::take(&mut part.kept) {
                    let v = v
                        .map(verdict_from_plain)
                        .transpose()
                        .map_err(BlobError::Verdict)?;
                    entries.push((s, t, c, perms, ioctl, v));
                }
                // As the command line: nothing at all when no SELinux line was seen.
                let allow = if part.selinux_seen {
                    render_allow(&entries, &part.roles, &generation)
                } else {
                    String::new()
                };
                Ok::<_, BlobError>((part, allow))
            }))
        })
        .map_err(panic_error)?
        .map_err(blob_error)?;
    let counts = PyDict::new(py);
    for (k, v) in [
        ("lines", part.lines),
        ("records", part.records),
        ("denials", part.denials),
        ("malformed", part.malformed),
        ("unknown", part.unknown),
    ] {
        counts.set_item(k, v)?;
    }
    let paths = PyDict::new(py);
    for (p, n) in part.paths {
        paths.set_item(p, n)?;
    }
    (allow, paths, part.rules, part.verdicts, counts).into_pyobject(py)
}

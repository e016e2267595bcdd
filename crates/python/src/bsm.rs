//! `arbiter.bsm`: BSM audit trails (OpenBSM's format) read as records and tokens, printed as
//! praudit prints them, selected as auditreduce selects them, and `au_preselect`, over the
//! `arbiter-bsm` engine.
//!
//! Printing and selection drive the same [`Printer`] and [`Reducer`] as `arbiter bsm print`
//! and `arbiter bsm reduce`, so the bytes returned are the bytes those commands write. A
//! trail given by path is streamed (one record in memory at a time); one given as `bytes`
//! is read in place. The work runs without the GIL.

use crate::errors::{panic_error, Error};
use crate::policy::fspath;
use arbiter_bsm::{
    records, Config, Mask, Outcome, Preselector, PrintOptions, Printer, ReduceError, ReduceOptions,
    Reducer, Token,
};
use pyo3::create_exception;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

create_exception!(
    arbiter,
    TrailError,
    Error,
    "A BSM trail or configuration file could not be read. `.path` names the file."
);

/// Registers the classes, functions and the exception in the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    py.get_type::<TrailError>().setattr("path", py.None())?;
    m.add("TrailError", py.get_type::<TrailError>())?;
    m.add_class::<BsmToken>()?;
    m.add_class::<BsmRecord>()?;
    m.add_class::<PrintReport>()?;
    m.add_class::<ReduceReport>()?;
    m.add_class::<BsmSelection>()?;
    m.add_function(wrap_pyfunction!(bsm_records, m)?)?;
    m.add_function(wrap_pyfunction!(bsm_praudit, m)?)?;
    m.add_function(wrap_pyfunction!(bsm_reduce, m)?)?;
    m.add_function(wrap_pyfunction!(bsm_preselect, m)?)?;
    m.add_function(wrap_pyfunction!(bsm_digest, m)?)?;
    Ok(())
}

/// One trail: a file streamed when the work runs, or bytes in memory.
enum Trail {
    File(PathBuf),
    Bytes(String, Vec<u8>),
}

impl Trail {
    fn name(&self) -> String {
        match self {
            Trail::File(p) => p.display().to_string(),
            Trail::Bytes(n, _) => n.clone(),
        }
    }
}

fn trail_error(path: &Path, e: impl std::fmt::Display) -> PyErr {
    let err = TrailError::new_err(format!("{}: {e}", path.display()));
    Python::attach(|py| {
        let _ = err.value(py).setattr("path", path.display().to_string());
    });
    err
}

/// Trails from one argument: a path, `bytes`, or a list of those.
fn trails(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Trail>> {
    let one = |o: &Bound<'_, PyAny>| -> PyResult<Trail> {
        if let Ok(b) = o.cast::<PyBytes>() {
            Ok(Trail::Bytes("<bytes>".into(), b.as_bytes().to_vec()))
        } else if o.is_instance_of::<PyString>() || o.hasattr("__fspath__")? {
            Ok(Trail::File(fspath(o)?))
        } else {
            Err(PyTypeError::new_err(format!(
                "a trail is a path or bytes, not {}",
                o.get_type().name()?
            )))
        }
    };
    if obj.cast::<PyBytes>().is_ok()
        || obj.is_instance_of::<PyString>()
        || obj.hasattr("__fspath__")?
    {
        return Ok(vec![one(obj)?]);
    }
    let mut out = Vec::new();
    for o in obj.try_iter().map_err(|_| {
        PyTypeError::new_err("trails: a path, bytes, or an iterable of paths and bytes")
    })? {
        out.push(one(&o?)?);
    }
    Ok(out)
}

/// The audit_* configuration: `etc` if given, else `/etc/security`, else built-in (as
/// `--etc` on the command line).
fn config(etc: Option<&Bound<'_, PyAny>>) -> PyResult<Config> {
    let dir = etc.map(fspath).transpose()?;
    Config::locate(dir.as_deref()).map_err(|e| {
        let err = TrailError::new_err(e.to_string());
        if let Some(d) = &dir {
            Python::attach(|py| {
                let _ = err.value(py).setattr("path", d.display().to_string());
            });
        }
        err
    })
}

fn detach<T: Send, F: FnOnce() -> T + Send>(py: Python<'_>, f: F) -> PyResult<T> {
    py.detach(move || std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)))
        .map_err(panic_error)
}

/// One token of a record: its id byte and its praudit text.
#[pyclass(frozen, module = "arbiter.bsm", name = "Token")]
pub struct BsmToken {
    /// The token id byte (0x14 header32, 0x24 subject32, 0x27 return32, ...).
    #[pyo3(get)]
    id: u8,
    /// praudit's name for the token (`header`, `subject`, `path`, ...).
    #[pyo3(get)]
    name: String,
    /// The token as praudit prints it with the options of the call.
    #[pyo3(get)]
    text: String,
}

#[pymethods]
impl BsmToken {
    fn __repr__(&self) -> String {
        format!("<arbiter.bsm.Token 0x{:02x} {:?}>", self.id, self.text)
    }
    fn __str__(&self) -> String {
        self.text.clone()
    }
}

/// One record of a trail, with the fields selection looks at already decoded.
#[pyclass(frozen, module = "arbiter.bsm", name = "Record")]
pub struct BsmRecord {
    /// Name of the trail it came from (its path, or `<bytes>`).
    #[pyo3(get)]
    trail: String,
    /// Byte offset of the record in its trail.
    #[pyo3(get)]
    offset: usize,
    /// The record's bytes (header to trailer, or a file token).
    data: Vec<u8>,
    /// Event number (None for a file token record).
    #[pyo3(get)]
    event: Option<u16>,
    /// Event name from audit_event (`AUE_OPEN_R`), None when unknown or no header.
    #[pyo3(get)]
    event_name: Option<String>,
    /// Event modifier.
    #[pyo3(get)]
    modifier: Option<u16>,
    /// Header time: seconds since the epoch.
    #[pyo3(get)]
    sec: Option<u64>,
    /// Header time: milliseconds.
    #[pyo3(get)]
    msec: Option<u64>,
    // The first subject (or process) token's ids, each None without one: plain fields
    // rather than getters over a tuple, so each is one attribute with its own line.
    /// Audit user id of the first subject/process token (None without one).
    #[pyo3(get)]
    auid: Option<u32>,
    /// Effective user id of the first subject/process token (None without one).
    #[pyo3(get)]
    euid: Option<u32>,
    /// Effective group id of the first subject/process token (None without one).
    #[pyo3(get)]
    egid: Option<u32>,
    /// Real user id of the first subject/process token (None without one).
    #[pyo3(get)]
    ruid: Option<u32>,
    /// Real group id of the first subject/process token (None without one).
    #[pyo3(get)]
    rgid: Option<u32>,
    /// Process id of the first subject/process token (None without one).
    #[pyo3(get)]
    pid: Option<u32>,
    /// Audit session id of the first subject/process token (None without one).
    #[pyo3(get)]
    sid: Option<u32>,
    /// The first return token's (status, value); None without one.
    #[pyo3(get)]
    ret: Option<(u8, u64)>,
    /// Tokens in order (decoding stops at the first undecodable one).
    #[pyo3(get)]
    tokens: Vec<Py<BsmToken>>,
    /// Why the record's tokens stopped before its end, if they did.
    #[pyo3(get)]
    error: Option<String>,
}

#[pymethods]
impl BsmRecord {
    /// The record's bytes.
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.data)
    }
    fn __repr__(&self) -> String {
        format!(
            "<arbiter.bsm.Record offset={} event={} tokens={}>",
            self.offset,
            self.event_name
                .clone()
                .or_else(|| self.event.map(|e| e.to_string()))
                .unwrap_or_else(|| "file".into()),
            self.tokens.len()
        )
    }
}

/// Plain data of one record, built without the GIL.
struct RawRecord {
    offset: usize,
    data: Vec<u8>,
    event: Option<(u16, u16, u64, u64)>,
    subject: Option<(u32, u32, u32, u32, u32, u32, u32)>,
    ret: Option<(u8, u64)>,
    tokens: Vec<(u8, String, String)>,
    error: Option<String>,
}

fn read_trail(t: &Trail) -> PyResult<std::borrow::Cow<'_, [u8]>> {
    match t {
        Trail::Bytes(_, b) => Ok(std::borrow::Cow::Borrowed(b)),
        Trail::File(p) => std::fs::read(p)
            .map(std::borrow::Cow::Owned)
            .map_err(|e| trail_error(p, e)),
    }
}

/// Every record of the trails, decoded. Framing stops a trail where praudit stops (the
/// error is raised only when `strict`; else the records before it are returned).
#[pyfunction]
#[pyo3(name = "_bsm_records", signature = (trails, *, raw=false, short=false,
    noresolve=false, etc=None, strict=false))]
fn bsm_records(
    py: Python<'_>,
    trails: &Bound<'_, PyAny>,
    raw: bool,
    short: bool,
    noresolve: bool,
    etc: Option<&Bound<'_, PyAny>>,
    strict: bool,
) -> PyResult<Vec<BsmRecord>> {
    let inputs = self::trails(trails)?;
    let cfg = config(etc)?;
    let mut out = Vec::new();
    for t in &inputs {
        let data = read_trail(t)?;
        let name = t.name();
        let (raws, framing) = detach(py, || {
            let printer = Printer::new(
                &cfg.events,
                PrintOptions {
                    raw,
                    short,
                    noresolve,
                    ..PrintOptions::default()
                },
            );
            // Built once: a printer reads /etc/passwd and /etc/group when it resolves ids.
            let namer = Printer::new(
                &cfg.events,
                PrintOptions {
                    noresolve: true,
                    ..PrintOptions::default()
                },
            );
            let mut raws = Vec::new();
            let mut framing = None;
            for r in records(&data) {
                let rec = match r {
                    Ok(r) => r,
                    Err(e) => {
                        framing = Some(e.to_string());
                        break;
                    }
                };
                let mut rr = RawRecord {
                    offset: rec.offset,
                    data: rec.bytes.to_vec(),
                    event: None,
                    subject: None,
                    ret: None,
                    tokens: Vec::new(),
                    error: None,
                };
                let mut text = Vec::new();
                for tok in rec.tokens() {
                    match tok {
                        Ok(tok) => {
                            match &tok {
                                Token::Header(h) => {
                                    rr.event.get_or_insert((h.event, h.modifier, h.sec, h.msec));
                                }
                                Token::Subject(s) => {
                                    rr.subject.get_or_insert((
                                        s.auid, s.euid, s.egid, s.ruid, s.rgid, s.pid, s.sid,
                                    ));
                                }
                                Token::Return32 { status, value } => {
                                    rr.ret.get_or_insert((*status, u64::from(*value)));
                                }
                                Token::Return64 { status, value } => {
                                    rr.ret.get_or_insert((*status, *value));
                                }
                                _ => {}
                            }
                            text.clear();
                            printer.print_token(&tok, &mut text);
                            let text = String::from_utf8_lossy(&text).into_owned();
                            let name = token_name(&tok, &namer);
                            rr.tokens.push((tok.id(), name, text));
                        }
                        Err(e) => {
                            rr.error = Some(e.to_string());
                            break;
                        }
                    }
                }
                raws.push(rr);
            }
            (raws, framing)
        })?;
        if let (true, Some(f)) = (strict, &framing) {
            return Err(TrailError::new_err(format!("{name}: {f}")));
        }
        for r in raws {
            let event_name = r.event.and_then(|(e, ..)| {
                cfg.events
                    .by_number(e)
                    .map(|en| String::from_utf8_lossy(&en.name).into_owned())
            });
            let tokens = r
                .tokens
                .into_iter()
                .map(|(id, name, text)| Py::new(py, BsmToken { id, name, text }))
                .collect::<PyResult<Vec<_>>>()?;
            out.push(BsmRecord {
                trail: name.clone(),
                offset: r.offset,
                data: r.data,
                event: r.event.map(|e| e.0),
                event_name,
                modifier: r.event.map(|e| e.1),
                sec: r.event.map(|e| e.2),
                msec: r.event.map(|e| e.3),
                auid: r.subject.map(|s| s.0),
                euid: r.subject.map(|s| s.1),
                egid: r.subject.map(|s| s.2),
                ruid: r.subject.map(|s| s.3),
                rgid: r.subject.map(|s| s.4),
                pid: r.subject.map(|s| s.5),
                sid: r.subject.map(|s| s.6),
                ret: r.ret,
                tokens,
                error: r.error,
            });
        }
    }
    Ok(out)
}

/// praudit's name of a token: the first field of its text as `namer` (a printer with
/// the default options, uids not resolved) prints it.
fn token_name(tok: &Token<'_>, namer: &Printer<'_>) -> String {
    let mut text = Vec::new();
    namer.print_token(tok, &mut text);
    let end = text.iter().position(|&b| b == b',').unwrap_or(text.len());
    String::from_utf8_lossy(&text[..end]).into_owned()
}

/// What `arbiter bsm print` wrote and reported.
#[pyclass(frozen, module = "arbiter.bsm")]
pub struct PrintReport {
    data: Vec<u8>,
    /// Records printed (file tokens included).
    #[pyo3(get)]
    records: u64,
    /// What the command line reports on standard error (framing stops, and with `check`
    /// every undecodable token), `NAME: message`.
    #[pyo3(get)]
    problems: Vec<String>,
}

#[pymethods]
impl PrintReport {
    /// The printed bytes, exactly what `arbiter bsm print` writes to standard output.
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.data)
    }
    /// The printed text (bytes that are not UTF-8 become U+FFFD).
    #[getter]
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.data).into_owned()
    }
    fn __str__(&self) -> String {
        self.text()
    }
    fn __repr__(&self) -> String {
        format!(
            "<arbiter.bsm.PrintReport records={} bytes={} problems={}>",
            self.records,
            self.data.len(),
            self.problems.len()
        )
    }
}

/// praudit over trails: `arbiter bsm print` with the same options.
#[pyfunction]
#[pyo3(name = "_bsm_praudit", signature = (trails, *, oneline=false, raw=false, short=false,
    xml=false, noresolve=false, delim=",", json=false, resync=false, check=false, etc=None))]
#[allow(clippy::too_many_arguments)]
fn bsm_praudit(
    py: Python<'_>,
    trails: &Bound<'_, PyAny>,
    oneline: bool,
    raw: bool,
    short: bool,
    xml: bool,
    noresolve: bool,
    delim: &str,
    json: bool,
    resync: bool,
    check: bool,
    etc: Option<&Bound<'_, PyAny>>,
) -> PyResult<PrintReport> {
    if raw && short {
        return Err(PyValueError::new_err(
            "raw and short exclude each other (-r, -s)",
        ));
    }
    if xml && json {
        return Err(PyValueError::new_err("xml and json exclude each other"));
    }
    let inputs = self::trails(trails)?;
    let cfg = config(etc)?;
    let opts = PrintOptions {
        oneline,
        raw,
        short,
        xml,
        noresolve,
        delim: delim.as_bytes().to_vec(),
        json,
        resync,
    };
    detach(py, move || -> PyResult<PrintReport> {
        let printer = Printer::new(&cfg.events, opts);
        let mut out = Vec::new();
        let mut report = PrintReport {
            data: Vec::new(),
            records: 0,
            problems: Vec::new(),
        };
        if xml {
            printer.xml_header(&mut out);
        }
        for t in &inputs {
            let s = match t {
                Trail::Bytes(_, b) => printer.print_trail(b.as_slice(), &mut out).ok(),
                Trail::File(p) => match std::fs::File::open(p) {
                    // As the command line: an unreadable file is reported, the rest printed.
                    Err(e) => {
                        report.problems.push(format!("{}: {e}", p.display()));
                        None
                    }
                    Ok(f) => match printer.print_stream(f, &mut out) {
                        Ok(s) => Some(s),
                        Err(e) => {
                            report.problems.push(format!("{}: {e}", p.display()));
                            None
                        }
                    },
                },
            };
            let Some(s) = s else { continue };
            let name = t.name();
            report.records += s.records;
            if check {
                for e in &s.bad_tokens {
                    report.problems.push(format!("{name}: {e}"));
                }
            }
            for f in &s.framing {
                report.problems.push(if resync {
                    format!("{name}: {f}; resynchronised at the next record")
                } else {
                    format!("{name}: {f}; the rest of the file is not printed (--resync goes on)")
                });
            }
        }
        if xml {
            printer.xml_footer(&mut out);
        }
        report.data = out;
        Ok(report)
    })?
}

/// What `arbiter bsm reduce` wrote and counted.
#[pyclass(frozen, module = "arbiter.bsm")]
pub struct ReduceReport {
    data: Vec<u8>,
    /// Records read (file tokens included).
    #[pyo3(get)]
    records: u64,
    /// Records selected.
    #[pyo3(get)]
    selected: u64,
    /// Records with a token that could not be decoded.
    #[pyo3(get)]
    undecodable: u64,
    /// Records dropped only because an earlier record of their file had an undecodable
    /// token (auditreduce's behaviour; `--extended` keeps them).
    #[pyo3(get)]
    suppressed_after_error: u64,
}

#[pymethods]
impl ReduceReport {
    /// The selected records as a trail: what `arbiter bsm reduce` writes to standard output.
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.data)
    }
    fn __repr__(&self) -> String {
        format!(
            "<arbiter.bsm.ReduceReport records={} selected={}>",
            self.records, self.selected
        )
    }
}

fn reducer(options: &[String], cfg: &Config) -> PyResult<Reducer> {
    let (opts, files) = ReduceOptions::parse(options, cfg).map_err(|e| match e {
        ReduceError::Usage(_) => PyValueError::new_err(format!("auditreduce options: {e}")),
        e => PyValueError::new_err(e.to_string()),
    })?;
    if let Some(f) = files.first() {
        return Err(PyValueError::new_err(format!(
            "options: {f:?} is not an option (trails go in the `trails` argument)"
        )));
    }
    Ok(Reducer::new(opts, cfg))
}

/// Runs the reducer over the trails, appending the selected records to `out`.
fn reduce_into(
    reducer: &Reducer,
    inputs: &[Trail],
    out: &mut Vec<u8>,
    report: &mut ReduceReport,
) -> Result<(), (PathBuf, String)> {
    for t in inputs {
        let s = match t {
            Trail::Bytes(_, b) => reducer.reduce_trail(b, out),
            Trail::File(p) => {
                let f = std::fs::File::open(p).map_err(|e| (p.clone(), e.to_string()))?;
                reducer
                    .reduce_stream(f, out)
                    .map_err(|e| (p.clone(), e.to_string()))?
            }
        };
        report.records += s.records;
        report.selected += s.selected;
        report.undecodable += s.undecodable;
        report.suppressed_after_error += s.suppressed_after_error;
    }
    Ok(())
}

/// auditreduce over trails: `arbiter bsm reduce OPTIONS TRAILS`.
#[pyfunction]
#[pyo3(name = "_bsm_reduce", signature = (trails, options=Vec::new(), *, etc=None))]
fn bsm_reduce(
    py: Python<'_>,
    trails: &Bound<'_, PyAny>,
    options: Vec<String>,
    etc: Option<&Bound<'_, PyAny>>,
) -> PyResult<ReduceReport> {
    let inputs = self::trails(trails)?;
    let cfg = config(etc)?;
    let reducer = reducer(&options, &cfg)?;
    let r = detach(py, move || {
        let mut report = ReduceReport {
            data: Vec::new(),
            records: 0,
            selected: 0,
            undecodable: 0,
            suppressed_after_error: 0,
        };
        let mut out = Vec::new();
        reduce_into(&reducer, &inputs, &mut out, &mut report).map(|()| {
            report.data = out;
            report
        })
    })?;
    r.map_err(|(p, e)| trail_error(&p, e))
}

/// The answer of `au_preselect`.
#[pyclass(frozen, module = "arbiter.bsm", name = "Selection")]
pub struct BsmSelection {
    /// Whether the mask selects the event.
    #[pyo3(get)]
    selected: bool,
    /// The event number asked about.
    #[pyo3(get)]
    event: u16,
    /// The event's class bits.
    #[pyo3(get)]
    class_bits: u32,
    /// The class bits that selected it (0 when not selected).
    #[pyo3(get)]
    matched: u32,
    /// Names of the event's classes (audit_class short names).
    #[pyo3(get)]
    classes: Vec<String>,
    /// Names of the matching classes.
    #[pyo3(get)]
    matched_classes: Vec<String>,
    /// The mask's success and failure halves.
    #[pyo3(get)]
    mask: (u32, u32),
}

#[pymethods]
impl BsmSelection {
    fn __bool__(&self) -> bool {
        self.selected
    }
    fn __repr__(&self) -> String {
        format!(
            "<arbiter.bsm.Selection event={} selected={} class=0x{:08x} matched=0x{:08x}>",
            self.event, self.selected, self.class_bits, self.matched
        )
    }
}

/// `au_preselect(event, mask, outcome)`: None when audit_event does not list the event.
#[pyfunction]
#[pyo3(name = "_bsm_preselect", signature = (event, mask, *, outcome="success", etc=None))]
fn bsm_preselect(
    event: &Bound<'_, PyAny>,
    mask: &str,
    outcome: &str,
    etc: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<BsmSelection>> {
    let cfg = config(etc)?;
    let number = if let Ok(n) = event.extract::<u16>() {
        n
    } else if let Ok(name) = event.extract::<String>() {
        match name.parse::<u16>() {
            Ok(n) => n,
            Err(_) => {
                cfg.events
                    .by_name(name.as_bytes())
                    .ok_or_else(|| {
                        PyValueError::new_err(format!("{name:?}: no such event in audit_event"))
                    })?
                    .number
            }
        }
    } else {
        return Err(PyTypeError::new_err(
            "event: an event number (int) or name (str)",
        ));
    };
    let outcome = match outcome {
        "success" => Outcome::Success,
        "failure" => Outcome::Failure,
        "both" => Outcome::Both,
        o => {
            return Err(PyValueError::new_err(format!(
                "outcome {o:?}: one of \"success\", \"failure\", \"both\""
            )))
        }
    };
    let m = Mask::parse(mask, &cfg.classes)
        .map_err(|e| PyValueError::new_err(format!("mask {mask:?}: {e}")))?;
    let pre = Preselector::new(&cfg.events);
    Ok(pre.preselect(number, &m, outcome).map(|s| BsmSelection {
        selected: s.selected(),
        event: number,
        class_bits: s.class,
        matched: s.matched,
        classes: cfg.classes.names_of(s.class),
        matched_classes: cfg.classes.names_of(s.matched),
        mask: (m.success, m.failure),
    }))
}

/// The map step of fleet-scale trail analysis (`arbiter.dask.trails_fleet`): one trail's
/// records selected as `reduce()` selects them, and the selected records counted per
/// event number and per audit user id (-1 for records without a subject token).
/// Returns `(records read, selected, {event: n}, {auid: n}, selected bytes)`.
#[pyfunction]
#[pyo3(name = "_bsm_digest", signature = (trail, options=Vec::new(), *, etc=None))]
#[allow(clippy::type_complexity)]
fn bsm_digest<'py>(
    py: Python<'py>,
    trail: &Bound<'py, PyAny>,
    options: Vec<String>,
    etc: Option<&Bound<'py, PyAny>>,
) -> PyResult<(
    u64,
    u64,
    BTreeMap<u16, u64>,
    BTreeMap<i64, u64>,
    Bound<'py, PyBytes>,
)> {
    let inputs = self::trails(trail)?;
    let cfg = config(etc)?;
    let reducer = reducer(&options, &cfg)?;
    let r = detach(py, move || {
        let mut report = ReduceReport {
            data: Vec::new(),
            records: 0,
            selected: 0,
            undecodable: 0,
            suppressed_after_error: 0,
        };
        let mut out = Vec::new();
        reduce_into(&reducer, &inputs, &mut out, &mut report)?;
        let (events, users) = count_records(&out);
        Ok::<_, (PathBuf, String)>((report.records, report.selected, events, users, out))
    })?;
    let (records, selected, events, users, out) = r.map_err(|(p, e)| trail_error(&p, e))?;
    Ok((records, selected, events, users, PyBytes::new(py, &out)))
}

/// Records of a trail per event number and per audit user id (-1: no subject token).
fn count_records(trail: &[u8]) -> (BTreeMap<u16, u64>, BTreeMap<i64, u64>) {
    let mut events = BTreeMap::new();
    let mut users = BTreeMap::new();
    for rec in records(trail).map_while(Result::ok) {
        let mut event = None;
        let mut auid = None;
        for tok in rec.tokens().map_while(Result::ok) {
            match tok {
                Token::Header(h) => {
                    event.get_or_insert(h.event);
                }
                Token::Subject(s) => {
                    auid.get_or_insert(s.auid);
                }
                _ => {}
            }
        }
        // File tokens are trail bookkeeping, not events.
        if let Some(e) = event {
            *events.entry(e).or_insert(0) += 1;
            *users.entry(auid.map_or(-1, i64::from)).or_insert(0) += 1;
        }
    }
    (events, users)
}

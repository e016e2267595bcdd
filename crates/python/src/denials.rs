//! `arbiter.denials`: AVC denial logs explained as `arbiter why` / `arbiter why --allow` do
//! (audit2why / audit2allow), over the `arbiter-denials` engine.
//!
//! The text a [`Denials`] call returns is what the command line prints on standard output for
//! the same inputs and options, because both drive the same [`Session`]. The typed records
//! ([`Denial`]) are the session's JSON Lines objects read back, so they cannot drift from
//! `arbiter why --json`. [`Denials::digest`] is the map step of fleet-scale analysis
//! (`arbiter.dask`): counts plus the few lines that decide audit2allow's output, so that the
//! reduce step reproduces one run over every log exactly (see [`Digest`]).
//!
//! The work runs without the GIL. The engine caches what it computes (boolean snapshots), so
//! it is behind a mutex: calls on one `Denials` object run one at a time; use one object per
//! thread (or process) for parallel work.

use crate::errors::{guard, panic_error, Error};
use crate::policy::{fspath, model_from, Policy};
use arbiter_denials::{
    AllowGenerator, BoolDescriptions, BoolFix, Engine, Explanation, Generation, Mode, ModuleName,
    Options, Session, Summary, TypeFilter, Verdict,
};
use pyo3::create_exception;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use std::collections::HashMap;
use std::io::BufReader;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

mod digest;
pub(crate) use digest::{digest, Chunk, DigestCache, Digester, Position};

create_exception!(
    arbiter,
    LogError,
    Error,
    "A denial log could not be read (missing file, I/O error). `.path` names the file."
);

/// Registers the classes and the exception in the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    py.get_type::<LogError>().setattr("path", py.None())?;
    m.add("LogError", py.get_type::<LogError>())?;
    m.add_class::<Denials>()?;
    m.add_class::<Report>()?;
    m.add_class::<Denial>()?;
    m.add_class::<Digest>()?;
    Ok(())
}

/// One input: log text in memory, or a file read when the work runs.
enum Input {
    Text(String, Vec<u8>),
    File(PathBuf),
}

/// What a `Denials` was built from, so that pickling can rebuild it.
#[derive(Clone)]
enum Origin {
    Path(PathBuf),
    Image(Arc<Vec<u8>>),
    Unknown,
}

/// The denial engine for one policy: audit2why / audit2allow over logs.
///
/// Picklable when built from a path (reopened by path) or from the policy image (sent as
/// bytes); a `Denials` built from an `arbiter.Policy` pickles by that policy's path.
#[pyclass(frozen, module = "arbiter.denials")]
pub struct Denials {
    pub(crate) engine: Arc<Mutex<Engine>>,
    /// What the fleet digests of this engine learnt so far (locked after `engine`).
    pub(crate) verdicts: Arc<Mutex<DigestCache>>,
    origin: Origin,
}

/// Log text from a `str` or `bytes` argument.
fn text_bytes(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(s.to_str()?.as_bytes().to_vec());
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    Err(PyTypeError::new_err(format!(
        "text must be str or bytes (the log's contents; pass paths as files=[...]), got {}",
        obj.get_type().name()?
    )))
}

/// The inputs of a call: `text` first (named `name`), then `files` in order.
fn inputs(
    text: Option<&Bound<'_, PyAny>>,
    files: Option<&Bound<'_, PyAny>>,
    name: &str,
) -> PyResult<Vec<Input>> {
    let mut out = Vec::new();
    if let Some(t) = text {
        out.push(Input::Text(name.to_string(), text_bytes(t)?));
    }
    if let Some(f) = files {
        if f.is_instance_of::<PyString>() || f.hasattr("__fspath__")? {
            return Err(PyTypeError::new_err(
                "files must be a list of paths, not one path",
            ));
        }
        let it = f
            .try_iter()
            .map_err(|_| PyTypeError::new_err("files must be an iterable of paths"))?;
        for p in it {
            out.push(Input::File(fspath(&p?)?));
        }
    }
    if out.is_empty() {
        return Err(PyTypeError::new_err("give the log as text or files=[...]"));
    }
    Ok(out)
}

/// Why a run stopped: an unreadable file, or a failure writing to memory (impossible).
enum RunError {
    Log(PathBuf, std::io::Error),
    Other(String),
}

fn run_error(e: RunError) -> PyErr {
    match e {
        RunError::Log(path, err) => {
            let shown = path.display().to_string();
            let e = LogError::new_err(format!("{shown}: {err}"));
            Python::attach(|py| {
                let _ = e.value(py).setattr("path", shown);
            });
            e
        }
        RunError::Other(m) => Error::new_err(m),
    }
}

/// Runs one session over the inputs, returning standard output's text and the counts.
fn run(
    session: &mut Option<Session<'_>>,
    inputs: &[Input],
) -> Result<(Vec<u8>, Summary), RunError> {
    let mut out = Vec::new();
    let s = session.as_mut().expect("session present");
    for input in inputs {
        match input {
            Input::Text(name, bytes) => s
                .feed(name, &bytes[..], &mut out)
                .map_err(|e| RunError::Other(e.to_string()))?,
            Input::File(path) => {
                let f = std::fs::File::open(path).map_err(|e| RunError::Log(path.clone(), e))?;
                let name = path.display().to_string();
                s.feed(&name, BufReader::new(f), &mut out)
                    .map_err(|e| RunError::Log(path.clone(), e))?;
            }
        }
    }
    let summary = session
        .take()
        .expect("session present")
        .finish(&mut out)
        .map_err(|e| RunError::Other(e.to_string()))?;
    Ok((out, summary))
}

/// Options of a run, as the command line's flags.
#[derive(Clone, Default)]
struct RunOptions {
    allow: bool,
    explain: bool,
    json: bool,
    generation: Generation,
    type_filter: Option<TypeFilter>,
}

impl Denials {
    fn build(py: Python<'_>, policy: &Bound<'_, PyAny>) -> PyResult<Denials> {
        let origin = if let Ok(p) = policy.cast::<Policy>() {
            p.get().path.clone().map_or(Origin::Unknown, Origin::Path)
        } else if let Ok(b) = policy.cast::<PyBytes>() {
            Origin::Image(Arc::new(b.as_bytes().to_vec()))
        } else if policy.is_instance_of::<PyString>() || policy.hasattr("__fspath__")? {
            Origin::Path(fspath(policy)?)
        } else {
            Origin::Unknown
        };
        let model = model_from(policy)?;
        let engine = py
            .detach(move || {
                std::panic::catch_unwind(move || {
                    let model = Arc::try_unwrap(model).unwrap_or_else(|s| (*s).clone());
                    arbiter_policy::ValidPolicy::check(model).map(Engine::new)
                })
            })
            .map_err(panic_error)?
            .map_err(crate::errors::policy_error)?;
        Ok(Denials {
            engine: Arc::new(Mutex::new(engine)),
            verdicts: Arc::default(),
            origin,
        })
    }

    /// Runs a session with these options, without the GIL.
    fn session(&self, py: Python<'_>, inputs: Vec<Input>, o: RunOptions) -> PyResult<Report> {
        let engine = self.engine.clone();
        let result = py.detach(move || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                let engine = engine.lock().unwrap_or_else(|p| p.into_inner());
                let opts = Options {
                    mode: if o.allow { Mode::Allow } else { Mode::Why },
                    explain: o.explain,
                    json: o.json,
                    program_output: false,
                    last_reload: false,
                };
                let mut s = Session::new(&engine, opts)
                    .with_descriptions(BoolDescriptions::system())
                    .with_generation(o.generation);
                if let Some(f) = o.type_filter {
                    s = s.with_type_filter(f);
                }
                run(&mut Some(s), &inputs)
            }))
        });
        let (out, summary) = result.map_err(panic_error)?.map_err(run_error)?;
        Ok(Report {
            text: String::from_utf8_lossy(&out).into_owned(),
            lines: summary.lines,
            records: summary.records,
            decided: summary.decided,
            malformed: summary.malformed,
            unknown: summary.unknown,
            selinux_seen: summary.selinux_seen,
            problems: summary.problems.iter().map(|p| p.to_string()).collect(),
        })
    }
}

#[pymethods]
impl Denials {
    /// The engine for `policy`: an `arbiter.Policy`, a path (`str`, `os.PathLike`) or the
    /// policy image (`bytes`).
    #[new]
    fn new(py: Python<'_>, policy: &Bound<'_, PyAny>) -> PyResult<Denials> {
        Denials::build(py, policy)
    }

    /// audit2why's report (`arbiter why POLICY FILES`): `text` (str or bytes, read as the
    /// input named `name`) and then `files`. `explain` adds arbiter's full explanation
    /// (`--explain`); `json` gives JSON Lines (`--json`).
    #[pyo3(signature = (text=None, *, files=None, name="-", explain=false, json=false))]
    fn why(
        &self,
        py: Python<'_>,
        text: Option<&Bound<'_, PyAny>>,
        files: Option<&Bound<'_, PyAny>>,
        name: &str,
        explain: bool,
        json: bool,
    ) -> PyResult<Report> {
        let inputs = inputs(text, files, name)?;
        let o = RunOptions {
            explain,
            json,
            ..RunOptions::default()
        };
        self.session(py, inputs, o)
    }

    /// audit2allow's rules (`arbiter why --allow POLICY FILES`), with its options: `module`
    /// (-m NAME), `requires` (-r), `dontaudit` (-D), `xperms` (-x), `verbose` (-v),
    /// `explain_rules` (-e), `type_regex` (-t), `json` (--json).
    #[pyo3(signature = (text=None, *, files=None, name="-", module=None, requires=false,
        dontaudit=false, xperms=false, verbose=false, explain_rules=false, type_regex=None,
        json=false))]
    #[allow(clippy::too_many_arguments)]
    fn allow(
        &self,
        py: Python<'_>,
        text: Option<&Bound<'_, PyAny>>,
        files: Option<&Bound<'_, PyAny>>,
        name: &str,
        module: Option<&str>,
        requires: bool,
        dontaudit: bool,
        xperms: bool,
        verbose: bool,
        explain_rules: bool,
        type_regex: Option<&str>,
        json: bool,
    ) -> PyResult<Report> {
        let inputs = inputs(text, files, name)?;
        let generation = Generation {
            module: module
                .map(ModuleName::parse)
                .transpose()
                .map_err(|e| PyValueError::new_err(e.to_string()))?,
            requires,
            dontaudit,
            xperms,
            explain: if explain_rules {
                Explanation::Long
            } else if verbose {
                Explanation::Short
            } else {
                Explanation::None
            },
            mls_kernel: arbiter_denials::package::kernel_mls_enabled(),
        };
        let type_filter = type_regex
            .map(TypeFilter::new)
            .transpose()
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let o = RunOptions {
            allow: true,
            json,
            generation,
            type_filter,
            ..RunOptions::default()
        };
        self.session(py, inputs, o)
    }

    /// Every AVC / USER_AVC record of the inputs as a typed `Denial` (what `arbiter why
    /// --json` prints, one object per record), in input order.
    #[pyo3(signature = (text=None, *, files=None, name="-"))]
    fn records(
        &self,
        py: Python<'_>,
        text: Option<&Bound<'_, PyAny>>,
        files: Option<&Bound<'_, PyAny>>,
        name: &str,
    ) -> PyResult<Vec<Denial>> {
        let inputs = inputs(text, files, name)?;
        let o = RunOptions {
            json: true,
            ..RunOptions::default()
        };
        let report = self.session(py, inputs, o)?;
        guard(|| {
            report
                .text
                .lines()
                .map(|l| {
                    let v: serde_json::Value = serde_json::from_str(l)
                        .map_err(|e| Error::new_err(format!("internal: bad record JSON: {e}")))?;
                    Ok(Denial::from_json(&v))
                })
                .collect()
        })
    }

    /// The map step of fleet analysis (`arbiter.dask`): counts of one log chunk and the lines
    /// that decide audit2allow's output. Chunks digested in order and their `kept` lines
    /// given to `allow()` in that order give the rules of one run over all of them.
    #[pyo3(signature = (text, *, name="-"))]
    fn digest(&self, py: Python<'_>, text: &Bound<'_, PyAny>, name: &str) -> PyResult<Digest> {
        let _ = name;
        let bytes = text_bytes(text)?;
        let engine = self.engine.clone();
        let cache = self.verdicts.clone();
        py.detach(move || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                let engine = engine.lock().unwrap_or_else(|p| p.into_inner());
                let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
                digest(&engine, &mut cache, &bytes, None).map(|c| c.digest(&cache))
            }))
        })
        .map_err(panic_error)?
        .map_err(|e| Error::new_err(e.to_string()))
    }

    /// The reduce step of fleet analysis: audit2allow's text (as `allow()` prints it) from
    /// the `kept` denials and `roles` of digests, concatenated in log order. `selinux_seen`:
    /// whether any digest saw an SELinux line (else the text is empty, as the command line
    /// prints nothing). Nothing is decided again: the verdicts travel in `kept`.
    #[pyo3(signature = (kept, roles, selinux_seen, *, module=None, requires=false,
        dontaudit=false, xperms=false))]
    #[allow(clippy::too_many_arguments)]
    fn merge_allow(
        &self,
        py: Python<'_>,
        kept: Vec<KeptDenial>,
        roles: Vec<(String, String)>,
        selinux_seen: bool,
        module: Option<&str>,
        requires: bool,
        dontaudit: bool,
        xperms: bool,
    ) -> PyResult<String> {
        let generation = fleet_generation(module, requires, dontaudit, xperms)?;
        let mut entries = Vec::with_capacity(kept.len());
        for (s, t, c, perms, ioctl, v) in kept {
            entries.push((s, t, c, perms, ioctl, v.map(unplain).transpose()?));
        }
        if !selinux_seen {
            return Ok(String::new());
        }
        py.detach(move || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                render_allow(&entries, &roles, &generation)
            }))
        })
        .map_err(panic_error)
    }

    /// Pickle support: rebuilt from the policy's path or image.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (Py<PyAny>,))> {
        let cls = py.get_type::<Denials>().into_any();
        match &self.origin {
            Origin::Path(p) => Ok((cls, (p.clone().into_pyobject(py)?.into_any().unbind(),))),
            Origin::Image(b) => Ok((cls, (PyBytes::new(py, b).into_any().unbind(),))),
            Origin::Unknown => Err(PyTypeError::new_err(
                "this Denials was built from a Policy with no path: build it from a path or \
                 the policy bytes to pickle it",
            )),
        }
    }
}

/// audit2allow's generation options of a fleet reduce (`-m`, `-r`, `-D`, `-x`).
pub(crate) fn fleet_generation(
    module: Option<&str>,
    requires: bool,
    dontaudit: bool,
    xperms: bool,
) -> PyResult<Generation> {
    Ok(Generation {
        module: module
            .map(ModuleName::parse)
            .transpose()
            .map_err(|e| PyValueError::new_err(e.to_string()))?,
        requires,
        dontaudit,
        xperms,
        explain: Explanation::None,
        mls_kernel: arbiter_denials::package::kernel_mls_enabled(),
    })
}

/// A kept denial with its verdict decoded (see [`Digest::kept`]).
pub(crate) type DecidedDenial = (
    String,
    String,
    String,
    Vec<String>,
    Option<i64>,
    Option<Verdict>,
);

/// audit2allow's text from distinct denials in log order and invalid-context roles: the
/// reduce step shared by `merge_allow` and the fleet blobs.
pub(crate) fn render_allow(
    entries: &[DecidedDenial],
    roles: &[(String, String)],
    generation: &Generation,
) -> String {
    let mut g = AllowGenerator::new();
    for (s, t, c, perms, ioctl, v) in entries {
        let perms: Vec<&str> = perms.iter().map(String::as_str).collect();
        g.add(s, t, c, &perms, v.as_ref(), *ioctl);
    }
    for (role, ty) in roles {
        g.add_role(role, ty);
    }
    g.render(generation)
}

/// The result of a run: standard output's text and the counts.
#[pyclass(frozen, module = "arbiter.denials")]
pub struct Report {
    /// What `arbiter why` prints on standard output (audit2why's or audit2allow's text).
    #[pyo3(get)]
    text: String,
    /// Lines read.
    #[pyo3(get)]
    lines: u64,
    /// AVC / USER_AVC records read.
    #[pyo3(get)]
    records: u64,
    /// Distinct denials decided.
    #[pyo3(get)]
    decided: u64,
    /// SELinux lines that could not be read.
    #[pyo3(get)]
    malformed: u64,
    /// Records naming something the policy lacks.
    #[pyo3(get)]
    unknown: u64,
    /// Whether any SELinux record was seen (the command line says "Nothing to do" if not).
    #[pyo3(get)]
    selinux_seen: bool,
    /// The first problems, as the command line prints them on stderr ("FILE:LINE: ...").
    #[pyo3(get)]
    problems: Vec<String>,
}

#[pymethods]
impl Report {
    fn __str__(&self) -> String {
        self.text.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "<arbiter.denials.Report lines={} records={} malformed={} unknown={}>",
            self.lines, self.records, self.malformed, self.unknown
        )
    }
}

/// One AVC record and audit2why's verdict on it.
#[pyclass(frozen, module = "arbiter.denials")]
pub struct Denial {
    /// The input's name (a file's path, or `name`).
    #[pyo3(get)]
    source: String,
    /// 1-based line number in that input.
    #[pyo3(get)]
    line: u64,
    /// "AVC" or "USER_AVC".
    #[pyo3(get)]
    record: String,
    /// False for `avc: granted` records.
    #[pyo3(get)]
    denied: bool,
    /// `permissive=` when logged.
    #[pyo3(get)]
    permissive: Option<bool>,
    /// Source context.
    #[pyo3(get)]
    scontext: String,
    /// Target context.
    #[pyo3(get)]
    tcontext: String,
    /// Object class.
    #[pyo3(get)]
    tclass: String,
    /// Permissions in log order.
    #[pyo3(get)]
    perms: Vec<String>,
    /// `ioctlcmd=` when logged.
    #[pyo3(get)]
    ioctlcmd: Option<i64>,
    /// `comm=` when logged.
    #[pyo3(get)]
    comm: Option<String>,
    /// `exe=` when logged.
    #[pyo3(get)]
    exe: Option<String>,
    /// `name=` when logged.
    #[pyo3(get)]
    name: Option<String>,
    /// audit2why's verdict name (ALLOW, DONTAUDIT, TERULE, BOOLEAN, CONSTRAINT, RBAC,
    /// BOUNDS), None when the policy cannot place the record (see `unknown`).
    #[pyo3(get)]
    verdict: Option<String>,
    /// audit2why's numeric code for the verdict (0-6).
    #[pyo3(get)]
    code: Option<i64>,
    /// For BOOLEAN: each boolean and the value that alone would grant the access.
    #[pyo3(get)]
    booleans: Vec<(String, bool)>,
    /// For CONSTRAINT: libsepol's reason text.
    #[pyo3(get)]
    constraint: Option<String>,
    /// Why the policy cannot place the record, when it cannot.
    #[pyo3(get)]
    unknown: Option<String>,
}

impl Denial {
    fn from_json(v: &serde_json::Value) -> Denial {
        let s = |k: &str| v[k].as_str().map(str::to_string);
        Denial {
            source: s("source").unwrap_or_default(),
            line: v["line"].as_u64().unwrap_or(0),
            record: s("record").unwrap_or_default(),
            denied: v["denied"].as_bool().unwrap_or(false),
            permissive: v["permissive"].as_bool(),
            scontext: s("scontext").unwrap_or_default(),
            tcontext: s("tcontext").unwrap_or_default(),
            tclass: s("tclass").unwrap_or_default(),
            perms: v["perms"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|p| p.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
            ioctlcmd: v["ioctlcmd"].as_i64(),
            comm: s("comm"),
            exe: s("exe"),
            name: s("name"),
            verdict: s("verdict"),
            code: v["code"].as_i64(),
            booleans: v["booleans"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|b| {
                            (
                                b["name"].as_str().unwrap_or_default().to_string(),
                                b["value"].as_bool().unwrap_or(false),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default(),
            constraint: s("constraint"),
            unknown: s("unknown"),
        }
    }
}

#[pymethods]
impl Denial {
    /// Whether the policy would allow the access as it stands (verdict ALLOW).
    #[getter]
    fn allowed(&self) -> bool {
        self.verdict.as_deref() == Some("ALLOW")
    }

    fn __repr__(&self) -> String {
        format!(
            "<arbiter.denials.Denial {}:{} {} {} {} {{ {} }} verdict={}>",
            self.source,
            self.line,
            self.scontext,
            self.tcontext,
            self.tclass,
            self.perms.join(" "),
            self.verdict.as_deref().unwrap_or("None")
        )
    }
}

/// Counts of one log chunk, and what decides audit2allow's output, already decided.
///
/// `kept` holds, in input order, the first occurrence of every distinct denial (source and
/// target context, class, permissions, ioctl command) with its verdict; `roles` every
/// distinct (role, type) of an invalid-context line. audit2allow's state depends only on
/// those: a repeated denial adds nothing (permission sets, first contexts), so
/// [`Denials::merge_allow`] over the digests of every chunk, in order, prints what one run
/// over all the logs prints, without deciding anything again.
#[pyclass(frozen, module = "arbiter.denials")]
pub struct Digest {
    /// Lines read.
    #[pyo3(get)]
    pub(crate) lines: u64,
    /// AVC / USER_AVC records.
    #[pyo3(get)]
    pub(crate) records: u64,
    /// Records that are denials (not `granted`).
    #[pyo3(get)]
    pub(crate) denials: u64,
    /// SELinux lines that could not be read.
    #[pyo3(get)]
    pub(crate) malformed: u64,
    /// Records the policy cannot place.
    #[pyo3(get)]
    pub(crate) unknown: u64,
    /// Whether any SELinux line was seen.
    #[pyo3(get)]
    pub(crate) selinux_seen: bool,
    /// Records by audit2why verdict name ("UNKNOWN" when the policy cannot place them).
    #[pyo3(get)]
    pub(crate) verdicts: HashMap<String, u64>,
    /// Denials by (source type, target type, class): the access vectors of audit2allow.
    #[pyo3(get)]
    pub(crate) rules: HashMap<(String, String, String), u64>,
    /// Distinct denials in first-seen order: (scontext, tcontext, tclass, perms, ioctlcmd,
    /// verdict), the verdict as (code, booleans, constraint text), None for a class the
    /// policy lacks (audit2allow still writes its rule).
    #[pyo3(get)]
    pub(crate) kept: Vec<KeptDenial>,
    /// Distinct (role, type) pairs of invalid-context records.
    #[pyo3(get)]
    pub(crate) roles: Vec<(String, String)>,
}

/// A verdict as plain data: (code, booleans, constraint text).
pub(crate) type PlainVerdict = (i32, Vec<(String, bool)>, Option<String>);
/// A kept denial as plain data (see [`Digest::kept`]).
pub(crate) type KeptDenial = (
    String,
    String,
    String,
    Vec<String>,
    Option<i64>,
    Option<PlainVerdict>,
);

pub(crate) fn plain(v: &Verdict) -> PlainVerdict {
    match v {
        Verdict::Boolean(f) => (
            v.code(),
            f.iter().map(|b| (b.name.clone(), b.value)).collect(),
            None,
        ),
        Verdict::Constraint(t) => (v.code(), Vec::new(), Some(t.clone())),
        _ => (v.code(), Vec::new(), None),
    }
}

pub(crate) fn unplain(p: PlainVerdict) -> PyResult<Verdict> {
    verdict_from_plain(p).map_err(|c| PyValueError::new_err(format!("verdict code {c} is not 0-6")))
}

/// A verdict from its plain form; the code itself when it names no verdict.
pub(crate) fn verdict_from_plain(
    (code, booleans, constraint): PlainVerdict,
) -> Result<Verdict, i32> {
    Ok(match code {
        0 => Verdict::Allow,
        1 => Verdict::DontAudit,
        2 => Verdict::TeRule,
        3 => Verdict::Boolean(
            booleans
                .into_iter()
                .map(|(name, value)| BoolFix { name, value })
                .collect(),
        ),
        4 => Verdict::Constraint(constraint.unwrap_or_default()),
        5 => Verdict::Rbac,
        6 => Verdict::Bounds,
        c => return Err(c),
    })
}

#[pymethods]
impl Digest {
    fn __repr__(&self) -> String {
        format!(
            "<arbiter.denials.Digest lines={} records={} kept={}>",
            self.lines,
            self.records,
            self.kept.len()
        )
    }
}

//! `arbiter.landlock`: would these Landlock layers allow an operation, and which layer
//! denies it — `arbiter landlock check` as a Python object, over the `arbiter-landlock`
//! evaluator (the kernel's algorithms, run in userspace on this machine's filesystem).
//!
//! A [`Landlock`] holds the layers loaded from landlockconfig files (TOML, or JSON by
//! extension), stacked in order as `landlock_restrict_self` would stack them; its
//! [`Landlock::check`] answers what the command line answers for the same operation,
//! because both call the same [`Sandbox::evaluate`](arbiter_landlock::Sandbox::evaluate).

use crate::errors::{panic_error, Error};
use crate::policy::fspath;
use arbiter_landlock::config::{load_layers, Layers};
use arbiter_landlock::{Layout, Op, Outcome};
use pyo3::create_exception;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::path::PathBuf;
use std::sync::Arc;

create_exception!(
    arbiter,
    LandlockConfigError,
    Error,
    "A landlockconfig file could not be read, parsed or resolved. `.file` names it."
);

/// Registers the classes and the exception in the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    py.get_type::<LandlockConfigError>()
        .setattr("file", py.None())?;
    m.add("LandlockConfigError", py.get_type::<LandlockConfigError>())?;
    m.add_class::<Landlock>()?;
    m.add_class::<Evaluation>()?;
    m.add_function(wrap_pyfunction!(landlock_load, m)?)?;
    Ok(())
}

/// Unpickling: `Landlock(files, layout=layout)`.
#[pyfunction]
#[pyo3(name = "_landlock_load")]
fn landlock_load(py: Python<'_>, files: Vec<Bound<'_, PyAny>>, layout: &str) -> PyResult<Landlock> {
    Landlock::new(py, files, layout)
}

/// What `__reduce__` returns: the loader and its arguments (files, layout).
type Reduced<'py> = (Bound<'py, PyAny>, (Vec<PathBuf>, &'static str));

/// Stacked Landlock layers, one per configuration file, ready to answer checks.
///
/// Picklable: it pickles as its files and layout, and is loaded again on the other side
/// (the layers resolve paths on the machine that loads them, as the kernel would).
#[pyclass(frozen, module = "arbiter.landlock")]
pub struct Landlock {
    layers: Arc<Layers>,
    files: Vec<PathBuf>,
    layout: &'static str,
}

/// The verdict for one operation, with the reasons.
#[pyclass(frozen, module = "arbiter.landlock")]
pub struct Evaluation {
    /// The operation as understood (`read /etc/passwd`).
    #[pyo3(get)]
    op: String,
    /// `"allowed"`, `"denied"` (Landlock denies) or `"fails"` (fails for another reason).
    #[pyo3(get)]
    verdict: &'static str,
    /// The errno's name (`EACCES`, `EXDEV`, `ENOENT`, ...); None when allowed.
    #[pyo3(get)]
    errno: Option<String>,
    /// The errno's number (0 when allowed).
    #[pyo3(get)]
    errno_code: i32,
    /// What was requested where, which layers denied which rights, which rules granted the
    /// rest: the lines of `arbiter landlock check --explain`.
    #[pyo3(get)]
    explanation: Vec<String>,
}

#[pymethods]
impl Evaluation {
    /// Whether Landlock allows the operation.
    #[getter]
    fn allowed(&self) -> bool {
        self.verdict == "allowed"
    }
    /// The first line of `arbiter landlock check`: `allowed`, `denied EACCES`, `fails ENOENT`.
    #[getter]
    fn line(&self) -> String {
        match &self.errno {
            None => self.verdict.to_string(),
            Some(e) => format!("{} {e}", self.verdict),
        }
    }
    fn __bool__(&self) -> bool {
        self.allowed()
    }
    fn __str__(&self) -> String {
        self.line()
    }
    fn __repr__(&self) -> String {
        format!(
            "<arbiter.landlock.Evaluation {:?}: {}>",
            self.op,
            self.line()
        )
    }
}

fn layout_of(name: &str) -> PyResult<(Layout, &'static str)> {
    match name {
        "hash" => Ok((Layout::Hash, "hash")),
        "sorted" => Ok((Layout::Sorted, "sorted")),
        o => Err(PyValueError::new_err(format!(
            "layout {o:?}: \"hash\" or \"sorted\""
        ))),
    }
}

/// The operation's words: a string split on whitespace, or a sequence of words.
fn op_words(op: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if let Ok(s) = op.cast::<PyString>() {
        return Ok(s.to_str()?.split_whitespace().map(str::to_string).collect());
    }
    op.extract::<Vec<String>>()
        .map_err(|_| PyTypeError::new_err("op: a string (\"read /etc/passwd\") or a list of words"))
}

#[pymethods]
impl Landlock {
    /// Loads `layers` (landlockconfig files, applied in order; none = an unsandboxed
    /// process). `layout`: the rule index of the evaluator's domain (`"hash"` or
    /// `"sorted"`; same verdicts).
    #[new]
    #[pyo3(signature = (layers=Vec::new(), *, layout="hash"))]
    fn new(py: Python<'_>, layers: Vec<Bound<'_, PyAny>>, layout: &str) -> PyResult<Landlock> {
        let (lay, name) = layout_of(layout)?;
        let files = layers
            .iter()
            .map(fspath)
            .collect::<PyResult<Vec<PathBuf>>>()?;
        let f2 = files.clone();
        let loaded = py
            .detach(move || std::panic::catch_unwind(move || load_layers(&f2, lay)))
            .map_err(panic_error)?;
        match loaded {
            Ok(l) => Ok(Landlock {
                layers: Arc::new(l),
                files,
                layout: name,
            }),
            Err(e) => {
                let err = LandlockConfigError::new_err(e.to_string());
                let _ = err.value(py).setattr("file", e.file.clone());
                Err(err)
            }
        }
    }

    /// The number of layers.
    fn __len__(&self) -> usize {
        self.layers.resolved.len()
    }

    /// The configuration files, in layer order.
    #[getter]
    fn files(&self) -> Vec<PathBuf> {
        self.files.clone()
    }

    /// What the command line prints as warnings while loading (paths that do not exist
    /// on this machine are skipped, as landlockconfig does).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.layers
            .resolved
            .iter()
            .flat_map(|r| r.warnings.iter().cloned())
            .collect()
    }

    /// Would `op` be allowed? `op` as `arbiter landlock check -- OP`: `"read PATH"`,
    /// `"open PATH rdwr,creat"`, `"rename OLD NEW"`, `"connect-tcp 443"`, ... (a string
    /// or a list of words). A malformed operation raises `ValueError`.
    fn check(&self, py: Python<'_>, op: &Bound<'_, PyAny>) -> PyResult<Evaluation> {
        let words = op_words(op)?;
        let op = Op::parse(&words).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let layers = self.layers.clone();
        let op2 = op.clone();
        let ev = py
            .detach(move || {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                    layers.sandbox.evaluate(&op2)
                }))
            })
            .map_err(panic_error)?;
        let (verdict, errno) = match ev.outcome {
            Outcome::Allowed => ("allowed", None),
            Outcome::Denied(e) => ("denied", Some(e.name().to_string())),
            Outcome::Fails(e) => ("fails", Some(e.name().to_string())),
        };
        Ok(Evaluation {
            op: op.to_string(),
            verdict,
            errno,
            errno_code: ev.outcome.errno(),
            explanation: ev.explanation,
        })
    }

    /// Many operations at once (as `--batch`), in order.
    fn check_many(&self, py: Python<'_>, ops: Vec<Bound<'_, PyAny>>) -> PyResult<Vec<Evaluation>> {
        ops.iter().map(|o| self.check(py, o)).collect()
    }

    /// Pickle support: the files and the layout, loaded again on the other side.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Reduced<'py>> {
        let load = py.import("arbiter._native")?.getattr("_landlock_load")?;
        Ok((load, (self.files.clone(), self.layout)))
    }

    fn __repr__(&self) -> String {
        format!(
            "<arbiter.landlock.Landlock layers={} layout={}>",
            self.files.len(),
            self.layout
        )
    }
}

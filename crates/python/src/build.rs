//! `arbiter.build`: CIL sources compiled to a policy as secilc 3.4 compiles them, over
//! `arbiter_cil::compile` — the engine of `arbiter build`.
//!
//! [`compile`] returns the written policy (the bytes `secilc -o` writes, for the same
//! sources and options), the `file_contexts` text (`secilc -f`), secilc's warnings, and the
//! policy read back from those bytes as an `arbiter.Policy`, so that what Python decides on
//! is exactly what the file holds. Failures raise [`CompileError`] with secilc's messages
//! (file:line where secilc names them) and its exit status.

use crate::errors::{panic_error, Error};
use crate::policy::{fspath, parse_bytes, Policy};
use arbiter_cil::{Options, Source};
use arbiter_policy::HandleUnknown;
use pyo3::create_exception;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString, PyTuple};
use std::sync::Arc;

create_exception!(
    arbiter,
    CompileError,
    Error,
    "CIL sources did not compile. `.messages` holds secilc's error lines, `.status` its exit \
     status (255 for most errors, 254 for unresolved names)."
);

/// Registers the function, its result class and the exception in the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let e = py.get_type::<CompileError>();
    e.setattr("messages", pyo3::types::PyList::empty(py))?;
    e.setattr("status", 255)?;
    m.add("CompileError", e)?;
    m.add_class::<Build>()?;
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    Ok(())
}

/// A compiled policy: its bytes, its file contexts, secilc's warnings, and the policy.
#[pyclass(frozen, module = "arbiter.build")]
pub struct Build {
    data: Vec<u8>,
    file_contexts: Vec<u8>,
    /// What secilc prints on stderr for this successful build.
    #[pyo3(get)]
    warnings: Vec<String>,
    /// The written policy read back (`arbiter.Policy`).
    #[pyo3(get)]
    policy: Py<Policy>,
}

#[pymethods]
impl Build {
    /// The binary policy: byte for byte what `secilc -o` writes.
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.data)
    }
    /// The `file_contexts` text `secilc -f` writes.
    #[getter]
    fn file_contexts<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.file_contexts)
    }
    /// Writes the policy to `path` (and `file_contexts` to `fc_path` when given).
    #[pyo3(signature = (path, fc_path=None))]
    fn write(&self, path: &Bound<'_, PyAny>, fc_path: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let p = fspath(path)?;
        std::fs::write(&p, &self.data)
            .map_err(|e| Error::new_err(format!("{}: {e}", p.display())))?;
        if let Some(f) = fc_path {
            let f = fspath(f)?;
            std::fs::write(&f, &self.file_contexts)
                .map_err(|e| Error::new_err(format!("{}: {e}", f.display())))?;
        }
        Ok(())
    }
    fn __repr__(&self) -> String {
        format!(
            "<arbiter.build.Build {} bytes, {} warning(s)>",
            self.data.len(),
            self.warnings.len()
        )
    }
}

/// One source: a path (read now), `bytes`/`str` CIL text named `<string N>`, or a
/// `(name, text)` pair (the name shown in messages, as secilc shows the path).
fn source(i: usize, o: &Bound<'_, PyAny>) -> PyResult<Source> {
    if let Ok(t) = o.cast::<PyTuple>() {
        let (name, text): (String, Bound<'_, PyAny>) = t.extract()?;
        return Ok(Source {
            name,
            text: text_bytes(&text)?,
        });
    }
    if let Ok(b) = o.cast::<PyBytes>() {
        return Ok(Source {
            name: format!("<string {i}>"),
            text: b.as_bytes().to_vec(),
        });
    }
    if o.is_instance_of::<PyString>() || o.hasattr("__fspath__")? {
        let p = fspath(o)?;
        let text = std::fs::read(&p).map_err(|_| {
            let err = CompileError::new_err(format!("Could not open file: {}", p.display()));
            Python::attach(|py| {
                let _ = err.value(py).setattr(
                    "messages",
                    vec![format!("Could not open file: {}", p.display())],
                );
            });
            err
        })?;
        return Ok(Source {
            name: p.display().to_string(),
            text,
        });
    }
    Err(PyTypeError::new_err(
        "a CIL source is a path, bytes, or a (name, text) pair",
    ))
}

fn text_bytes(o: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(b) = o.cast::<PyBytes>() {
        Ok(b.as_bytes().to_vec())
    } else if let Ok(s) = o.cast::<PyString>() {
        Ok(s.to_str()?.as_bytes().to_vec())
    } else {
        Err(PyTypeError::new_err("CIL text is str or bytes"))
    }
}

fn compile_error(messages: Vec<String>, status: u8) -> PyErr {
    let err = CompileError::new_err(messages.join("\n"));
    Python::attach(|py| {
        let _ = err.value(py).setattr("messages", messages);
        let _ = err.value(py).setattr("status", status);
    });
    err
}

/// Compiles CIL `sources` (in order, as on secilc's command line) with secilc's options:
/// `mls` (-M), `policy_version` (-c), `handle_unknown` (-U: "allow", "deny", "reject"),
/// `disable_dontaudit` (-D), `preserve_tunables` (-P), `qualified_names` (-Q),
/// `multiple_decls` (-m), `disable_neverallow` (-N), `expand_generated` (-G),
/// `expand_size` (-X), `optimize` (-O), `verbose` (-v count).
#[pyfunction]
#[pyo3(signature = (sources, *, mls=None, policy_version=33, handle_unknown=None,
    disable_dontaudit=false, preserve_tunables=false, qualified_names=false,
    multiple_decls=false, disable_neverallow=false, expand_generated=false, expand_size=1,
    optimize=false, verbose=0))]
#[allow(clippy::too_many_arguments)]
fn compile(
    py: Python<'_>,
    sources: &Bound<'_, PyAny>,
    mls: Option<bool>,
    policy_version: u32,
    handle_unknown: Option<&str>,
    disable_dontaudit: bool,
    preserve_tunables: bool,
    qualified_names: bool,
    multiple_decls: bool,
    disable_neverallow: bool,
    expand_generated: bool,
    expand_size: u32,
    optimize: bool,
    verbose: u8,
) -> PyResult<Build> {
    if !(15..=33).contains(&policy_version) {
        return Err(PyValueError::new_err(
            "Policy version must be between 15 and 33",
        ));
    }
    let handle_unknown = match handle_unknown.map(str::to_ascii_lowercase).as_deref() {
        None => None,
        Some("allow") => Some(HandleUnknown::Allow),
        Some("deny") => Some(HandleUnknown::Deny),
        Some("reject") => Some(HandleUnknown::Reject),
        Some(o) => {
            return Err(PyValueError::new_err(format!(
                "handle_unknown {o:?}: \"allow\", \"deny\" or \"reject\""
            )))
        }
    };
    let list: Vec<Bound<'_, PyAny>> = if sources.is_instance_of::<PyString>()
        || sources.cast::<PyBytes>().is_ok()
        || sources.hasattr("__fspath__")?
    {
        vec![sources.clone()]
    } else {
        sources
            .try_iter()
            .map_err(|_| PyTypeError::new_err("sources: a path or an iterable of sources"))?
            .collect::<PyResult<_>>()?
    };
    let mut srcs = Vec::with_capacity(list.len());
    for (i, o) in list.iter().enumerate() {
        let s = source(i + 1, o)?;
        // secilc skips empty files.
        if !s.text.is_empty() {
            srcs.push(s);
        }
    }
    let opts = Options {
        mls,
        policy_version,
        handle_unknown,
        disable_dontaudit,
        preserve_tunables,
        qualified_names,
        multiple_decls,
        disable_neverallow,
        expand_generated,
        expand_size,
        optimize,
        verbose,
        ..Options::default()
    };
    let built = py
        .detach(move || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                let c = arbiter_cil::compile(&srcs, &opts)?;
                drop(srcs);
                let w = arbiter_cil::write_policy(&c, &opts)?;
                let mut warnings = c.warnings;
                warnings.extend(w.warnings);
                Ok::<_, arbiter_cil::CilError>((w.bytes, c.file_contexts, warnings))
            }))
        })
        .map_err(panic_error)?;
    let (data, file_contexts, warnings) = built.map_err(|e| compile_error(e.messages, e.status))?;
    let model = parse_bytes(py, &data)?;
    let policy = Py::new(py, Policy::wrap(Arc::new(model), None))?;
    Ok(Build {
        data,
        file_contexts,
        warnings,
        policy,
    })
}

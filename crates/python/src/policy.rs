//! `arbiter.Policy`: a loaded binary policy, and the ways Python code names one (an object,
//! a path as `str` or `os.PathLike`, or the image as `bytes`).

use crate::errors::{guard, policy_error, UnknownNameError};
use arbiter_policy::stats::{statistics, StatValue};
use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::{HandleUnknown, Policy as Model, BUILTIN_POLICY};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyMemoryView, PyString};
use std::path::PathBuf;
use std::sync::Arc;

/// A compiled SELinux policy (`policy.NN`, format versions 15 to 35), read and validated.
///
/// Immutable and safe to share between threads. Build one with `Policy.open(path)`,
/// `Policy.from_bytes(data)` or `Policy.builtin()`.
#[pyclass(frozen, module = "arbiter")]
pub struct Policy {
    pub(crate) model: Arc<Model>,
    pub(crate) path: Option<PathBuf>,
}

/// Reads a policy file without holding the GIL.
pub fn open_path(py: Python<'_>, path: PathBuf) -> PyResult<Model> {
    let read = {
        let path = path.clone();
        py.detach(move || guard_read(|| Model::open(&path)))
    };
    read?.map_err(policy_error)
}

/// Parses a policy image without holding the GIL.
pub fn parse_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Model> {
    py.detach(|| guard_read(|| Model::from_bytes(data)))?
        .map_err(policy_error)
}

/// Runs a reader, catching a panic (reported after the GIL is back).
fn guard_read<T>(f: impl FnOnce() -> T) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(crate::errors::panic_error)
}

/// `os.fspath(obj)` as a `PathBuf` (for `str`, `bytes` and `os.PathLike`).
pub fn fspath(obj: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    let os = obj.py().import("os")?;
    let p = os.call_method1("fspath", (obj,))?;
    if let Ok(s) = p.cast::<PyString>() {
        return Ok(PathBuf::from(s.to_str()?));
    }
    let b = p.cast::<PyBytes>()?;
    use std::os::unix::ffi::OsStrExt;
    Ok(PathBuf::from(std::ffi::OsStr::from_bytes(b.as_bytes())))
}

/// The bytes of a `bytes`, `bytearray` or `memoryview` object, if it is one.
fn image_of(obj: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u8>>> {
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Some(b.to_vec()));
    }
    if obj.is_instance_of::<PyMemoryView>() {
        let b = obj
            .py()
            .import("builtins")?
            .getattr("bytes")?
            .call1((obj,))?;
        return Ok(Some(b.cast::<PyBytes>()?.as_bytes().to_vec()));
    }
    Ok(None)
}

/// A policy model from what a caller passed where a policy is expected: a `Policy`, the
/// image as `bytes`/`bytearray`/`memoryview`, or a path (`str` or `os.PathLike`).
pub fn model_from(obj: &Bound<'_, PyAny>) -> PyResult<Arc<Model>> {
    let py = obj.py();
    if let Ok(p) = obj.cast::<Policy>() {
        return Ok(p.get().model.clone());
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return parse_bytes(py, b.as_bytes()).map(Arc::new);
    }
    if let Some(data) = image_of(obj)? {
        return parse_bytes(py, &data).map(Arc::new);
    }
    if obj.is_instance_of::<PyString>() || obj.hasattr("__fspath__")? {
        return open_path(py, fspath(obj)?).map(Arc::new);
    }
    Err(PyTypeError::new_err(format!(
        "expected an arbiter.Policy, a path (str or os.PathLike) or the policy image (bytes), \
         got {}",
        obj.get_type().name()?
    )))
}

fn handle_unknown_name(h: HandleUnknown) -> &'static str {
    match h {
        HandleUnknown::Allow => "allow",
        HandleUnknown::Deny => "deny",
        HandleUnknown::Reject => "reject",
    }
}

impl Policy {
    /// The policy's image, written at its own version (for pickling).
    pub fn image(&self) -> PyResult<Vec<u8>> {
        arbiter_policy::write::write_policy(&self.model, self.model.version)
            .map_err(|e| crate::errors::Error::new_err(format!("cannot write the policy: {e}")))
    }

    /// Wraps a model already shared elsewhere (a server's current policy).
    pub fn wrap(model: Arc<Model>, path: Option<PathBuf>) -> Policy {
        Policy { model, path }
    }

    fn class_index(&self, tclass: &str) -> PyResult<usize> {
        self.model
            .classes
            .iter()
            .position(|c| &*c.name == tclass)
            .ok_or_else(|| {
                let err = UnknownNameError::new_err(format!("unknown class {tclass:?}"));
                Python::attach(|py| {
                    let _ = err.value(py).setattr("name", tclass);
                });
                err
            })
    }
}

#[pymethods]
impl Policy {
    /// Reads a binary policy file (`str` or `os.PathLike`). Raises `PolicyError`.
    #[staticmethod]
    fn open(py: Python<'_>, path: &Bound<'_, PyAny>) -> PyResult<Policy> {
        let path = fspath(path)?;
        let model = open_path(py, path.clone())?;
        Ok(Policy::wrap(Arc::new(model), Some(path)))
    }

    /// Reads a policy from its binary image (`bytes`, `bytearray` or `memoryview`).
    /// Raises `PolicyError`.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Policy> {
        let model = if let Ok(b) = data.cast::<PyBytes>() {
            parse_bytes(py, b.as_bytes())?
        } else if let Some(v) = image_of(data)? {
            parse_bytes(py, &v)?
        } else {
            return Err(PyTypeError::new_err(format!(
                "expected bytes, bytearray or memoryview, got {}",
                data.get_type().name()?
            )));
        };
        Ok(Policy::wrap(Arc::new(model), None))
    }

    /// The small policy embedded in arbiter (for examples and tests).
    #[staticmethod]
    fn builtin(py: Python<'_>) -> PyResult<Policy> {
        Ok(Policy::wrap(
            Arc::new(parse_bytes(py, BUILTIN_POLICY)?),
            None,
        ))
    }

    /// The policy format version (e.g. 33).
    #[getter]
    fn version(&self) -> u32 {
        self.model.version
    }

    /// Whether the policy is MLS (its MLS configuration bit is set).
    #[getter]
    fn mls(&self) -> bool {
        self.model.mls
    }

    /// What the policy does with classes and permissions it does not define:
    /// `"allow"`, `"deny"` or `"reject"`.
    #[getter]
    fn handle_unknown(&self) -> &'static str {
        handle_unknown_name(self.model.handle_unknown)
    }

    /// The file the policy was read from (None for an image or the builtin policy).
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.path.clone()
    }

    /// The policy's statistics under seinfo's names (`"Classes"`, `"Allow"`,
    /// `"Type_trans"`, ...): ints, plus `"Policy Version"`, `"MLS"` (bool),
    /// `"Target Policy"` and `"Handle unknown classes"` (str).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (label, value) in guard(|| Ok(statistics(&self.model)))? {
            match value {
                StatValue::Int(n) => d.set_item(label, n)?,
                StatValue::Bool(b) => d.set_item(label, b)?,
                StatValue::Text(t) => d.set_item(label, t)?,
            }
        }
        Ok(d)
    }

    /// The names of the policy's types (not attributes, not aliases), in value order.
    fn types(&self) -> Vec<String> {
        self.model
            .types
            .iter()
            .filter(|t| t.flavor == TypeFlavor::Type)
            .map(|t| t.name.to_string())
            .collect()
    }

    /// The names of the policy's type attributes, in value order.
    fn attributes(&self) -> Vec<String> {
        self.model
            .types
            .iter()
            .filter(|t| t.flavor == TypeFlavor::Attribute)
            .map(|t| t.name.to_string())
            .collect()
    }

    /// The names of the policy's classes, in value order.
    fn classes(&self) -> Vec<String> {
        self.model
            .classes
            .iter()
            .filter(|c| !c.name.is_empty())
            .map(|c| c.name.to_string())
            .collect()
    }

    /// The permissions of a class (its common's included), in value (bit) order. Raises
    /// `UnknownNameError` for a class the policy lacks.
    fn permissions(&self, tclass: &str) -> PyResult<Vec<String>> {
        let class = &self.model.classes[self.class_index(tclass)?];
        let mut perms: Vec<(u32, &str)> = class.perms.iter().map(|p| (p.value, &*p.name)).collect();
        if let Some(common) = class.common {
            let common = self.model.common(common);
            perms.extend(common.perms.iter().map(|p| (p.value, &*p.name)));
        }
        perms.sort_unstable();
        Ok(perms.into_iter().map(|(_, n)| n.to_string()).collect())
    }

    /// The names of the policy's roles, in value order.
    fn roles(&self) -> Vec<String> {
        self.model
            .roles
            .iter()
            .map(|r| r.name.to_string())
            .collect()
    }

    /// The types a role may have, in value order. Raises `UnknownNameError`.
    fn role_types(&self, role: &str) -> PyResult<Vec<String>> {
        let r = self
            .model
            .roles
            .iter()
            .find(|r| &*r.name == role)
            .ok_or_else(|| UnknownNameError::new_err(format!("unknown role {role:?}")))?;
        Ok(r.types
            .iter()
            .filter_map(|bit| self.model.types.get(bit as usize))
            .filter(|t| t.flavor == TypeFlavor::Type)
            .map(|t| t.name.to_string())
            .collect())
    }

    /// The names of the policy's users, in value order.
    fn users(&self) -> Vec<String> {
        self.model
            .users
            .iter()
            .map(|u| u.name.to_string())
            .collect()
    }

    /// The policy's booleans and their default values.
    fn booleans<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for b in &self.model.bools {
            d.set_item(&*b.name, b.state)?;
        }
        Ok(d)
    }

    /// Pickles by path when the policy was read from a file (the unpickling process reads
    /// that file again, so it must see the same one), else by its image (written back at
    /// the policy's own version).
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        let py = slf.py();
        let cls = py.get_type::<Policy>();
        let me = slf.get();
        match &me.path {
            Some(p) => Ok((
                cls.getattr("open")?,
                (p.clone().into_pyobject(py)?.into_any(),),
            )),
            None => Ok((
                cls.getattr("from_bytes")?,
                (PyBytes::new(py, &me.image()?).into_any(),),
            )),
        }
    }

    fn __repr__(&self) -> String {
        let from = match &self.path {
            Some(p) => format!("{:?}", p.display().to_string()),
            None => "<bytes>".into(),
        };
        format!(
            "<arbiter.Policy {from} version={} mls={} handle_unknown={}>",
            self.model.version,
            if self.model.mls { "True" } else { "False" },
            handle_unknown_name(self.model.handle_unknown)
        )
    }
}

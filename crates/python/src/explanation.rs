//! `arbiter.Explanation`: why a decision came out as it did. `str()` is the command line's
//! text; the attributes hold the same facts as plain Python values (the keys of the
//! engine's JSON form, which the CLI's `--json` prints too).

use arbiter_decide::Explanation as Raw;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::Value;

/// The explanation of one access decision: the rules, booleans, constraints, role check
/// and bounds behind each requested permission.
///
/// `str(e)` is the text `arbiter` prints; `e.to_dict()` / `e.to_json()` the structured
/// form. Per-permission facts are in `e.permissions` (a list of dicts with `name`,
/// `granted`, `allow_rules`, `would_allow`, `dontaudit_rules`, `removed_by`, ...).
#[pyclass(frozen, module = "arbiter")]
pub struct Explanation {
    text: String,
    json: Value,
    raw: Raw,
}

impl Explanation {
    /// Wraps the engine's explanation.
    pub fn new(raw: Raw) -> Explanation {
        Explanation {
            text: raw.to_string(),
            json: raw.to_json(),
            raw,
        }
    }

    fn field<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, self.json.get(key).unwrap_or(&Value::Null))
    }
}

/// A JSON value as the equivalent Python value (dict, list, str, int, float, bool, None).
pub fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(a) => {
            let items = a
                .iter()
                .map(|x| to_py(py, x))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

#[pymethods]
impl Explanation {
    /// The source context.
    #[getter]
    fn scontext(&self) -> &str {
        &self.raw.scontext
    }

    /// The target context.
    #[getter]
    fn tcontext(&self) -> &str {
        &self.raw.tcontext
    }

    /// The class.
    #[getter]
    fn tclass(&self) -> &str {
        &self.raw.class_name
    }

    /// The source type's name.
    #[getter]
    fn source_type(&self) -> &str {
        &self.raw.source_type
    }

    /// The target type's name.
    #[getter]
    fn target_type(&self) -> &str {
        &self.raw.target_type
    }

    /// The requested permission names, in permission-value order.
    #[getter]
    fn requested<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "requested")
    }

    /// The requested permissions that are granted.
    #[getter]
    fn granted<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "granted")
    }

    /// The requested permissions that are denied.
    #[getter]
    fn denied<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "denied")
    }

    /// Whether every requested permission is granted.
    #[getter]
    fn allowed(&self) -> bool {
        self.raw.denied() == 0
    }

    /// The final allowed access vector (kernel bit order).
    #[getter]
    fn allowed_bits(&self) -> u32 {
        self.raw.allowed
    }

    /// What the TE rules alone allow (kernel bit order).
    #[getter]
    fn te_allowed(&self) -> u32 {
        self.raw.te_allowed
    }

    /// Granted bits that are audited.
    #[getter]
    fn auditallow(&self) -> u32 {
        self.raw.auditallow
    }

    /// Denied bits that are audited.
    #[getter]
    fn auditdeny(&self) -> u32 {
        self.raw.auditdeny
    }

    /// Whether the source type is permissive.
    #[getter]
    fn permissive(&self) -> bool {
        self.raw.permissive
    }

    /// Whether the source type is never audited.
    #[getter]
    fn neveraudit(&self) -> bool {
        self.raw.neveraudit
    }

    /// Whether this independent recomputation agrees with the fast path's decision.
    #[getter]
    fn agrees(&self) -> bool {
        self.raw.agrees()
    }

    /// One dict per requested permission (`name`, `granted`, `te_allowed`, `audited`,
    /// `allow_rules`, `would_allow`, `auditallow_rules`, `dontaudit_rules`, `removed_by`).
    #[getter]
    fn permissions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "permissions")
    }

    /// The evaluated constraints (`text`, `expr`, `terms`, `result`, `removes`, ...).
    #[getter]
    fn constraints<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "constraints")
    }

    /// The role check of a process transition, or None.
    #[getter]
    fn rbac<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "rbac")
    }

    /// The typebounds check, or None.
    #[getter]
    fn bounds<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "bounds")
    }

    /// Everything as a dict (the engine's JSON form).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.json)
    }

    /// Everything as JSON text.
    fn to_json(&self) -> String {
        self.json.to_string()
    }

    fn __str__(&self) -> &str {
        &self.text
    }

    fn __repr__(&self) -> String {
        format!(
            "<arbiter.Explanation {} {} {} granted={} denied={}>",
            self.raw.scontext,
            self.raw.tcontext,
            self.raw.class_name,
            self.raw.granted().count_ones(),
            self.raw.denied().count_ones()
        )
    }
}

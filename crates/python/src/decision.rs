//! `arbiter.Verdict` (the answer to a permission request) and `arbiter.AvDecision` (the
//! kernel's `struct av_decision`).

use arbiter_decide::{AvDecision as RawDecision, AvdFlags, PermSet, Verdict as RawVerdict};
use pyo3::prelude::*;

/// An access vector decision, field for field the kernel's `struct av_decision`.
///
/// `allowed`, `auditallow` and `auditdeny` are access vectors in kernel bit order (bit i is
/// the class's permission with value i + 1); `flags` holds `AVD_FLAGS_PERMISSIVE` (1) and
/// `AVD_FLAGS_NEVERAUDIT` (2); `seqno` is the policy state the decision was computed under.
#[pyclass(frozen, eq, module = "arbiter")]
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct AvDecision {
    pub(crate) raw: RawDecision,
}

impl AvDecision {
    /// Wraps an engine decision.
    pub fn new(raw: RawDecision) -> AvDecision {
        AvDecision { raw }
    }
}

#[pymethods]
impl AvDecision {
    /// Granted permission bits.
    #[getter]
    fn allowed(&self) -> u32 {
        self.raw.allowed.0
    }

    /// Granted bits to audit (`auditallow` rules).
    #[getter]
    fn auditallow(&self) -> u32 {
        self.raw.auditallow.0
    }

    /// Denied bits to audit (the complement of `dontaudit` rules).
    #[getter]
    fn auditdeny(&self) -> u32 {
        self.raw.auditdeny.0
    }

    /// Decision flags: 1 = permissive domain, 2 = never audited domain.
    #[getter]
    fn flags(&self) -> u32 {
        self.raw.flags.0
    }

    /// Sequence number of the policy state the decision was computed under.
    #[getter]
    fn seqno(&self) -> u64 {
        self.raw.seqno
    }

    /// Whether the source domain is permissive (denials audited, not enforced).
    #[getter]
    fn permissive(&self) -> bool {
        self.raw.flags.contains(AvdFlags::PERMISSIVE)
    }

    /// `(allowed, auditallow, auditdeny)`, the tuple `compute_av_many` returns.
    fn as_tuple(&self) -> (u32, u32, u32) {
        (
            self.raw.allowed.0,
            self.raw.auditallow.0,
            self.raw.auditdeny.0,
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "AvDecision(allowed={:#010x}, auditallow={:#010x}, auditdeny={:#010x}, flags={}, seqno={})",
            self.raw.allowed.0,
            self.raw.auditallow.0,
            self.raw.auditdeny.0,
            self.raw.flags.0,
            self.raw.seqno
        )
    }
}

/// The verdict on a permission request: `bool(v)` is `v.allowed`.
///
/// `granted` and `denied` list the requested permission names in the order given.
/// `permissive` says the source domain is permissive (a denial would be audited but not
/// enforced); `audited` whether the kernel would write an audit record for this check.
#[pyclass(frozen, module = "arbiter")]
pub struct Verdict {
    pub(crate) perms: PermSet,
    pub(crate) raw: RawVerdict,
}

#[pymethods]
impl Verdict {
    /// Whether every requested permission is granted by the policy (a permissive domain
    /// does not count: see `permissive`).
    #[getter]
    fn allowed(&self) -> bool {
        self.raw.allowed()
    }

    /// The requested permissions that are granted, in the caller's order.
    #[getter]
    fn granted(&self) -> Vec<&str> {
        self.perms.granted_names(&self.raw)
    }

    /// The requested permissions that are denied, in the caller's order.
    #[getter]
    fn denied(&self) -> Vec<&str> {
        self.perms.denied_names(&self.raw)
    }

    /// Whether the source domain is permissive.
    #[getter]
    fn permissive(&self) -> bool {
        self.raw.permissive()
    }

    /// Whether this check produces an audit record (a denial not silenced by `dontaudit`,
    /// or a grant named by `auditallow`).
    #[getter]
    fn audited(&self) -> bool {
        self.raw.is_audited()
    }

    /// The class the request was about, as given.
    #[getter]
    fn tclass(&self) -> &str {
        self.perms.class_name()
    }

    /// The full decision for the class the verdict was computed from.
    #[getter]
    fn decision(&self) -> AvDecision {
        AvDecision::new(self.raw.decision)
    }

    fn __bool__(&self) -> bool {
        self.raw.allowed()
    }

    fn __repr__(&self) -> String {
        format!(
            "Verdict(allowed={}, granted={}, denied={}, permissive={}, audited={})",
            py_bool(self.raw.allowed()),
            py_list(&self.granted()),
            py_list(&self.denied()),
            py_bool(self.raw.permissive()),
            py_bool(self.raw.is_audited())
        )
    }
}

/// A list of names as Python prints it: `['read', 'open']`.
fn py_list(names: &[&str]) -> String {
    let items: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    format!("[{}]", items.join(", "))
}

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

//! `arbiter.Server`: the reloadable security server.

use crate::decision::{AvDecision, Verdict};
use crate::errors::{context_error, decide_error, guard};
use crate::explanation::Explanation;
use crate::policy::{fspath, model_from, open_path, Policy};
use arbiter_decide::{LabelKind, PermSet, SecurityServer, Sid};
use arbiter_policy::Policy as Model;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use std::sync::Arc;

/// The security server: access decisions and labels from one policy, reloadable while
/// other threads query it.
///
/// Every method may be called from any thread; the batch calls release the GIL and use
/// every core. `seqno` grows by one with each policy load and boolean commit.
#[pyclass(frozen, module = "arbiter")]
pub struct Server {
    pub(crate) inner: Arc<SecurityServer>,
}

/// The model behind a shared reference: taken when unshared, else copied (the server
/// owns its policy).
fn owned(model: Arc<Model>) -> Model {
    Arc::try_unwrap(model).unwrap_or_else(|shared| (*shared).clone())
}

/// The SID of a context string; `which` names it in errors ("source context").
pub fn sid(srv: &SecurityServer, context: &str, which: &str) -> PyResult<Sid> {
    srv.context_to_sid(context)
        .map_err(|e| context_error(e, which, context))
}

/// The permission names of a `perms` argument: one str, or an iterable of str.
pub fn perm_strings<'py>(perms: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyString>>> {
    if let Ok(s) = perms.cast::<PyString>() {
        return Ok(vec![s.clone()]);
    }
    let wrong = || PyTypeError::new_err("perms must be a str or an iterable of str");
    perms
        .try_iter()
        .map_err(|_| wrong())?
        .map(|p| p?.cast_into::<PyString>().map_err(|_| wrong()))
        .collect()
}

/// Resolves a class and permission names against the server's current policy.
pub fn perm_set(srv: &SecurityServer, tclass: &str, perms: &Bound<'_, PyAny>) -> PyResult<PermSet> {
    let strings = perm_strings(perms)?;
    let names = strings
        .iter()
        .map(|s| s.to_str())
        .collect::<PyResult<Vec<&str>>>()?;
    srv.perm_set(tclass, &names).map_err(decide_error)
}

/// What `Server.__reduce__` returns: the rebuilding function and its arguments (the policy
/// image and the booleans).
type Reduced<'py> = (Bound<'py, PyAny>, (Bound<'py, PyAny>, Bound<'py, PyDict>));

impl Server {
    /// Builds the server's index and tables without holding the GIL.
    fn build(py: Python<'_>, model: Model) -> PyResult<Server> {
        let inner = py.detach(move || {
            std::panic::catch_unwind(move || {
                arbiter_policy::ValidPolicy::check(model).map(|p| Arc::new(SecurityServer::new(p)))
            })
        });
        Ok(Server {
            inner: inner
                .map_err(crate::errors::panic_error)?
                .map_err(crate::errors::policy_error)?,
        })
    }

    fn label(
        &self,
        scon: &str,
        tcon: &str,
        tclass: &str,
        kind: LabelKind,
        name: Option<&str>,
    ) -> PyResult<String> {
        guard(|| {
            let srv = &*self.inner;
            let s = sid(srv, scon, "source context")?;
            let t = sid(srv, tcon, "target context")?;
            let class = srv.known_class(tclass).map_err(decide_error)?;
            srv.compute_label_context(s, t, class, kind, name)
                .map_err(decide_error)
        })
    }
}

#[pymethods]
impl Server {
    /// A server for `policy`: an `arbiter.Policy`, a path (`str`, `os.PathLike`) or the
    /// policy image (`bytes`). Its first state has `seqno` 1.
    #[new]
    fn new(py: Python<'_>, policy: &Bound<'_, PyAny>) -> PyResult<Server> {
        Server::build(py, owned(model_from(policy)?))
    }

    /// A server for the policy file at `path` (`str` or `os.PathLike`).
    #[staticmethod]
    fn open(py: Python<'_>, path: &Bound<'_, PyAny>) -> PyResult<Server> {
        Server::build(py, open_path(py, fspath(path)?)?)
    }

    /// The sequence number of the current policy state (never decreases).
    #[getter]
    fn seqno(&self) -> u64 {
        self.inner.seqno()
    }

    /// The policy currently in force.
    #[getter]
    fn policy(&self) -> Policy {
        Policy::wrap(self.inner.policy(), None)
    }

    /// May `scon` do `perms` (a name or a list of names) to `tcon` of class `tclass`?
    /// Unknown classes and permissions follow the policy's `handle_unknown`.
    fn check(
        &self,
        scon: &str,
        tcon: &str,
        tclass: &str,
        perms: &Bound<'_, PyAny>,
    ) -> PyResult<Verdict> {
        guard(|| {
            let srv = &*self.inner;
            let s = sid(srv, scon, "source context")?;
            let t = sid(srv, tcon, "target context")?;
            let perms = perm_set(srv, tclass, perms)?;
            let raw = srv.check(s, t, &perms).map_err(decide_error)?;
            Ok(Verdict { perms, raw })
        })
    }

    /// The access vector decision for (`scon`, `tcon`, `tclass`), as the kernel's
    /// `security_compute_av`.
    fn compute_av(&self, scon: &str, tcon: &str, tclass: &str) -> PyResult<AvDecision> {
        guard(|| {
            let srv = &*self.inner;
            let s = sid(srv, scon, "source context")?;
            let t = sid(srv, tcon, "target context")?;
            let class = srv.class(tclass).map_err(decide_error)?;
            let d = srv.compute_av(s, t, class).map_err(decide_error)?;
            Ok(AvDecision::new(d))
        })
    }

    /// `compute_av` for every `(scon, tcon, tclass)` of `queries`, in parallel without the
    /// GIL: a list of `(allowed, auditallow, auditdeny)`. With `strict=False` a query that
    /// cannot be answered gives None instead of raising.
    #[pyo3(signature = (queries, *, strict = true))]
    fn compute_av_many<'py>(
        &self,
        py: Python<'py>,
        queries: &Bound<'py, PyAny>,
        strict: bool,
    ) -> PyResult<Bound<'py, pyo3::types::PyList>> {
        crate::batch::compute_av_many(py, &self.inner, queries, strict)
    }

    /// `check(...).allowed` for every `(scon, tcon, tclass, perms)` of `queries`, in
    /// parallel without the GIL. With `strict=False` a query that cannot be answered gives
    /// None instead of raising.
    #[pyo3(signature = (queries, *, strict = true))]
    fn check_many<'py>(
        &self,
        py: Python<'py>,
        queries: &Bound<'py, PyAny>,
        strict: bool,
    ) -> PyResult<Bound<'py, pyo3::types::PyList>> {
        crate::batch::check_many(py, &self.inner, queries, strict)
    }

    /// The context of a new object of class `tclass` created by `scon` in `tcon`
    /// (`type_transition`, filename transitions when `name` is given), as the kernel's
    /// `security_compute_create`.
    #[pyo3(signature = (scon, tcon, tclass, name = None))]
    fn compute_create(
        &self,
        scon: &str,
        tcon: &str,
        tclass: &str,
        name: Option<&str>,
    ) -> PyResult<String> {
        self.label(scon, tcon, tclass, LabelKind::Create, name)
    }

    /// The context `tcon` is relabeled to for `scon` (`type_change`), as
    /// `security_compute_relabel`.
    fn compute_relabel(&self, scon: &str, tcon: &str, tclass: &str) -> PyResult<String> {
        self.label(scon, tcon, tclass, LabelKind::Relabel, None)
    }

    /// The context of a member object (`type_member`), as `security_compute_member`.
    fn compute_member(&self, scon: &str, tcon: &str, tclass: &str) -> PyResult<String> {
        self.label(scon, tcon, tclass, LabelKind::Member, None)
    }

    /// Why `scon` may or may not do `perms` to `tcon` of class `tclass`: the rules,
    /// booleans, constraints, role check and bounds behind each permission.
    fn explain(
        &self,
        scon: &str,
        tcon: &str,
        tclass: &str,
        perms: &Bound<'_, PyAny>,
    ) -> PyResult<Explanation> {
        guard(|| {
            let srv = &*self.inner;
            let s = sid(srv, scon, "source context")?;
            let t = sid(srv, tcon, "target context")?;
            let class = srv.known_class(tclass).map_err(decide_error)?;
            let strings = perm_strings(perms)?;
            let mut bits = arbiter_decide::AccessVector::NONE;
            for p in &strings {
                let name = p.to_str()?;
                let ps = srv.perm_set(tclass, &[name]).map_err(decide_error)?;
                if ps.bits().is_empty() {
                    return Err(decide_error(
                        arbiter_decide::DecideError::UnknownPermission {
                            class: tclass.to_string(),
                            perm: name.to_string(),
                        },
                    ));
                }
                bits |= ps.bits();
            }
            let e = srv.explain(s, t, class, bits).map_err(decide_error)?;
            Ok(Explanation::new(e))
        })
    }

    /// The booleans and their current values.
    fn booleans<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (name, value) in self.inner.booleans() {
            d.set_item(name, value)?;
        }
        Ok(d)
    }

    /// Sets booleans (`{"name": True, ...}`) and commits them at once (all or nothing: an
    /// unknown name raises `UnknownNameError` and changes nothing). Returns the new
    /// `seqno`.
    fn set_booleans(&self, values: &Bound<'_, PyDict>) -> PyResult<u64> {
        let pairs: Vec<(String, bool)> = values
            .iter()
            .map(|(k, v)| Ok((k.extract::<String>()?, v.is_truthy()?)))
            .collect::<PyResult<_>>()?;
        guard(|| {
            let refs: Vec<(&str, bool)> = pairs.iter().map(|(k, v)| (k.as_str(), *v)).collect();
            self.inner.set_booleans(&refs).map_err(decide_error)
        })
    }

    /// Replaces the policy (an `arbiter.Policy`, a path or the image as `bytes`) while
    /// other threads keep querying; booleans the new policy also has keep their values.
    /// Returns the new `seqno`.
    fn load_policy(&self, py: Python<'_>, policy: &Bound<'_, PyAny>) -> PyResult<u64> {
        let model = owned(model_from(policy)?);
        let srv = &*self.inner;
        let reload = py.detach(move || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || srv.load_policy(model)))
        });
        reload
            .map_err(crate::errors::panic_error)?
            .map(|r| r.seqno)
            .map_err(decide_error)
    }

    /// Pickles as the current policy's image and the booleans' current values; the
    /// unpickled server starts a new sequence (its `seqno` restarts).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Reduced<'py>> {
        let py = slf.py();
        let me = slf.get();
        let image = Policy::wrap(me.inner.policy(), None).image()?;
        let restore = py.get_type::<Server>().getattr("_restore")?;
        Ok((
            restore,
            (
                pyo3::types::PyBytes::new(py, &image).into_any(),
                me.booleans(py)?,
            ),
        ))
    }

    /// Rebuilds a pickled server (`__reduce__`'s counterpart). Not part of the API.
    #[staticmethod]
    fn _restore(
        py: Python<'_>,
        image: &Bound<'_, PyAny>,
        booleans: &Bound<'_, PyDict>,
    ) -> PyResult<Server> {
        let srv = Server::new(py, image)?;
        srv.set_booleans(booleans)?;
        Ok(srv)
    }

    fn __repr__(&self) -> String {
        let p = self.inner.policy();
        format!(
            "<arbiter.Server seqno={} policy version={} mls={}>",
            self.inner.seqno(),
            p.version,
            if p.mls { "True" } else { "False" }
        )
    }
}

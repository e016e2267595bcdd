//! `arbiter.Avc`: the access vector cache in front of a `Server`.

use crate::decision::{AvDecision, Verdict};
use crate::errors::{decide_error, guard};
use crate::server::{perm_set, sid, Server};
use arbiter_avc::{Avc as Cache, AvcConfig, HashKind};
use arbiter_decide::SecurityServer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::{Arc, Mutex, OnceLock};

/// The Python callable receiving audit records (None: records are dropped).
type Callback = Arc<Mutex<Option<Py<PyAny>>>>;

/// An access vector cache with the kernel's semantics (cached decisions, permissive
/// domains, auditing with the kernel's record text) in front of a `Server`. It follows
/// the server's reloads and boolean commits by itself.
///
/// `slots` (a power of two) and `threshold` size the cache; `hash` is one of
/// `"arbiter"`, `"murmur3"`, `"muladd"`, `"original"`.
#[pyclass(frozen, module = "arbiter")]
pub struct Avc {
    /// Boxed: the cache is cache-line aligned (128 bytes), more than PyO3 aligns a Python
    /// object's storage to; a `Box` allocates it with its own alignment.
    cache: Box<Cache<Arc<SecurityServer>>>,
    callback: Callback,
    hooked: OnceLock<()>,
}

#[pymethods]
impl Avc {
    /// A cache in front of `server`. Raises `ValueError` for an impossible sizing or an
    /// unknown hash.
    #[new]
    #[pyo3(signature = (server, slots = 8192, threshold = 8192, hash = "arbiter"))]
    fn new(server: &Server, slots: usize, threshold: usize, hash: &str) -> PyResult<Avc> {
        let kind = HashKind::from_name(hash).ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown hash {hash:?} (arbiter, murmur3, muladd, original)"
            ))
        })?;
        let config = AvcConfig::for_threshold(threshold).with_layout(threshold, slots, kind);
        let cache = Cache::new(server.inner.clone(), config)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Avc {
            cache: Box::new(cache),
            callback: Arc::new(Mutex::new(None)),
            hooked: OnceLock::new(),
        })
    }

    /// `Server.check` through the cache; audited outcomes go to the audit callback.
    fn check(
        &self,
        scon: &str,
        tcon: &str,
        tclass: &str,
        perms: &Bound<'_, PyAny>,
    ) -> PyResult<Verdict> {
        guard(|| {
            let srv = &**self.cache.source();
            let s = sid(srv, scon, "source context")?;
            let t = sid(srv, tcon, "target context")?;
            let perms = perm_set(srv, tclass, perms)?;
            let raw = self.cache.check(s, t, &perms).map_err(decide_error)?;
            Ok(Verdict { perms, raw })
        })
    }

    /// `Server.compute_av` through the cache.
    fn compute_av(&self, scon: &str, tcon: &str, tclass: &str) -> PyResult<AvDecision> {
        guard(|| {
            let srv = &**self.cache.source();
            let s = sid(srv, scon, "source context")?;
            let t = sid(srv, tcon, "target context")?;
            let class = srv.class(tclass).map_err(decide_error)?;
            let d = self.cache.compute_av(s, t, class).map_err(decide_error)?;
            Ok(AvDecision::new(d))
        })
    }

    /// The cache's counters (the kernel's `cache_stats` plus the side tables): `lookups`,
    /// `hits`, `misses`, `allocations`, `reclaims`, `frees`, `xperm_lookups`,
    /// `xperm_misses`, `create_lookups`, `create_misses`, and `entries` in use.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.cache.stats();
        let d = PyDict::new(py);
        d.set_item("lookups", s.lookups)?;
        d.set_item("hits", s.hits)?;
        d.set_item("misses", s.misses)?;
        d.set_item("allocations", s.allocations)?;
        d.set_item("reclaims", s.reclaims)?;
        d.set_item("frees", s.frees)?;
        d.set_item("xperm_lookups", s.xperm_lookups)?;
        d.set_item("xperm_misses", s.xperm_misses)?;
        d.set_item("create_lookups", s.create_lookups)?;
        d.set_item("create_misses", s.create_misses)?;
        d.set_item("entries", self.cache.len())?;
        Ok(d)
    }

    /// Calls `fn(record_text)` for every audited grant or denial (the kernel's
    /// `avc:  denied  { ... } for ...` text); None stops the calls. The callback runs on
    /// the thread that made the check; an exception it raises is reported through
    /// `sys.unraisablehook` and does not change the check's result.
    #[pyo3(signature = (callback))]
    fn set_audit_callback(&self, py: Python<'_>, callback: Option<Py<PyAny>>) -> PyResult<()> {
        if let Some(cb) = &callback {
            if !cb.bind(py).is_callable() {
                return Err(PyValueError::new_err("the audit callback must be callable"));
            }
        }
        *lock(&self.callback) = callback;
        self.hooked.get_or_init(|| {
            let slot = self.callback.clone();
            self.cache.set_audit_hook(move |record| {
                Python::attach(|py| {
                    let cb = lock(&slot).as_ref().map(|c| c.clone_ref(py));
                    if let Some(cb) = cb {
                        if let Err(e) = cb.call1(py, (record.text.as_str(),)) {
                            e.write_unraisable(py, Some(cb.bind(py)));
                        }
                    }
                })
            });
        });
        Ok(())
    }

    /// Whether denials are enforced (outside permissive domains). Default True.
    #[getter]
    fn enforcing(&self) -> bool {
        self.cache.enforcing()
    }

    /// Switches enforcing mode (switching to enforcing empties the cache, as the kernel's
    /// `setenforce 1`).
    #[setter]
    fn set_enforcing(&self, enforcing: bool) {
        self.cache.set_enforcing(enforcing);
    }

    /// Drops every cached entry.
    fn reset(&self) {
        self.cache.reset();
    }

    fn __repr__(&self) -> String {
        let c = self.cache.config();
        format!(
            "<arbiter.Avc slots={} threshold={} hash={} entries={}>",
            c.slots,
            c.threshold,
            c.hash.name(),
            self.cache.len()
        )
    }
}

/// Locks `m`, going on past poisoning: a panic in one Python thread's native call must not
/// make every later call on the shared object fail (the guarded data are plain counters and
/// queues that stay consistent at every step). The one copy in the crate.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

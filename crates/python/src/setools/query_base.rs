//! The native base of `setools.query.PolicyQuery`: the construction and `results()` of a
//! query whose criteria were already seen on this policy, without a Python frame. The
//! smallest queries (setools answers them in 10-20 us) were mostly Python's own costs:
//! the `__init__` frame, the criteria stored one by one, the `results()` frame.
//!
//! The protocol itself (setools' keyword order, validation, errors) stays in Python
//! (`arbiter/setools/query.py`); this module only replays what the Python half recorded.
//! The first construction of a class with given keywords runs the Python `__init__`
//! (`query._native_init_miss`), which keeps, per policy, the instance `__dict__` it built
//! (the criteria as stored, and once answered the results tuple) under the key made here
//! from the class and the keywords' values. A later construction with equal keywords copies
//! that dictionary into the new instance: one dictionary hit and one dictionary copy.
//! Keys are made only from values compared by value (text, numbers, flags, and lists,
//! tuples and sets of text or numbers), so that equal keys mean the same criteria stored.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyBool, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString, PyTuple, PyType,
};

/// At most this many keywords make a key (a construction with more takes the Python path).
const MAX_KEPT_KEYWORDS: usize = 8;

/// The Python half's entry points, given once by `setools.query` at import
/// (`QueryBase._install`).
struct Hooks {
    /// `query._native_init_miss(query, args, kwargs, key)`: setools' protocol in Python, then
    /// the instance `__dict__` kept under `key` (None: not kept).
    init_miss: Py<PyAny>,
    /// `query._memo_results(query)`: `results()` when the kept tuple is absent or
    /// `logging` is imported (setools' INFO line is then due).
    results_slow: Py<PyAny>,
    /// `sys.modules`, read for `logging`.
    modules: Py<PyDict>,
}

static HOOKS: PyOnceLock<Hooks> = PyOnceLock::new();

fn hooks(py: Python<'_>) -> PyResult<&'static Hooks> {
    HOOKS.get(py).ok_or_else(|| {
        pyo3::exceptions::PyRuntimeError::new_err(
            "arbiter._native.QueryBase: setools.query has not installed its hooks",
        )
    })
}

/// The native base class of every `setools.query.PolicyQuery` (not a query by itself). A
/// query's criteria live in its instance `__dict__`, as setools' do.
#[pyclass(subclass, frozen, module = "arbiter._native")]
pub struct QueryBase {
    /// Never read. Its only role is to give the class a layout larger than `object`'s:
    /// CPython takes a class's `tp_new` from the base with the largest layout, and with
    /// an empty one a mixin listed first (`class Q(MemoResults, PolicyQuery)`) would give
    /// `object.__new__` while `Q.__new__` finds `QueryBase.__new__`, which then refuses
    /// `Q.__new__(Q)` (what `copy.copy` calls) as unsafe.
    _layout: u8,
}

#[pymethods]
impl QueryBase {
    /// Accepts any arguments: `__init__` reads them (and `pickle` calls `cls.__new__(cls)`).
    #[new]
    #[pyo3(signature = (*_args, **_kwargs), text_signature = "(policy, **kwargs)")]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> Self {
        QueryBase { _layout: 0 }
    }

    /// No arguments to `__new__` when unpickled or copied: the state is the instance
    /// `__dict__`. (Defining it also spares the objects `object.__reduce_ex__`'s refusal
    /// of a layout larger than `object`'s that it cannot save.)
    fn __getnewargs__<'py>(&self, py: Python<'py>) -> Bound<'py, PyTuple> {
        PyTuple::empty(py)
    }

    /// `Query(policy, **criteria)`: the kept instance dictionary for this class and these
    /// keywords on this policy, copied in; otherwise setools' protocol in Python.
    #[pyo3(signature = (*args, **kwargs))]
    fn __init__(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        let py = slf.py();
        let hooks = hooks(py)?;
        let key = match (args.len(), kwargs) {
            (1, Some(kw)) if kw.contains(intern!(py, "policy"))? => None,
            (1, _) => kept_key(&slf.get_type(), kwargs)?,
            _ => None,
        };
        if let Some(key) = &key {
            let policy = args.get_item(0)?;
            if let Some(snapshot) = kept_snapshot(&policy, key)? {
                let dict = slf
                    .getattr(intern!(py, "__dict__"))?
                    .cast_into::<PyDict>()?;
                dict.update(snapshot.as_mapping())?;
                // The kept dictionary holds None there (no reference cycle to the policy).
                dict.set_item(intern!(py, "policy"), policy)?;
                return Ok(());
            }
        }
        hooks
            .init_miss
            .bind(py)
            .call1((slf, args, kwargs, key))
            .map(drop)
    }

    /// `results()` of the queries that keep their answer (`setools.query.MemoResults`): an
    /// iterator over the kept tuple, else the Python half computes it.
    fn memo_results<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let hooks = hooks(py)?;
        let memo = slf.getattr(intern!(py, "_results_memo"))?;
        if memo.is_exact_instance_of::<PyTuple>()
            && !hooks.modules.bind(py).contains(intern!(py, "logging"))?
        {
            return Ok(memo.try_iter()?.into_any());
        }
        hooks.results_slow.bind(py).call1((slf,))
    }

    /// Called once by `setools.query` at import: the Python half's entry points (a second
    /// call keeps the first).
    #[staticmethod]
    fn _install(
        py: Python<'_>,
        init_miss: Py<PyAny>,
        results_slow: Py<PyAny>,
        modules: Py<PyDict>,
    ) {
        let _ = HOOKS.set(
            py,
            Hooks {
                init_miss,
                results_slow,
                modules,
            },
        );
    }
}

/// The kept instance dictionary of `key` on `policy` (`policy._cache["query_kept_init"]`),
/// if there is one; None for anything else (a policy object without that cache included).
fn kept_snapshot<'py>(
    policy: &Bound<'py, PyAny>,
    key: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let py = policy.py();
    let Ok(cache) = policy.getattr(intern!(py, "_cache")) else {
        return Ok(None);
    };
    let Ok(cache) = cache.cast_into::<PyDict>() else {
        return Ok(None);
    };
    let Some(kept) = cache.get_item(intern!(py, "query_kept_init"))? else {
        return Ok(None);
    };
    let Ok(kept) = kept.cast_into::<PyDict>() else {
        return Ok(None);
    };
    Ok(kept
        .get_item(key)?
        .and_then(|snapshot| snapshot.cast_into::<PyDict>().ok()))
}

/// The key of a construction of `cls` with `kwargs`: the class alone without keywords,
/// else `(cls, name, type, value, ...)` in the call's order with each value as compared
/// (a list's items as a tuple, a set's as a frozenset). None when a value is not
/// compared by value (any other type, or a container holding one).
fn kept_key<'py>(
    cls: &Bound<'py, PyType>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(kwargs) = kwargs.filter(|kw| !kw.is_empty()) else {
        return Ok(Some(cls.clone().into_any()));
    };
    if kwargs.len() > MAX_KEPT_KEYWORDS {
        return Ok(None);
    }
    let mut items = Vec::with_capacity(1 + 3 * kwargs.len());
    items.push(cls.clone().into_any());
    for (name, value) in kwargs.iter() {
        let Some(compared) = compared_value(&value)? else {
            return Ok(None);
        };
        items.push(name);
        items.push(value.get_type().into_any());
        items.push(compared);
    }
    Ok(Some(PyTuple::new(cls.py(), items)?.into_any()))
}

/// A value whose equality is its identity as a criterion: text, an integer, a flag, a
/// float, None. Exact types only (a subclass may compare otherwise); `bool` is told
/// from `int` by the type the key records beside the value.
fn is_scalar(value: &Bound<'_, PyAny>) -> bool {
    value.is_none()
        || value.is_exact_instance_of::<PyString>()
        || value.is_exact_instance_of::<PyInt>()
        || value.is_exact_instance_of::<PyBool>()
        || value.is_exact_instance_of::<PyFloat>()
}

/// An item of a container criterion compared by value: text or an integer (not a flag,
/// which equals 1 or 0 inside a set or tuple where no type is recorded beside it).
fn is_item(value: &Bound<'_, PyAny>) -> bool {
    value.is_exact_instance_of::<PyString>() || value.is_exact_instance_of::<PyInt>()
}

/// `value` as the key compares it (see [`kept_key`]), or None.
fn compared_value<'py>(value: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = value.py();
    if is_scalar(value) {
        return Ok(Some(value.clone()));
    }
    if let Ok(list) = value.cast_exact::<PyList>() {
        let mut items = Vec::with_capacity(list.len());
        for item in list.iter() {
            if !is_item(&item) {
                return Ok(None);
            }
            items.push(item);
        }
        return Ok(Some(PyTuple::new(py, items)?.into_any()));
    }
    if let Ok(tuple) = value.cast_exact::<PyTuple>() {
        for item in tuple.iter() {
            if !is_item(&item) {
                return Ok(None);
            }
        }
        return Ok(Some(value.clone()));
    }
    if value.is_exact_instance_of::<PySet>() || value.is_exact_instance_of::<PyFrozenSet>() {
        let mut items = Vec::new();
        for item in value.try_iter()? {
            let item = item?;
            if !is_item(&item) {
                return Ok(None);
            }
            items.push(item);
        }
        if value.is_exact_instance_of::<PyFrozenSet>() {
            return Ok(Some(value.clone()));
        }
        return Ok(Some(PyFrozenSet::new(py, &items)?.into_any()));
    }
    Ok(None)
}

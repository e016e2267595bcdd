//! The native base of `setools.policyrep.PolicySymbol`: the symbol's value held as a `u32`
//! in the object itself. In a Python slot it was an `int` object for each value over 256:
//! 32 bytes more of Python's memory for each of a distribution policy's 4,000 types,
//! kept for the whole run (the object itself keeps its size: this base's 4 bytes, padded,
//! take the slot's 8).
//!
//! The rest of the symbol (the policy, the name, the kind's own slots) stays in Python
//! (`arbiter/setools/policyrep.py`), which sets it in `__init__`.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

/// The native base of every `setools.policyrep.PolicySymbol` (not a symbol by itself).
/// Its `_value` is the symbol's value, given to `__new__` after the policy and fixed for
/// the object's life.
#[pyclass(subclass, frozen, module = "arbiter._native")]
pub struct SymbolBase {
    #[pyo3(get, name = "_value")]
    value: u32,
}

#[pymethods]
impl SymbolBase {
    /// `Kind(policy, value, ...)`: keeps `value`; the policy and the rest are the Python
    /// class's `__init__`'s.
    #[new]
    #[pyo3(
        signature = (_policy, value, *_args, **_kwargs),
        text_signature = "(policy, value, *args, **kwargs)"
    )]
    fn new(
        _policy: &Bound<'_, PyAny>,
        value: u32,
        _args: &Bound<'_, PyTuple>,
        _kwargs: Option<&Bound<'_, PyDict>>,
    ) -> Self {
        SymbolBase { value }
    }
}

//! The type table's relations (a type's attributes, an attribute's member types) held in
//! Rust as one compact array, each slot's row made a Python tuple only when it is asked
//! for.
//!
//! As Python tuples kept per policy, the Debian policy's 30,000 relations took 0.58 MB
//! resident (a tuple header per type slot, a pointer per value); here they are 4 bytes
//! each. A row's tuple holds the type objects' own `int`s (`ints`), so reading one
//! allocates the tuple and nothing per value.

use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::{Policy as Model, TypeId};
use arbiter_query::Index;
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyList, PyTuple};

/// For every type and attribute slot, by value: a type's attributes or an attribute's
/// member types, ascending by value. A sequence: `relations[value - 1]` is a tuple of
/// `int`s, made on each read.
#[pyclass(frozen, sequence, module = "arbiter._native")]
pub struct TypeRelations {
    /// Slot `i`'s values are `values[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    /// Type values (1-based), each slot's run ascending.
    values: Vec<u32>,
    /// `ints[v]` is the `int` for value `v` (index 0 unused): the type objects' own where
    /// the caller gave them, so that every row shares them.
    ints: Vec<Py<PyInt>>,
}

impl TypeRelations {
    /// The relations of `policy`'s type table; `shared` are the `int`s the type objects
    /// hold (any of the values 1..=types), used instead of new ones.
    pub(crate) fn build(
        py: Python<'_>,
        policy: &Model,
        shared: Option<&Bound<'_, PyList>>,
    ) -> PyResult<TypeRelations> {
        let slots = policy.types.len();
        let mut ints: Vec<Py<PyInt>> = (0..=slots as u32)
            .map(|v| PyInt::new(py, v).unbind())
            .collect();
        for item in shared.into_iter().flat_map(|l| l.iter()) {
            let int = item.cast_into::<PyInt>()?;
            let v: usize = int.extract()?;
            match ints.get_mut(v) {
                Some(slot) if v > 0 => *slot = int.unbind(),
                _ => {
                    return Err(PyValueError::new_err(format!(
                        "type value {v} out of range 1..={slots}"
                    )))
                }
            }
        }
        let index = Index::new(policy);
        let mut starts = Vec::with_capacity(slots + 1);
        let mut values = Vec::new();
        for i in 0..slots {
            starts.push(run_start(values.len())?);
            let Some(t) = TypeId::from_index(i) else {
                continue;
            };
            if policy.types[i].flavor == TypeFlavor::Type {
                values.extend(index.attributes_of(t).map(|a| a.index() as u32 + 1));
            } else {
                values.extend(index.expand(t).iter().map(|m| m.index() as u32 + 1));
            }
        }
        starts.push(run_start(values.len())?);
        // Every value indexes `ints` on read: checked once here, not per read.
        if values.iter().any(|&v| v == 0 || v as usize > slots) {
            return Err(PyValueError::new_err(
                "type relation names a value out of range",
            ));
        }
        values.shrink_to_fit();
        Ok(TypeRelations {
            starts,
            values,
            ints,
        })
    }
}

/// A run's start as stored (the table is far below 4 G values; a larger one is refused).
fn run_start(n: usize) -> PyResult<u32> {
    u32::try_from(n).map_err(|_| PyValueError::new_err("type relations exceed 2^32 values"))
}

#[pymethods]
impl TypeRelations {
    fn __len__(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Slot `i`'s row (negative `i` counts from the end, as a list's index does).
    fn __getitem__<'py>(&self, py: Python<'py>, i: isize) -> PyResult<Bound<'py, PyTuple>> {
        let len = self.__len__() as isize;
        let at = if i < 0 { i + len } else { i };
        if !(0..len).contains(&at) {
            return Err(PyIndexError::new_err("type relations index out of range"));
        }
        let at = at as usize;
        let run = &self.values[self.starts[at] as usize..self.starts[at + 1] as usize];
        PyTuple::new(py, run.iter().map(|&v| self.ints[v as usize].bind(py)))
    }
}

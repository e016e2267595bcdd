//! The name regexes of the symbol queries (`TypeQuery(name=…, name_regex=True)` and the
//! like), matched in Rust over a per-policy table of names: a Python `re.search` per symbol
//! was most of those queries' time. Patterns are read with Python's `re` dialect
//! ([`arbiter_query::python_re`], as sesearch's do); a pattern with no exact translation is refused
//! (`search` gives None) and the Python half matches it with `re` as before.

use pyo3::prelude::*;
use pyo3::types::PyList;
use pyo3::{PyTraverseError, PyVisit};
use regex::Regex;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// How many compiled patterns the process keeps (Python's `re` keeps 512); past that the
/// cache is emptied, so memory stays bounded whatever patterns a script tries.
const PATTERN_CACHE_LIMIT: usize = 256;

/// Compiled patterns by their text (None: no exact translation), shared by every index:
/// translating and compiling costs more than matching a few hundred names.
type PatternCache = Mutex<HashMap<String, Option<Arc<Regex>>>>;

fn compiled(pattern: &str) -> Option<Arc<Regex>> {
    static CACHE: OnceLock<PatternCache> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut cache = crate::avc::lock(cache);
    if let Some(hit) = cache.get(pattern) {
        return hit.clone();
    }
    if cache.len() >= PATTERN_CACHE_LIMIT {
        cache.clear();
    }
    let re = arbiter_query::python_re::translate(pattern)
        .ok()
        .and_then(|translated| Regex::new(&translated).ok())
        .map(Arc::new);
    cache.insert(pattern.to_string(), re.clone());
    re
}

/// One symbol table's Python objects and the names a regex is matched against, in the
/// table's (setools') order. Built once per policy and table by the Python half, which
/// keeps it in the policy's cache: the symbols refer to the policy, so the index takes
/// part in garbage collection (`__traverse__`/`__clear__`) or a dropped policy's cycle
/// would never be freed.
#[pyclass(module = "arbiter._native")]
pub struct NameIndex {
    objects: Vec<Py<PyAny>>,
    names: Vec<String>,
}

#[pymethods]
impl NameIndex {
    /// `objects[i]` is named `names[i]`; both lists have the same length.
    #[new]
    fn new(objects: Vec<Py<PyAny>>, names: Vec<String>) -> PyResult<NameIndex> {
        if objects.len() != names.len() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "NameIndex: {} objects but {} names",
                objects.len(),
                names.len()
            )));
        }
        Ok(NameIndex { objects, names })
    }

    /// The objects whose name `re.search(pattern, name)` matches, in table order; None
    /// when the pattern has no exact translation for the engine (the caller then uses
    /// Python's `re`).
    fn search<'py>(&self, py: Python<'py>, pattern: &str) -> PyResult<Option<Bound<'py, PyList>>> {
        let Some(re) = compiled(pattern) else {
            return Ok(None);
        };
        let hits = self
            .names
            .iter()
            .zip(&self.objects)
            .filter(|(name, _)| re.is_match(name))
            .map(|(_, obj)| obj.bind(py));
        Ok(Some(PyList::new(py, hits)?))
    }

    fn __len__(&self) -> usize {
        self.names.len()
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        for obj in &self.objects {
            visit.call(obj)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.objects.clear();
        self.names.clear();
    }
}

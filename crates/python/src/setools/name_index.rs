//! The name regexes of the symbol queries (`TypeQuery(name=…, name_regex=True)` and the
//! like), matched in Rust over a per-policy table of names: a Python `re.search` per symbol
//! was most of those queries' time. Patterns are read with Python's `re` dialect
//! ([`arbiter_query::python_re`], as sesearch's do); a pattern with no exact translation is refused
//! (`search` gives None) and the Python half matches it with `re` as before.

use pyo3::prelude::*;
use pyo3::types::PyList;
use pyo3::{PyTraverseError, PyVisit};
use regex::Regex;
use regex_syntax::hir::{Class, Hir, HirKind};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// How many compiled patterns the process keeps (Python's `re` keeps 512); past that the
/// cache is emptied, so memory stays bounded whatever patterns a script tries.
const PATTERN_CACHE_LIMIT: usize = 256;

/// The separator between names in [`NameIndex`]'s joined text: no symbol name holds one,
/// and in multi-line mode `^` and `$` match beside it as they match at a lone name's ends.
const SEPARATOR: char = '\n';

/// A pattern compiled twice: `one` for a single name (what `re.search` does per symbol)
/// and `joined` for one pass over every name joined by [`SEPARATOR`] (None where the
/// joined reading could differ, see [`joinable`]).
struct Compiled {
    one: Regex,
    joined: Option<Regex>,
}

/// Compiled patterns by their text (None: no exact translation), shared by every index:
/// translating and compiling costs more than matching a few hundred names.
type PatternCache = Mutex<HashMap<String, Option<Arc<Compiled>>>>;

fn compiled(pattern: &str) -> Option<Arc<Compiled>> {
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
        .and_then(|translated| {
            let one = Regex::new(&translated).ok()?;
            let joined = if joinable(&translated) {
                Regex::new(&format!("(?m){translated}")).ok()
            } else {
                None
            };
            Some(Arc::new(Compiled { one, joined }))
        });
    cache.insert(pattern.to_string(), re.clone());
    re
}

/// Whether a translated pattern, searched in multi-line mode over the names joined by
/// [`SEPARATOR`], matches where it matches each name alone: it must never consume the
/// separator (then no match spans two names, and the one holding a match's end is the
/// name that matches), and it must not use the anchors multi-line mode leaves at the
/// text's ends (`\A`, `\z`, or `m` turned off). The translation writes literals as hex
/// escapes, so `\A`, `\z` and `-m` occur in it only as those anchors and that flag.
fn joinable(translated: &str) -> bool {
    if ["\\A", "\\z", "-m"].iter().any(|s| translated.contains(s)) {
        return false;
    }
    regex_syntax::parse(translated).is_ok_and(|hir| !can_consume(&hir, SEPARATOR))
}

/// Whether a match of `hir` may contain the character `c` (conservative: a repetition
/// of at most zero is still looked into).
fn can_consume(hir: &Hir, c: char) -> bool {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => false,
        HirKind::Literal(lit) => {
            let mut buf = [0u8; 4];
            let bytes = c.encode_utf8(&mut buf).as_bytes();
            lit.0.windows(bytes.len()).any(|w| w == bytes)
        }
        HirKind::Class(Class::Unicode(class)) => class
            .ranges()
            .iter()
            .any(|r| r.start() <= c && c <= r.end()),
        HirKind::Class(Class::Bytes(class)) => class
            .ranges()
            .iter()
            .any(|r| u32::from(r.start()) <= u32::from(c) && u32::from(c) <= u32::from(r.end())),
        HirKind::Repetition(rep) => can_consume(&rep.sub, c),
        HirKind::Capture(cap) => can_consume(&cap.sub, c),
        HirKind::Concat(subs) | HirKind::Alternation(subs) => {
            subs.iter().any(|sub| can_consume(sub, c))
        }
    }
}

/// One symbol table's Python objects and the names a regex is matched against, in the
/// table's (setools') order. Built once per policy and table by the Python half, which
/// keeps it in the policy's cache: the symbols refer to the policy, so the index takes
/// part in garbage collection (`__traverse__`/`__clear__`) or a dropped policy's cycle
/// would never be freed.
///
/// The names are held as one text, joined by [`SEPARATOR`], with each name's start: a
/// regex is then one search over the text (the engine's per-call cost, paid per name
/// before, was most of the time: 37 ns a name even for a pattern failing on its first
/// character), and its hits are mapped back to names.
#[pyclass(module = "arbiter._native")]
pub struct NameIndex {
    objects: Vec<Py<PyAny>>,
    text: String,
    /// Where each name starts in `text` (4 bytes a name: the text is refused past 4 GB).
    starts: Vec<u32>,
    /// No name is empty (an empty one would share its start with the separator before
    /// it, where the one-pass search could not tell them apart): symbol names never are.
    joinable: bool,
}

impl NameIndex {
    /// Name `k` of the table (without its separator).
    fn name(&self, k: usize) -> &str {
        &self.text[self.starts[k] as usize..self.end(k)]
    }

    /// Where name `k` ends in the text (its separator, or the text's end).
    fn end(&self, k: usize) -> usize {
        self.starts
            .get(k + 1)
            .map_or(self.text.len(), |&next| next as usize - 1)
    }

    /// The indices of the matching names, in order, by one pass over the joined text
    /// with a pattern that never consumes the separator (see [`joinable`]): the earliest
    /// end of a match from a name's start lies in the first name from there that matches
    /// (a match at a separator is an empty one at the end of the name before it), and
    /// the search goes on at the next name. Only match ends are needed, which the engine
    /// finds without the backward pass that locating a start costs.
    fn search_joined(&self, re: &Regex) -> Vec<usize> {
        let mut hits = Vec::new();
        let mut at = 0;
        while let Some(end) = re.shortest_match_at(&self.text, at) {
            let k = self.starts.partition_point(|&s| s as usize <= end) - 1;
            hits.push(k);
            match self.starts.get(k + 1) {
                Some(&next) => at = next as usize,
                None => break,
            }
        }
        hits
    }
}

#[pymethods]
impl NameIndex {
    /// `objects[i]` is named `names[i]`; both lists have the same length, and no name holds
    /// a newline (symbol names never do).
    #[new]
    fn new(objects: Vec<Py<PyAny>>, names: Vec<String>) -> PyResult<NameIndex> {
        if objects.len() != names.len() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "NameIndex: {} objects but {} names",
                objects.len(),
                names.len()
            )));
        }
        if let Some(bad) = names.iter().find(|n| n.contains(SEPARATOR)) {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "NameIndex: the name {bad:?} holds a newline"
            )));
        }
        let size: usize = names.iter().map(|n| n.len() + 1).sum();
        if u32::try_from(size).is_err() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "NameIndex: the names take {size} bytes, past 4 GB"
            )));
        }
        let mut text = String::with_capacity(size);
        let mut starts = Vec::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            if i > 0 {
                text.push(SEPARATOR);
            }
            // Below `size`, checked above.
            starts.push(text.len() as u32);
            text.push_str(name);
        }
        let joinable = names.iter().all(|n| !n.is_empty());
        Ok(NameIndex {
            objects,
            text,
            starts,
            joinable,
        })
    }

    /// The objects whose name `re.search(pattern, name)` matches, in table order; None
    /// when the pattern has no exact translation for the engine (the caller then uses
    /// Python's `re`).
    fn search<'py>(&self, py: Python<'py>, pattern: &str) -> PyResult<Option<Bound<'py, PyList>>> {
        let Some(re) = compiled(pattern) else {
            return Ok(None);
        };
        if self.objects.is_empty() {
            return Ok(Some(PyList::empty(py)));
        }
        let hits = match re.joined.as_ref() {
            Some(joined) if self.joinable => self.search_joined(joined),
            _ => (0..self.objects.len())
                .filter(|&k| re.one.is_match(self.name(k)))
                .collect(),
        };
        Ok(Some(PyList::new(
            py,
            hits.into_iter().map(|k| self.objects[k].bind(py)),
        )?))
    }

    fn __len__(&self) -> usize {
        self.objects.len()
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        for obj in &self.objects {
            visit.call(obj)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.objects.clear();
        self.text.clear();
        self.starts.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::joinable;
    use arbiter_query::python_re::translate;

    fn joins(pattern: &str) -> bool {
        joinable(&translate(pattern).expect("a valid pattern"))
    }

    #[test]
    fn patterns_that_stay_within_a_name_take_the_one_pass_search() {
        for pattern in [
            "_exec_t$",
            "^httpd_",
            "(?i)^HTTPD",
            r"\bt",
            "x*",
            "",
            "(?m)t$",
        ] {
            assert!(joins(pattern), "{pattern}");
        }
    }

    #[test]
    fn patterns_that_can_match_a_newline_or_the_text_ends_are_matched_per_name() {
        for pattern in [
            "[^a]*x", r"\s", r"\W", "(?s).", r"\As", r"t\Z", "(?-m:t)$", r"[\s\S]",
        ] {
            assert!(!joins(pattern), "{pattern}");
        }
    }
}

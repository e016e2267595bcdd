//! Name criteria: an exact symbol or a regular expression, resolved into a per-slot match
//! table once so that scanning rules costs one array lookup per rule.

use crate::index::Index;
use crate::python_re::PatternError;
use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::TypeId;
use regex::Regex;

/// Compiles a pattern as setools does (`re.compile`, matched with `search`, unanchored):
/// read as Python's `re` reads it ([`crate::python_re`]), then handed to the engine.
/// Errors are Python's wording for what Python rejects, or say that a construct has no
/// translation; the pattern itself is quoted at most in part.
pub fn compile(pattern: &str) -> Result<Regex, PatternError> {
    let translated = crate::python_re::translate(pattern)?;
    Regex::new(&translated).map_err(|e| match e {
        regex::Error::CompiledTooBig(limit) => PatternError::TooBig { limit },
        other => PatternError::Engine(other.to_string()),
    })
}

/// How a type criterion selects rule sources or targets.
pub enum TypeCriterion {
    /// One resolved type or attribute.
    Symbol(TypeId),
    /// A regular expression over names.
    Regex(Regex),
}

/// For every type-table slot, whether a rule written on that slot matches the criterion,
/// under setools' `match_indirect_regex` semantics.
///
/// Indirect: the slot's expansion shares a type with the criterion's expansion (with a
/// regex: some type of the slot's expansion has a matching name). Direct: the slot is the
/// criterion (with a regex: the slot's own name matches).
pub fn type_table(index: &Index<'_>, crit: &TypeCriterion, indirect: bool) -> Vec<bool> {
    let n = index.type_slots();
    let mut table = vec![false; n];
    if indirect {
        let mut seeds: Vec<TypeId> = Vec::new();
        match crit {
            TypeCriterion::Symbol(t) => seeds.extend_from_slice(index.expand(*t)),
            TypeCriterion::Regex(re) => {
                for (i, d) in index.policy().types.iter().enumerate() {
                    if d.flavor == TypeFlavor::Type && re.is_match(&d.name) {
                        seeds.extend(TypeId::from_index(i));
                    }
                }
            }
        }
        for t in seeds {
            if let Some(slot) = table.get_mut(t.index()) {
                *slot = true;
            }
            for a in index.attributes_of(t) {
                if let Some(slot) = table.get_mut(a.index()) {
                    *slot = true;
                }
            }
        }
    } else {
        match crit {
            TypeCriterion::Symbol(t) => {
                if let Some(slot) = table.get_mut(t.index()) {
                    *slot = true;
                }
            }
            TypeCriterion::Regex(re) => {
                for (i, d) in index.policy().types.iter().enumerate() {
                    if d.flavor != TypeFlavor::Unnamed && re.is_match(&d.name) {
                        table[i] = true;
                    }
                }
            }
        }
    }
    table
}

//! Name criteria: an exact symbol or a regular expression, resolved into a per-slot match
//! table once so that scanning rules costs one array lookup per rule.

use crate::index::Index;
use arbiter_policy::{TypeFlavor, TypeId};
use regex::Regex;

/// Compiles a pattern as setools does (`re.compile`, matched with `search`, unanchored).
/// Syntax errors are worded as Python's `re` words the common ones.
pub fn compile(pattern: &str) -> Result<Regex, String> {
    Regex::new(pattern).map_err(|e| {
        python_error(pattern).unwrap_or_else(|| match e {
            regex::Error::Syntax(s) => s.lines().last().unwrap_or("").trim().to_string(),
            other => other.to_string(),
        })
    })
}

/// Python's message for the syntax errors both engines detect alike.
fn python_error(pattern: &str) -> Option<String> {
    use regex_syntax::ast::ErrorKind as K;
    let err = regex_syntax::ast::parse::Parser::new()
        .parse(pattern)
        .err()?;
    // Python counts characters, the parser bytes.
    let at = |offset: usize| pattern[..offset.min(pattern.len())].chars().count();
    let start = err.span().start.offset;
    Some(match err.kind() {
        K::GroupUnclosed => format!(
            "missing ), unterminated subpattern at position {}",
            at(start)
        ),
        K::GroupUnopened => format!("unbalanced parenthesis at position {}", at(start)),
        K::ClassUnclosed => format!("unterminated character set at position {}", at(start)),
        K::RepetitionMissing => format!("nothing to repeat at position {}", at(start)),
        K::EscapeUnrecognized => {
            let esc: String = pattern[start..].chars().take(2).collect();
            format!("bad escape {esc} at position {}", at(start))
        }
        _ => return None,
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

#[cfg(test)]
mod tests {
    use super::compile;

    #[test]
    fn regex_syntax_errors_are_worded_as_python_words_them() {
        let err = |p: &str| compile(p).err().unwrap_or_default();
        assert_eq!(
            err("foo("),
            "missing ), unterminated subpattern at position 3"
        );
        assert_eq!(err("foo)"), "unbalanced parenthesis at position 3");
        assert_eq!(err("[abc"), "unterminated character set at position 0");
        assert_eq!(err("*x"), "nothing to repeat at position 0");
        assert_eq!(err("\\q"), "bad escape \\q at position 0");
        assert_eq!(
            err("é("),
            "missing ), unterminated subpattern at position 1"
        );
    }
}

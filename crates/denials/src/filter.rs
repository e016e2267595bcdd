//! audit2allow's `-t REGEX`: only denials whose source or target type matches, and only
//! invalid-context records whose invalid, source or target type matches, become rules.
//!
//! sepolgen uses Python's `re.match`: the pattern is anchored at the start of the type,
//! not at its end. The pattern here is in Rust's `regex` syntax, which agrees with Python's
//! for the usual subset (literals, `.`, classes, repetition, alternation, groups, `^`, `$`);
//! what Rust's engine cannot express (look-around, back-references) is refused, not
//! approximated. (audit2why's reports, `-w`, are not filtered by audit2allow either.)

use regex::Regex;
use thiserror::Error;

/// A compiled `-t` pattern.
#[derive(Clone, Debug)]
pub struct TypeFilter {
    regex: Regex,
}

/// A pattern that cannot be compiled.
#[derive(Clone, Debug, Error)]
#[error("type pattern {pattern:?}: {reason}")]
pub struct BadTypeFilter {
    /// The pattern as given.
    pub pattern: String,
    /// The regex compiler's message.
    pub reason: String,
}

impl TypeFilter {
    /// Compiles `pattern`, anchored at the start as `re.match` is.
    pub fn new(pattern: &str) -> Result<TypeFilter, BadTypeFilter> {
        let regex = Regex::new(&format!("^(?:{pattern})")).map_err(|e| BadTypeFilter {
            pattern: pattern.to_string(),
            reason: e.to_string(),
        })?;
        Ok(TypeFilter { regex })
    }

    /// Whether `re.match(pattern, ty)` would succeed.
    pub fn matches(&self, ty: &str) -> bool {
        self.regex.is_match(ty)
    }

    /// Whether any of `types` matches.
    pub fn any<'a>(&self, types: impl IntoIterator<Item = &'a str>) -> bool {
        types.into_iter().any(|t| self.matches(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_anchor_at_the_start_only_as_re_match_does() {
        let f = TypeFilter::new("httpd").unwrap();
        assert!(f.matches("httpd_t"));
        assert!(!f.matches("my_httpd_t"));
        let f = TypeFilter::new("a_t|b.*_t$").unwrap();
        assert!(f.matches("a_t_x"));
        assert!(f.matches("bzz_t"));
        assert!(!f.matches("bzz_tx"));
    }

    #[test]
    fn look_around_is_refused_not_approximated() {
        assert!(TypeFilter::new("(?!httpd)").is_err());
        assert!(TypeFilter::new("(a)\\1").is_err());
    }
}

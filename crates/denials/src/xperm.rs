//! The ioctl commands of merged denials, as sepolgen's `XpermSet` keeps and prints them for
//! `audit2allow -x`: runs of consecutive values merged into ranges, ascending, in Python's
//! `hex()` spelling.

use std::collections::BTreeSet;
use std::fmt;

/// A set of extended permission values (ioctl commands).
///
/// sepolgen adds single values and merges a value into a range when it touches it
/// (`next.start <= cur.end + 1`), so the ranges are exactly the maximal runs of consecutive
/// values: holding the values and finding the runs when printing gives the same text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct XpermSet {
    values: BTreeSet<i64>,
}

impl XpermSet {
    /// An empty set.
    pub fn new() -> XpermSet {
        XpermSet::default()
    }

    /// Adds one value.
    pub fn add(&mut self, value: i64) {
        self.values.insert(value);
    }

    /// Whether no value was added.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The maximal runs of consecutive values, ascending.
    pub fn ranges(&self) -> Vec<(i64, i64)> {
        let mut out: Vec<(i64, i64)> = Vec::new();
        for &v in &self.values {
            match out.last_mut() {
                Some((_, end)) if i128::from(v) == i128::from(*end) + 1 => *end = v,
                _ => out.push((v, v)),
            }
        }
        out
    }
}

/// Python's `hex()`: `0x1f`, `-0x1f`.
fn python_hex(v: i64) -> String {
    if v < 0 {
        format!("-{:#x}", v.unsigned_abs())
    } else {
        format!("{v:#x}")
    }
}

/// sepolgen's `XpermSet.to_string`: one value bare, otherwise `{ a b-c }`; empty when there
/// is nothing.
impl fmt::Display for XpermSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ranges = self.ranges();
        match ranges.as_slice() {
            [] => Ok(()),
            [(a, b)] if a == b => f.write_str(&python_hex(*a)),
            _ => {
                f.write_str("{")?;
                for (a, b) in ranges {
                    if a == b {
                        write!(f, " {}", python_hex(a))?;
                    } else {
                        write!(f, " {}-{}", python_hex(a), python_hex(b))?;
                    }
                }
                f.write_str(" }")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(values: &[i64]) -> XpermSet {
        let mut s = XpermSet::new();
        for &v in values {
            s.add(v);
        }
        s
    }

    #[test]
    fn a_single_value_prints_without_braces() {
        assert_eq!(set(&[0x5401]).to_string(), "0x5401");
    }

    #[test]
    fn consecutive_values_merge_into_a_braced_range() {
        assert_eq!(set(&[0x5402, 0x5401]).to_string(), "{ 0x5401-0x5402 }");
        assert_eq!(set(&[7, 0x10, 5, 6, 0x10]).to_string(), "{ 0x5-0x7 0x10 }");
    }

    #[test]
    fn negative_values_print_as_python_hex_does() {
        assert_eq!(set(&[-31]).to_string(), "-0x1f");
        assert_eq!(
            set(&[i64::MIN, i64::MAX]).to_string(),
            "{ -0x8000000000000000 0x7fffffffffffffff }"
        );
        assert_eq!(set(&[-1, 0, 1]).to_string(), "{ -0x1-0x1 }");
    }
}

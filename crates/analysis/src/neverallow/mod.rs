//! Neverallow assertions checked against a compiled policy, as libsepol's
//! `check_assertions` checks them when checkpolicy or secilc compile one: a statement is
//! violated when an allow rule of the policy (unconditional or conditional, with its
//! attributes expanded) grants one of its permissions for a (source, target, class) it
//! covers; a neverallowxperm is violated when such a rule grants `ioctl` and either no
//! allowxperm rule restricts that pair or one grants one of its ioctl numbers.
//!
//! [`parse()`] reads statements (policy language or CIL), [`resolve()`] looks their names up
//! in the policy, [`check()`] finds the rules that violate them, [`libsepol_report()`]
//! words them as checkpolicy does. The three are separate so a
//! compiler holding its own statements can call [`check()`] alone.

mod check;
mod parse;
mod report;
mod resolve;

pub use check::{check, covered_pairs, Grant, Violation};
pub use parse::parse;
pub use report::libsepol_report;
pub use resolve::{resolve, Assertion};

/// Why statements could not be read or resolved; always names the file and line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NeverallowError {
    /// Malformed text.
    #[error("{file}:{line}: {message}")]
    Syntax {
        /// The input's name.
        file: String,
        /// 1-based line.
        line: u32,
        /// What is wrong.
        message: String,
    },
    /// A name the policy does not define, or a permission its class lacks.
    #[error("{file}:{line}: {message}")]
    Unknown {
        /// The input's name.
        file: String,
        /// 1-based line.
        line: u32,
        /// What is unknown.
        message: String,
    },
}

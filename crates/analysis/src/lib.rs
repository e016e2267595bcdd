//! Policy analyses with setools 4.4.1's answers: domain transitions ([`dta`], `sedta`) and
//! information flow ([`infoflow`], `seinfoflow`), plus the command-line front ends that
//! print their reports byte for byte ([`sedta`], [`seinfoflow`]).
//!
//! Each analysis builds its graph once per policy (and, for information flow, per
//! permission map) and derives a cheap per-query view from it (direction, excluded types,
//! minimum weight, booleans), so a batch of queries shares one build. Paths come out in
//! networkx 2.8's order ([`search`]) over graphs whose node and edge orders follow setools'
//! rule order, which is what makes the output identical rather than merely equivalent.
//!
//! Each analysis is a namespace of its own ([`dta`], [`infoflow`], [`permmap`],
//! [`neverallow`], [`checker`], [`search`] for networkx's path enumeration, and the front
//! ends [`sedta`], [`seinfoflow`], [`sechecker`]): an item has one path, under its
//! module, and the root holds only what they share.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod checker;
pub mod dta;
pub mod infoflow;
pub mod neverallow;
pub mod permmap;
mod rules;
pub mod search;
pub mod sechecker;
pub mod sedta;
pub mod seinfoflow;

use arbiter_policy::TypeId;
use arbiter_query::Index;

/// An analysis error, worded as setools words it (the CLIs print it on stdout, exit 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnalysisError {
    /// A name that is not a type (or is an attribute).
    #[error("{0} is not a valid type")]
    InvalidType(String),
    /// `-A` below 1.
    #[error("Maximum path length must be positive.")]
    MaxLength,
    /// A minimum weight outside 1–10.
    #[error("Min information flow weight must be an integer 1-10.")]
    MinWeight,
    /// A permission map that cannot be read or parsed (`FILE:LINE:reason: token`).
    #[error("{0}")]
    PermMap(String),
}

/// setools' `lookup_type`: a type or an alias of one; attributes are refused.
pub fn lookup_type(index: &Index<'_>, name: &str) -> Result<TypeId, AnalysisError> {
    match index.type_or_attr(name) {
        Some(t)
            if index
                .policy()
                .types
                .get(t.index())
                .is_some_and(|d| d.flavor == arbiter_policy::symbols::TypeFlavor::Type) =>
        {
            Ok(t)
        }
        _ => Err(AnalysisError::InvalidType(name.to_string())),
    }
}

//! The security server: the kernel's access decisions and labeling, computed in userspace
//! from an [`arbiter_policy::Policy`].
//!
//! Data flows policy → [`index::PolicyIndex`] (built once per policy: dense attribute
//! membership, rules bucketed by source and class) → [`server::Snapshot`] (the index plus
//! one set of boolean values and a sequence number) → decisions. A boolean commit publishes a
//! new snapshot; readers hold a snapshot per thread and notice the change with one atomic
//! load, so the check path touches no shared reference count.

pub mod av;
pub mod constraint;
pub mod context;
pub mod error;
pub mod explain;
pub mod hash;
pub mod index;
pub mod labeling;
pub mod names;
pub mod security;
pub mod server;
pub mod sidtab;

pub use error::{DecideError, Result};

//! The security server: the kernel's access decisions and labeling, computed in userspace
//! from an [`arbiter_policy::ValidPolicy`] (a policy that passed validation and cannot be
//! changed since), reloadable under load.
//!
//! ```
//! use arbiter_decide::{SecurityServer, AccessVector};
//! use arbiter_policy::ValidPolicy;
//!
//! let policy = ValidPolicy::from_bytes(arbiter_decide::BUILTIN_POLICY).unwrap();
//! let server = SecurityServer::new(policy);
//! let httpd = server.context_to_sid("system_u:system_r:httpd_t:s0").unwrap();
//! let content = server.context_to_sid("system_u:object_r:httpd_sys_content_t:s0").unwrap();
//! let read = server.perm_set("file", &["read", "getattr"]).unwrap();
//! let verdict = server.check(httpd, content, &read).unwrap();
//! assert!(verdict.allowed());
//!
//! // Reload (here the same policy): SIDs keep their meaning, the sequence number grows.
//! let seqno = server.seqno();
//! let reload = server.load_policy(ValidPolicy::from_bytes(arbiter_decide::BUILTIN_POLICY).unwrap()).unwrap();
//! assert_eq!(reload.seqno, seqno + 1);
//! assert!(server.check(httpd, content, &read).unwrap().allowed());
//! # let _ = AccessVector::NONE;
//! ```
//!
//! Data flows policy → index (built once per load: attribute lists, rules bucketed by
//! source and class; each source type's merged rule plans built by its first query) →
//! [`Snapshot`] (index, names, SIDs, one set of boolean
//! values and a sequence number) → decisions. Reloads and boolean commits publish a new
//! snapshot; readers follow with one atomic load and never touch a shared reference count
//! ([`SecurityServer`] explains the protocol and how SIDs survive a reload).
#![deny(missing_docs)]

mod av;
mod constraint;
mod context;
mod convert;
mod decision;
mod error;
mod explain;
mod hash;
mod index;
mod labeling;
mod names;
mod perms;
mod publish;
mod security;
mod sidtab;
mod source;
mod state;
mod sync;

pub use context::{format_context, parse_context};
pub use convert::ConvertStats;
pub use decision::{
    AccessVector, AvDecision, AvdFlags, CreateDecision, XpermBase, XpermDecision, XpermRule,
    XpermsDecision, XpermsUsed,
};
pub use error::{DecideError, Result};
pub use explain::{
    BoolFlip, BoundsCheck, CondRef, ConstraintExplanation, Explanation, PermExplanation, Removal,
    RoleCheck, RuleKind, TeRule, TermValue, WouldAllow,
};
pub use labeling::{LabelKind, Semantics};
pub use names::Names;
pub use perms::{ClassRef, PermSet, Verdict};
pub use security::{CheckedPolicy, Query, Reload, SecurityServer};
pub use sidtab::{KeyedHasher, Keys as KeyedState, Sid, SidEntry};
pub use source::DecisionSource;
pub use state::Snapshot;

pub use arbiter_policy::BUILTIN_POLICY;

/// Internals exposed for arbiter's own tests, benchmarks and tools. Not a stable API.
#[doc(hidden)]
pub mod internals {
    pub use crate::av::{compute_av, te_av, te_av_buckets};
    pub use crate::context::{parse_context_bytes, validate_context};
    pub use crate::explain::explain as explain_contexts;
    pub use crate::hash::FxHasher;
    pub use crate::index::PolicyIndex;
    pub use crate::labeling::{compute_label, is_socket_class, validate_transition};
    pub use crate::sidtab::{SidTable, MAX_CACHED_STRINGS};
    pub use crate::state::{eval_cond, Loaded};
}

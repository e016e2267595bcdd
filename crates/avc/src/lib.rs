//! arbiter's access vector cache (AVC): the kernel's `security/selinux/avc.c` semantics —
//! cached access decisions, permissive mode and permissive domains, auditing with the
//! kernel's record text, extended-permission (ioctl/netlink) decisions, cached labels —
//! in front of the security server, with a hit path that takes no lock and writes no
//! shared memory.
//!
//! ```
//! use arbiter_avc::{Avc, AvcConfig, AuditField};
//! use arbiter_decide::{AccessVector, SecurityServer};
//! use arbiter_policy::{ValidPolicy, BUILTIN_POLICY};
//! use std::sync::{Arc, Mutex};
//!
//! let server = Arc::new(SecurityServer::new(ValidPolicy::from_bytes(BUILTIN_POLICY).unwrap()));
//! let avc = Avc::new(server.clone(), AvcConfig::default()).unwrap();
//! let log = Arc::new(Mutex::new(Vec::new()));
//! let sink = log.clone();
//! avc.set_audit_hook(move |r| sink.lock().unwrap().push(r.text.clone()));
//!
//! let user = server.context_to_sid("user_u:user_r:user_t:s0").unwrap();
//! let shadow = server.context_to_sid("system_u:object_r:shadow_t:s0").unwrap();
//! let write = server.perm_set("file", &["write"]).unwrap();
//! let verdict = avc.check(user, shadow, &write).unwrap(); // computed, then cached
//! assert!(!verdict.allowed());
//! assert!(!avc.check(user, shadow, &write).unwrap().allowed()); // a cache hit
//! assert!(log.lock().unwrap()[0].starts_with("avc:  denied  { write } for "));
//!
//! // The kernel-style entry point, with audit fields:
//! let file = server.known_class("file").unwrap();
//! let denied = avc
//!     .has_perm(user, shadow, file, write.bits(), &[AuditField::pid(42), AuditField::comm("cat")])
//!     .unwrap_err();
//! assert_eq!(denied.denied, write.bits());
//! # let _ = AccessVector::NONE;
//! ```
//!
//! * [`Avc`] — the cache (its module explains policy changes and permissive mode);
//! * the table's layout, slot protocol, memory orderings and reclaim are documented in the
//!   source (`src/table.rs`), model-checked with loom
//!   (`RUSTFLAGS="--cfg loom" cargo test -p arbiter-avc --release --lib loom`);
//! * [`HashKind`] — the kernel study's hash functions and arbiter's default.
//!
//! The benchmark lab (kernel-style and libselinux-style cache models, the hash/slot
//! study) lives in `crates/oracle-tests`; a deterministic test double, [`fake::FakeSource`], is
//! behind the `test-util` feature.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod audit;
mod avc;
mod config;
#[cfg(any(test, feature = "test-util"))]
pub mod fake;
mod hash;
mod stats;
pub(crate) mod sync;
mod table;

pub use audit::{AuditField, AuditHook, AuditRecord, AuditValue};
pub use avc::{Avc, Denied, TableKind};
pub use config::{
    AvcConfig, ConfigError, AVC_CACHE_RECLAIM, AVC_CACHE_SLOTS, AVC_DEF_CACHE_THRESHOLD,
    ENTRIES_PER_SLOT,
};
pub use hash::HashKind;
pub use stats::{CacheStats, HashStats};

/// Internals for arbiter's own benchmarks (the cache study compares hash functions and
/// slot counts outside the cache). Not a stable API.
#[doc(hidden)]
pub mod internals {
    pub use crate::audit::{audit_required, format_record};
    pub use crate::config::check_slots;
    pub use crate::hash::{arbiter, muladd, murmur3, original};
}

#[cfg(all(test, loom))]
mod loom_tests;
#[cfg(all(test, not(loom)))]
mod tests;

/// The Rust examples of `docs/decisions.md`, compiled and run as doctests so the guide
/// cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/decisions.md")]
pub struct DecisionsGuide;

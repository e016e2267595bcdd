//! arbiter's access vector cache (AVC): the kernel's `security/selinux/avc.c` semantics —
//! cached access decisions, permissive mode and permissive domains, auditing with the
//! kernel's record text, extended-permission (ioctl/netlink) decisions — in front of any
//! security server implementing [`DecisionSource`], with a hit path that takes no lock
//! and writes no shared memory.
//!
//! * [`Avc`] — the cache ([`avc`] explains policy changes and permissive mode);
//! * [`table`] — the lock-free table: layout, slot protocol, memory orderings, reclaim;
//! * [`hash`] — the kernel study's hash functions and arbiter's default;
//! * [`baseline`] — models of the kernel's and libselinux's caches;
//! * [`bench`](mod@bench) — the benchmark reproducing the 2025 kernel hash-slot study;
//! * [`fake`] — a deterministic source for tests and benchmarks.
//!
//! Checks: `cargo test -p arbiter-avc` (unit and property tests, and `tests/stress.rs`:
//! readers racing a writer that inserts, evicts, resets and bumps the policy sequence
//! number, every answer checked against the source); model checking of the slot protocol,
//! generations and `setenforce` with
//! `RUSTFLAGS="--cfg loom" cargo test -p arbiter-avc --release --lib loom`; the benchmark
//! on a synthetic trace and the fake source with
//! `cargo run -p arbiter-avc --release --example avc_bench -- [--quick] [--json]`.
//!
//! ```
//! use arbiter_avc::{Avc, AvcConfig, AuditField, fake::FakeSource};
//! use std::sync::{Arc, Mutex};
//!
//! let avc = Avc::new(FakeSource::new(), AvcConfig::default()).unwrap();
//! let log = Arc::new(Mutex::new(Vec::new()));
//! let sink = log.clone();
//! avc.set_audit_hook(move |r| sink.lock().unwrap().push(r.text.clone()));
//! let d = avc.source().expected(7, 9, 1, 1);
//! let bit = d.allowed & d.allowed.wrapping_neg(); // some granted permission
//! assert!(avc.has_perm(7, 9, 1, bit, &[AuditField::pid(1)]).is_ok());
//! let missing = !d.allowed & 0x0fff_ffff & (!d.allowed).wrapping_neg(); // some denied one
//! let err = avc.has_perm(7, 9, 1, missing, &[AuditField::pid(1), AuditField::comm("cat")]).unwrap_err();
//! assert_eq!(err.denied, missing);
//! assert!(log.lock().unwrap().last().unwrap().starts_with("avc:  denied  { "));
//! ```

pub mod audit;
pub mod avc;
pub mod baseline;
pub mod bench;
pub mod config;
pub mod fake;
pub mod hash;
pub mod server;
pub mod source;
pub mod stats;
pub(crate) mod sync;
pub mod table;

pub use audit::{AuditField, AuditHook, AuditRecord, AuditValue};
pub use avc::{Avc, Denied, TableKind};
pub use config::{AvcConfig, ConfigError};
pub use hash::HashKind;
pub use source::{
    CreateDecision, Decision, DecisionSource, SourceError, XpermBase, XpermBitmaps, XpermDecision,
    XpermRule, AVD_FLAGS_NEVERAUDIT, AVD_FLAGS_PERMISSIVE, XPERMS_ALLOWED, XPERMS_AUDITALLOW,
    XPERMS_DONTAUDIT,
};
pub use stats::{CacheStats, HashStats};

#[cfg(all(test, loom))]
mod loom_tests;
#[cfg(all(test, not(loom)))]
mod tests;

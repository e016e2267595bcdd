//! arbiter's benchmark lab: the workloads and reference models its benchmarks compare
//! against, kept out of the engine crates. Nothing here links libsepol (the comparisons
//! with libsepol live in `crates/oracle-tests`), so the command line can run every study.
//!
//! * [`avc_study`] — the 2025 kernel hash/slot study reproduced on a trace from a real
//!   policy or a replayed workload;
//! * [`cache_models`] — a kernel-style chained AVC and a libselinux-style global-lock cache;
//! * [`reload`] — readers checking through the cache while a writer reloads policies and
//!   commits booleans, every answer verified, and the refcount-vs-handle scaling figures;
//! * [`bsm_study`] — the BSM event→class map designs, printing and selection speed, on
//!   generated trails (`arbiter bench bsm`);
//! * [`landlock_study`] — the Landlock domain layouts against [`landlock_tree`], a model of
//!   the kernel's red-black tree of rules (`arbiter bench landlock`).
#![forbid(unsafe_code)]

pub mod avc_study;
pub mod bsm_study;
pub mod cache_models;
pub mod landlock_study;
pub mod landlock_tree;
pub mod reload;

/// The Debian policies installed on this machine, which the studies use by default (the
/// command line takes them from here, so that it needs no test kit of its own).
pub use arbiter_testkit::debian_policies;

use arbiter_decide::{AvDecision, ClassRef, DecideError, DecisionSource, Sid};
use arbiter_policy::ClassId;

/// `compute_av` on raw numbers, as the studies' traces hold them (class 0 = a class the
/// policy lacks; SID 0 is refused as the kernel refuses `SECSID_NULL`).
pub fn raw_compute_av<S: DecisionSource + ?Sized>(
    source: &S,
    ssid: u32,
    tsid: u32,
    tclass: u16,
) -> Result<AvDecision, DecideError> {
    let s = Sid::new(ssid).ok_or(DecideError::UnknownSid(ssid))?;
    let t = Sid::new(tsid).ok_or(DecideError::UnknownSid(tsid))?;
    let class = ClassId::new(tclass).map_or(ClassRef::Unknown, ClassRef::Known);
    source.compute_av(s, t, class)
}

//! The contract between a cache and whatever computes decisions.
//!
//! [`SecurityServer`](crate::SecurityServer) implements it directly; so may a test double
//! or a remote server. Everything is in the shared vocabulary ([`Sid`], [`ClassRef`],
//! [`AvDecision`], ...), so a cache needs no conversion and no knowledge of the policy.

use crate::decision::{AvDecision, CreateDecision, XpermBase, XpermDecision};
use crate::perms::{ClassRef, PermSet, Verdict};
use crate::sidtab::Sid;
use crate::{DecideError, Result};
use arbiter_policy::ClassId;
use std::sync::Arc;

/// A source of access decisions, as a cache sees it.
///
/// # Contract
/// * [`seqno`](Self::seqno) is read on **every** cache lookup, hits included, so that a
///   policy change is noticed without any notification: it must be wait-free and write no
///   shared memory — one atomic load (Acquire) of a counter bumped when a new policy or
///   boolean state is published. It never decreases, and every decision computed after a
///   bump carries the new number.
/// * The `compute_*` methods and [`check`](Self::check) are called on misses only, outside
///   any cache lock, possibly from several threads at once. Each result carries the
///   sequence number of the state it was computed under.
/// * An `Err` means "cannot decide": the cache fails closed (denies, in permissive mode
///   too) and caches nothing.
pub trait DecisionSource: Send + Sync {
    /// Current sequence number (see the contract).
    fn seqno(&self) -> u64;

    /// Uncached access vector decision.
    fn compute_av(&self, ssid: Sid, tsid: Sid, class: ClassRef) -> Result<AvDecision>;

    /// Extended-permission decision for one driver.
    fn compute_xperms(
        &self,
        _ssid: Sid,
        _tsid: Sid,
        _class: ClassId,
        _base: XpermBase,
        _driver: u8,
    ) -> Result<XpermDecision> {
        Err(DecideError::Unsupported("extended permissions"))
    }

    /// The SID of an object of `class` created by `ssid` in or under `tsid`.
    fn compute_create(&self, _ssid: Sid, _tsid: Sid, _class: ClassId) -> Result<CreateDecision> {
        Err(DecideError::Unsupported("labeling"))
    }

    /// Uncached verdict on a permission request.
    fn check(&self, ssid: Sid, tsid: Sid, perms: &PermSet) -> Result<Verdict> {
        Ok(perms.verdict(self.compute_av(ssid, tsid, perms.class())?))
    }

    /// Whether `perms` was resolved against the policy state numbered `seqno`, which the
    /// caller has just seen as current (so a cached decision for `perms.class()` under
    /// `seqno` answers it). `false` sends the caller to [`check`](Self::check).
    fn perm_set_matches(&self, _perms: &PermSet, _seqno: u64) -> bool {
        false
    }

    /// SID → context text, for `scontext=` / `tcontext=` in audit records.
    fn sid_to_context(&self, _sid: Sid) -> Option<String> {
        None
    }

    /// Class → name, for `tclass=`.
    fn class_name(&self, _class: ClassId) -> Option<String> {
        None
    }

    /// Permission bit index (0..32) of a class → name; unnamed bits print as hex.
    fn perm_name(&self, _class: ClassId, _bit: u32) -> Option<String> {
        None
    }
}

macro_rules! forward_source {
    ($($ty:ty),*) => {$(
        impl<T: DecisionSource + ?Sized> DecisionSource for $ty {
            #[inline]
            fn seqno(&self) -> u64 {
                (**self).seqno()
            }
            #[inline]
            fn compute_av(&self, ssid: Sid, tsid: Sid, class: ClassRef) -> Result<AvDecision> {
                (**self).compute_av(ssid, tsid, class)
            }
            fn compute_xperms(
                &self,
                ssid: Sid,
                tsid: Sid,
                class: ClassId,
                base: XpermBase,
                driver: u8,
            ) -> Result<XpermDecision> {
                (**self).compute_xperms(ssid, tsid, class, base, driver)
            }
            fn compute_create(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<CreateDecision> {
                (**self).compute_create(ssid, tsid, class)
            }
            fn check(&self, ssid: Sid, tsid: Sid, perms: &PermSet) -> Result<Verdict> {
                (**self).check(ssid, tsid, perms)
            }
            #[inline]
            fn perm_set_matches(&self, perms: &PermSet, seqno: u64) -> bool {
                (**self).perm_set_matches(perms, seqno)
            }
            fn sid_to_context(&self, sid: Sid) -> Option<String> {
                (**self).sid_to_context(sid)
            }
            fn class_name(&self, class: ClassId) -> Option<String> {
                (**self).class_name(class)
            }
            fn perm_name(&self, class: ClassId, bit: u32) -> Option<String> {
                (**self).perm_name(class, bit)
            }
        }
    )*};
}

forward_source!(&T, Arc<T>, Box<T>);

//! A deterministic decision source for tests and benchmarks.
//!
//! Every answer is a pure function of the key and the current sequence number, so a test
//! can recompute what any cached answer must be ([`FakeSource::expected`]) and detect a
//! torn or stale one. The sequence number is an atomic the test bumps.

use std::sync::atomic::{AtomicU64, Ordering::Acquire, Ordering::Relaxed, Ordering::Release};

use crate::{AuditField, Denied};
use arbiter_decide::{
    AccessVector, AvDecision, AvdFlags, ClassRef, CreateDecision, DecideError, DecisionSource,
    Result, Sid, XpermBase, XpermDecision, XpermRule, XpermsDecision, XpermsUsed,
};
use arbiter_policy::ClassId;

fn key(class: ClassRef) -> u16 {
    match class {
        ClassRef::Known(c) => c.value(),
        ClassRef::Unknown => 0,
    }
}

/// Permission names of class 1 ("file"), in the kernel's bit order.
const FILE_PERMS: &[&str] = &[
    "ioctl",
    "read",
    "write",
    "create",
    "getattr",
    "setattr",
    "lock",
    "relabelfrom",
    "relabelto",
    "append",
    "map",
    "unlink",
    "link",
    "rename",
    "execute",
    "quotaon",
    "mounton",
    "audit_access",
    "open",
    "execmod",
    "watch",
    "watch_mount",
    "watch_sb",
    "watch_with_perm",
    "watch_reads",
    "execute_no_trans",
    "entrypoint",
];

fn mix(mut x: u64) -> u64 {
    // splitmix64 finalizer.
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Deterministic [`DecisionSource`].
///
/// * `compute_av`: `allowed` is a hash of (key, seqno) (about half the bits), one bit of
///   the allowed set is `auditallow`'ed in one key out of 16, the top four bits are
///   `dontaudit`'ed; SIDs ≥ [`FakeSource::UNKNOWN_SID`] fail with `UnknownSid`; source SIDs
///   that are multiples of `permissive_every` (if nonzero) are permissive domains.
/// * `compute_xperms`: class 1 only has rules; driver 0x54 lists functions by hash,
///   drivers other than 0x54 and 0x89 are not listed.
/// * `compute_create`: a hash of the key.
/// * Names: `sid_to_context(n)` = `system_u:system_r:typeN_t:s0` (none for unknown SIDs);
///   class 1 is `file` with its real permission names (bit 31 unnamed); class `n` is
///   `classN` with `permI` names for bits 0..16.
pub struct FakeSource {
    seqno: AtomicU64,
    /// Source SIDs divisible by this are permissive domains (0 = none).
    pub permissive_every: u32,
    /// Busy-work iterations per compute, to model a slower security server.
    pub compute_cost: u32,
    av_computes: AtomicU64,
    xperm_computes: AtomicU64,
    create_computes: AtomicU64,
}

impl Default for FakeSource {
    fn default() -> Self {
        FakeSource::new()
    }
}

impl FakeSource {
    /// SIDs from here up are unknown to the source.
    pub const UNKNOWN_SID: u32 = 0x8000_0000;

    /// Sequence number 1, no permissive domain, no compute cost.
    pub fn new() -> FakeSource {
        FakeSource {
            seqno: AtomicU64::new(1),
            permissive_every: 0,
            compute_cost: 0,
            av_computes: AtomicU64::new(0),
            xperm_computes: AtomicU64::new(0),
            create_computes: AtomicU64::new(0),
        }
    }

    /// Simulates a policy reload or boolean commit; returns the new sequence number.
    pub fn bump(&self) -> u64 {
        self.seqno.fetch_add(1, Release) + 1
    }

    /// What `compute_av` answers for the key under `seqno`.
    pub fn expected(&self, ssid: u32, tsid: u32, tclass: u16, seqno: u64) -> AvDecision {
        let h = mix((ssid as u64) << 32
            ^ (tsid as u64) << 7
            ^ (tclass as u64) << 50
            ^ seqno.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let allowed = h as u32;
        let auditallow = if (h >> 32) & 15 == 0 {
            allowed & allowed.wrapping_neg()
        } else {
            0
        };
        let auditdeny = !0xf000_0000u32;
        let flags = if self.permissive_every != 0 && ssid % self.permissive_every == 0 {
            AvdFlags::PERMISSIVE
        } else {
            AvdFlags::NONE
        };
        AvDecision {
            allowed: AccessVector(allowed),
            auditallow: AccessVector(auditallow),
            auditdeny: AccessVector(auditdeny),
            seqno,
            flags,
        }
    }

    /// What `compute_xperms` answers under `seqno`.
    pub fn expected_xperms(
        &self,
        ssid: u32,
        tsid: u32,
        tclass: u16,
        base: XpermBase,
        driver: u8,
        seqno: u64,
    ) -> XpermDecision {
        let rule = if tclass != 1 || base != XpermBase::Ioctl {
            XpermRule::Unrestricted
        } else if driver == 0x54 {
            let h = mix((ssid as u64) << 32 | tsid as u64 ^ seqno);
            let mut b = XpermsDecision {
                driver,
                used: XpermsUsed::ALLOWED | XpermsUsed::AUDITALLOW | XpermsUsed::DONTAUDIT,
                ..Default::default()
            };
            for i in 0..8 {
                b.allowed[i] = mix(h ^ i as u64) as u32;
            }
            b.auditallow[0] = 0x2; // function 0x01 is auditallow'ed
            b.dontaudit[0] = 0x4; // function 0x02 is dontaudit'ed
            XpermRule::Driver(b)
        } else if driver == 0x89 {
            XpermRule::Driver(XpermsDecision {
                driver,
                used: XpermsUsed::ALLOWED,
                allowed: [u32::MAX; 8],
                ..Default::default()
            })
        } else {
            XpermRule::DriverNotListed
        };
        XpermDecision { rule, seqno }
    }

    /// What `compute_create` answers under `seqno`.
    pub fn expected_create(&self, ssid: u32, tsid: u32, tclass: u16, seqno: u64) -> u32 {
        (mix((ssid as u64) << 32 | (tsid as u64) ^ (tclass as u64) << 20 ^ seqno) as u32
            & 0x7fff_ffff)
            | 1
    }

    /// `compute_av` calls so far.
    pub fn av_computes(&self) -> u64 {
        self.av_computes.load(Relaxed)
    }

    /// `compute_xperms` calls so far.
    pub fn xperm_computes(&self) -> u64 {
        self.xperm_computes.load(Relaxed)
    }

    /// `compute_create` calls so far.
    pub fn create_computes(&self) -> u64 {
        self.create_computes.load(Relaxed)
    }

    fn work(&self) {
        let mut x = 0u64;
        for i in 0..self.compute_cost {
            x = mix(x ^ i as u64);
        }
        std::hint::black_box(x);
    }

    fn known(&self, ssid: Sid, tsid: Sid) -> Result<()> {
        for sid in [ssid, tsid] {
            if sid.get() >= Self::UNKNOWN_SID {
                return Err(DecideError::UnknownSid(sid.get()));
            }
        }
        Ok(())
    }
}

impl DecisionSource for FakeSource {
    fn compute_av(&self, ssid: Sid, tsid: Sid, class: ClassRef) -> Result<AvDecision> {
        self.av_computes.fetch_add(1, Relaxed);
        self.work();
        self.known(ssid, tsid)?;
        Ok(self.expected(ssid.get(), tsid.get(), key(class), self.seqno()))
    }

    #[inline]
    fn seqno(&self) -> u64 {
        self.seqno.load(Acquire)
    }

    fn compute_xperms(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        base: XpermBase,
        driver: u8,
    ) -> Result<XpermDecision> {
        self.xperm_computes.fetch_add(1, Relaxed);
        self.known(ssid, tsid)?;
        Ok(self.expected_xperms(
            ssid.get(),
            tsid.get(),
            class.value(),
            base,
            driver,
            self.seqno(),
        ))
    }

    fn compute_create(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<CreateDecision> {
        self.create_computes.fetch_add(1, Relaxed);
        self.known(ssid, tsid)?;
        let seqno = self.seqno();
        let sid = self.expected_create(ssid.get(), tsid.get(), class.value(), seqno);
        Ok(CreateDecision {
            sid: Sid::new(sid).ok_or(DecideError::UnknownSid(sid))?,
            seqno,
        })
    }

    fn sid_to_context(&self, sid: Sid) -> Option<String> {
        (sid.get() < Self::UNKNOWN_SID).then(|| format!("system_u:system_r:type{sid}_t:s0"))
    }

    fn class_name(&self, class: ClassId) -> Option<String> {
        match class.value() {
            1 => Some("file".to_string()),
            n => Some(format!("class{n}")),
        }
    }

    fn perm_name(&self, class: ClassId, bit: u32) -> Option<String> {
        match class.value() {
            1 => FILE_PERMS.get(bit as usize).map(|s| s.to_string()),
            _ => (bit < 16).then(|| format!("perm{bit}")),
        }
    }
}

/// Raw-number spellings of the cache's typed API, so tests read as the kernel's
/// (`has_perm_r(7, 9, 1, READ, ..)`). Panics on SID or class 0.
pub trait RawAvc {
    /// The typed method of the same name without `_r`.
    fn has_perm_r(
        &self,
        s: u32,
        t: u32,
        c: u16,
        req: u32,
        f: &[AuditField<'_>],
    ) -> Result<AvDecision, Denied>;
    /// The typed method of the same name without `_r`.
    fn has_perm_noaudit_r(&self, s: u32, t: u32, c: u16, req: u32) -> Result<AvDecision, Denied>;
    /// The typed method of the same name without `_r`.
    fn lookup_r(&self, s: u32, t: u32, c: u16) -> Option<AvDecision>;
    /// The typed method of the same name without `_r`.
    fn decision_r(&self, s: u32, t: u32, c: u16) -> Result<AvDecision, DecideError>;
    /// The typed method of the same name without `_r`.
    fn compute_create_r(&self, s: u32, t: u32, c: u16) -> Result<u32, DecideError>;
    /// The typed method of the same name without `_r`.
    fn xperm_decision_r(
        &self,
        s: u32,
        t: u32,
        c: u16,
        b: XpermBase,
        d: u8,
    ) -> Result<XpermDecision, DecideError>;
    #[allow(clippy::too_many_arguments)]
    /// The typed method of the same name without `_r`.
    fn has_extended_perm_r(
        &self,
        s: u32,
        t: u32,
        c: u16,
        req: u32,
        b: XpermBase,
        x: u16,
        f: &[AuditField<'_>],
    ) -> Result<AvDecision, Denied>;
}

/// `Sid::new(n).unwrap()`.
pub fn sid(n: u32) -> Sid {
    Sid::new(n).unwrap()
}

/// `ClassId::new(n).unwrap()`.
pub fn cls(n: u16) -> ClassId {
    ClassId::new(n).unwrap()
}

impl<S: DecisionSource> RawAvc for crate::Avc<S> {
    /// The typed method of the same name without `_r`.
    fn has_perm_r(
        &self,
        s: u32,
        t: u32,
        c: u16,
        req: u32,
        f: &[AuditField<'_>],
    ) -> Result<AvDecision, Denied> {
        self.has_perm(sid(s), sid(t), cls(c), AccessVector(req), f)
    }
    /// The typed method of the same name without `_r`.
    fn has_perm_noaudit_r(&self, s: u32, t: u32, c: u16, req: u32) -> Result<AvDecision, Denied> {
        self.has_perm_noaudit(sid(s), sid(t), cls(c), AccessVector(req))
    }
    /// The typed method of the same name without `_r`.
    fn lookup_r(&self, s: u32, t: u32, c: u16) -> Option<AvDecision> {
        self.lookup(sid(s), sid(t), cls(c))
    }
    /// The typed method of the same name without `_r`.
    fn decision_r(&self, s: u32, t: u32, c: u16) -> Result<AvDecision, DecideError> {
        self.compute_av(sid(s), sid(t), cls(c))
    }
    /// The typed method of the same name without `_r`.
    fn compute_create_r(&self, s: u32, t: u32, c: u16) -> Result<u32, DecideError> {
        self.compute_create(sid(s), sid(t), cls(c)).map(Sid::get)
    }
    /// The typed method of the same name without `_r`.
    fn xperm_decision_r(
        &self,
        s: u32,
        t: u32,
        c: u16,
        b: XpermBase,
        d: u8,
    ) -> Result<XpermDecision, DecideError> {
        self.xperm_decision(sid(s), sid(t), cls(c), b, d)
    }
    /// The typed method of the same name without `_r`.
    fn has_extended_perm_r(
        &self,
        s: u32,
        t: u32,
        c: u16,
        req: u32,
        b: XpermBase,
        x: u16,
        f: &[AuditField<'_>],
    ) -> Result<AvDecision, Denied> {
        self.has_extended_perm(sid(s), sid(t), cls(c), AccessVector(req), b, x, f)
    }
}

//! The vocabulary of decisions, defined once and shared by the security server, the access
//! vector cache and every front end: access vectors, decision flags, the kernel's
//! `struct av_decision`, extended-permission decisions and creation decisions.
//!
//! Values keep the kernel's numbering (permission bit `i` is the permission with value
//! `i + 1`), so a vector printed in hex reads the same as `security_compute_av`'s.

use crate::sidtab::Sid;
use std::fmt;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, Not};

/// A set of permissions of one class: bit `i` is the permission with value `i + 1`
/// (the kernel's `access_vector_t`).
#[repr(transparent)]
#[derive(Copy, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AccessVector(pub u32);

impl AccessVector {
    /// No permission.
    pub const NONE: AccessVector = AccessVector(0);
    /// Every permission bit.
    pub const ALL: AccessVector = AccessVector(u32::MAX);

    /// The raw bits.
    #[inline]
    pub fn bits(self) -> u32 {
        self.0
    }

    /// Whether no bit is set.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether every bit of `other` is set here.
    #[inline]
    pub fn contains(self, other: AccessVector) -> bool {
        self.0 & other.0 == other.0
    }

    /// The bits set here and not in `other`.
    #[inline]
    pub fn without(self, other: AccessVector) -> AccessVector {
        AccessVector(self.0 & !other.0)
    }

    /// The bit indices that are set, ascending.
    pub fn iter_bits(self) -> impl Iterator<Item = u32> {
        (0..32).filter(move |b| self.0 & (1 << b) != 0)
    }
}

impl fmt::Debug for AccessVector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AccessVector({:#010x})", self.0)
    }
}

impl fmt::LowerHex for AccessVector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerHex::fmt(&self.0, f)
    }
}

/// Comparison with raw kernel bits (`d.allowed == 0x40412`).
impl PartialEq<u32> for AccessVector {
    fn eq(&self, other: &u32) -> bool {
        self.0 == *other
    }
}

impl From<u32> for AccessVector {
    fn from(v: u32) -> Self {
        AccessVector(v)
    }
}

macro_rules! bit_ops {
    ($t:ident) => {
        impl BitOr for $t {
            type Output = $t;
            #[inline]
            fn bitor(self, o: $t) -> $t {
                $t(self.0 | o.0)
            }
        }
        impl BitAnd for $t {
            type Output = $t;
            #[inline]
            fn bitand(self, o: $t) -> $t {
                $t(self.0 & o.0)
            }
        }
        impl BitOrAssign for $t {
            #[inline]
            fn bitor_assign(&mut self, o: $t) {
                self.0 |= o.0;
            }
        }
        impl BitAndAssign for $t {
            #[inline]
            fn bitand_assign(&mut self, o: $t) {
                self.0 &= o.0;
            }
        }
        impl Not for $t {
            type Output = $t;
            #[inline]
            fn not(self) -> $t {
                $t(!self.0)
            }
        }
    };
}
bit_ops!(AccessVector);
bit_ops!(AvdFlags);

/// Flags of an [`AvDecision`] (the kernel's `AVD_FLAGS_*`).
#[repr(transparent)]
#[derive(Copy, Clone, Default, PartialEq, Eq, Hash, Debug)]
pub struct AvdFlags(pub u32);

impl AvdFlags {
    /// No flag.
    pub const NONE: AvdFlags = AvdFlags(0);
    /// The source domain is permissive: denials are audited but not enforced
    /// (`AVD_FLAGS_PERMISSIVE`).
    pub const PERMISSIVE: AvdFlags = AvdFlags(0x0001);
    /// Nothing about this source domain is ever audited (`AVD_FLAGS_NEVERAUDIT`, format 35
    /// `neveraudit` types, Linux 6.16+).
    pub const NEVERAUDIT: AvdFlags = AvdFlags(0x0002);

    /// Whether every flag of `other` is set.
    #[inline]
    pub fn contains(self, other: AvdFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// The raw bits.
    #[inline]
    pub fn bits(self) -> u32 {
        self.0
    }
}

/// An access vector decision, field for field the kernel's `struct av_decision`.
///
/// The memory order (`repr(C)`, pairs of 32-bit fields) matches the cache's cell words, so
/// a cache hit assembles the value with whole-word stores (built field by field and copied
/// with wide loads it stalled on store-to-load forwarding: 12.5 ns against 3.9 ns measured).
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct AvDecision {
    /// Granted bits to audit (`auditallow` rules).
    pub auditallow: AccessVector,
    /// Denied bits to audit: the complement of `dontaudit` rules.
    pub auditdeny: AccessVector,
    /// Granted permission bits.
    pub allowed: AccessVector,
    /// [`AvdFlags::PERMISSIVE`], [`AvdFlags::NEVERAUDIT`].
    pub flags: AvdFlags,
    /// Sequence number of the policy state the decision was computed under.
    pub seqno: u64,
}

impl AvDecision {
    /// The fail-closed answer for a query that cannot be computed: nothing allowed, every
    /// denial audited.
    pub fn deny_all(seqno: u64) -> AvDecision {
        AvDecision {
            allowed: AccessVector::NONE,
            auditallow: AccessVector::NONE,
            auditdeny: AccessVector::ALL,
            flags: AvdFlags::NONE,
            seqno,
        }
    }

    /// Whether every requested bit is granted.
    #[inline]
    pub fn allows(&self, requested: AccessVector) -> bool {
        self.allowed.contains(requested)
    }

    /// Whether the source domain is permissive.
    #[inline]
    pub fn is_permissive(&self) -> bool {
        self.flags.contains(AvdFlags::PERMISSIVE)
    }
}

/// Which extended-permission space a query is about (the kernel's `AVC_EXT_IOCTL`,
/// `AVC_EXT_NLMSG`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum XpermBase {
    /// `ioctl` commands: driver = high byte, function = low byte.
    Ioctl,
    /// Netlink message types (format 35 `nlmsg` xperms).
    Nlmsg,
}

/// Which maps of an [`XpermsDecision`] are meaningful (the kernel's `XPERMS_*` bits of
/// `extended_perms_decision.used`).
#[repr(transparent)]
#[derive(Copy, Clone, Default, PartialEq, Eq, Hash, Debug)]
pub struct XpermsUsed(pub u8);

impl XpermsUsed {
    /// At least one allowxperm rule matched.
    pub const ALLOWED: XpermsUsed = XpermsUsed(1);
    /// At least one auditallowxperm rule matched.
    pub const AUDITALLOW: XpermsUsed = XpermsUsed(2);
    /// At least one dontauditxperm rule matched.
    pub const DONTAUDIT: XpermsUsed = XpermsUsed(4);

    /// Whether every bit of `other` is set.
    #[inline]
    pub fn contains(self, other: XpermsUsed) -> bool {
        self.0 & other.0 == other.0
    }
}

impl BitOr for XpermsUsed {
    type Output = XpermsUsed;
    fn bitor(self, o: XpermsUsed) -> XpermsUsed {
        XpermsUsed(self.0 | o.0)
    }
}

impl BitOrAssign for XpermsUsed {
    fn bitor_assign(&mut self, o: XpermsUsed) {
        self.0 |= o.0;
    }
}

/// Per-function bitmaps for one driver: the kernel's `extended_perms_decision`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct XpermsDecision {
    /// The driver (high byte) this decision is about.
    pub driver: u8,
    /// Which maps are meaningful; an unused map is all zero and must not be consulted.
    pub used: XpermsUsed,
    /// Allowed functions (low byte), 256 bits.
    pub allowed: [u32; 8],
    /// Allowed functions to audit.
    pub auditallow: [u32; 8],
    /// Denied functions not to audit.
    pub dontaudit: [u32; 8],
}

fn test_bit(map: &[u32; 8], func: u8) -> bool {
    map[func as usize / 32] & (1 << (func % 32)) != 0
}

impl XpermsDecision {
    /// The kernel's `avc_xperms_has_perm(xpd, func, XPERMS_ALLOWED)`.
    pub fn allows(&self, func: u8) -> bool {
        self.used.contains(XpermsUsed::ALLOWED) && test_bit(&self.allowed, func)
    }

    /// `avc_xperms_has_perm(xpd, func, XPERMS_AUDITALLOW)`.
    pub fn audits_allow(&self, func: u8) -> bool {
        self.used.contains(XpermsUsed::AUDITALLOW) && test_bit(&self.auditallow, func)
    }

    /// `avc_xperms_has_perm(xpd, func, XPERMS_DONTAUDIT)`.
    pub fn dont_audit(&self, func: u8) -> bool {
        self.used.contains(XpermsUsed::DONTAUDIT) && test_bit(&self.dontaudit, func)
    }
}

/// What the policy says about one driver of one extended-permission space for a
/// (source, target, class) triple. The three cases are the three paths of the kernel's
/// `avc_has_extended_perms`, which differ in auditing as well as in the verdict.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum XpermRule {
    /// No extended-permission rule exists for the triple (`xp.len == 0`): the base
    /// permission alone decides, and auditing uses the base decision only.
    Unrestricted,
    /// Rules exist for the triple but none names this driver: every function of the driver
    /// is denied; no per-function auditing.
    DriverNotListed,
    /// Per-function decision for the driver.
    Driver(XpermsDecision),
}

/// An extended-permission decision for one (source, target, class, base, driver).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct XpermDecision {
    /// The rule case and, for [`XpermRule::Driver`], the bitmaps.
    pub rule: XpermRule,
    /// Sequence number of the policy state it was computed under.
    pub seqno: u64,
}

/// The SID of a new object (`security_transition_sid`), with the sequence number of the
/// policy state it was computed under.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct CreateDecision {
    /// The new object's SID.
    pub sid: Sid,
    /// Sequence number of the policy state it was computed under.
    pub seqno: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_vector_set_operations() {
        let a = AccessVector(0b1011);
        assert!(a.contains(AccessVector(0b0011)));
        assert!(!a.contains(AccessVector(0b0100)));
        assert_eq!(a.without(AccessVector(0b0001)), AccessVector(0b1010));
        assert_eq!(a.iter_bits().collect::<Vec<_>>(), vec![0, 1, 3]);
        assert_eq!(format!("{:08x}", a), "0000000b");
    }

    #[test]
    fn deny_all_allows_nothing_and_audits_everything() {
        let d = AvDecision::deny_all(3);
        assert!(!d.allows(AccessVector(1)));
        assert!(d.allows(AccessVector::NONE));
        assert_eq!(d.auditdeny, AccessVector::ALL);
        assert!(!d.is_permissive());
    }

    #[test]
    fn unused_xperm_maps_are_never_consulted() {
        let d = XpermsDecision {
            allowed: [u32::MAX; 8],
            ..Default::default()
        };
        assert!(!d.allows(5));
        let d = XpermsDecision {
            used: XpermsUsed::ALLOWED,
            ..d
        };
        assert!(d.allows(5));
        assert!(!d.dont_audit(5));
    }
}

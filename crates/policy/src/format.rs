//! On-disk constants of the binary policy format, defined once for the reader and the
//! writer (the kernel's `security/selinux/ss/policydb.h`, `avtab.h`).

/// `POLICYDB_MAGIC` (`SELINUX_MAGIC`): a kernel (or Xen) binary policy.
pub(crate) const MAGIC: u32 = 0xf97c_ff8c;
/// `POLICYDB_MOD_MAGIC`: a policy module or base module (`.pp` contents), not a kernel policy.
pub(crate) const MOD_MAGIC: u32 = 0xf97c_ff8d;
/// `POLICYDB_STRING`: the target string of Linux kernel policies.
pub(crate) const TARGET_SELINUX: &[u8] = b"SE Linux";
/// libsepol's `POLICYDB_STRING_MAX_LENGTH`: longer target strings are refused unread.
pub(crate) const TARGET_MAX_LEN: u32 = 32;

/// Configuration word bits (`POLICYDB_CONFIG_*`, `REJECT_UNKNOWN`, `ALLOW_UNKNOWN`).
pub(crate) const CONFIG_MLS: u32 = 0x1;
/// `REJECT_UNKNOWN` is bit 1 and `ALLOW_UNKNOWN` bit 2 (libsepol's `SEPOL_REJECT_UNKNOWN` =
/// 2, `SEPOL_ALLOW_UNKNOWN` = 4); neither set means deny.
pub(crate) const CONFIG_REJECT_UNKNOWN: u32 = 0x2;
/// See [`CONFIG_REJECT_UNKNOWN`].
pub(crate) const CONFIG_ALLOW_UNKNOWN: u32 = 0x4;

/// Kind bits of the `specified` word (the kernel's `AVTAB_AV`, `AVTAB_TYPE`, `AVTAB_XPERMS`).
pub(crate) const AVTAB_AV: u16 = 0x0007;
/// See [`AVTAB_AV`].
pub(crate) const AVTAB_TYPE: u16 = 0x0070;
/// See [`AVTAB_AV`].
pub(crate) const AVTAB_XPERMS: u16 = 0x0700;
/// The "rule is active" flag the compiler sets on conditional entries (format >= 20).
pub(crate) const AVTAB_ENABLED: u16 = 0x8000;
/// The same flag in the 32-bit kind word of the format before version 20.
pub(crate) const AVTAB_ENABLED_OLD: u32 = 0x8000_0000;

/// `TYPEDATUM_PROPERTY_*` bits of type records from version 24 on.
pub(crate) const TYPE_PROPERTY_PRIMARY: u32 = 1;
/// See [`TYPE_PROPERTY_PRIMARY`].
pub(crate) const TYPE_PROPERTY_ATTRIBUTE: u32 = 2;

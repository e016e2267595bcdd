//! What a format version cannot hold: the reasons the writer refuses (or, when asked,
//! drops) content.

use std::fmt;

use crate::policy::{version, MAX_VERSION, MIN_VERSION};

/// Content that a format version cannot express, with how much of it there is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Unsupported {
    /// Booleans and conditional rules (version 16).
    Booleans { bools: usize, cond_nodes: usize },
    /// IPv6 `nodecon`s (version 17).
    Ipv6NodeContexts(usize),
    /// MLS: the MLS flag, sensitivities, categories, or MLS levels in users and contexts
    /// (version 19).
    Mls,
    /// `validatetrans` rules (version 19).
    ValidateTrans(usize),
    /// Range transitions (version 19).
    RangeTransitions(usize),
    /// Rules on attributes, or types with attributes (version 20). The older format has no
    /// type→attribute map: rules must name types. Dropping expands them to their types.
    AttributeRules(usize),
    /// Range transitions for classes other than `process` (version 21).
    RangeTransitionClasses(usize),
    /// Policy capabilities (version 22).
    PolicyCapabilities(usize),
    /// Permissive types (version 23).
    PermissiveTypes(usize),
    /// Type, role and user bounds (version 24).
    Bounds(usize),
    /// Attribute names (version 24): older kernel policies leave attributes unnamed.
    AttributeNames(usize),
    /// Filename type transitions (version 25).
    FilenameTransitions(usize),
    /// Role transitions for classes other than `process` (version 26).
    RoleTransitionClasses(usize),
    /// `default_user`, `default_role` and `default_range` (version 27).
    ClassDefaults(usize),
    /// `default_type` (version 28).
    DefaultType(usize),
    /// The source-level type sets of constraint terms (version 29).
    ConstraintTypeNames(usize),
    /// Extended-permission rules (version 30).
    Xperms(usize),
    /// InfiniBand partition key and end port contexts (version 31).
    InfinibandContexts(usize),
    /// `default_range glblub` (version 32).
    Glblub(usize),
    /// Filename transition groups whose outcomes the per-rule format cannot reproduce
    /// (version 33): a source listed under two outcomes, or outcomes sharing a new type.
    /// Dropping writes the rules that apply, the same decisions in another grouping.
    FilenameTransitionGrouping(usize),
    /// Extended-permission rules inside conditionals (version 34).
    ConditionalXperms(usize),
    /// `neveraudit` types (version 35).
    NeverAuditTypes(usize),
    /// Type values no symbol names (attributes of policies before version 24, which did
    /// not write them): from version 24 every value must be named, and libsepol refuses
    /// the gaps. Dropping names them as attributes `attribute_VALUE`.
    UnnamedTypes(usize),
    /// Xen device-tree contexts (Xen version 30).
    DeviceTreeContexts(usize),
}

impl Unsupported {
    /// Whether libsepol 3.4's `policydb_write` leaves this out of a kernel policy of an
    /// older version without failing (at most with a warning), rather than refusing.
    pub(crate) fn libsepol_drops(&self) -> bool {
        use Unsupported::*;
        matches!(
            self,
            PolicyCapabilities(_)
                | PermissiveTypes(_)
                | Bounds(_)
                | AttributeNames(_)
                | FilenameTransitions(_)
                | RoleTransitionClasses(_)
                | RangeTransitionClasses(_)
                | ClassDefaults(_)
                | DefaultType(_)
                | ConstraintTypeNames(_)
                | InfinibandContexts(_)
                | Glblub(_)
        )
    }

    /// The format versions that can express this content.
    pub fn versions(&self) -> std::ops::RangeInclusive<u32> {
        match self {
            Unsupported::UnnamedTypes(_) => MIN_VERSION..=version::BOUNDARY - 1,
            other => other.min_version()..=MAX_VERSION,
        }
    }

    fn min_version(&self) -> u32 {
        use Unsupported::*;
        match self {
            Booleans { .. } => version::BOOL,
            Ipv6NodeContexts(_) => version::IPV6,
            Mls | ValidateTrans(_) | RangeTransitions(_) => version::MLS,
            AttributeRules(_) => version::AVTAB,
            RangeTransitionClasses(_) => version::RANGETRANS,
            PolicyCapabilities(_) => version::POLCAP,
            PermissiveTypes(_) => version::PERMISSIVE,
            Bounds(_) | AttributeNames(_) => version::BOUNDARY,
            FilenameTransitions(_) => version::FILENAME_TRANS,
            RoleTransitionClasses(_) => version::ROLETRANS,
            ClassDefaults(_) => version::NEW_OBJECT_DEFAULTS,
            DefaultType(_) => version::DEFAULT_TYPE,
            ConstraintTypeNames(_) => version::CONSTRAINT_NAMES,
            Xperms(_) => version::XPERMS_IOCTL,
            InfinibandContexts(_) => version::INFINIBAND,
            Glblub(_) => version::GLBLUB,
            FilenameTransitionGrouping(_) => version::COMP_FTRANS,
            ConditionalXperms(_) => version::COND_XPERMS,
            NeverAuditTypes(_) => version::NEVERAUDIT,
            UnnamedTypes(_) => MIN_VERSION,
            DeviceTreeContexts(_) => crate::xen::XEN_DEVICETREE_VERSION,
        }
    }
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Unsupported::*;
        match self {
            Booleans { bools, cond_nodes } => {
                write!(f, "{bools} booleans and {cond_nodes} conditional blocks")
            }
            Ipv6NodeContexts(n) => write!(f, "{n} IPv6 node contexts"),
            Mls => write!(f, "MLS (sensitivities, categories and levels)"),
            ValidateTrans(n) => write!(f, "{n} validatetrans rules"),
            RangeTransitions(n) => write!(f, "{n} range transitions"),
            AttributeRules(n) => write!(
                f,
                "{n} rules or type attribute maps involving attributes (rules must name types)"
            ),
            RangeTransitionClasses(n) => {
                write!(f, "{n} range transitions for classes other than process")
            }
            PolicyCapabilities(n) => write!(f, "{n} policy capabilities"),
            PermissiveTypes(n) => write!(f, "{n} permissive types"),
            Bounds(n) => write!(f, "{n} type, role or user bounds"),
            AttributeNames(n) => write!(f, "the names of {n} attributes"),
            FilenameTransitions(n) => write!(f, "{n} filename transition groups"),
            RoleTransitionClasses(n) => {
                write!(f, "{n} role transitions for classes other than process")
            }
            ClassDefaults(n) => write!(f, "{n} default_user/default_role/default_range rules"),
            DefaultType(n) => write!(f, "{n} default_type rules"),
            ConstraintTypeNames(n) => write!(f, "the type names of {n} constraint terms"),
            Xperms(n) => write!(f, "{n} extended-permission rules"),
            InfinibandContexts(n) => write!(f, "{n} InfiniBand contexts"),
            Glblub(n) => write!(f, "{n} default_range glblub rules"),
            FilenameTransitionGrouping(n) => write!(
                f,
                "the grouping of {n} filename transition groups (not reproducible rule by rule)"
            ),
            ConditionalXperms(n) => {
                write!(f, "{n} extended-permission rules inside conditionals")
            }
            NeverAuditTypes(n) => write!(f, "{n} neveraudit types"),
            UnnamedTypes(n) => write!(f, "{n} unnamed type values"),
            DeviceTreeContexts(n) => write!(f, "{n} Xen device-tree contexts"),
        }
    }
}

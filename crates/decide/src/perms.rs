//! Permission requests by name, resolved once, and the verdict on them.
//!
//! A [`PermSet`] is the kernel's class mapping for one request: the class and permission
//! names a caller uses, resolved against a loaded policy with `handle_unknown` already
//! applied (a name the policy lacks is granted under `allow`, denied under `deny`, and an
//! error under `reject`). It remembers which policy load it was resolved against; used
//! with a server that has since loaded another policy, it is resolved again from its names,
//! so a class whose value changed between policies can never be checked under the old
//! value.
//!
//! A [`Verdict`] is the library's answer to "may this subject do these things to that
//! object?": what was granted and denied, whether the source domain is permissive, and
//! which permissions the kernel would audit. Callers print it; they never combine bits
//! themselves.

use crate::decision::{AccessVector, AvDecision};
use arbiter_policy::ClassId;

/// A class as a caller named it: defined by the policy, or not (then `handle_unknown`
/// decides: everything granted under `allow`, nothing under `deny`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ClassRef {
    /// A class the policy defines.
    Known(ClassId),
    /// A class the policy does not define.
    Unknown,
}

impl From<ClassId> for ClassRef {
    fn from(c: ClassId) -> Self {
        ClassRef::Known(c)
    }
}

impl ClassRef {
    /// The class, if the policy defines it.
    pub fn known(self) -> Option<ClassId> {
        match self {
            ClassRef::Known(c) => Some(c),
            ClassRef::Unknown => None,
        }
    }
}

/// One requested permission: its name and its bit (`None` when the class does not define
/// it, so `handle_unknown` decides).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NamedPerm {
    pub(crate) name: Box<str>,
    pub(crate) bit: Option<u32>,
}

/// A class and permissions, resolved against one loaded policy (see the module docs).
/// Built by [`SecurityServer::perm_set`](crate::SecurityServer::perm_set).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PermSet {
    pub(crate) class_name: Box<str>,
    pub(crate) perms: Box<[NamedPerm]>,
    /// The policy load this resolution belongs to (unique across all servers).
    pub(crate) load: u64,
    /// The sequence number of that load's first state.
    pub(crate) load_seqno: u64,
    pub(crate) class: ClassRef,
    pub(crate) bits: AccessVector,
    /// Whether names the policy lacks are granted (`handle_unknown allow`).
    pub(crate) unknown_allowed: bool,
}

impl PermSet {
    /// The class as resolved.
    pub fn class(&self) -> ClassRef {
        self.class
    }

    /// The class name as the caller gave it.
    pub fn class_name(&self) -> &str {
        &self.class_name
    }

    /// The requested permissions the class defines, as bits.
    pub fn bits(&self) -> AccessVector {
        self.bits
    }

    /// The requested names, in the caller's order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.perms.iter().map(|p| &*p.name)
    }

    /// Requested names the policy does not define (all of them for an unknown class).
    pub fn unknown(&self) -> impl Iterator<Item = &str> {
        self.perms
            .iter()
            .filter(|p| p.bit.is_none())
            .map(|p| &*p.name)
    }

    /// Whether names the policy lacks are granted (`handle_unknown allow`) or denied.
    pub fn unknown_allowed(&self) -> bool {
        self.unknown_allowed
    }

    /// The verdict on this request given a decision for its class.
    pub fn verdict(&self, decision: AvDecision) -> Verdict {
        let granted = self.bits & decision.allowed;
        let denied = self.bits.without(decision.allowed);
        let has_unknown = self.perms.iter().any(|p| p.bit.is_none());
        Verdict {
            requested: self.bits,
            granted,
            denied,
            unknown_denied: has_unknown && !self.unknown_allowed,
            decision,
        }
    }

    /// The requested names whose bit is set in `bits`, plus (when `unknown` is true) the
    /// names the policy lacks; in the caller's order.
    fn names_where(&self, bits: AccessVector, unknown: bool) -> Vec<&str> {
        self.perms
            .iter()
            .filter(|p| match p.bit {
                Some(b) => bits.0 & (1 << b) != 0,
                None => unknown,
            })
            .map(|p| &*p.name)
            .collect()
    }

    /// The names the verdict granted, in the caller's order.
    pub fn granted_names(&self, v: &Verdict) -> Vec<&str> {
        self.names_where(v.granted, !v.unknown_denied)
    }

    /// The names the verdict denied, in the caller's order.
    pub fn denied_names(&self, v: &Verdict) -> Vec<&str> {
        self.names_where(v.denied, v.unknown_denied)
    }
}

/// The answer to a [`PermSet`] check (see the module docs).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The requested permissions the class defines.
    pub requested: AccessVector,
    /// Requested and granted.
    pub granted: AccessVector,
    /// Requested and not granted.
    pub denied: AccessVector,
    /// Some requested names are not defined by the policy, which denies unknown
    /// permissions (`handle_unknown deny`).
    pub unknown_denied: bool,
    /// The decision for the class the verdict was computed from.
    pub decision: AvDecision,
}

impl Verdict {
    /// Whether everything requested is granted by the policy (permissive domains and
    /// permissive mode do not count: see [`Verdict::permissive`]).
    #[inline]
    pub fn allowed(&self) -> bool {
        self.denied.is_empty() && !self.unknown_denied
    }

    /// Whether the source domain is permissive: a denial is audited but not enforced.
    #[inline]
    pub fn permissive(&self) -> bool {
        self.decision.is_permissive()
    }

    /// The permissions the kernel would audit for this check (`avc_audit_required`):
    /// denied ones not silenced by `dontaudit`, or, when nothing is denied, granted ones
    /// named by `auditallow`.
    pub fn audited(&self) -> AccessVector {
        if !self.denied.is_empty() {
            self.denied & self.decision.auditdeny
        } else {
            self.requested & self.decision.auditallow
        }
    }

    /// Whether this check produces an audit record.
    pub fn is_audited(&self) -> bool {
        !self.audited().is_empty() || (self.unknown_denied && !self.decision.auditdeny.is_empty())
    }
}

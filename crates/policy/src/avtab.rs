//! The access vector table: TE rules after attribute handling, one entry per
//! (source, target, class, kind) key, as the compiler wrote them.

use crate::ids::{ClassId, TypeId};

/// The kind of an access vector table entry (the file's `specified` word, one bit).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u16)]
pub enum AvtabKind {
    Allowed = 0x0001,
    AuditAllow = 0x0002,
    /// Stored as the bits to audit on denial: a `dontaudit` rule is the complement.
    AuditDeny = 0x0004,
    Transition = 0x0010,
    Member = 0x0020,
    Change = 0x0040,
    XpermsAllowed = 0x0100,
    XpermsAuditAllow = 0x0200,
    XpermsDontAudit = 0x0400,
}

impl AvtabKind {
    /// From the `specified` word with the enabled flag (0x8000) cleared; `None` unless exactly
    /// one known bit is set.
    pub fn from_bits(bits: u16) -> Option<Self> {
        use AvtabKind::*;
        Some(match bits {
            0x0001 => Allowed,
            0x0002 => AuditAllow,
            0x0004 => AuditDeny,
            0x0010 => Transition,
            0x0020 => Member,
            0x0040 => Change,
            0x0100 => XpermsAllowed,
            0x0200 => XpermsAuditAllow,
            0x0400 => XpermsDontAudit,
            _ => return None,
        })
    }

    pub fn bits(self) -> u16 {
        self as u16
    }

    /// type_transition / type_member / type_change: the datum is a type.
    pub fn is_type_rule(self) -> bool {
        matches!(
            self,
            AvtabKind::Transition | AvtabKind::Member | AvtabKind::Change
        )
    }

    /// The datum is an extended-permission set.
    pub fn is_xperms(self) -> bool {
        matches!(
            self,
            AvtabKind::XpermsAllowed | AvtabKind::XpermsAuditAllow | AvtabKind::XpermsDontAudit
        )
    }
}

/// The key of an entry. Source and target may be types or attributes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AvtabKey {
    pub source: TypeId,
    pub target: TypeId,
    pub class: ClassId,
    pub kind: AvtabKind,
}

/// Which extended permissions an xperms entry carries.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum XpermsKind {
    /// `perms` are the 256 function codes of one ioctl driver (`driver`).
    IoctlFunction = 1,
    /// `perms` are 256 whole ioctl drivers.
    IoctlDriver = 2,
    /// `perms` are netlink message types within the high byte `driver` (format >= 34 era).
    Nlmsg = 3,
}

/// An extended-permission set: 256 bits under one driver byte.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Xperms {
    pub kind: XpermsKind,
    pub driver: u8,
    pub perms: [u32; 8],
}

/// An entry's value: permission bits, a new type, or extended permissions.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum AvtabDatum {
    /// allowed / auditallow: granted bits; auditdeny: bits still audited on denial.
    Perms(u32),
    /// The new type of a type_transition / type_member / type_change rule.
    Type(TypeId),
    /// Index into [`Avtab::xperms`].
    Xperms(u32),
}

/// One entry.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct AvtabEntry {
    pub key: AvtabKey,
    pub datum: AvtabDatum,
}

/// A table of entries in file order, extended permissions stored out of line so that the
/// common entry stays small.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Avtab {
    pub entries: Vec<AvtabEntry>,
    pub xperms: Vec<Xperms>,
}

impl Avtab {
    /// The extended permissions of an entry whose datum is [`AvtabDatum::Xperms`].
    pub fn xperms_of(&self, d: AvtabDatum) -> Option<&Xperms> {
        match d {
            AvtabDatum::Xperms(i) => self.xperms.get(i as usize),
            _ => None,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

use crate::cursor::Cursor;
use crate::error::{PolicyError, Result};
use crate::read::Counts;

/// Reads an access vector table (`conditional`: the rule list of a conditional node, where
/// the kernel's `cond_insertf` rules apply instead of `avtab_insert`'s).
pub(crate) fn read(c: &mut Cursor<'_>, counts: &Counts, conditional: bool) -> Result<Avtab> {
    let _ = (c, counts, conditional);
    Err(PolicyError::Inconsistent {
        what: "avtab".into(),
        detail: "reader not written yet".into(),
    })
}

//! Role transitions, role allow rules, filename type transitions and range transitions.

use crate::ebitmap::Ebitmap;
use crate::ids::{ClassId, RoleId, TypeId};
use crate::mls::MlsRange;

/// `role_transition ROLE TYPE:CLASS NEW_ROLE` (class is `process` before version 26).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RoleTrans {
    pub role: RoleId,
    pub ty: TypeId,
    pub class: ClassId,
    pub new_role: RoleId,
}

/// `allow ROLE NEW_ROLE`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RoleAllow {
    pub role: RoleId,
    pub new_role: RoleId,
}

/// Filename type transitions sharing (target type, class, name): each `(sources, new type)`
/// pair says which source types get which new type. Both the per-rule format (before
/// version 33) and the compact format are read into this shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilenameTrans {
    pub target: TypeId,
    pub class: ClassId,
    pub name: Box<str>,
    /// (source types, bit i = type value i+1; new type)
    pub outcomes: Box<[(Ebitmap, TypeId)]>,
}

/// `range_transition SOURCE TARGET:CLASS RANGE` (class is `process` before version 21).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RangeTrans {
    pub source: TypeId,
    pub target: TypeId,
    pub class: ClassId,
    pub range: MlsRange,
}

use crate::cursor::Cursor;
use crate::error::{PolicyError, Result};
use crate::read::Counts;

fn unwritten<T>(what: &str) -> Result<T> {
    Err(PolicyError::Inconsistent {
        what: what.into(),
        detail: "reader not written yet".into(),
    })
}

pub(crate) fn read_role_trans(
    c: &mut Cursor<'_>,
    counts: &Counts,
    process_class: Option<ClassId>,
) -> Result<Vec<RoleTrans>> {
    let _ = (c, counts, process_class);
    unwritten("role_trans")
}
pub(crate) fn read_role_allow(c: &mut Cursor<'_>, counts: &Counts) -> Result<Vec<RoleAllow>> {
    let _ = (c, counts);
    unwritten("role_allow")
}
pub(crate) fn read_filename_trans(
    c: &mut Cursor<'_>,
    counts: &Counts,
) -> Result<Vec<FilenameTrans>> {
    let _ = (c, counts);
    unwritten("filename_trans")
}
pub(crate) fn read_range_trans(
    c: &mut Cursor<'_>,
    counts: &Counts,
    process_class: Option<ClassId>,
) -> Result<Vec<RangeTrans>> {
    let _ = (c, counts, process_class);
    unwritten("range_trans")
}

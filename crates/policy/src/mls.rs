//! MLS levels and ranges, and the security context as stored in the policy.

use crate::ebitmap::Ebitmap;
use crate::ids::{RoleId, TypeId, UserId};

/// A sensitivity plus a set of categories. `sens` is the sensitivity's value (1-based; 0
/// only in non-MLS policies, where levels are stored but meaningless).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct MlsLevel {
    pub sens: u32,
    /// Category bits (bit i = category value i+1).
    pub cats: Ebitmap,
}

/// A low–high pair of levels.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct MlsRange {
    pub low: MlsLevel,
    pub high: MlsLevel,
}

/// A security context as the policy stores it (initial SIDs, object contexts).
/// `range` is present for format versions >= 19 (in non-MLS policies it is stored but unused).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Context {
    pub user: UserId,
    pub role: RoleId,
    pub ty: TypeId,
    pub range: MlsRange,
}

use crate::cursor::Cursor;
use crate::error::Result;
use crate::read::Counts;

impl MlsLevel {
    /// The kernel's `mls_level_dom`: `self` dominates `other` (sensitivity at least as
    /// high, categories a superset). The one definition every crate uses.
    #[inline]
    pub fn dominates(&self, other: &MlsLevel) -> bool {
        self.sens >= other.sens && self.cats.contains_all(&other.cats)
    }

    /// The kernel's `mls_read_level`: a sensitivity word and a category bitmap.
    pub(crate) fn read(c: &mut Cursor<'_>, what: &'static str) -> Result<Self> {
        let sens = c.u32(what)?;
        let cats = Ebitmap::read(c, what)?;
        Ok(MlsLevel { sens, cats })
    }
}

impl MlsRange {
    /// The kernel's `mls_read_range_helper`: a count of levels (1 or 2), that many
    /// sensitivities, then the category bitmaps; a single level is both low and high.
    pub(crate) fn read(c: &mut Cursor<'_>, what: &'static str) -> Result<Self> {
        let at = c.offset();
        let items = c.u32(what)?;
        if items == 0 || items > 2 {
            return Err(c.invalid_at(
                at,
                what,
                format!("range has {items} levels, expected 1 or 2"),
            ));
        }
        let low_sens = c.u32(what)?;
        let high_sens = if items > 1 { c.u32(what)? } else { low_sens };
        let low_cats = Ebitmap::read(c, what)?;
        let high_cats = if items > 1 {
            Ebitmap::read(c, what)?
        } else {
            low_cats.clone()
        };
        Ok(MlsRange {
            low: MlsLevel {
                sens: low_sens,
                cats: low_cats,
            },
            high: MlsLevel {
                sens: high_sens,
                cats: high_cats,
            },
        })
    }
}

impl Context {
    /// The kernel's `context_read_and_validate` minus the validation (done once the whole
    /// policy is read): user, role, type, and from version 19 an MLS range.
    pub(crate) fn read(c: &mut Cursor<'_>, counts: &Counts, what: &'static str) -> Result<Self> {
        let at = c.offset();
        let [user, role, ty] = c.u32s::<3>(what)?;
        let user = counts.user_id(c, at, user, what)?;
        let role = counts.role_id(c, at + 4, role, what)?;
        let ty = counts.type_id(c, at + 8, ty, what)?;
        let range = if counts.version >= crate::policy::version::MLS {
            MlsRange::read(c, what)?
        } else {
            MlsRange::default()
        };
        Ok(Context {
            user,
            role,
            ty,
            range,
        })
    }
}

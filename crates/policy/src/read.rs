//! The top-level reader: sections in the order the kernel's `policydb_read` reads them.

use crate::cursor::Cursor;
use crate::error::{PolicyError, Result};
use crate::ids::{BoolId, ClassId, RoleId, TypeId, UserId};
use crate::policy::{version, Policy};
use crate::{avtab, cond, header, ocontext, symbols, transitions, validate};

/// Symbol counts (`nprim` of each table), used to check values as they are read so that no
/// out-of-range id ever enters the model.
#[derive(Clone, Debug)]
pub(crate) struct Counts {
    pub version: u32,
    pub types: u32,
    pub classes: u32,
    pub roles: u32,
    pub users: u32,
    pub bools: u32,
    pub sens: u32,
    pub cats: u32,
}

macro_rules! checked_id {
    ($fn:ident, $ty:ty, $field:ident, $label:literal) => {
        /// Checks a raw 1-based value against the table size; the error names the field
        /// and the offset at which the value was read.
        #[inline]
        pub fn $fn(&self, c: &Cursor<'_>, at: usize, raw: u32, what: &'static str) -> Result<$ty> {
            if raw != 0 && raw <= self.$field {
                if let Some(id) = raw.try_into().ok().and_then(<$ty>::new) {
                    return Ok(id);
                }
            }
            Err(self.bad_id(c, at, raw, self.$field, $label, what))
        }
    };
}

impl Counts {
    /// The error for a value that [`checked_id`] refused (kept out of line: the hot path
    /// is the accepted value).
    #[cold]
    #[inline(never)]
    fn bad_id(
        &self,
        c: &Cursor<'_>,
        at: usize,
        raw: u32,
        count: u32,
        label: &str,
        what: &'static str,
    ) -> PolicyError {
        if raw == 0 || raw > count {
            c.invalid_at(
                at,
                what,
                format!("{label} value {raw} out of range 1..={count}"),
            )
        } else {
            c.invalid_at(at, what, format!("{label} value {raw} too large"))
        }
    }

    checked_id!(type_id, TypeId, types, "type");
    checked_id!(class_id, ClassId, classes, "class");
    checked_id!(role_id, RoleId, roles, "role");
    checked_id!(user_id, UserId, users, "user");
    checked_id!(bool_id, BoolId, bools, "boolean");
}

/// Reads and validates a whole policy image.
pub(crate) fn read_policy(bytes: &[u8]) -> Result<crate::ValidPolicy> {
    let mut c = Cursor::new(bytes);
    let hdr = header::read(&mut c)?;
    let syms = symbols::read(&mut c, &hdr)?;
    let counts = syms.counts(hdr.version);
    // libsepol's `process_class`: the class role and range transitions of old versions
    // apply to ("domain" in Xen's policies).
    let process_class = syms.class_by_name(match hdr.platform {
        crate::xen::Platform::Selinux => "process",
        crate::xen::Platform::Xen => "domain",
    });

    let (avtab, avtab_keys) = avtab::read(&mut c, &counts)?;
    let (cond_nodes, cond_avtab) = if hdr.version >= version::BOOL {
        cond::read(&mut c, &counts, (&avtab, &avtab_keys))?
    } else {
        Default::default()
    };
    drop(avtab_keys);
    let role_trans = transitions::read_role_trans(&mut c, &counts, process_class)?;
    let role_allow = transitions::read_role_allow(&mut c, &counts)?;
    let filename_trans = if hdr.version >= version::FILENAME_TRANS {
        transitions::read_filename_trans(&mut c, &counts)?
    } else {
        Vec::new()
    };
    let ocontexts = ocontext::read(&mut c, &counts, hdr.platform, hdr.ocon_num)?;
    let genfs = ocontext::read_genfs(&mut c, &counts)?;
    let range_trans = if hdr.version >= version::MLS {
        transitions::read_range_trans(&mut c, &counts, process_class)?
    } else {
        Vec::new()
    };
    let type_attr_map = read_type_attr_map(&mut c, &counts)?;
    if c.remaining() != 0 {
        return Err(PolicyError::TrailingBytes {
            offset: c.offset(),
            count: c.remaining(),
        });
    }

    let policy = Policy {
        version: hdr.version,
        mls: hdr.mls,
        handle_unknown: hdr.handle_unknown,
        policycaps: hdr.policycaps,
        permissive: hdr.permissive,
        neveraudit: hdr.neveraudit,
        commons: syms.commons,
        classes: syms.classes,
        roles: syms.roles,
        types: syms.types,
        type_aliases: syms.type_aliases,
        users: syms.users,
        bools: syms.bools,
        sensitivities: syms.sensitivities,
        sensitivity_aliases: syms.sensitivity_aliases,
        categories: syms.categories,
        category_aliases: syms.category_aliases,
        avtab,
        cond_nodes,
        cond_avtab,
        role_trans,
        role_allow,
        filename_trans,
        ocontexts,
        genfs,
        range_trans,
        type_attr_map,
    };
    validate::validate(&policy)?;
    Ok(crate::ValidPolicy::validated(policy))
}

/// The type→attribute map: one bitmap per type value from version 20 on; each type also
/// maps to itself (the kernel adds that bit after reading).
fn read_type_attr_map(c: &mut Cursor<'_>, counts: &Counts) -> Result<Vec<crate::Ebitmap>> {
    let n = counts.types as usize;
    if counts.version >= version::AVTAB {
        // Each bitmap is at least 12 bytes: bound the allocation by the input.
        c.check_count(counts.types, 12, "type attribute map")?;
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n as u32 {
        let map = if counts.version >= version::AVTAB {
            crate::Ebitmap::read(c, "type attribute map")?
        } else {
            crate::Ebitmap::default()
        };
        if map.contains(i) {
            out.push(map);
        } else {
            out.push(crate::Ebitmap::from_bits(
                map.iter().chain(std::iter::once(i)),
            ));
        }
    }
    Ok(out)
}

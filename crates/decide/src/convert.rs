//! Carrying SIDs across a policy reload: the kernel's `sidtab_convert` / `convert_context`.
//!
//! Every SID keeps its number and, when the new policy can express it, its context: users,
//! roles, types, sensitivities and categories are mapped by name (an old type's name may
//! be an alias in the new policy; it maps to the alias's type, as the kernel's name lookup
//! does), then the result is validated against the new policy. A context the new policy
//! cannot express or forbids stays attached to its SID as text, and decisions on that SID
//! use the new policy's `unlabeled` initial SID instead (the kernel's `sidtab_search` of an
//! invalid entry); the next reload tries the text again, so a context a later policy defines
//! again becomes valid again under the same SID. Initial SIDs take the new policy's
//! contexts.
//!
//! Name lookups are done once per reload into dense id maps, so converting a context is a
//! few array reads plus the validity check.

use crate::context::parse_context;
use crate::names::Names;
use crate::sidtab::{Sid, SidEntry, SidTable};
use crate::{DecideError, Result};
use arbiter_policy::mls::{Context, MlsLevel, MlsRange};
use arbiter_policy::{CatId, Ebitmap, Policy, RoleId, SensId, TypeId, UserId};

/// Old policy value → new policy value, per symbol kind (`None`: the name is gone).
pub(crate) struct IdMaps {
    users: Vec<Option<UserId>>,
    roles: Vec<Option<RoleId>>,
    types: Vec<Option<TypeId>>,
    sens: Vec<Option<SensId>>,
    /// Indexed by old category bit (value - 1): new bit.
    cats: Vec<Option<u32>>,
    /// Every old category keeps its bit: bitmaps are cloned, not rebuilt.
    cats_identity: bool,
    /// Both policies are MLS: ranges are converted; otherwise they are kept as they are
    /// (unused by a non-MLS policy; see [`IdMaps::convert`] for MLS gained).
    mls: bool,
    mls_gained: bool,
}

fn map_ids<'a, Old, New>(
    count: usize,
    old_name: impl Fn(Old) -> Option<&'a str>,
    old_id: impl Fn(usize) -> Option<Old>,
    new_id: impl Fn(&str) -> Option<New>,
) -> Vec<Option<New>> {
    (0..count).map(|i| new_id(old_name(old_id(i)?)?)).collect()
}

impl IdMaps {
    pub(crate) fn new(
        old: &Names,
        old_policy: &Policy,
        new: &Names,
        new_policy: &Policy,
    ) -> IdMaps {
        let users = map_ids(
            old_policy.users.len(),
            |id| old.user_name(id),
            UserId::from_index,
            |n| new.user(n),
        );
        let roles = map_ids(
            old_policy.roles.len(),
            |id| old.role_name(id),
            RoleId::from_index,
            |n| new.role(n),
        );
        let types = map_ids(
            old_policy.types.len(),
            |id| old.type_name(id),
            TypeId::from_index,
            |n| new.ty(n),
        );
        let sens = map_ids(
            old.sensitivity_count(),
            |id| old.sensitivity_name(id),
            SensId::from_index,
            |n| new.sensitivity(n),
        );
        let cats: Vec<Option<u32>> = map_ids(
            old.category_count(),
            |id| old.category_name(id),
            CatId::from_index,
            |n| new.category(n).map(|c| c.value() - 1),
        );
        let cats_identity = cats.iter().enumerate().all(|(i, c)| *c == Some(i as u32));
        IdMaps {
            users,
            roles,
            types,
            sens,
            cats,
            cats_identity,
            mls: old_policy.mls && new_policy.mls,
            mls_gained: !old_policy.mls && new_policy.mls,
        }
    }

    fn level(&self, l: &MlsLevel) -> Option<MlsLevel> {
        let sens = SensId::new(l.sens)?;
        let sens = (*self.sens.get(sens.index())?)?.value();
        let cats = if self.cats_identity {
            l.cats.clone()
        } else {
            let mut bits = Vec::with_capacity(l.cats.len());
            for b in l.cats.iter() {
                bits.push((*self.cats.get(b as usize)?)?);
            }
            Ebitmap::from_bits(bits)
        };
        Some(MlsLevel { sens, cats })
    }

    /// The context in the new policy's values, or `None` when a name is gone. A context
    /// from a non-MLS policy has no range to carry into an MLS one: it is not converted
    /// (the SID then answers as `unlabeled` until a policy without MLS is loaded again).
    pub(crate) fn convert(&self, c: &Context) -> Option<Context> {
        if self.mls_gained {
            return None;
        }
        let user = (*self.users.get(c.user.index())?)?;
        let role = (*self.roles.get(c.role.index())?)?;
        let ty = (*self.types.get(c.ty.index())?)?;
        let range = if self.mls {
            MlsRange {
                low: self.level(&c.range.low)?,
                high: self.level(&c.range.high)?,
            }
        } else {
            c.range.clone()
        };
        Some(Context {
            user,
            role,
            ty,
            range,
        })
    }
}

/// The policy a table's contexts are expressed in, with its names.
pub(crate) struct Side<'a> {
    pub(crate) names: &'a Names,
    pub(crate) sids: &'a SidTable,
}

/// Builds the SID table of `new` from `old`'s: initial SIDs from the new policy, every
/// dynamic SID under its old number (see the module documentation). Returns the table and
/// how many SIDs were converted (valid under the new policy) and invalidated.
///
/// Fails when the new policy numbers an initial SID at or above the first dynamic SID the
/// old table issued: SID numbers cannot move, so such a policy cannot be loaded over it.
pub(crate) fn convert_sids(
    old: &Side<'_>,
    new_policy: &Policy,
    new_names: &Names,
    maps: &IdMaps,
) -> Result<(SidTable, ConvertStats)> {
    let initial: Vec<(Sid, Context)> = new_policy
        .ocontexts
        .initial_sids
        .iter()
        .filter_map(|i| Some((Sid::new(i.sid)?, i.context.clone())))
        .collect();
    let first_dynamic = old.sids.first_dynamic();
    if old.sids.dynamic_len() > 0 {
        if let Some((sid, _)) = initial
            .iter()
            .find(|(sid, _)| u64::from(sid.get()) >= first_dynamic)
        {
            return Err(DecideError::InitialSidCollision(sid.get()));
        }
    }
    let table = SidTable::with_initial_from(initial, first_dynamic);
    let unlabeled = unlabeled_context(new_policy);
    let mut stats = ConvertStats::default();
    append_converted(
        old,
        0,
        &table,
        new_policy,
        new_names,
        maps,
        unlabeled.as_ref(),
        &mut stats,
    )?;
    Ok((table, stats))
}

/// Converts the old table's dynamic entries from the `skip`-th on into `table` (the
/// reload's second pass picks up SIDs issued while the first pass ran).
#[allow(clippy::too_many_arguments)]
pub(crate) fn append_converted(
    old: &Side<'_>,
    skip: usize,
    table: &SidTable,
    new_policy: &Policy,
    new_names: &Names,
    maps: &IdMaps,
    unlabeled: Option<&Context>,
    stats: &mut ConvertStats,
) -> Result<()> {
    for (sid, entry) in old.sids.dynamic_entries(skip) {
        let converted = match entry {
            SidEntry::Valid(c) => match maps.convert(c) {
                Some(n) if new_policy.context_is_valid(&n).is_ok() => Ok(n),
                _ => Err(crate::context::format_context(old.names, c).into_boxed_str()),
            },
            // Text kept from an earlier policy: parse it under the new one.
            SidEntry::Invalid { text, .. } => match parse_context(new_policy, new_names, text) {
                Ok(n) => Ok(n),
                Err(_) => Err(Box::from(text)),
            },
        };
        match &converted {
            Ok(_) => stats.converted += 1,
            Err(_) => stats.invalidated += 1,
        }
        table.push_converted(sid, converted, unlabeled)?;
    }
    Ok(())
}

/// The context of the policy's `unlabeled` initial SID (SID 3 in every SELinux policy;
/// found by number, as the kernel's `SECINITSID_UNLABELED`).
pub(crate) fn unlabeled_context(policy: &Policy) -> Option<Context> {
    policy
        .ocontexts
        .initial_sids
        .iter()
        .find(|i| i.sid == SECINITSID_UNLABELED)
        .map(|i| i.context.clone())
}

/// The kernel's `SECINITSID_UNLABELED`.
pub(crate) const SECINITSID_UNLABELED: u32 = 3;

/// What a reload did to the SIDs.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ConvertStats {
    /// SIDs whose context is valid under the new policy.
    pub converted: usize,
    /// SIDs whose context the new policy does not define (they answer as `unlabeled`).
    pub invalidated: usize,
}

//! setools' `SELinuxPolicy.terules()` order: the unconditional table in libsepol's bucket
//! order, then the filename transitions, then each conditional's true and false lists.
//!
//! The analyses (sedta, seinfoflow) build their graphs in this order, so their node and
//! edge insertion orders, and through them every path order they print, follow from it.

use arbiter_policy::avtab::{AvtabEntry, AvtabKey, AvtabKind};
use arbiter_policy::{Policy, TypeId};

/// Where one TE rule setools yields is stored.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TeRuleRef {
    /// Entry `i` of the unconditional table.
    Avtab(u32),
    /// Entry `entry` of the conditional table, listed in `branch` of conditional `node`.
    Cond {
        /// Index into `Policy::cond_avtab.entries`.
        entry: u32,
        /// Index into `Policy::cond_nodes`.
        node: u32,
        /// True for the node's true list.
        branch: bool,
    },
    /// Outcome `outcome` of `Policy::filename_trans[trans]`, for source type `source`.
    Filename {
        /// Index into `Policy::filename_trans`.
        trans: u32,
        /// Index into the transition's outcomes.
        outcome: u32,
        /// The source type (setools yields one rule per source).
        source: TypeId,
    },
}

/// Every TE rule of the kinds in `kinds` (a mask of [`AvtabKind::bits`]) in setools' raw
/// `terules()` order. Filename transitions are included when `kinds` holds type_transition.
pub fn raw_order(policy: &Policy, kinds: u16) -> Vec<TeRuleRef> {
    let mask = avtab_mask(policy.avtab.entries.len());
    let mut uncond: Vec<(u128, u32)> = policy
        .avtab
        .entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.key.kind.bits() & kinds != 0)
        .map(|(i, e)| (avtab_rank(e, i, mask), i as u32))
        .collect();
    uncond.sort_unstable_by_key(|&(rank, _)| rank);
    let mut out: Vec<TeRuleRef> = uncond
        .into_iter()
        .map(|(_, i)| TeRuleRef::Avtab(i))
        .collect();
    if kinds & AvtabKind::Transition.bits() != 0 {
        for (t, ft) in policy.filename_trans.iter().enumerate() {
            for (o, (sources, _)) in ft.outcomes.iter().enumerate() {
                for bit in sources.iter() {
                    if let Some(source) = TypeId::from_index(bit as usize) {
                        out.push(TeRuleRef::Filename {
                            trans: t as u32,
                            outcome: o as u32,
                            source,
                        });
                    }
                }
            }
        }
    }
    for (n, node) in policy.cond_nodes.iter().enumerate() {
        for (list, branch) in [(&node.true_list, true), (&node.false_list, false)] {
            for i in list.clone() {
                let Some(e) = policy.cond_avtab.entries.get(i as usize) else {
                    continue;
                };
                if e.key.kind.bits() & kinds != 0 {
                    out.push(TeRuleRef::Cond {
                        entry: i,
                        node: n as u32,
                        branch,
                    });
                }
            }
        }
    }
    out
}

/// The stored entry of an avtab or conditional rule (`None` for a filename transition).
pub fn entry(policy: &Policy, r: TeRuleRef) -> Option<&AvtabEntry> {
    match r {
        TeRuleRef::Avtab(i) => policy.avtab.entries.get(i as usize),
        TeRuleRef::Cond { entry, .. } => policy.cond_avtab.entries.get(entry as usize),
        TeRuleRef::Filename { .. } => None,
    }
}

/// The number of buckets minus one of the table libsepol 3.4 reads `nel` entries into
/// (`avtab_alloc`): a power of two near a quarter of the entries, at most 2^20.
pub(crate) fn avtab_mask(nel: usize) -> u32 {
    if nel == 0 {
        return 0;
    }
    let bits = usize::BITS - nel.leading_zeros();
    let shift = if bits > 2 { bits - 2 } else { bits };
    (1u32 << shift.min(20)) - 1
}

/// The bucket of `key` in a libsepol avtab of `mask + 1` buckets.
pub(crate) fn avtab_bucket(key: &AvtabKey, mask: u32) -> u32 {
    key.libsepol_hash() & mask
}

/// The rank of unconditional entry `i`: libsepol chains each bucket sorted by (source,
/// target, class), and puts an extended-permission entry before the earlier entries of
/// its key and kind, so those come in reverse file order.
pub(crate) fn avtab_rank(e: &AvtabEntry, i: usize, mask: u32) -> u128 {
    let k = &e.key;
    (u128::from(avtab_bucket(k, mask)) << 96)
        | (u128::from(k.source.value()) << 80)
        | (u128::from(k.target.value()) << 64)
        | (u128::from(k.class.value()) << 48)
        | u128::from(u32::MAX - i as u32)
}

/// Filename transitions come after the unconditional table, conditional rules last.
pub(crate) const FILENAME_GROUP: u128 = 1 << 124;
pub(crate) const COND_GROUP: u128 = 2 << 124;

/// The statement setools prints for a rule (`str(rule)`), conditional suffix included.
pub fn statement(index: &crate::Index<'_>, r: TeRuleRef) -> String {
    match hit(index, r) {
        Some(h) => crate::search::te_statement(index, &h).unwrap_or_default(),
        None => String::new(),
    }
}

/// The rule as a search hit (what `TERuleQuery` yields for it), so callers holding a rule
/// reference (the analyses' step rules) can hand out the same rule objects a query does.
/// `None` for a reference outside the policy.
pub fn hit<'a>(index: &'a crate::Index<'_>, r: TeRuleRef) -> Option<crate::search::TeHit<'a>> {
    use crate::search::{TeBody, TeHit};
    use arbiter_policy::avtab::AvtabDatum;
    let policy = index.policy();
    let hit = match r {
        TeRuleRef::Filename {
            trans,
            outcome,
            source,
        } => {
            let ft = policy.filename_trans.get(trans as usize)?;
            let &(_, new) = ft.outcomes.get(outcome as usize)?;
            TeHit {
                kind: AvtabKind::Transition,
                source,
                target: ft.target,
                class: ft.class,
                body: TeBody::Filename(new, &ft.name),
                cond: None,
            }
        }
        _ => {
            let e = entry(policy, r)?;
            let body = match e.datum() {
                AvtabDatum::Perms(bits) => {
                    // setools shows a dontaudit rule's dontaudited (cleared) bits.
                    let bits = if e.key.kind == AvtabKind::AuditDeny {
                        !bits
                    } else {
                        bits
                    };
                    TeBody::Perms(
                        index
                            .sorted_class_perms(e.key.class)
                            .iter()
                            .filter(|&&(_, bit)| bits & (1 << bit) != 0)
                            .map(|&(n, _)| n)
                            .collect(),
                    )
                }
                AvtabDatum::Type(t) => TeBody::Default(t),
                AvtabDatum::Xperms(_) => {
                    let table = match r {
                        TeRuleRef::Cond { .. } => &policy.cond_avtab,
                        _ => &policy.avtab,
                    };
                    let values = table
                        .xperms_of(e.datum())
                        .and_then(|x| crate::search::xperm_values(x.kind, x.driver, &x.perms));
                    TeBody::Xperms("ioctl", values.unwrap_or_default())
                }
            };
            let cond = match r {
                TeRuleRef::Cond { node, branch, .. } => Some((node as usize, branch)),
                _ => None,
            };
            TeHit {
                kind: e.key.kind,
                source: e.key.source,
                target: e.key.target,
                class: e.key.class,
                body,
                cond,
            }
        }
    };
    Some(hit)
}

//! libsepol 3.4's policy optimiser (`policydb_optimize`, what `secilc -O` and semanage's
//! `optimize-policy` run): removes access rules that a rule on covering attributes
//! already grants, so that the result decides exactly as before and is smaller.
//!
//! The result is meant to be the same policy libsepol makes, byte for byte once written in
//! [`Layout::Libsepol34`](crate::write::Layout) with the same avtab size, so this follows
//! libsepol's procedure rather than computing a minimal policy:
//!
//! * Each type value gets its "covering" list: for a type, the attributes it has and
//!   itself (its `type_attr_map`); for an attribute, every attribute whose types include
//!   all of its own (itself included).
//! * The unconditional rules are visited in libsepol's table order (slot, then chain). An
//!   access or extended-permission rule is checked against the rule of the same class and
//!   kind on each covering (source, target) pair but its own, in covering-list order;
//!   checking *removes* the covered permissions from it as it goes (allow and auditallow
//!   lose the bits granted; dontaudit's audit-on-denial mask gains them), and the rule is
//!   dropped once nothing is left. So a surviving rule may have fewer permissions than
//!   before, and a dropped rule no longer covers the rules visited after it. Of several
//!   extended-permission rules of one key, only the first in table order is compared
//!   (`avtab_search`). Type rules are never touched.
//! * Each conditional list is first reordered, rules naming an attribute moved to the end
//!   in reverse order; then each rule is checked against the unconditional rules (its own
//!   pair included) and against the remaining attribute rules of its list. Dropped rules
//!   leave the list; a conditional left with two empty lists is removed.

use crate::avtab::{Avtab, AvtabDatum, AvtabKey, AvtabKind, Xperms, XpermsKind};
use crate::cond::CondNode;
use crate::ebitmap::Ebitmap;
use crate::keytab::KeyMap;
use crate::policy::{version, Policy};
use crate::symbols::TypeFlavor;
use crate::write::layout::avtab_order;

/// Why a policy could not be optimised.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OptimizeError {
    /// libsepol refuses versions 20 to 23: attributes exist in their rules but have no
    /// symbols, so its type tables have gaps.
    #[error("optimizing policy versions between 20 and 23 is not supported (version {0})")]
    UnsupportedVersion(u32),
    /// The avtab size must be a power of two, as libsepol's are.
    #[error("{0} avtab slots: libsepol's tables have a power of two")]
    AvtabSlots(u32),
}

/// What [`optimize`] removed.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Optimized {
    /// Unconditional rules removed.
    pub rules: usize,
    /// Conditional rules removed.
    pub cond_rules: usize,
    /// Conditionals removed (both lists left empty).
    pub cond_nodes: usize,
}

/// Optimises `p` in place as libsepol 3.4's `policydb_optimize` does, walking the
/// unconditional rules in the order of a libsepol table of `avtab_slots` slots (secilc's
/// is `1 << 20`; see the [module documentation](self)).
pub fn optimize(p: &mut Policy, avtab_slots: u32) -> Result<Optimized, OptimizeError> {
    if (version::AVTAB..=version::PERMISSIVE).contains(&p.version) {
        return Err(OptimizeError::UnsupportedVersion(p.version));
    }
    if !avtab_slots.is_power_of_two() {
        return Err(OptimizeError::AvtabSlots(avtab_slots));
    }
    let covering = covering_lists(p);
    let is_attr: Vec<bool> = p
        .types
        .iter()
        .map(|t| t.flavor == TypeFlavor::Attribute)
        .collect();
    let mut stats = Optimized::default();

    // The unconditional rules, in table order.
    own_xperms(&mut p.avtab);
    let keys: Vec<AvtabKey> = p.avtab.entries.iter().map(|e| e.key).collect();
    let order = avtab_order(avtab_slots, &keys);
    let mut table = Table::new(&p.avtab, &order);
    for &i in &order {
        if unconditional_is_redundant(&mut p.avtab, i, &table, &covering) {
            table.alive[i] = false;
            stats.rules += 1;
        }
    }
    let alive = table.alive;
    let te = std::mem::take(&mut p.avtab);
    p.avtab = retain(te, |i| alive[i]);
    let mut table = Table::new(&p.avtab, &(0..p.avtab.entries.len()).collect::<Vec<_>>());
    // Nothing is removed from the unconditional rules from here on.
    table.alive.fill(true);

    // The conditional lists.
    own_xperms(&mut p.cond_avtab);
    let mut cond = std::mem::take(&mut p.cond_avtab);
    let mut new_cond = Avtab::default();
    let mut nodes = Vec::with_capacity(p.cond_nodes.len());
    for node in std::mem::take(&mut p.cond_nodes) {
        let mut lists = [Vec::new(), Vec::new()];
        for (list, range) in lists.iter_mut().zip([&node.true_list, &node.false_list]) {
            let entries: Vec<usize> = (range.start as usize..range.end as usize)
                .filter(|&i| i < cond.entries.len())
                .collect();
            let before = entries.len();
            *list = optimize_list(&mut cond, entries, &p.avtab, &table, &covering, &is_attr);
            stats.cond_rules += before - list.len();
        }
        if lists.iter().all(|l| l.is_empty()) {
            stats.cond_nodes += 1;
            continue;
        }
        let mut ranges = [0..0, 0..0];
        for (list, range) in lists.iter().zip(ranges.iter_mut()) {
            let start = new_cond.entries.len() as u32;
            for &i in list {
                push(&mut new_cond, &cond, i);
            }
            *range = start..new_cond.entries.len() as u32;
        }
        let [true_list, false_list] = ranges;
        nodes.push(CondNode {
            true_list,
            false_list,
            ..node
        });
    }
    p.cond_avtab = new_cond;
    p.cond_nodes = nodes;
    Ok(stats)
}

/// For each type value (by index), the covering values (indices, ascending) as libsepol's
/// `build_type_map` makes them.
fn covering_lists(p: &Policy) -> Vec<Vec<u32>> {
    // The types of each attribute (libsepol's `attr_type_map`).
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); p.types.len()];
    for (t, map) in p.type_attr_map.iter().enumerate() {
        if p.types.get(t).map(|d| d.flavor) != Some(TypeFlavor::Type) {
            continue;
        }
        for a in map.iter() {
            if let Some(m) = members.get_mut(a as usize) {
                m.push(t as u32);
            }
        }
    }
    let members: Vec<Ebitmap> = members.into_iter().map(Ebitmap::from_bits).collect();
    let attrs: Vec<usize> = (0..p.types.len())
        .filter(|&i| p.types[i].flavor == TypeFlavor::Attribute)
        .collect();
    p.types
        .iter()
        .enumerate()
        .map(|(i, t)| match t.flavor {
            TypeFlavor::Type => p
                .type_attr_map
                .get(i)
                .map(|m| m.iter().collect())
                .unwrap_or_default(),
            TypeFlavor::Attribute => attrs
                .iter()
                .filter(|&&k| members[k].contains_all(&members[i]))
                .map(|&k| k as u32)
                .collect(),
            TypeFlavor::Unnamed => Vec::new(),
        })
        .collect()
}

/// Gives every extended-permission entry its own set, so that stripping bits from one
/// never changes another that happened to share it.
fn own_xperms(t: &mut Avtab) {
    let mut used = vec![false; t.xperms.len()];
    for e in t.entries.iter_mut() {
        if let Some(mut x) = e.xperms_index_mut() {
            let Some(seen) = used.get_mut(*x as usize) else {
                continue;
            };
            if *seen {
                let copy = t.xperms[*x as usize];
                t.xperms.push(copy);
                *x = t.xperms.len() as u32 - 1;
            } else {
                *seen = true;
            }
        }
    }
}

/// The table's entries whose index `keep` accepts, in their order, their extended
/// permissions compacted.
fn retain(t: Avtab, keep: impl Fn(usize) -> bool) -> Avtab {
    let mut out = Avtab::default();
    for i in (0..t.entries.len()).filter(|&i| keep(i)) {
        push(&mut out, &t, i);
    }
    out
}

/// Appends entry `i` of `from` to `to`.
fn push(to: &mut Avtab, from: &Avtab, i: usize) {
    let mut e = from.entries[i];
    if let Some(mut x) = e.xperms_index_mut() {
        if let Some(xp) = from.xperms.get(*x as usize) {
            to.xperms.push(*xp);
            *x = to.xperms.len() as u32 - 1;
        }
    }
    to.entries.push(e);
}

/// A full key (source, target, class, kind) packed, never 0 (the kind is not).
fn packed(source: u32, target: u32, class: u16, kind: AvtabKind) -> u64 {
    (u64::from(source) << 48)
        | (u64::from(target) << 32)
        | (u64::from(class) << 16)
        | u64::from(kind.bits())
}

/// The unconditional table as libsepol searches it: for each full key its entries in
/// chain order, and which are still there.
struct Table {
    /// Key → 1 + the first entry of the key in chain order.
    head: KeyMap<u32>,
    /// For each source type index, the target indices of its entries (ascending, each
    /// once): most covering pairs have no rule, and are skipped without a lookup.
    targets_of: Vec<Vec<u32>>,
    /// Entry → 1 + the next entry of its key in chain order (0: none).
    next: Vec<u32>,
    alive: Vec<bool>,
}

impl Table {
    /// `order`: the entries of `t` in chain order.
    fn new(t: &Avtab, order: &[usize]) -> Table {
        let mut head = KeyMap::with_capacity(order.len());
        let mut next = vec![0u32; t.entries.len()];
        let mut last: KeyMap<u32> = KeyMap::with_capacity(order.len());
        let mut targets_of: Vec<Vec<u32>> = Vec::new();
        for &i in order {
            let k = t.entries[i].key;
            if targets_of.len() <= k.source.index() {
                targets_of.resize(k.source.index() + 1, Vec::new());
            }
            targets_of[k.source.index()].push(k.target.index() as u32);
            let key = packed(
                u32::from(k.source.value()),
                u32::from(k.target.value()),
                k.class.value(),
                k.kind,
            );
            let tail = last.entry(key);
            if *tail == 0 {
                *head.entry(key) = i as u32 + 1;
            } else {
                next[*tail as usize - 1] = i as u32 + 1;
            }
            *tail = i as u32 + 1;
        }
        for targets in &mut targets_of {
            targets.sort_unstable();
            targets.dedup();
        }
        Table {
            head,
            targets_of,
            next,
            alive: vec![true; t.entries.len()],
        }
    }

    /// The (source, target) pairs of `sources` × `targets` (ascending lists) that some
    /// entry has, in libsepol's loop order: source by source, targets ascending.
    fn pairs<'s>(
        &'s self,
        sources: &'s [u32],
        targets: &'s [u32],
    ) -> impl Iterator<Item = (u32, u32)> + 's {
        sources.iter().flat_map(move |&st| {
            let have: &[u32] = self.targets_of.get(st as usize).map_or(&[], |v| v);
            // Walk the shorter list, look up in the longer; both ways stay ascending.
            let (walk, probe) = if targets.len() <= have.len() {
                (targets, have)
            } else {
                (have, targets)
            };
            walk.iter()
                .filter(move |t| probe.binary_search(t).is_ok())
                .map(move |&tt| (st, tt))
        })
    }

    /// `avtab_search` of (source index, target index, class, kind): the first entry of
    /// the key still in the table.
    fn search(&self, source: u32, target: u32, class: u16, kind: AvtabKind) -> Option<usize> {
        let mut at = self.head.get(packed(source + 1, target + 1, class, kind))?;
        while at != 0 {
            let i = at as usize - 1;
            if self.alive[i] {
                return Some(i);
            }
            at = self.next[i];
        }
        None
    }
}

/// The datum a check compares: permission bits or an extended-permission set.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Perms {
    Word(u32),
    X(Xperms),
}

fn perms_of(t: &Avtab, i: usize) -> Option<Perms> {
    match t.entries[i].datum() {
        AvtabDatum::Perms(w) => Some(Perms::Word(w)),
        AvtabDatum::Xperms(x) => t.xperms.get(x as usize).map(|x| Perms::X(*x)),
        AvtabDatum::Type(_) => None,
    }
}

/// Stores a datum taken out by [`perms_of`] back into entry `i`.
fn set_perms(t: &mut Avtab, i: usize, d: Perms) {
    let e = &mut t.entries[i];
    match (e.datum(), d) {
        (AvtabDatum::Perms(_), Perms::Word(new)) => {
            if let Some(mut w) = e.perms_mut() {
                *w = new;
            }
        }
        (AvtabDatum::Xperms(x), Perms::X(new)) => {
            if let Some(x) = t.xperms.get_mut(x as usize) {
                *x = new;
            }
        }
        _ => {}
    }
}

/// libsepol's `process_avtab_datum`: removes from `d1` (of a rule of `kind`) what `d2`
/// covers; whether nothing is left.
fn strip(kind: AvtabKind, d1: &mut Perms, d2: Perms) -> bool {
    match (d1, d2) {
        (Perms::Word(d1), Perms::Word(d2)) => match kind {
            // Audit-on-denial bits are the complement of dontaudit's permissions.
            AvtabKind::AuditDeny => {
                *d1 |= !d2;
                *d1 == u32::MAX
            }
            AvtabKind::Allowed | AvtabKind::AuditAllow => {
                *d1 &= !d2;
                *d1 == 0
            }
            _ => false,
        },
        (Perms::X(x1), Perms::X(x2)) => match (x1.kind, x2.kind) {
            (XpermsKind::IoctlFunction, XpermsKind::IoctlFunction) => {
                x1.driver == x2.driver && clear(&mut x1.perms, &x2.perms)
            }
            (XpermsKind::IoctlFunction, XpermsKind::IoctlDriver) => {
                x2.perms[usize::from(x1.driver >> 5)] & (1 << (x1.driver & 31)) != 0
            }
            (XpermsKind::IoctlDriver, XpermsKind::IoctlDriver) => clear(&mut x1.perms, &x2.perms),
            _ => false,
        },
        _ => false,
    }
}

/// `process_xperms`: clears `p2`'s bits from `p1`; whether `p1` is left empty.
fn clear(p1: &mut [u32; 8], p2: &[u32; 8]) -> bool {
    for (a, b) in p1.iter_mut().zip(p2) {
        *a &= !b;
    }
    p1.iter().all(|&w| w == 0)
}

/// libsepol's `is_avrule_redundant`: whether a rule of `key` with datum `d1` is covered by
/// the unconditional rules (`te`, searched through `table`) on its covering pairs, its own
/// pair skipped when `skip_own` (the unconditional pass). `d1` loses what is covered on
/// the way. Type rules are never covered.
fn covered_by_table(
    key: AvtabKey,
    d1: &mut Perms,
    te: &Avtab,
    table: &Table,
    covering: &[Vec<u32>],
    skip_own: bool,
) -> bool {
    if key.kind.is_type_rule() {
        return false;
    }
    let (s, t) = (key.source.index() as u32, key.target.index() as u32);
    let (Some(ss), Some(ts)) = (covering.get(s as usize), covering.get(t as usize)) else {
        return false;
    };
    for (st, tt) in table.pairs(ss, ts) {
        if skip_own && st == s && tt == t {
            continue;
        }
        let Some(d2) = table
            .search(st, tt, key.class.value(), key.kind)
            .and_then(|j| perms_of(te, j))
        else {
            continue;
        };
        if strip(key.kind, d1, d2) {
            return true;
        }
    }
    false
}

/// The unconditional pass over entry `i` of `te`: whether it goes (its datum stripped of
/// what is covered either way).
fn unconditional_is_redundant(
    te: &mut Avtab,
    i: usize,
    table: &Table,
    covering: &[Vec<u32>],
) -> bool {
    let Some(mut d1) = perms_of(te, i) else {
        return false;
    };
    // The entry's own pair is skipped, so no covering rule is the entry itself.
    let gone = covered_by_table(te.entries[i].key, &mut d1, te, table, covering, true);
    set_perms(te, i, d1);
    gone
}

/// libsepol's `optimize_cond_av_list` over one list (entry indices of `c` in list order):
/// the surviving entries in their new order.
fn optimize_list(
    c: &mut Avtab,
    list: Vec<usize>,
    te: &Avtab,
    table: &Table,
    covering: &[Vec<u32>],
    is_attr: &[bool],
) -> Vec<usize> {
    let attr = |c: &Avtab, i: usize| {
        let k = c.entries[i].key;
        is_attr.get(k.source.index()).copied().unwrap_or(false)
            || is_attr.get(k.target.index()).copied().unwrap_or(false)
    };
    let (mut order, mut with_attr): (Vec<usize>, Vec<usize>) =
        list.into_iter().partition(|&i| !attr(c, i));
    with_attr.reverse();
    let first_attr = order.len();
    order.extend(with_attr);
    let mut alive = vec![true; order.len()];
    for pos in 0..order.len() {
        let i = order[pos];
        let Some(mut d1) = perms_of(c, i) else {
            continue;
        };
        let key = c.entries[i].key;
        let gone = covered_by_table(key, &mut d1, te, table, covering, false)
            || covered_in_list(
                key,
                &mut d1,
                c,
                &order[first_attr..],
                &alive[first_attr..],
                covering,
            );
        set_perms(c, i, d1);
        alive[pos] = !gone;
    }
    order
        .into_iter()
        .zip(alive)
        .filter_map(|(i, a)| a.then_some(i))
        .collect()
}

/// libsepol's `is_cond_rule_redundant`: a rule of `k1` with datum `d1` against the list's
/// remaining attribute rules (`attrs` of `c`, those `alive`) of the same kind and class
/// on other, covering pairs.
fn covered_in_list(
    k1: AvtabKey,
    d1: &mut Perms,
    c: &Avtab,
    attrs: &[usize],
    alive: &[bool],
    covering: &[Vec<u32>],
) -> bool {
    if k1.kind.is_type_rule() {
        return false;
    }
    let (Some(ss), Some(ts)) = (
        covering.get(k1.source.index()),
        covering.get(k1.target.index()),
    ) else {
        return false;
    };
    for (&j, _) in attrs.iter().zip(alive).filter(|(_, &a)| a) {
        let k2 = c.entries[j].key;
        if k1.kind != k2.kind || k1.class != k2.class {
            continue;
        }
        // The rule itself, or another on its own pair.
        if k1.source == k2.source && k1.target == k2.target {
            continue;
        }
        let (s2, t2) = (k2.source.index() as u32, k2.target.index() as u32);
        if ss.binary_search(&s2).is_err() || ts.binary_search(&t2).is_err() {
            continue;
        }
        let Some(d2) = perms_of(c, j) else {
            continue;
        };
        if strip(k1.kind, d1, d2) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_loses_the_covered_bits_even_when_it_survives() {
        let mut d = Perms::Word(0b111);
        assert!(!strip(AvtabKind::Allowed, &mut d, Perms::Word(0b011)));
        assert_eq!(d, Perms::Word(0b100));
        assert!(strip(AvtabKind::Allowed, &mut d, Perms::Word(0b100)));
    }

    #[test]
    fn dontaudit_gains_the_covering_rules_unaudited_bits() {
        // Audit-on-denial masks: dontaudit of bit 0 is !1, of bits 0 and 1 is !3.
        let mut d = Perms::Word(!0b1);
        assert!(!strip(AvtabKind::AuditDeny, &mut d, Perms::Word(!0b10)));
        assert_eq!(d, Perms::Word(!0b1 | 0b10));
        assert!(strip(AvtabKind::AuditDeny, &mut d, Perms::Word(!0b1)));
    }

    #[test]
    fn ioctl_functions_are_covered_by_their_whole_driver_only() {
        let x = |kind, driver, perms| {
            Perms::X(Xperms {
                kind,
                driver,
                perms,
            })
        };
        let kind = AvtabKind::XpermsAllowed;
        let mut d = x(XpermsKind::IoctlFunction, 0x54, [1, 0, 0, 0, 0, 0, 0, 0]);
        let mut drivers = [0u32; 8];
        drivers[0x55 >> 5] |= 1 << (0x55 & 31);
        assert!(!strip(kind, &mut d, x(XpermsKind::IoctlDriver, 0, drivers)));
        // Functions of another driver never cover.
        let other = x(XpermsKind::IoctlFunction, 0x55, [1, 0, 0, 0, 0, 0, 0, 0]);
        assert!(!strip(kind, &mut d, other));
        drivers[0x54 >> 5] |= 1 << (0x54 & 31);
        assert!(strip(kind, &mut d, x(XpermsKind::IoctlDriver, 0, drivers)));
        // A driver rule is never covered by function rules.
        let mut whole = x(XpermsKind::IoctlDriver, 0, drivers);
        let all = x(XpermsKind::IoctlFunction, 0x54, [u32::MAX; 8]);
        assert!(!strip(kind, &mut whole, all));
    }

    #[test]
    fn versions_20_to_23_are_refused_as_libsepol_does() {
        let mut p = Policy::from_bytes(crate::BUILTIN_POLICY).unwrap();
        p.version = 22;
        assert!(matches!(
            optimize(&mut p, 1 << 20),
            Err(OptimizeError::UnsupportedVersion(22))
        ));
        p.version = 33;
        assert!(matches!(
            optimize(&mut p, 1000),
            Err(OptimizeError::AvtabSlots(1000))
        ));
    }
}

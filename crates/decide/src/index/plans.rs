//! Per-(source type, class) merged rule plans: what a query walks instead of every
//! attribute's bucket (see the parent module's documentation).

use super::*;

/// The rules of one (source type, class), from [`PolicyIndex::av_plan`].
#[derive(Copy, Clone, Default)]
pub struct AvPlan<'a> {
    pub(super) class: u16,
    pub(super) solo_start: u32,
    /// The source type's (class, solo target) table, for plans longer than
    /// [`SOLO_SEARCH_MAX`].
    pub(super) solo_index: Option<&'a SoloTable>,
    /// Rules whose target other types can match (attributes): test each. Here `target` is
    /// the target's *shared index*: the rule applies to type `t` iff bit `target` is set
    /// in [`PolicyIndex::shared_row`]`(t)`.
    pub shared: &'a [AvRule],
    /// Rules whose target only the type of the same value matches, sorted by target: see
    /// [`PolicyIndex::solo_rules`].
    pub solo: &'a [AvRule],
}

/// Plans with at most this many solo-target rules binary search them (a few cache lines);
/// longer ones go through the solo index.
pub const SOLO_SEARCH_MAX: usize = 32;

/// Open addressing over (class value, target) → index of the first rule of that target in
/// one type's plan rules.
pub(super) struct SoloTable {
    /// (class value, target, rule index); class value 0 marks an empty slot.
    pub(super) slots: Box<[(u32, u32, u32)]>,
    pub(super) shift: u32,
}

impl SoloTable {
    pub(super) fn new(entries: &[(u32, u16, u32)]) -> SoloTable {
        let cap = (entries.len() * 3 / 2 + 1).next_power_of_two().max(2);
        let mut slots = vec![(0u32, 0u32, 0u32); cap].into_boxed_slice();
        let shift = 64 - cap.trailing_zeros();
        let mask = cap - 1;
        for &(k, t, i) in entries {
            let mut j = Self::home(k, t, shift);
            while slots[j].0 != 0 {
                j = (j + 1) & mask;
            }
            slots[j] = (k, t as u32, i);
        }
        SoloTable { slots, shift }
    }

    #[inline]
    pub(super) fn home(key: u32, target: u16, shift: u32) -> usize {
        let k = (key as u64) << 16 | target as u64;
        (k.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> shift) as usize
    }

    #[inline]
    pub(super) fn get(&self, key: u32, target: u16) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut j = Self::home(key, target, self.shift);
        loop {
            let s = &self.slots[j];
            if s.0 == key && s.1 == target as u32 {
                return Some(s.2);
            }
            if s.0 == 0 {
                return None;
            }
            j = (j + 1) & mask;
        }
    }
}

/// Plans copy each attribute's rules into every member type's plans, so their size grows
/// with (types x rules per attribute): fine for real policies (the Debian policy's plans
/// hold about 3 rules per table entry), quadratic for adversarial ones (T types in one
/// attribute with T rules on it). The rules a type's plans may hold (the sum of its
/// attributes' rules, before folding) are counted at load, in type order, against this
/// many per table entry (or [`PLAN_BUDGET_MIN`], whichever is larger); types beyond the
/// budget are marked [`FLAG_UNPLANNED`] and answered from the buckets — same answers,
/// slower. Which types are planned therefore never depends on which were queried first.
pub const PLAN_BUDGET_PER_RULE: usize = 16;
pub const PLAN_BUDGET_MIN: usize = 1 << 20;

/// Where one class's plan is in its type's plan rules (both counts 0: no plan).
#[derive(Copy, Clone, Default)]
pub(super) struct PlanSlot {
    pub(super) start: u32,
    pub(super) nshared: u32,
    pub(super) nsolo: u32,
}

/// One source type's plans for every class, built on the type's first query.
pub(super) struct TypePlans {
    /// Indexed by class value.
    pub(super) classes: Box<[PlanSlot]>,
    /// Per class, its shared-target rules (`target` = shared index), then its solo-target
    /// rules sorted by target.
    pub(super) rules: Box<[AvRule]>,
    /// (class, solo target) → first rule, for classes with more than [`SOLO_SEARCH_MAX`]
    /// solo-target rules; `None` when no class has that many.
    pub(super) solo_index: Option<SoloTable>,
}

/// The access-vector rules as the buckets and the plans read them: grouped by source
/// value, and inside each source by class (file order kept within a class), so a
/// source's rules for one class — a bucket — are contiguous.
pub(super) struct SourceRuns {
    /// Source value `v`'s rules are `rules[off[v]..off[v + 1]]`.
    pub(super) off: Box<[u32]>,
    pub(super) rules: Box<[AvRule]>,
    /// The class of each rule.
    pub(super) class: Box<[u16]>,
}

/// Groups the rules (bucket key, rule) by (source value, class) with two stable counting
/// sorts (class, then source): linear in the rules, no comparison sort at load.
pub(super) fn source_runs(av: &[(u32, AvRule)], nvalues: usize) -> SourceRuns {
    let src = |bk: u32| ((bk >> 16) as usize).min(nvalues);
    let cls = |bk: u32| bk as u16 as usize;
    let nclasses = av.iter().map(|&(bk, _)| cls(bk)).max().unwrap_or(0) + 1;
    // Both histograms in one pass; `off` doubles as the source pass's cursors.
    let mut by_class = vec![0usize; nclasses + 1];
    let mut off = vec![0u32; nvalues + 2];
    for &(bk, _) in av {
        by_class[cls(bk) + 1] += 1;
        off[src(bk) + 1] += 1;
    }
    for k in 1..by_class.len() {
        by_class[k] += by_class[k - 1];
    }
    for v in 1..off.len() {
        off[v] += off[v - 1];
    }
    let empty = AvRule {
        target: 0,
        kind: AvKind::Allowed,
        cond: UNCONDITIONAL,
        perms: 0,
    };
    let mut class_order = vec![(0u32, empty); av.len()];
    for &item in av {
        let k = cls(item.0);
        class_order[by_class[k]] = item;
        by_class[k] += 1;
    }
    let mut rules = vec![empty; av.len()];
    let mut class = vec![0u16; av.len()];
    let mut next = off.clone();
    for &(bk, r) in &class_order {
        let v = src(bk);
        let at = next[v] as usize;
        rules[at] = r;
        class[at] = bk as u16;
        next[v] += 1;
    }
    SourceRuns {
        off: off.into_boxed_slice(),
        rules: rules.into_boxed_slice(),
        class: class.into_boxed_slice(),
    }
}

/// Whether a target value only ever matches the type of the same value (see the module
/// documentation); `solo[v - 1]`.
pub(super) fn solo_values(attrs_off: &[u32], attrs: &[u16], ntypes: usize) -> Vec<bool> {
    let mut rows_with = vec![0u32; ntypes];
    for &a in &attrs[..attrs_off[ntypes] as usize] {
        rows_with[a as usize - 1] += 1;
    }
    (0..ntypes)
        .map(|v| {
            let own = &attrs[attrs_off[v] as usize..attrs_off[v + 1] as usize];
            rows_with[v] == 1 && own.binary_search(&((v + 1) as u16)).is_ok()
        })
        .collect()
}

/// The types the budget leaves without plans (see [`PLAN_BUDGET_PER_RULE`]), and the
/// rules the planned ones may hold at most.
pub(super) fn unplanned_types(
    runs: &SourceRuns,
    attrs_off: &[u32],
    attrs: &[u16],
    ntypes: usize,
    budget: usize,
) -> (Vec<usize>, usize) {
    let mut used = 0usize;
    let mut out = Vec::new();
    for t in 0..ntypes {
        let bound: usize = attrs[attrs_off[t] as usize..attrs_off[t + 1] as usize]
            .iter()
            .map(|&a| (runs.off[a as usize + 1] - runs.off[a as usize]) as usize)
            .sum();
        if bound > 0 && used + bound > budget {
            out.push(t);
        } else {
            used += bound;
        }
    }
    (out, used)
}

/// Dense numbers for the values that are not solo, and each type's row over them: the
/// numbers (`u16::MAX` for solo values), the rows, and the words per row.
pub(super) fn shared_rows(
    solo: &[bool],
    attrs_off: &[u32],
    attrs: &[u16],
    ntypes: usize,
) -> (Box<[u16]>, Box<[u64]>, usize) {
    let mut shared_ix = vec![u16::MAX; ntypes];
    let mut n = 0usize;
    for v in 0..ntypes {
        if !solo[v] {
            shared_ix[v] = n as u16;
            n += 1;
        }
    }
    let words = n.div_ceil(64).max(1);
    let mut rows = vec![0u64; ntypes * words];
    for t in 0..ntypes {
        for &a in &attrs[attrs_off[t] as usize..attrs_off[t + 1] as usize] {
            let k = shared_ix[a as usize - 1];
            if k != u16::MAX {
                rows[t * words + k as usize / 64] |= 1 << (k % 64);
            }
        }
    }
    (shared_ix.into_boxed_slice(), rows.into_boxed_slice(), words)
}

/// What a type's plans are built from: the index's parts that do not change after load.
pub(super) struct PlanInputs<'a> {
    pub(super) runs: &'a SourceRuns,
    pub(super) attrs: &'a [u16],
    pub(super) solo: &'a [bool],
    pub(super) shared_ix: &'a [u16],
}

/// One type's plans: the rules of its attributes, per class, shared targets first, folded
/// by key. `attrs` are the type's attribute values (itself included).
pub(super) fn build_type_plans<K: PlanKey>(input: &PlanInputs<'_>) -> TypePlans {
    let runs = input.runs;
    let run = |a: u16| runs.off[a as usize] as usize..runs.off[a as usize + 1] as usize;
    // Sized once: the type's attributes' rules, at most the budget counted at load.
    let bound = input.attrs.iter().map(|&a| run(a).len()).sum();
    let mut tmp: Vec<(K, u32)> = Vec::with_capacity(bound);
    for &a in input.attrs {
        for i in run(a) {
            let r = &runs.rules[i];
            // A target beyond the types is in no row: the rule never applies.
            if let Some(&is_solo) = input.solo.get((r.target as usize).wrapping_sub(1)) {
                tmp.push((K::pack(runs.class[i], is_solo, r), r.perms));
            }
        }
    }
    // By key: per class, shared targets first, solo ones by target; equal keys adjacent
    // (folding them is order-independent: OR, or AND for auditdeny).
    tmp.sort_unstable_by_key(|&(k, _)| k);
    let max_class = tmp.last().map_or(0, |&(k, _)| k.unpack(0).0 as usize);
    let mut classes = vec![PlanSlot::default(); if tmp.is_empty() { 0 } else { max_class + 1 }];
    let mut rules: Vec<AvRule> = Vec::with_capacity(tmp.len());
    let mut solo_entries: Vec<(u32, u16, u32)> = Vec::new();
    let mut j = 0;
    while j < tmp.len() {
        let class = tmp[j].0.unpack(0).0;
        let start = rules.len();
        let mut nshared = 0u32;
        while j < tmp.len() {
            let (key, mut perms) = tmp[j];
            let (c, is_solo, mut r) = key.unpack(perms);
            if c != class {
                break;
            }
            j += 1;
            while j < tmp.len() && tmp[j].0 == key {
                perms = match r.kind {
                    AvKind::AuditDeny => perms & tmp[j].1,
                    AvKind::Allowed | AvKind::AuditAllow => perms | tmp[j].1,
                };
                j += 1;
            }
            r.perms = perms;
            if !is_solo {
                r.target = input.shared_ix[r.target as usize - 1];
                nshared += 1;
            }
            rules.push(r);
        }
        let nsolo = (rules.len() - start) as u32 - nshared;
        let solo_at = start + nshared as usize;
        if nsolo as usize > SOLO_SEARCH_MAX {
            for i in solo_at..rules.len() {
                if i == solo_at || rules[i].target != rules[i - 1].target {
                    solo_entries.push((class as u32, rules[i].target, i as u32));
                }
            }
        }
        classes[class as usize] = PlanSlot {
            start: start as u32,
            nshared,
            nsolo,
        };
    }
    TypePlans {
        classes: classes.into_boxed_slice(),
        rules: rules.into_boxed_slice(),
        solo_index: (!solo_entries.is_empty()).then(|| SoloTable::new(&solo_entries)),
    }
}

/// A plan rule as one sortable key: (class, solo, target, kind, conditional list) from the
/// most significant bits down. Rules with equal keys are folded into one.
pub(super) trait PlanKey: Copy + Ord {
    fn pack(class: u16, solo: bool, r: &AvRule) -> Self;
    /// (class, solo, the rule with `perms`).
    fn unpack(self, perms: u32) -> (u16, bool, AvRule);
}

pub(super) fn kind_bits(k: AvKind) -> u8 {
    match k {
        AvKind::Allowed => 0,
        AvKind::AuditAllow => 1,
        AvKind::AuditDeny => 2,
    }
}

pub(super) fn kind_of(bits: u8) -> AvKind {
    match bits & 3 {
        0 => AvKind::Allowed,
        1 => AvKind::AuditAllow,
        _ => AvKind::AuditDeny,
    }
}

/// 16 + 1 + 16 + 2 + 29 bits: the conditional list is stored as `tag + 1` (0 for
/// unconditional), so it fits when every tag is below `2^29 - 1`.
pub(super) const NARROW_COND_LIMIT: u64 = (1 << 29) - 1;

impl PlanKey for u64 {
    #[inline]
    fn pack(class: u16, solo: bool, r: &AvRule) -> u64 {
        let cond = if r.cond == UNCONDITIONAL {
            0
        } else {
            r.cond as u64 + 1
        };
        (class as u64) << 48
            | (solo as u64) << 47
            | (r.target as u64) << 31
            | (kind_bits(r.kind) as u64) << 29
            | cond
    }
    #[inline]
    fn unpack(self, perms: u32) -> (u16, bool, AvRule) {
        let cond = (self & NARROW_COND_LIMIT) as u32;
        let rule = AvRule {
            target: (self >> 31) as u16,
            kind: kind_of((self >> 29) as u8),
            cond: if cond == 0 { UNCONDITIONAL } else { cond - 1 },
            perms,
        };
        ((self >> 48) as u16, (self >> 47) & 1 == 1, rule)
    }
}

impl PlanKey for u128 {
    #[inline]
    fn pack(class: u16, solo: bool, r: &AvRule) -> u128 {
        (class as u128) << 64
            | (solo as u128) << 63
            | (r.target as u128) << 40
            | (kind_bits(r.kind) as u128) << 32
            | r.cond as u128
    }
    #[inline]
    fn unpack(self, perms: u32) -> (u16, bool, AvRule) {
        let rule = AvRule {
            target: (self >> 40) as u16,
            kind: kind_of((self >> 32) as u8),
            cond: self as u32,
            perms,
        };
        ((self >> 64) as u16, (self >> 63) & 1 == 1, rule)
    }
}

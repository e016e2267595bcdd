//! Per-(source type, class) merged rule plans: what a query walks instead of every
//! attribute's bucket (see the parent module's documentation).

use super::*;

/// The rules of one (source type, class), from [`PolicyIndex::av_plan`].
#[derive(Copy, Clone, Default)]
pub struct AvPlan<'a> {
    pub(super) key: u32,
    pub(super) solo_start: u32,
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

/// Open addressing over (plan key, target) → index of the first rule of that target.
pub(super) struct SoloTable {
    /// (plan key, target, rule index); plan key 0 marks an empty slot.
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
/// attribute with T rules on it). Merged rules are capped at this many per table entry (or
/// [`PLAN_BUDGET_MIN`], whichever is larger); types beyond the budget are marked
/// [`FLAG_UNPLANNED`] and answered from the buckets — same answers, slower.
pub const PLAN_BUDGET_PER_RULE: usize = 16;
pub const PLAN_BUDGET_MIN: usize = 1 << 20;

/// Where a plan's rules are in `plan_rules`.
#[derive(Copy, Clone, Default)]
pub(super) struct PlanSlot {
    /// `bucket_key(source type, class)`; 0 marks an empty slot (type values start at 1).
    pub(super) key: u32,
    pub(super) start: u32,
    pub(super) nshared: u32,
    pub(super) nsolo: u32,
}

/// Open addressing with linear probing over u32 keys: one cache line answers most probes.
pub(super) struct PlanTable {
    pub(super) slots: Box<[PlanSlot]>,
    pub(super) shift: u32,
    pub(super) len: usize,
}

impl PlanTable {
    pub(super) fn new(plans: &[PlanSlot]) -> PlanTable {
        // Load factor at most 2/3.
        let cap = (plans.len() * 3 / 2 + 1).next_power_of_two().max(2);
        let mut slots = vec![PlanSlot::default(); cap].into_boxed_slice();
        let shift = 64 - cap.trailing_zeros();
        let mask = cap - 1;
        for p in plans {
            let mut i = Self::home(p.key, shift);
            while slots[i].key != 0 {
                i = (i + 1) & mask;
            }
            slots[i] = *p;
        }
        PlanTable {
            slots,
            shift,
            len: plans.len(),
        }
    }

    #[inline]
    pub(super) fn home(key: u32, shift: u32) -> usize {
        ((key as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> shift) as usize
    }

    #[inline]
    pub(super) fn get(&self, key: u32) -> Option<&PlanSlot> {
        let mask = self.slots.len() - 1;
        let mut i = Self::home(key, self.shift);
        loop {
            let s = &self.slots[i];
            if s.key == key {
                return Some(s);
            }
            if s.key == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }
}

pub(super) struct Plans {
    /// Type indexes left without plans by the budget.
    pub(super) unplanned: Vec<usize>,
    pub(super) table: PlanTable,
    pub(super) rules: Box<[AvRule]>,
    pub(super) solo_index: SoloTable,
    pub(super) shared_member: Box<[u64]>,
    pub(super) shared_words: usize,
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

/// Builds every (source type, class) plan from the access-vector rules (bucket key, rule).
#[allow(clippy::too_many_arguments)] // the index's parts, built once by `build_with`
pub(super) fn build_plans(
    av: &[(u32, AvRule)],
    attrs_off: &[u32],
    attrs: &[u16],
    member: &[u64],
    words: usize,
    ntypes: usize,
    wide_keys: bool,
    budget: Option<usize>,
) -> Plans {
    // Solo values: the only membership row with bit v-1 is row v-1.
    let mut rows_with = vec![0u32; ntypes];
    for t in 0..ntypes {
        for &a in &attrs[attrs_off[t] as usize..attrs_off[t + 1] as usize] {
            rows_with[a as usize - 1] += 1;
        }
    }
    let solo: Vec<bool> = (0..ntypes)
        .map(|v| rows_with[v] == 1 && member[v * words + v / 64] & (1 << (v % 64)) != 0)
        .collect();
    let narrow = !wide_keys
        && av
            .iter()
            .all(|(_, r)| r.cond == UNCONDITIONAL || (r.cond as u64) < NARROW_COND_LIMIT);
    let budget = budget.unwrap_or((av.len() * PLAN_BUDGET_PER_RULE).max(PLAN_BUDGET_MIN));
    let (slots, mut rules, unplanned) = if narrow {
        merge_rules::<u64>(av, attrs_off, attrs, &solo, ntypes, budget)
    } else {
        merge_rules::<u128>(av, attrs_off, attrs, &solo, ntypes, budget)
    };
    // Dense numbers for the other values, and each type's row over them.
    let mut shared_ix = vec![u16::MAX; ntypes];
    let mut nshared_values = 0usize;
    for v in 0..ntypes {
        if !solo[v] {
            shared_ix[v] = nshared_values as u16;
            nshared_values += 1;
        }
    }
    let shared_words = nshared_values.div_ceil(64).max(1);
    let mut shared_member = vec![0u64; ntypes * shared_words];
    for t in 0..ntypes {
        for &a in &attrs[attrs_off[t] as usize..attrs_off[t + 1] as usize] {
            let k = shared_ix[a as usize - 1];
            if k != u16::MAX {
                shared_member[t * shared_words + k as usize / 64] |= 1 << (k % 64);
            }
        }
    }
    let mut solo_entries = Vec::new();
    for p in &slots {
        let (a, b) = (p.start as usize, (p.start + p.nshared) as usize);
        for r in &mut rules[a..b] {
            r.target = shared_ix[r.target as usize - 1];
        }
        if p.nsolo as usize > SOLO_SEARCH_MAX {
            let end = b + p.nsolo as usize;
            for i in b..end {
                if i == b || rules[i].target != rules[i - 1].target {
                    solo_entries.push((p.key, rules[i].target, i as u32));
                }
            }
        }
    }
    Plans {
        unplanned,
        table: PlanTable::new(&slots),
        rules: rules.into_boxed_slice(),
        solo_index: SoloTable::new(&solo_entries),
        shared_member: shared_member.into_boxed_slice(),
        shared_words,
    }
}

/// Every type's plans: the rules of its attributes, per class, shared targets first, folded
/// by key. Returns the plan slots and their rules.
pub(super) fn merge_rules<K: PlanKey>(
    av: &[(u32, AvRule)],
    attrs_off: &[u32],
    attrs: &[u16],
    solo: &[bool],
    ntypes: usize,
    budget: usize,
) -> (Vec<PlanSlot>, Vec<AvRule>, Vec<usize>) {
    // Every rule keyed; `av` is sorted by bucket key, so sorting each bucket by key sorts
    // the whole by (source, key), and a source value's rules are a sorted run.
    let mut keyed: Vec<(u16, K, u32)> = Vec::with_capacity(av.len());
    let mut i = 0;
    while i < av.len() {
        let bucket = av[i].0;
        let start = keyed.len();
        while i < av.len() && av[i].0 == bucket {
            let r = &av[i].1;
            i += 1;
            // A target beyond the types is in no row: the rule never applies.
            if let Some(&is_solo) = solo.get((r.target as usize).wrapping_sub(1)) {
                keyed.push((
                    (bucket >> 16) as u16,
                    K::pack(bucket as u16, is_solo, r),
                    r.perms,
                ));
            }
        }
        keyed[start..].sort_unstable_by_key(|&(_, k, _)| k);
    }
    let mut run = vec![(0usize, 0usize); ntypes + 1];
    let mut i = 0;
    while i < keyed.len() {
        let src = keyed[i].0 as usize;
        let start = i;
        while i < keyed.len() && keyed[i].0 as usize == src {
            i += 1;
        }
        if let Some(r) = run.get_mut(src) {
            *r = (start, i);
        }
    }

    let mut slots = Vec::new();
    let mut rules: Vec<AvRule> = Vec::with_capacity(av.len() * 2);
    let mut tmp: Vec<(K, u32)> = Vec::new();
    let mut buf: Vec<(K, u32)> = Vec::new();
    let mut unplanned = Vec::new();
    for t in 0..ntypes {
        // The merged plans hold at most the sum of the attributes' runs.
        let bound: usize = attrs[attrs_off[t] as usize..attrs_off[t + 1] as usize]
            .iter()
            .map(|&a| run[a as usize].1 - run[a as usize].0)
            .sum();
        if bound > 0 && rules.len() + bound > budget {
            unplanned.push(t);
            continue;
        }
        // Merge the attributes' sorted runs (few per type) two at a time.
        tmp.clear();
        for &a in &attrs[attrs_off[t] as usize..attrs_off[t + 1] as usize] {
            let (lo, hi) = run[a as usize];
            let next = &keyed[lo..hi];
            if next.is_empty() {
                continue;
            }
            if tmp.is_empty() {
                tmp.extend(next.iter().map(|&(_, k, p)| (k, p)));
                continue;
            }
            buf.clear();
            let (mut x, mut y) = (0, 0);
            while x < tmp.len() && y < next.len() {
                if next[y].1 < tmp[x].0 {
                    buf.push((next[y].1, next[y].2));
                    y += 1;
                } else {
                    buf.push(tmp[x]);
                    x += 1;
                }
            }
            buf.extend_from_slice(&tmp[x..]);
            buf.extend(next[y..].iter().map(|&(_, k, p)| (k, p)));
            std::mem::swap(&mut tmp, &mut buf);
        }
        let mut j = 0;
        while j < tmp.len() {
            let class = tmp[j].0.unpack(0).0;
            let start = rules.len();
            let mut nshared = 0u32;
            while j < tmp.len() {
                let (key, mut perms) = tmp[j];
                let (c, is_solo, r) = key.unpack(perms);
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
                rules.push(AvRule { perms, ..r });
                if !is_solo {
                    nshared += 1;
                }
            }
            slots.push(PlanSlot {
                key: bucket_key((t + 1) as u16, class),
                start: start as u32,
                nshared,
                nsolo: (rules.len() - start) as u32 - nshared,
            });
        }
    }
    (slots, rules, unplanned)
}

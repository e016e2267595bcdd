//! Query structures built once per policy.
//!
//! The kernel answers an access-vector query by walking every (source attribute, target
//! attribute) pair and probing its rule hash for each: with 30 attributes a side that is 900
//! probes, most of them misses. Here rules are bucketed by (source type-or-attribute, class)
//! and each bucket entry names its target type-or-attribute; a query walks only the source's
//! attributes, finds its bucket with one probe, and tests each entry's target against a
//! dense membership bitmap of the target type in O(1). Conditional rules sit in the same
//! buckets, tagged with the conditional list they belong to, so a boolean change never
//! rebuilds the index: a snapshot only carries which lists are enabled.
//!
//! Queries do not walk the buckets, though: each (source type, class) gets a *plan*, the
//! rules of all the type's attributes for that class merged into one contiguous list, found
//! with one probe of an open-addressing table (instead of one hash probe per attribute).
//! Rules with the same (target, kind, conditional list) are folded into one (permissions
//! OR-ed, or AND-ed for auditdeny): they apply under identical conditions, so the decision
//! is the same. A plan's rules are split by target. Targets that some type other than
//! themselves can match (attributes) are few; each is tested against the target type's
//! row of a small bitmap over those values only (a few words, not one per 64 types). The
//! others ("solo" targets, matched only by the type of the same value, most rules) are
//! sorted, and the rules for the query's target type are found by binary search, or for
//! long lists by one probe of a (plan, target) table. The buckets stay for tools and as
//! the reference the plans are tested against.

use arbiter_policy::avtab::{Avtab, AvtabDatum, AvtabKind, Xperms};
use arbiter_policy::mls::MlsRange;
use arbiter_policy::{ClassId, Policy, RoleId, TypeFlavor, TypeId};
use std::collections::HashMap;

pub use crate::hash::FxHashMap;
/// `BuildHasher` for [`FxHasher`].
pub type FxBuild = crate::hash::FxBuildHasher;

/// (target, class, name) → outcomes (source types, new type), for filename transitions.
pub type FilenameTrans =
    HashMap<(TypeId, ClassId, Box<str>), Vec<(arbiter_policy::Ebitmap, TypeId)>, FxBuild>;

/// Bucket key → range of a rule array.
type Buckets = FxHashMap<u32, (u32, u32)>;

/// Marks a rule that is not under any conditional.
pub const UNCONDITIONAL: u32 = u32::MAX;

/// Which conditional list a rule belongs to: `node * 2` for the true list, `node * 2 + 1`
/// for the false list, or [`UNCONDITIONAL`].
pub type CondTag = u32;

/// One access-vector rule inside a (source, class) bucket.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AvRule {
    /// Target type or attribute value.
    pub target: u16,
    pub kind: AvKind,
    pub cond: CondTag,
    pub perms: u32,
}

/// The access-vector rule kinds that contribute to a decision.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AvKind {
    Allowed,
    AuditAllow,
    /// The stored auditdeny mask (complement of dontaudit).
    AuditDeny,
}

/// One extended-permission rule inside a (source, class) bucket.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct XpRule {
    pub target: u16,
    pub kind: AvtabKind,
    pub cond: CondTag,
    pub xperms: Xperms,
}

/// A type rule's outcome for one exact (source, target, class, kind) key.
#[derive(Clone, Debug, Default)]
pub struct TypeRuleSlot {
    pub unconditional: Option<TypeId>,
    /// Conditional alternatives in file order: the first enabled one applies.
    pub conditional: Vec<(CondTag, TypeId)>,
}

/// Dense per-type attribute membership and the rule buckets.
pub struct PolicyIndex {
    ntypes: usize,
    /// u64 words per membership row.
    words: usize,
    /// Row `t.index()`: bit `k` set iff type value `k+1` is `t` or one of its attributes.
    member: Box<[u64]>,
    /// CSR lists of each type's attribute values (including itself), ascending.
    attrs_off: Box<[u32]>,
    attrs: Box<[u16]>,
    /// (source value << 16 | class) → range of `av_rules`.
    av_buckets: Buckets,
    av_rules: Box<[AvRule]>,
    xp_buckets: Buckets,
    xp_rules: Box<[XpRule]>,
    /// (source type << 16 | class) → plan; see the module documentation.
    plans: PlanTable,
    /// The plans' rules; a plan's shared-target rules (whose `target` holds the target's
    /// shared index, see `shared_member`), then its solo-target rules sorted by target.
    plan_rules: Box<[AvRule]>,
    /// (plan, solo target) → first rule with that target, for plans with more than
    /// [`SOLO_SEARCH_MAX`] solo-target rules (one probe instead of a long binary search).
    solo_index: SoloTable,
    /// Membership rows over shared values only (those a type other than themselves can
    /// match, numbered densely): row `t.index()` has bit `k` iff the type has shared value
    /// number `k`. A few words, where the full row is one per 64 types.
    shared_member: Box<[u64]>,
    shared_words: usize,
    /// Per type value: [`FLAG_PERMISSIVE`], [`FLAG_NEVERAUDIT`], [`FLAG_BOUNDED`].
    type_flags: Box<[u8]>,
    /// Per class index: its constraints compiled for access decisions.
    constraints: Box<[Box<[crate::constraint::Compiled]>]>,
    /// (source, target, class, kind bits) → outcome.
    type_rules: FxHashMap<(u16, u16, u16, u16), TypeRuleSlot>,
    /// (role, type, class) → new role.
    pub role_trans: FxHashMap<(RoleId, TypeId, ClassId), RoleId>,
    /// (role, new role) pairs allowed for process transitions.
    pub role_allow: std::collections::HashSet<(RoleId, RoleId), FxBuild>,
    /// (source, target, class) → range.
    pub range_trans: FxHashMap<(TypeId, TypeId, ClassId), MlsRange>,
    /// (target, class, name) → outcomes, for filename transitions.
    pub filename_trans: FilenameTrans,
    /// Number of conditional nodes (two lists each).
    pub cond_nodes: usize,
    /// The `process` class, if defined, and its transition|dyntransition bits.
    pub process_class: Option<ClassId>,
    /// `transition | dyntransition` of the `process` class.
    pub process_trans_perms: u32,
}

#[inline]
fn bucket_key(source: u16, class: u16) -> u32 {
    (source as u32) << 16 | class as u32
}

impl PolicyIndex {
    /// Builds the index of a policy.
    pub fn build(policy: &Policy) -> PolicyIndex {
        Self::build_with(policy, false, None)
    }

    /// [`PolicyIndex::build`]; `wide_keys` forces the plan builder's general (128-bit key)
    /// path, which real policies never need, and `budget` overrides the plan budget, so
    /// tests can check both.
    fn build_with(policy: &Policy, wide_keys: bool, budget: Option<usize>) -> PolicyIndex {
        let ntypes = policy.types.len();
        let words = ntypes.div_ceil(64).max(1);
        let mut member = vec![0u64; ntypes * words];
        let mut attrs_off = Vec::with_capacity(ntypes + 1);
        let mut attrs = Vec::new();
        attrs_off.push(0u32);
        for (t, map) in policy.type_attr_map.iter().enumerate() {
            let row = &mut member[t * words..(t + 1) * words];
            for bit in map.iter() {
                let b = bit as usize;
                if b < ntypes {
                    row[b / 64] |= 1 << (b % 64);
                    attrs.push((b + 1) as u16);
                }
            }
            attrs_off.push(attrs.len() as u32);
        }
        // Types the map does not list still match themselves.
        for t in policy.type_attr_map.len()..ntypes {
            member[t * words + t / 64] |= 1 << (t % 64);
            attrs.push((t + 1) as u16);
            attrs_off.push(attrs.len() as u32);
        }

        let mut av: Vec<(u32, AvRule)> = Vec::new();
        let mut xp: Vec<(u32, XpRule)> = Vec::new();
        let mut type_rules: FxHashMap<(u16, u16, u16, u16), TypeRuleSlot> = FxHashMap::default();
        let mut add_table = |table: &Avtab, tag_of: &dyn Fn(usize) -> CondTag| {
            for (i, e) in table.entries.iter().enumerate() {
                let k = e.key;
                let cond = tag_of(i);
                let bk = bucket_key(k.source.value(), k.class.value());
                match (k.kind, e.datum) {
                    (AvtabKind::Allowed, AvtabDatum::Perms(p)) => av.push((
                        bk,
                        AvRule {
                            target: k.target.value(),
                            kind: AvKind::Allowed,
                            cond,
                            perms: p,
                        },
                    )),
                    (AvtabKind::AuditAllow, AvtabDatum::Perms(p)) => av.push((
                        bk,
                        AvRule {
                            target: k.target.value(),
                            kind: AvKind::AuditAllow,
                            cond,
                            perms: p,
                        },
                    )),
                    (AvtabKind::AuditDeny, AvtabDatum::Perms(p)) => av.push((
                        bk,
                        AvRule {
                            target: k.target.value(),
                            kind: AvKind::AuditDeny,
                            cond,
                            perms: p,
                        },
                    )),
                    (kind, AvtabDatum::Type(t)) if kind.is_type_rule() => {
                        let slot = type_rules
                            .entry((
                                k.source.value(),
                                k.target.value(),
                                k.class.value(),
                                kind.bits(),
                            ))
                            .or_default();
                        if cond == UNCONDITIONAL {
                            slot.unconditional.get_or_insert(t);
                        } else {
                            slot.conditional.push((cond, t));
                        }
                    }
                    (kind, d) if kind.is_xperms() => {
                        if let Some(x) = table.xperms_of(d) {
                            xp.push((
                                bk,
                                XpRule {
                                    target: k.target.value(),
                                    kind,
                                    cond,
                                    xperms: *x,
                                },
                            ));
                        }
                    }
                    // The reader pairs kinds with datums; anything else cannot occur.
                    _ => {}
                }
            }
        };
        add_table(&policy.avtab, &|_| UNCONDITIONAL);
        // Map each conditional entry to its list.
        let mut tags = vec![UNCONDITIONAL; policy.cond_avtab.entries.len()];
        for (n, node) in policy.cond_nodes.iter().enumerate() {
            for i in node.true_list.clone() {
                if let Some(t) = tags.get_mut(i as usize) {
                    *t = (n * 2) as u32;
                }
            }
            for i in node.false_list.clone() {
                if let Some(t) = tags.get_mut(i as usize) {
                    *t = (n * 2 + 1) as u32;
                }
            }
        }
        add_table(&policy.cond_avtab, &|i| tags[i]);

        av.sort_by_key(|&(k, _)| k); // stable: file order kept within a key
        let plans = build_plans(
            &av, &attrs_off, &attrs, &member, words, ntypes, wide_keys, budget,
        );
        let unplanned = plans.unplanned.clone();
        let (av_buckets, av_rules) = bucketize(av);
        let (xp_buckets, xp_rules) = bucketize(xp);
        let mut type_flags = vec![0u8; ntypes + 1];
        for (v, f) in type_flags.iter_mut().enumerate() {
            if policy.permissive.contains(v as u32) {
                *f |= FLAG_PERMISSIVE;
            }
            if policy.neveraudit.contains(v as u32) {
                *f |= FLAG_NEVERAUDIT;
            }
            if v > 0 && policy.types.get(v - 1).is_some_and(|d| d.bounds.is_some()) {
                *f |= FLAG_BOUNDED;
            }
        }
        for t in unplanned {
            if let Some(f) = type_flags.get_mut(t + 1) {
                *f |= FLAG_UNPLANNED;
            }
        }

        let process_class = policy
            .classes
            .iter()
            .position(|c| &*c.name == "process")
            .and_then(ClassId::from_index);
        let process_trans_perms = process_class
            .map(|c| perm_bits(policy, c, &["transition", "dyntransition"]))
            .unwrap_or(0);

        let role_trans = policy
            .role_trans
            .iter()
            .map(|r| ((r.role, r.ty, r.class), r.new_role))
            .collect();
        let role_allow = policy
            .role_allow
            .iter()
            .map(|r| (r.role, r.new_role))
            .collect();
        let range_trans = policy
            .range_trans
            .iter()
            .map(|r| ((r.source, r.target, r.class), r.range.clone()))
            .collect();
        let mut filename_trans: HashMap<_, Vec<_>, FxBuild> = HashMap::default();
        for f in &policy.filename_trans {
            filename_trans
                .entry((f.target, f.class, f.name.clone()))
                .or_default()
                .extend(f.outcomes.iter().cloned());
        }

        PolicyIndex {
            ntypes,
            words,
            member: member.into_boxed_slice(),
            attrs_off: attrs_off.into_boxed_slice(),
            attrs: attrs.into_boxed_slice(),
            av_buckets,
            av_rules,
            xp_buckets,
            xp_rules,
            plans: plans.table,
            plan_rules: plans.rules,
            solo_index: plans.solo_index,
            shared_member: plans.shared_member,
            shared_words: plans.shared_words,
            type_flags: type_flags.into_boxed_slice(),
            constraints: policy
                .classes
                .iter()
                .map(|c| {
                    c.constraints
                        .iter()
                        .map(|k| crate::constraint::Compiled::new(k.perms, &k.expr))
                        .collect()
                })
                .collect(),
            type_rules,
            role_trans,
            role_allow,
            range_trans,
            filename_trans,
            cond_nodes: policy.cond_nodes.len(),
            process_class,
            process_trans_perms,
        }
    }

    /// The attribute values of a type, including the type itself.
    #[inline]
    pub fn attrs_of(&self, t: TypeId) -> &[u16] {
        let i = t.index();
        if i >= self.ntypes {
            return &[];
        }
        &self.attrs[self.attrs_off[i] as usize..self.attrs_off[i + 1] as usize]
    }

    /// The membership row of a type: bit `v-1` set iff value `v` is the type or one of its
    /// attributes.
    #[inline]
    pub fn member_row(&self, t: TypeId) -> &[u64] {
        let i = t.index();
        if i >= self.ntypes {
            return &[];
        }
        &self.member[i * self.words..(i + 1) * self.words]
    }

    /// The access-vector rules whose source is `source` (a type or attribute) for `class`.
    #[inline]
    pub fn av_bucket(&self, source: u16, class: ClassId) -> &[AvRule] {
        match self.av_buckets.get(&bucket_key(source, class.value())) {
            Some(&(s, n)) => &self.av_rules[s as usize..(s + n) as usize],
            None => &[],
        }
    }

    /// The merged rules of a source type for a class. See the module documentation.
    #[inline]
    pub fn av_plan(&self, source: TypeId, class: ClassId) -> AvPlan<'_> {
        let key = bucket_key(source.value(), class.value());
        match self.plans.get(key) {
            Some(p) => {
                let start = p.start as usize;
                let mid = start + p.nshared as usize;
                let end = mid + p.nsolo as usize;
                AvPlan {
                    key,
                    solo_start: mid as u32,
                    shared: &self.plan_rules[start..mid],
                    solo: &self.plan_rules[mid..end],
                }
            }
            None => AvPlan::default(),
        }
    }

    /// The solo-target rules of a plan whose target is `target` (in the plan's order).
    #[inline]
    pub fn solo_rules<'a>(&'a self, plan: &AvPlan<'a>, target: TypeId) -> &'a [AvRule] {
        let tv = target.value();
        let at = if plan.solo.len() <= SOLO_SEARCH_MAX {
            plan.solo.partition_point(|r| r.target < tv)
        } else {
            match self.solo_index.get(plan.key, tv) {
                Some(i) => i as usize - plan.solo_start as usize,
                None => return &[],
            }
        };
        let rest = &plan.solo[at.min(plan.solo.len())..];
        let n = rest.iter().take_while(|r| r.target == tv).count();
        &rest[..n]
    }

    /// The shared-value membership row of a type (see [`AvPlan::shared`]).
    #[inline]
    pub fn shared_row(&self, t: TypeId) -> &[u64] {
        let i = t.index();
        if i >= self.ntypes {
            return &[];
        }
        &self.shared_member[i * self.shared_words..(i + 1) * self.shared_words]
    }

    /// A class's constraints (`constrain`, `mlsconstrain`) compiled for access decisions,
    /// in file order.
    #[inline]
    pub fn constraints(&self, class: ClassId) -> &[crate::constraint::Compiled] {
        self.constraints.get(class.index()).map_or(&[], |c| &c[..])
    }

    /// [`FLAG_PERMISSIVE`], [`FLAG_NEVERAUDIT`] and [`FLAG_BOUNDED`] of a type value.
    #[inline]
    pub fn type_flags(&self, t: TypeId) -> u8 {
        self.type_flags.get(t.index() + 1).copied().unwrap_or(0)
    }

    /// Number of plans, merged rules in them, and of those rules the shared-target ones.
    pub fn plan_stats(&self) -> (usize, usize, usize) {
        let shared = self.plans.slots.iter().map(|p| p.nshared as usize).sum();
        (self.plans.len, self.plan_rules.len(), shared)
    }

    /// The extended-permission rules whose source is `source` for `class`.
    #[inline]
    pub fn xp_bucket(&self, source: u16, class: ClassId) -> &[XpRule] {
        match self.xp_buckets.get(&bucket_key(source, class.value())) {
            Some(&(s, n)) => &self.xp_rules[s as usize..(s + n) as usize],
            None => &[],
        }
    }

    /// The type rule for an exact key.
    pub fn type_rule(
        &self,
        s: TypeId,
        t: TypeId,
        c: ClassId,
        kind: AvtabKind,
    ) -> Option<&TypeRuleSlot> {
        self.type_rules
            .get(&(s.value(), t.value(), c.value(), kind.bits()))
    }

    /// Number of types (including attributes).
    pub fn ntypes(&self) -> usize {
        self.ntypes
    }

    /// The type values of every primary, non-attribute type, for sampling and tests.
    pub fn concrete_types(policy: &Policy) -> Vec<TypeId> {
        policy
            .types
            .iter()
            .enumerate()
            .filter(|(_, t)| t.flavor == TypeFlavor::Type)
            .filter_map(|(i, _)| TypeId::from_index(i))
            .collect()
    }

    /// Longest and mean bucket length, for benchmarks and tuning.
    pub fn bucket_stats(&self) -> (usize, f64) {
        let max = self
            .av_buckets
            .values()
            .map(|&(_, n)| n as usize)
            .max()
            .unwrap_or(0);
        let mean = if self.av_buckets.is_empty() {
            0.0
        } else {
            self.av_rules.len() as f64 / self.av_buckets.len() as f64
        };
        (max, mean)
    }
}

/// Whether bit `v-1` is set in a membership row (`v` a type or attribute value).
#[inline]
pub fn row_has(row: &[u64], value: u16) -> bool {
    let b = value as usize - 1;
    match row.get(b / 64) {
        Some(w) => w & (1 << (b % 64)) != 0,
        None => false,
    }
}

/// Groups (bucket key, item) pairs into contiguous runs and a key → range map, keeping file
/// order inside each bucket.
fn bucketize<T: Copy>(mut items: Vec<(u32, T)>) -> (Buckets, Box<[T]>) {
    items.sort_by_key(|&(k, _)| k); // stable: file order kept within a key
    let mut map = FxHashMap::default();
    let mut out = Vec::with_capacity(items.len());
    let mut i = 0;
    while i < items.len() {
        let k = items[i].0;
        let start = out.len() as u32;
        while i < items.len() && items[i].0 == k {
            out.push(items[i].1);
            i += 1;
        }
        map.insert(k, (start, out.len() as u32 - start));
    }
    (map, out.into_boxed_slice())
}

/// The rules of one (source type, class), from [`PolicyIndex::av_plan`].
#[derive(Copy, Clone, Default)]
pub struct AvPlan<'a> {
    key: u32,
    solo_start: u32,
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
struct SoloTable {
    /// (plan key, target, rule index); plan key 0 marks an empty slot.
    slots: Box<[(u32, u32, u32)]>,
    shift: u32,
}

impl SoloTable {
    fn new(entries: &[(u32, u16, u32)]) -> SoloTable {
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
    fn home(key: u32, target: u16, shift: u32) -> usize {
        let k = (key as u64) << 16 | target as u64;
        (k.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> shift) as usize
    }

    #[inline]
    fn get(&self, key: u32, target: u16) -> Option<u32> {
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

/// Whether bit `k` is set in a row of bits.
#[inline]
pub fn bit_has(row: &[u64], k: u16) -> bool {
    let k = k as usize;
    match row.get(k / 64) {
        Some(w) => w & (1 << (k % 64)) != 0,
        None => false,
    }
}

/// The type is permissive (`AVD_FLAGS_PERMISSIVE`).
pub const FLAG_PERMISSIVE: u8 = 1;
/// The type is `neveraudit`.
pub const FLAG_NEVERAUDIT: u8 = 2;
/// The type has a `typebounds` bound.
pub const FLAG_BOUNDED: u8 = 4;
/// The type got no plans (the plan budget ran out): queries walk its attributes' buckets.
pub const FLAG_UNPLANNED: u8 = 8;

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
struct PlanSlot {
    /// `bucket_key(source type, class)`; 0 marks an empty slot (type values start at 1).
    key: u32,
    start: u32,
    nshared: u32,
    nsolo: u32,
}

/// Open addressing with linear probing over u32 keys: one cache line answers most probes.
struct PlanTable {
    slots: Box<[PlanSlot]>,
    shift: u32,
    len: usize,
}

impl PlanTable {
    fn new(plans: &[PlanSlot]) -> PlanTable {
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
    fn home(key: u32, shift: u32) -> usize {
        ((key as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> shift) as usize
    }

    #[inline]
    fn get(&self, key: u32) -> Option<&PlanSlot> {
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

struct Plans {
    /// Type indexes left without plans by the budget.
    unplanned: Vec<usize>,
    table: PlanTable,
    rules: Box<[AvRule]>,
    solo_index: SoloTable,
    shared_member: Box<[u64]>,
    shared_words: usize,
}

/// A plan rule as one sortable key: (class, solo, target, kind, conditional list) from the
/// most significant bits down. Rules with equal keys are folded into one.
trait PlanKey: Copy + Ord {
    fn pack(class: u16, solo: bool, r: &AvRule) -> Self;
    /// (class, solo, the rule with `perms`).
    fn unpack(self, perms: u32) -> (u16, bool, AvRule);
}

fn kind_bits(k: AvKind) -> u8 {
    match k {
        AvKind::Allowed => 0,
        AvKind::AuditAllow => 1,
        AvKind::AuditDeny => 2,
    }
}

fn kind_of(bits: u8) -> AvKind {
    match bits & 3 {
        0 => AvKind::Allowed,
        1 => AvKind::AuditAllow,
        _ => AvKind::AuditDeny,
    }
}

/// 16 + 1 + 16 + 2 + 29 bits: the conditional list is stored as `tag + 1` (0 for
/// unconditional), so it fits when every tag is below `2^29 - 1`.
const NARROW_COND_LIMIT: u64 = (1 << 29) - 1;

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
fn build_plans(
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
fn merge_rules<K: PlanKey>(
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

/// The access-vector bits of the named permissions of a class (common permissions
/// included); names the class lacks contribute nothing.
pub fn perm_bits(policy: &Policy, class: ClassId, names: &[&str]) -> u32 {
    let cls = policy.class(class);
    let mut bits = 0;
    for name in names {
        let own = cls.perms.iter().find(|p| &*p.name == *name);
        let common = cls
            .common
            .and_then(|c| policy.commons.get(c.index()))
            .and_then(|c| c.perms.iter().find(|p| &*p.name == *name));
        if let Some(p) = own.or(common) {
            if (1..=32).contains(&p.value) {
                bits |= 1 << (p.value - 1);
            }
        }
    }
    bits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Snapshot;
    use arbiter_policy::mls::Context;
    use arbiter_policy::UserId;
    use arbiter_testkit::Rng;
    use std::path::PathBuf;
    use std::sync::Arc;

    fn policies() -> Vec<PathBuf> {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../policies/bin");
        let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        v.sort();
        let debian = PathBuf::from("/etc/selinux/default/policy/policy.33");
        if debian.exists() {
            v.push(debian);
        }
        v
    }

    /// The per-attribute walk the plans replace: every bucket of every attribute of the
    /// source, each rule tested against the target's full membership row.
    fn walk(snap: &Snapshot, s: TypeId, t: TypeId, class: ClassId) -> (u32, u32, u32) {
        let idx = snap.index();
        let row = idx.member_row(t);
        let (mut a, mut aa, mut ad) = (0, 0, u32::MAX);
        for &sa in idx.attrs_of(s) {
            for r in idx.av_bucket(sa, class) {
                if row_has(row, r.target) && snap.cond_enabled(r.cond) {
                    match r.kind {
                        AvKind::Allowed => a |= r.perms,
                        AvKind::AuditAllow => aa |= r.perms,
                        AvKind::AuditDeny => ad &= r.perms,
                    }
                }
            }
        }
        (a, aa, ad)
    }

    fn ctx(ty: TypeId) -> Context {
        Context {
            user: UserId::new(1).unwrap(),
            role: RoleId::new(1).unwrap(),
            ty,
            range: MlsRange::default(),
        }
    }

    #[test]
    fn plan_keys_round_trip() {
        let rules = [
            (
                7u16,
                false,
                1u16,
                AvKind::Allowed,
                UNCONDITIONAL,
                0xdead_beef_u32,
            ),
            (65535, true, 65535, AvKind::AuditDeny, 0, 0),
            (
                1,
                true,
                42,
                AvKind::AuditAllow,
                (NARROW_COND_LIMIT - 1) as u32,
                u32::MAX,
            ),
        ];
        for (class, solo, target, kind, cond, perms) in rules {
            let r = AvRule {
                target,
                kind,
                cond,
                perms,
            };
            assert_eq!(u64::pack(class, solo, &r).unpack(perms), (class, solo, r));
            assert_eq!(u128::pack(class, solo, &r).unpack(perms), (class, solo, r));
        }
        let wide = AvRule {
            target: 3,
            kind: AvKind::Allowed,
            cond: u32::MAX - 1,
            perms: 5,
        };
        assert_eq!(u128::pack(2, false, &wide).unpack(5), (2, false, wide));
    }

    #[test]
    fn plans_match_the_per_attribute_walk() {
        let paths = policies();
        assert!(!paths.is_empty());
        for path in paths {
            let Ok(p) = Policy::open(&path) else {
                continue; // formats this build does not read are covered elsewhere
            };
            let p = Arc::new(p);
            let loaded = |index| {
                crate::sync::Arc::new(crate::state::Loaded::new(
                    p.clone(),
                    index,
                    crate::sidtab::SidTable::new(&p),
                    1,
                ))
            };
            let idx = loaded(PolicyIndex::build(&p));
            let wide = loaded(PolicyIndex::build_with(&p, true, None));
            // Half the plans the policy needs: some types planned, the rest walk buckets.
            let (_, planned, _) = idx.index.plan_stats();
            let half = loaded(PolicyIndex::build_with(&p, false, Some(planned / 2)));
            let nt = p.types.len();
            let nc = p.classes.len();
            // Concrete members of each type or attribute.
            let mut members = vec![Vec::new(); nt];
            for (t, map) in p.type_attr_map.iter().enumerate() {
                for a in map.iter() {
                    if let Some(m) = members.get_mut(a as usize) {
                        m.push(TypeId::from_index(t).unwrap());
                    }
                }
            }
            let mut rng = Rng::new(0x2545_f491_4f6c_dd1d ^ nt as u64);
            let keys: Vec<_> = p
                .avtab
                .entries
                .iter()
                .chain(p.cond_avtab.entries.iter())
                .map(|e| e.key)
                .collect();
            // Fewer queries in debug builds, where the walk is slow.
            let per_round = if cfg!(debug_assertions) {
                4_000
            } else {
                20_000
            };
            let step = (keys.len() / per_round).max(1);
            for round in 0..3 {
                let bools: Box<[bool]> = p
                    .bools
                    .iter()
                    .map(|b| {
                        if round == 0 {
                            b.state
                        } else {
                            rng.below(2) == 1
                        }
                    })
                    .collect();
                let snap = Snapshot::new(idx.clone(), bools.clone(), 1);
                let snap_wide = Snapshot::new(wide.clone(), bools.clone(), 1);
                let snap_half = Snapshot::new(half.clone(), bools, 1);
                let check = |s: TypeId, t: TypeId, c: ClassId| {
                    let got = crate::av::te_av(&snap, &ctx(s), &ctx(t), c);
                    let got_wide = crate::av::te_av(&snap_wide, &ctx(s), &ctx(t), c);
                    let got_half = crate::av::te_av(&snap_half, &ctx(s), &ctx(t), c);
                    assert_eq!(
                        got,
                        got_half,
                        "{}: plans cut short by the budget",
                        path.display()
                    );
                    assert_eq!(
                        got,
                        got_wide,
                        "{}: 64- and 128-bit plan keys",
                        path.display()
                    );
                    assert_eq!(
                        got,
                        walk(&snap, s, t, c),
                        "{}: source {} target {} class {}",
                        path.display(),
                        s.value(),
                        t.value(),
                        c.value()
                    );
                };
                for k in keys.iter().step_by(step) {
                    let (ms, mt) = (&members[k.source.index()], &members[k.target.index()]);
                    if ms.is_empty() || mt.is_empty() {
                        continue;
                    }
                    check(ms[rng.below(ms.len())], mt[rng.below(mt.len())], k.class);
                    check(ms[rng.below(ms.len())], k.target, k.class);
                }
                for _ in 0..per_round {
                    let s = TypeId::from_index(rng.below(nt)).unwrap();
                    let t = TypeId::from_index(rng.below(nt)).unwrap();
                    let c = ClassId::from_index(rng.below(nc)).unwrap();
                    check(s, t, c);
                }
            }
        }
    }
}

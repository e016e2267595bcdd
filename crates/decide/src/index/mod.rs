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
//! by indexing the source type's plans with the class value (instead of one hash probe per
//! attribute). Rules with the same (target, kind, conditional list) are folded into one
//! (permissions OR-ed, or AND-ed for auditdeny): they apply under identical conditions, so
//! the decision is the same. A plan's rules are split by target. Targets that some type
//! other than themselves can match (attributes) are few; each is tested against the target
//! type's row of a small bitmap over those values only (a few words, not one per 64
//! types). The others ("solo" targets, matched only by the type of the same value, most
//! rules) are sorted, and the rules for the query's target type are found by binary
//! search, or for long lists by one probe of a per-type (class, target) table. The buckets
//! stay for tools, for types the plan budget leaves out, and as the reference the plans
//! are tested against.
//!
//! A load builds only the buckets (two counting sorts of the rules, no comparison sort)
//! and what the plans are built from; a source type's plans, for every class, are built by
//! the first query that needs them and kept in a [`LazySlot`] of the index (each type's
//! plans depend only on the load, never on the booleans or the query). A policy reload
//! therefore does not pay for the plans of types nobody queries, and the first query of a
//! type after a load pays for that type's plans alone (median 0.3 µs, p99 about 22 µs,
//! about 200 µs for the largest Debian domain, `sysadm_t`).

use arbiter_policy::avtab::{Avtab, AvtabDatum, AvtabKind, Xperms};
use arbiter_policy::mls::MlsRange;
use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::{ClassId, Policy, RoleId, TypeId};
use std::collections::HashMap;

mod plans;
#[cfg(test)]
mod tests;

use crate::sync::LazySlot;
use plans::*;
pub use plans::{AvPlan, SOLO_SEARCH_MAX};

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
    /// Row `t.index()`: bit `k` set iff type value `k+1` is `t` or one of its attributes;
    /// built on first use of [`PolicyIndex::member_row`].
    member: Box<[LazySlot<Box<[u64]>>]>,
    /// CSR lists of each type's attribute values (including itself), ascending.
    attrs_off: Box<[u32]>,
    attrs: Box<[u16]>,
    /// The access-vector rules by source value, each source's run sorted by class (so a
    /// bucket is a contiguous range found by binary search).
    av: SourceRuns,
    xp_buckets: Buckets,
    xp_rules: Box<[XpRule]>,
    /// Per type index: its plans, built on its first query (see the module documentation).
    plans: Box<[LazySlot<TypePlans>]>,
    /// Plan keys fit in 64 bits (every conditional tag below [`NARROW_COND_LIMIT`]).
    narrow: bool,
    /// Per value - 1: whether the value is solo.
    solo: Box<[bool]>,
    /// Per value - 1: its shared index, `u16::MAX` for solo values.
    shared_ix: Box<[u16]>,
    /// The rules the planned types' plans may hold at most (before folding).
    plan_bound: usize,
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

/// Each type's attribute values (itself included), ascending, as CSR lists: offsets per
/// type index and the values. A type the attribute map does not list matches itself.
fn attribute_lists(policy: &Policy, ntypes: usize) -> (Vec<u32>, Vec<u16>) {
    let mut attrs_off = Vec::with_capacity(ntypes + 1);
    let mut attrs = Vec::new();
    attrs_off.push(0u32);
    for map in policy.type_attr_map.iter().take(ntypes) {
        for bit in map.iter() {
            let b = bit as usize;
            if b < ntypes {
                attrs.push((b + 1) as u16);
            }
        }
        attrs_off.push(attrs.len() as u32);
    }
    for t in policy.type_attr_map.len().min(ntypes)..ntypes {
        attrs.push((t + 1) as u16);
        attrs_off.push(attrs.len() as u32);
    }
    (attrs_off, attrs)
}

/// The rules of the avtabs sorted out by kind, before bucketing: access-vector rules and
/// extended-permission rules keyed by [`bucket_key`], type rules by their full key.
struct RuleLists {
    av: Vec<(u32, AvRule)>,
    xp: Vec<(u32, XpRule)>,
    type_rules: FxHashMap<(u16, u16, u16, u16), TypeRuleSlot>,
}

impl RuleLists {
    fn with_capacity(av_rules: usize) -> RuleLists {
        RuleLists {
            av: Vec::with_capacity(av_rules),
            xp: Vec::new(),
            type_rules: FxHashMap::default(),
        }
    }

    /// Adds every entry of `table`, entry `i` under the conditional tag `tag_of(i)`.
    fn add(&mut self, table: &Avtab, tag_of: &dyn Fn(usize) -> CondTag) {
        for (i, e) in table.entries.iter().enumerate() {
            let k = e.key;
            let cond = tag_of(i);
            let bk = bucket_key(k.source.value(), k.class.value());
            let av = |kind, perms| {
                let target = k.target.value();
                (
                    bk,
                    AvRule {
                        target,
                        kind,
                        cond,
                        perms,
                    },
                )
            };
            match (k.kind, e.datum()) {
                (AvtabKind::Allowed, AvtabDatum::Perms(p)) => self.av.push(av(AvKind::Allowed, p)),
                (AvtabKind::AuditAllow, AvtabDatum::Perms(p)) => {
                    self.av.push(av(AvKind::AuditAllow, p))
                }
                (AvtabKind::AuditDeny, AvtabDatum::Perms(p)) => {
                    self.av.push(av(AvKind::AuditDeny, p))
                }
                (kind, AvtabDatum::Type(t)) if kind.is_type_rule() => {
                    let slot = self
                        .type_rules
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
                        self.xp.push((
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
    }
}

/// The conditional tag of each conditional avtab entry: `2n` on node `n`'s true list,
/// `2n + 1` on its false list.
fn cond_tags(policy: &Policy) -> Vec<CondTag> {
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
    tags
}

/// Per type value: permissive, neveraudit, bounded, and unplanned (from `unplanned`,
/// type indexes).
fn type_flags(policy: &Policy, ntypes: usize, unplanned: Vec<usize>) -> Vec<u8> {
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
    type_flags
}

/// Per class index: its constraints compiled for access decisions.
fn compiled_constraints(policy: &Policy) -> Box<[Box<[crate::constraint::Compiled]>]> {
    policy
        .classes
        .iter()
        .map(|c| {
            c.constraints
                .iter()
                .map(|k| crate::constraint::Compiled::new(k.perms, &k.expr))
                .collect()
        })
        .collect()
}

/// The filename transitions by (target, class, name), outcomes in file order.
fn filename_transitions(policy: &Policy) -> FilenameTrans {
    let mut filename_trans: HashMap<_, Vec<_>, FxBuild> = HashMap::default();
    for f in &policy.filename_trans {
        filename_trans
            .entry((f.target, f.class, f.name.clone()))
            .or_default()
            .extend(f.outcomes.iter().cloned());
    }
    filename_trans
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
        let (attrs_off, attrs) = attribute_lists(policy, ntypes);

        let mut rules =
            RuleLists::with_capacity(policy.avtab.entries.len() + policy.cond_avtab.entries.len());
        rules.add(&policy.avtab, &|_| UNCONDITIONAL);
        let tags = cond_tags(policy);
        rules.add(&policy.cond_avtab, &|i| tags[i]);
        let RuleLists { av, xp, type_rules } = rules;

        let solo = solo_values(&attrs_off, &attrs, ntypes);
        let narrow = !wide_keys
            && av
                .iter()
                .all(|(_, r)| r.cond == UNCONDITIONAL || (r.cond as u64) < NARROW_COND_LIMIT);
        let runs = source_runs(&av, ntypes);
        let budget = budget.unwrap_or((av.len() * PLAN_BUDGET_PER_RULE).max(PLAN_BUDGET_MIN));
        let (unplanned, plan_bound) = unplanned_types(&runs, &attrs_off, &attrs, ntypes, budget);
        let (shared_ix, shared_member, shared_words) =
            shared_rows(&solo, &attrs_off, &attrs, ntypes);
        let (xp_buckets, xp_rules) = bucketize(xp);
        let type_flags = type_flags(policy, ntypes, unplanned);

        let process_class = policy.process_class();
        let process_trans_perms = process_class
            .map(|c| perm_bits(policy, c, &["transition", "dyntransition"]))
            .unwrap_or(0);

        PolicyIndex {
            ntypes,
            words,
            member: (0..ntypes).map(|_| LazySlot::new()).collect(),
            attrs_off: attrs_off.into_boxed_slice(),
            attrs: attrs.into_boxed_slice(),
            av: runs,
            xp_buckets,
            xp_rules,
            plans: (0..ntypes).map(|_| LazySlot::new()).collect(),
            narrow,
            solo: solo.into_boxed_slice(),
            shared_ix,
            plan_bound,
            shared_member,
            shared_words,
            type_flags: type_flags.into_boxed_slice(),
            constraints: compiled_constraints(policy),
            type_rules,
            role_trans: policy
                .role_trans
                .iter()
                .map(|r| ((r.role, r.ty, r.class), r.new_role))
                .collect(),
            role_allow: policy
                .role_allow
                .iter()
                .map(|r| (r.role, r.new_role))
                .collect(),
            range_trans: policy
                .range_trans
                .iter()
                .map(|r| ((r.source, r.target, r.class), r.range.clone()))
                .collect(),
            filename_trans: filename_transitions(policy),
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
    /// attributes. Built on first use (decisions use [`PolicyIndex::has_value`]).
    pub fn member_row(&self, t: TypeId) -> &[u64] {
        let Some(slot) = self.member.get(t.index()) else {
            return &[];
        };
        slot.get_or_build(|| {
            let mut row = vec![0u64; self.words];
            for &v in self.attrs_of(t) {
                let b = v as usize - 1;
                row[b / 64] |= 1 << (b % 64);
            }
            row.into_boxed_slice()
        })
    }

    /// Whether value `value` (a type or attribute) is `t` or one of its attributes: the
    /// membership row's bit, answered from the shared-value rows (a solo value is matched
    /// only by the type of the same value).
    #[inline]
    pub fn has_value(&self, t: TypeId, value: u16) -> bool {
        let Some(v) = (value as usize).checked_sub(1) else {
            return false;
        };
        if v >= self.ntypes || t.index() >= self.ntypes {
            return false;
        }
        if self.solo[v] {
            v == t.index()
        } else {
            bit_has(self.shared_row(t), self.shared_ix[v])
        }
    }

    /// The access-vector rules whose source is `source` (a type or attribute) for `class`.
    #[inline]
    pub fn av_bucket(&self, source: u16, class: ClassId) -> &[AvRule] {
        let v = source as usize;
        let (Some(&lo), Some(&hi)) = (self.av.off.get(v), self.av.off.get(v + 1)) else {
            return &[];
        };
        let (lo, hi) = (lo as usize, hi as usize);
        let classes = &self.av.class[lo..hi];
        let c = class.value();
        let first = classes.partition_point(|&x| x < c);
        let n = classes[first..].partition_point(|&x| x == c);
        &self.av.rules[lo + first..lo + first + n]
    }

    /// The merged rules of a source type for a class. See the module documentation. The
    /// type's plans for every class are built by the first call that needs them.
    #[inline]
    pub fn av_plan(&self, source: TypeId, class: ClassId) -> AvPlan<'_> {
        let Some(plans) = self.type_plans(source) else {
            return AvPlan::default();
        };
        match plans.classes.get(class.value() as usize) {
            Some(p) => {
                let start = p.start as usize;
                let mid = start + p.nshared as usize;
                let end = mid + p.nsolo as usize;
                AvPlan {
                    class: class.value(),
                    solo_start: mid as u32,
                    solo_index: plans.solo_index.as_ref(),
                    shared: &plans.rules[start..mid],
                    solo: &plans.rules[mid..end],
                }
            }
            None => AvPlan::default(),
        }
    }

    /// A type's plans, built now if no query has needed them yet; `None` for a type the
    /// plan budget left out (or beyond the types).
    #[inline]
    fn type_plans(&self, source: TypeId) -> Option<&TypePlans> {
        let t = source.index();
        let slot = self.plans.get(t)?;
        if let Some(p) = slot.get() {
            return Some(p);
        }
        if self.type_flags(source) & FLAG_UNPLANNED != 0 {
            return None;
        }
        Some(slot.get_or_build(|| self.build_type_plans(t)))
    }

    fn build_type_plans(&self, t: usize) -> TypePlans {
        let input = PlanInputs {
            runs: &self.av,
            attrs: &self.attrs[self.attrs_off[t] as usize..self.attrs_off[t + 1] as usize],
            solo: &self.solo,
            shared_ix: &self.shared_ix,
        };
        if self.narrow {
            build_type_plans::<u64>(&input)
        } else {
            build_type_plans::<u128>(&input)
        }
    }

    /// Builds every type's plans now (what a load did before plans were built on first
    /// use): for benchmarks that want the steady state from the first query, and tests.
    pub fn build_all_plans(&self) {
        for ty in (0..self.ntypes).filter_map(TypeId::from_index) {
            let _ = self.type_plans(ty);
        }
    }

    /// The solo-target rules of a plan whose target is `target` (in the plan's order).
    #[inline]
    pub fn solo_rules<'a>(&'a self, plan: &AvPlan<'a>, target: TypeId) -> &'a [AvRule] {
        let tv = target.value();
        let at = if plan.solo.len() <= SOLO_SEARCH_MAX {
            plan.solo.partition_point(|r| r.target < tv)
        } else {
            match plan.solo_index.and_then(|x| x.get(plan.class as u32, tv)) {
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

    /// Number of plans built so far (plans are built on a type's first query; see
    /// [`PolicyIndex::build_all_plans`]), merged rules in them, and of those rules the
    /// shared-target ones.
    pub fn plan_stats(&self) -> (usize, usize, usize) {
        let (mut n, mut rules, mut shared) = (0, 0, 0);
        for p in self.plans.iter().filter_map(LazySlot::get) {
            for c in p.classes.iter().filter(|c| c.nshared + c.nsolo > 0) {
                n += 1;
                shared += c.nshared as usize;
            }
            rules += p.rules.len();
        }
        (n, rules, shared)
    }

    /// The rules the planned types' plans may hold at most (each type's attributes' rules,
    /// before folding): what the plan budget is counted in.
    pub fn plan_bound(&self) -> usize {
        self.plan_bound
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
        let (mut max, mut buckets) = (0usize, 0usize);
        let mut i = 0;
        for v in 0..self.av.off.len() - 1 {
            let end = self.av.off[v + 1] as usize;
            while i < end {
                let c = self.av.class[i];
                let start = i;
                while i < end && self.av.class[i] == c {
                    i += 1;
                }
                max = max.max(i - start);
                buckets += 1;
            }
        }
        let mean = if buckets == 0 {
            0.0
        } else {
            self.av.rules.len() as f64 / buckets as f64
        };
        (max, mean)
    }
}

/// Whether bit `v-1` is set in a membership row (`v` a type or attribute value).
#[cfg(test)]
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

//! TE rules of one category (say, `allow … :file execute`) with their source and target
//! slots, indexed by source slot, so "the rules of this category between type s and type
//! t, in setools' order" costs a look at s's attributes rather than a scan of the policy.

use arbiter_policy::TypeId;
use arbiter_query::terules::TeRuleRef;
use arbiter_query::Index;
use std::collections::HashMap;

/// One category's rules, in `terules()` order.
#[derive(Default, Debug)]
pub struct SlotRules {
    rules: Vec<(TeRuleRef, TypeId, TypeId)>,
    by_source: HashMap<TypeId, Vec<u32>>,
}

impl SlotRules {
    /// Appends a rule (callers push in `terules()` order).
    pub fn push(&mut self, rule: TeRuleRef, source: TypeId, target: TypeId) {
        self.by_source
            .entry(source)
            .or_default()
            .push(self.rules.len() as u32);
        self.rules.push((rule, source, target));
    }

    /// The rules whose source stands for `s` and whose target stands for `t`, in order,
    /// filtered by `keep`.
    pub fn between(
        &self,
        index: &Index<'_>,
        s: TypeId,
        t: TypeId,
        keep: impl Fn(TeRuleRef) -> bool,
    ) -> Vec<TeRuleRef> {
        let mut found: Vec<u32> = Vec::new();
        for slot in slots_of(index, s) {
            for &k in self.by_source.get(&slot).into_iter().flatten() {
                let (rule, _, target) = self.rules[k as usize];
                if stands_for(index, target, t) && keep(rule) {
                    found.push(k);
                }
            }
        }
        found.sort_unstable();
        found
            .into_iter()
            .map(|k| self.rules[k as usize].0)
            .collect()
    }

    /// Whether any rule whose source is one of `slots` targets `t`, and whether one of
    /// those satisfies `keep`.
    pub fn any_between(
        &self,
        index: &Index<'_>,
        slots: &[TypeId],
        t: TypeId,
        keep: impl Fn(TeRuleRef) -> bool,
    ) -> (bool, bool) {
        let (mut any, mut kept) = (false, false);
        for &k in slots
            .iter()
            .flat_map(|slot| self.by_source.get(slot).into_iter().flatten())
        {
            let (rule, _, target) = self.rules[k as usize];
            if stands_for(index, target, t) {
                any = true;
                if keep(rule) {
                    kept = true;
                    break;
                }
            }
        }
        (any, kept)
    }

    /// Every type some rule with a source standing for `s` targets, as a set over type slots.
    pub fn targets_of<'o>(
        &self,
        index: &Index<'_>,
        s: TypeId,
        out: &'o mut Vec<bool>,
    ) -> &'o [bool] {
        out.clear();
        out.resize(index.type_slots(), false);
        for slot in slots_of(index, s) {
            for &k in self.by_source.get(&slot).into_iter().flatten() {
                for &t in index.expand(self.rules[k as usize].2) {
                    if let Some(b) = out.get_mut(t.index()) {
                        *b = true;
                    }
                }
            }
        }
        out
    }
}

/// Whether the rule side `slot` (a type or an attribute) stands for type `t`.
pub fn stands_for(index: &Index<'_>, slot: TypeId, t: TypeId) -> bool {
    slot == t || (index.is_attribute(slot) && index.expand(slot).binary_search(&t).is_ok())
}

/// A type and its attributes: the rule sides that stand for it.
pub fn slots_of(index: &Index<'_>, t: TypeId) -> Vec<TypeId> {
    std::iter::once(t).chain(index.attributes_of(t)).collect()
}

//! libsepol's assertion check over a binary policy's tables.
//!
//! Each allow entry (the unconditional table, then the conditional one, whatever a
//! boolean's state: libsepol checks both) is compared as stored, attributes and all: it
//! violates a neverallow when it grants one of the forbidden bits of its class and its
//! source and target attributes share a type with the statement's sources and targets
//! (or, for `self`, the source and target share one of the statement's sources).
//!
//! For a neverallowxperm such an entry only grants `ioctl`; it violates the statement for
//! a covered (source type, target type) pair when no allowxperm entry of the same table
//! applies to the pair (the whole ioctl permission is then granted), or when one that
//! applies grants a forbidden number — libsepol's four cases in
//! `check_assertion_extended_permissions`.

use super::resolve::{Assertion, IOCTL_WORDS};
use arbiter_policy::avtab::{AvtabDatum, AvtabKind, Xperms, XpermsKind};
use arbiter_policy::{ClassId, TypeId};
use arbiter_query::terules::{self, TeRuleRef};
use arbiter_query::Index;
use std::collections::HashMap;

/// A rule of the policy that makes a statement fail.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Grant {
    /// An allow rule granting a forbidden permission (for a neverallowxperm: `ioctl`, with
    /// no allowxperm rule restricting it for some covered pair).
    Allow(TeRuleRef),
    /// An allowxperm rule granting a forbidden ioctl number.
    AllowXperm(TeRuleRef),
}

impl Grant {
    /// The rule.
    pub fn rule(self) -> TeRuleRef {
        match self {
            Grant::Allow(r) | Grant::AllowXperm(r) => r,
        }
    }
}

/// One violated statement and the rules that violate it, in setools' rule order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Index into the assertions checked.
    pub assertion: usize,
    /// The rules, each once.
    pub grants: Vec<Grant>,
}

/// Checks every assertion; returns the violated ones, in input order.
pub fn check(index: &Index<'_>, assertions: &[Assertion]) -> Vec<Violation> {
    let policy = index.policy();
    let order = terules::raw_order(
        policy,
        AvtabKind::Allowed.bits() | AvtabKind::XpermsAllowed.bits(),
    );
    let rank: HashMap<TeRuleRef, usize> = order.iter().enumerate().map(|(i, &r)| (r, i)).collect();
    // ioctl allowxperm entries by (conditional table?, class).
    let mut xperm_rules: HashMap<(bool, ClassId), Vec<TeRuleRef>> = HashMap::new();
    for &r in &order {
        let Some(e) = terules::entry(policy, r) else {
            continue;
        };
        if e.key.kind == AvtabKind::XpermsAllowed
            && xperms_of(index, r).is_some_and(|x| {
                matches!(x.kind, XpermsKind::IoctlFunction | XpermsKind::IoctlDriver)
            })
        {
            xperm_rules
                .entry((is_cond(r), e.key.class))
                .or_default()
                .push(r);
        }
    }
    // Allow entries by class, in order: a statement looks only at its classes' entries.
    let mut allows: HashMap<ClassId, Vec<TeRuleRef>> = HashMap::new();
    for &r in &order {
        if let Some(e) = terules::entry(policy, r) {
            if e.key.kind == AvtabKind::Allowed {
                allows.entry(e.key.class).or_default().push(r);
            }
        }
    }
    let mut out = Vec::new();
    for (n, a) in assertions.iter().enumerate() {
        let mut grants: Vec<Grant> = Vec::new();
        let mut classes: Vec<ClassId> = a.perms.iter().map(|&(c, _)| c).collect();
        classes.dedup();
        let rules = classes
            .iter()
            .flat_map(|c| allows.get(c).into_iter().flatten());
        for &r in rules {
            let Some(e) = terules::entry(policy, r) else {
                continue;
            };
            let AvtabDatum::Perms(bits) = e.datum() else {
                continue;
            };
            if e.key.kind != AvtabKind::Allowed
                || !a
                    .perms
                    .iter()
                    .any(|&(c, p)| c == e.key.class && p & bits != 0)
            {
                continue;
            }
            let src: Vec<TypeId> = members_in(index, e.key.source, &a.sources);
            if src.is_empty() {
                continue;
            }
            let tgt: Vec<TypeId> = targets_in(index, e.key.target, a);
            let rule_targets = index.expand(e.key.target);
            let self_hit =
                a.target_self && src.iter().any(|t| rule_targets.binary_search(t).is_ok());
            if tgt.is_empty() && !self_hit {
                continue;
            }
            let Some(ioctls) = &a.ioctls else {
                grants.push(Grant::Allow(r));
                continue;
            };
            let empty = Vec::new();
            let candidates = xperm_rules
                .get(&(is_cond(r), e.key.class))
                .unwrap_or(&empty);
            xperm_grants(
                index,
                &src,
                &tgt,
                a.target_self.then_some(rule_targets),
                ioctls,
                candidates,
                r,
                &mut grants,
            );
        }
        if !grants.is_empty() {
            grants.sort_by_key(|g| {
                (
                    rank.get(&g.rule()).copied(),
                    matches!(g, Grant::AllowXperm(_)),
                )
            });
            grants.dedup();
            out.push(Violation {
                assertion: n,
                grants,
            });
        }
    }
    out
}

/// For an allow entry granting `ioctl` to the pairs `src` × (`tgt` ∪ self), the grants
/// that violate a neverallowxperm: the allowxperm rules applying to a pair that grant a
/// forbidden number, and the allow rule itself when some pair has no allowxperm rule.
#[allow(clippy::too_many_arguments)]
fn xperm_grants(
    index: &Index<'_>,
    src: &[TypeId],
    tgt: &[TypeId],
    self_targets: Option<&[TypeId]>,
    ioctls: &[u64],
    candidates: &[TeRuleRef],
    allow: TeRuleRef,
    grants: &mut Vec<Grant>,
) {
    let policy = index.policy();
    let mut covered = vec![false; index.type_slots()];
    let mut allow_granted = false;
    for &i in src {
        let with_self = self_targets.is_some_and(|t| t.binary_search(&i).is_ok());
        let pair_targets = || tgt.iter().copied().chain(with_self.then_some(i));
        if tgt.is_empty() && !with_self {
            continue;
        }
        covered.iter_mut().for_each(|c| *c = false);
        for &x in candidates {
            let Some(e) = terules::entry(policy, x) else {
                continue;
            };
            if index.expand(e.key.source).binary_search(&i).is_err() {
                continue;
            }
            let xt = index.expand(e.key.target);
            let mut applies = false;
            for j in pair_targets() {
                if xt.binary_search(&j).is_ok() {
                    applies = true;
                    if let Some(c) = covered.get_mut(j.index()) {
                        *c = true;
                    }
                }
            }
            if applies && xperms_of(index, x).is_some_and(|xp| violates(ioctls, xp)) {
                grants.push(Grant::AllowXperm(x));
            }
        }
        if !allow_granted
            && pair_targets().any(|j| !covered.get(j.index()).copied().unwrap_or(false))
        {
            allow_granted = true;
            grants.push(Grant::Allow(allow));
        }
    }
}

/// Whether an allowxperm entry grants one of the forbidden ioctl numbers.
fn violates(ioctls: &[u64], x: &Xperms) -> bool {
    let word = |d: usize, k: usize| {
        ioctls
            .get(d * 4 + k / 2)
            .map_or(0, |w| (w >> ((k % 2) * 32)) as u32)
    };
    match x.kind {
        XpermsKind::IoctlFunction => {
            let d = usize::from(x.driver);
            (0..8).any(|k| word(d, k) & x.perms[k] != 0)
        }
        XpermsKind::IoctlDriver => (0..256usize).any(|d| {
            x.perms[d / 32] & (1 << (d % 32)) != 0
                && ioctls
                    .get(d * 4..d * 4 + 4)
                    .is_some_and(|w| w.iter().any(|&w| w != 0))
        }),
        _ => false,
    }
}

/// The members of a rule side that the statement's set holds.
fn members_in(index: &Index<'_>, side: TypeId, set: &[bool]) -> Vec<TypeId> {
    index
        .expand(side)
        .iter()
        .copied()
        .filter(|t| set.get(t.index()).copied().unwrap_or(false))
        .collect()
}

/// The statement's targets among a rule target's members. libsepol 3.4 compares a
/// statement whose target lists `self` on self pairs only, whatever else it lists
/// (`neverallow d { t self }:…` is checked as `neverallow d self:…`); checkpolicy agrees.
fn targets_in(index: &Index<'_>, side: TypeId, a: &Assertion) -> Vec<TypeId> {
    if a.target_self {
        Vec::new()
    } else {
        members_in(index, side, &a.targets)
    }
}

fn is_cond(r: TeRuleRef) -> bool {
    matches!(r, TeRuleRef::Cond { .. })
}

fn xperms_of<'p>(index: &Index<'p>, r: TeRuleRef) -> Option<&'p Xperms> {
    let policy = index.policy();
    let e = terules::entry(policy, r)?;
    let table = if is_cond(r) {
        &policy.cond_avtab
    } else {
        &policy.avtab
    };
    table.xperms_of(e.datum())
}

const _: () = assert!(IOCTL_WORDS == 65536 / 64);

/// The (source type, target type) pairs of `assertion` that allow rule `rule` covers —
/// what checkpolicy lists, one `violated by allow S T:C` line each, from its expanded
/// table. Empty when the rule is not an allow rule of one of the statement's classes.
pub fn covered_pairs(
    index: &Index<'_>,
    assertion: &Assertion,
    rule: TeRuleRef,
) -> Vec<(TypeId, TypeId)> {
    let Some(e) = terules::entry(index.policy(), rule) else {
        return Vec::new();
    };
    let src = members_in(index, e.key.source, &assertion.sources);
    let tgt = targets_in(index, e.key.target, assertion);
    let rule_targets = index.expand(e.key.target);
    let mut out = Vec::new();
    for &s in &src {
        for &t in &tgt {
            out.push((s, t));
        }
        if assertion.target_self && rule_targets.binary_search(&s).is_ok() && !tgt.contains(&s) {
            out.push((s, s));
        }
    }
    out
}

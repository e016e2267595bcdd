//! TE rules of one kind expanded, one source type at a time, to the keys sediff compares
//! (target type, class, conditional expression and branch, file name), each key with the
//! rules that produce it in the order setools lists them.
//!
//! sediff keeps, for each expanded key, the first rule setools' `terules()` yields for it
//! (Python keeps the first of equal set or dict members) and prints that rule, so the order
//! matters whenever several rules expand to one key: an attribute's rule and a type's rule,
//! or the several per-driver entries of one `allowxperm` statement. `terules()` walks
//! libsepol's unconditional table bucket by bucket, then the filename transitions, then each
//! conditional's true and false lists; [`Rank`] reproduces that order.

use super::Section;
use crate::index::Index;
use crate::render;
use arbiter_policy::avtab::{AvtabEntry, AvtabKind};
use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::TypeId;
use std::cmp::Ordering;

/// Where a rule is stored in its policy.
#[derive(Copy, Clone, Debug)]
pub(super) enum Stored {
    /// Entry `i` of the unconditional table.
    Avtab(u32),
    /// Entry `i` of the conditional table.
    Cond(u32),
    /// Outcome `outcome` of `Policy::filename_trans[trans]`.
    Filename { trans: u32, outcome: u32 },
}

/// A rule's position in setools' iteration order: smaller is listed first.
pub(super) type Rank = u128;

/// One rule with its position in setools' order and, when conditional, its expression
/// (index into [`TeSide::cond_text`]) and branch.
#[derive(Copy, Clone)]
struct Rule {
    stored: Stored,
    rank: Rank,
    cond: Option<(u32, bool)>,
}

/// One expanded key of a source type, with the rule that produced it.
#[derive(Copy, Clone, Debug)]
pub(super) struct Expanded<'a> {
    pub target: &'a str,
    pub class: &'a str,
    /// Conditional expression as setools prints it, and branch.
    pub cond: Option<(&'a str, bool)>,
    /// File name of a filename type_transition.
    pub name: Option<&'a str>,
    pub stored: Stored,
    pub rank: Rank,
}

impl Expanded<'_> {
    fn key_cmp(&self, other: &Self) -> Ordering {
        (self.target, self.class, self.cond, self.name).cmp(&(
            other.target,
            other.class,
            other.cond,
            other.name,
        ))
    }
}

/// One policy's rules of one kind, indexed by the type-table slot of their source.
pub(super) struct TeSide<'i, 'p> {
    pub index: &'i Index<'p>,
    rules: Vec<Rule>,
    /// Per type slot: the rules written with it as source.
    by_source: Vec<Vec<u32>>,
    /// The conditional expressions, by conditional node, as setools prints them.
    cond_text: Vec<String>,
}

use crate::terules::{avtab_mask, avtab_rank, COND_GROUP, FILENAME_GROUP};

impl<'i, 'p> TeSide<'i, 'p> {
    /// Indexes the rules of `kind` (and, for type_transition, the filename transitions).
    pub(super) fn new(index: &'i Index<'p>, kind: AvtabKind) -> Self {
        let p = index.policy();
        let mut side = TeSide {
            index,
            rules: Vec::new(),
            by_source: vec![Vec::new(); p.types.len()],
            cond_text: Vec::with_capacity(p.cond_nodes.len()),
        };
        let mask = avtab_mask(p.avtab.entries.len());
        for (i, e) in p.avtab.entries.iter().enumerate() {
            if e.key.kind == kind {
                let rank = avtab_rank(e, i, mask);
                side.push(e.key.source, Stored::Avtab(i as u32), rank, None);
            }
        }
        if kind == AvtabKind::Transition {
            for (t, ft) in p.filename_trans.iter().enumerate() {
                for (o, (sources, _)) in ft.outcomes.iter().enumerate() {
                    let stored = Stored::Filename {
                        trans: t as u32,
                        outcome: o as u32,
                    };
                    let rank = FILENAME_GROUP | ((t as u128) << 64) | ((o as u128) << 32);
                    for bit in sources.iter() {
                        if let Some(s) = TypeId::from_index(bit as usize) {
                            side.push(s, stored, rank | u128::from(bit), None);
                        }
                    }
                }
            }
        }
        for (n, node) in p.cond_nodes.iter().enumerate() {
            side.cond_text.push(render::cond_expr(p, &node.expr));
            for (list, branch) in [(&node.true_list, true), (&node.false_list, false)] {
                for i in list.start..list.end {
                    let Some(e) = p.cond_avtab.entries.get(i as usize) else {
                        continue;
                    };
                    if e.key.kind == kind {
                        let rank = COND_GROUP
                            | ((n as u128) << 64)
                            | (u128::from(!branch) << 32)
                            | u128::from(i);
                        side.push(
                            e.key.source,
                            Stored::Cond(i),
                            rank,
                            Some((n as u32, branch)),
                        );
                    }
                }
            }
        }
        side
    }

    fn push(&mut self, source: TypeId, stored: Stored, rank: Rank, cond: Option<(u32, bool)>) {
        if let Some(v) = self.by_source.get_mut(source.index()) {
            v.push(self.rules.len() as u32);
            self.rules.push(Rule { stored, rank, cond });
        }
    }

    /// The unconditional or conditional entry a rule is stored in.
    pub(super) fn entry(&self, stored: Stored) -> Option<&'p AvtabEntry> {
        let p = self.index.policy();
        match stored {
            Stored::Avtab(i) => p.avtab.entries.get(i as usize),
            Stored::Cond(i) => p.cond_avtab.entries.get(i as usize),
            Stored::Filename { .. } => None,
        }
    }

    /// The new type of a type rule.
    pub(super) fn default_type(&self, stored: Stored) -> &str {
        let p = self.index.policy();
        let t = match stored {
            Stored::Filename { trans, outcome } => p
                .filename_trans
                .get(trans as usize)
                .and_then(|ft| ft.outcomes.get(outcome as usize))
                .map(|o| o.1),
            _ => match self.entry(stored).map(|e| e.datum()) {
                Some(arbiter_policy::avtab::AvtabDatum::Type(t)) => Some(t),
                _ => None,
            },
        };
        t.map_or("", |t| self.index.type_name(t))
    }

    /// Every expanded key of source type `s`, sorted by key and, within a key, in setools'
    /// order (so a key's first element is the rule sediff prints).
    pub(super) fn expand_source<'a>(&'a self, s: TypeId, out: &mut Vec<Expanded<'a>>) {
        out.clear();
        let p = self.index.policy();
        let slots = std::iter::once(s).chain(self.index.attributes_of(s));
        for slot in slots {
            for &r in self.by_source.get(slot.index()).into_iter().flatten() {
                let Some(rule) = self.rules.get(r as usize) else {
                    continue;
                };
                let (target, class, name) = match rule.stored {
                    Stored::Filename { trans, .. } => {
                        let Some(ft) = p.filename_trans.get(trans as usize) else {
                            continue;
                        };
                        (ft.target, ft.class, Some(&*ft.name))
                    }
                    stored => {
                        let Some(e) = self.entry(stored) else {
                            continue;
                        };
                        (e.key.target, e.key.class, None)
                    }
                };
                let class = self.index.class_name(class);
                let cond = rule.cond.map(|(c, b)| {
                    let text = self.cond_text.get(c as usize).map_or("", String::as_str);
                    (text, b)
                });
                for &t in self.index.expand(target) {
                    out.push(Expanded {
                        target: self.index.type_name(t),
                        class,
                        cond,
                        name,
                        stored: rule.stored,
                        rank: rule.rank,
                    });
                }
            }
        }
        out.sort_unstable_by(|a, b| a.key_cmp(b).then(a.rank.cmp(&b.rank)));
    }
}

/// The source types of both policies by name, sorted, with each policy's type.
pub(super) fn source_types<'a>(
    left: &'a Index<'_>,
    right: &'a Index<'_>,
) -> Vec<(&'a str, Option<TypeId>, Option<TypeId>)> {
    let types = |idx: &'a Index<'_>| -> Vec<(&'a str, TypeId)> {
        let p = idx.policy();
        let mut v: Vec<(&str, TypeId)> = (0..p.types.len())
            .filter(|&i| p.types[i].flavor == TypeFlavor::Type)
            .filter_map(TypeId::from_index)
            .map(|t| (idx.type_name(t), t))
            .collect();
        v.sort_unstable();
        v
    };
    let (l, r) = (types(left), types(right));
    let mut out = Vec::with_capacity(l.len().max(r.len()));
    let (mut i, mut j) = (0, 0);
    while i < l.len() || j < r.len() {
        match (l.get(i), r.get(j)) {
            (Some(a), Some(b)) if a.0 == b.0 => {
                out.push((a.0, Some(a.1), Some(b.1)));
                i += 1;
                j += 1;
            }
            (Some(a), Some(b)) if a.0 < b.0 => {
                out.push((a.0, Some(a.1), None));
                i += 1;
            }
            (Some(a), None) => {
                out.push((a.0, Some(a.1), None));
                i += 1;
            }
            (_, Some(b)) => {
                out.push((b.0, None, Some(b.1)));
                j += 1;
            }
            (None, None) => break,
        }
    }
    out
}

/// Walks the keys of two expansions (each sorted by [`TeSide::expand_source`]) in key
/// order, calling `f` with each key's rules on the left, the right, or both.
pub(super) fn pair_keys<'a>(
    left: &'a [Expanded<'a>],
    right: &'a [Expanded<'a>],
    mut f: impl FnMut(Option<&'a [Expanded<'a>]>, Option<&'a [Expanded<'a>]>),
) {
    let mut l = left
        .chunk_by(|a, b| a.key_cmp(b) == Ordering::Equal)
        .peekable();
    let mut r = right
        .chunk_by(|a, b| a.key_cmp(b) == Ordering::Equal)
        .peekable();
    loop {
        let order = match (l.peek(), r.peek()) {
            (Some(a), Some(b)) => a[0].key_cmp(&b[0]),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => return,
        };
        match order {
            Ordering::Less => f(l.next(), None),
            Ordering::Greater => f(None, r.next()),
            Ordering::Equal => f(l.next(), r.next()),
        }
    }
}

/// For each source type name of either policy, in name order: both sides' rules of that
/// source expanded and paired by key ([`pair_keys`]); `f` gets the source name and the two
/// sides' rules of one key.
pub(super) fn each_key<'s>(
    l: &'s TeSide<'s, '_>,
    r: &'s TeSide<'s, '_>,
    mut f: impl FnMut(&'s str, Option<&[Expanded<'_>]>, Option<&[Expanded<'_>]>),
) {
    let (mut lm, mut rm) = (Vec::new(), Vec::new());
    for (src, lt, rt) in source_types(l.index, r.index) {
        match lt {
            Some(t) => l.expand_source(t, &mut lm),
            None => lm.clear(),
        }
        match rt {
            Some(t) => r.expand_source(t, &mut rm),
            None => rm.clear(),
        }
        pair_keys(&lm, &rm, |a, b| f(src, a, b));
    }
}

/// A section's items in sediff's order: rules by their statements, modified ones by the
/// left rule's statement (`modified` holds (left statement, modified line) pairs).
pub(super) fn finish(mut s: Section, mut modified: Vec<(String, String)>) -> Section {
    s.added.sort_unstable();
    s.removed.sort_unstable();
    modified.sort_unstable();
    s.modified = modified.into_iter().map(|(_, l)| (l, Vec::new())).collect();
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn avtab_mask_follows_libsepol_sizing() {
        // avtab_alloc: shift = bit length of nel, minus 2 when above 2.
        assert_eq!(avtab_mask(1), 1);
        assert_eq!(avtab_mask(3), 3);
        assert_eq!(avtab_mask(4), 1);
        assert_eq!(avtab_mask(9245), 4095);
        assert_eq!(avtab_mask(usize::MAX >> 1), (1 << 20) - 1);
    }
}

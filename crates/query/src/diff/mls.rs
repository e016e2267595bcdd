//! The MLS sections: categories, sensitivities, level definitions and range_transition
//! rules, plus the cross-policy comparison of levels and ranges that contexts also use.
//!
//! sediff matches MLS symbols by name, and compares a level by its sensitivity's name and
//! the set of its categories' names, never by value: two policies may number the same
//! categories differently. Symbols are listed in value order, as setools sorts categories
//! and sensitivities (each policy's own order; the left one's for modified symbols).

use super::Section;
use crate::index::Index;
use crate::render;
use crate::search::mls_statement;
use arbiter_policy::mls::{MlsLevel, MlsRange};
use arbiter_policy::symbols::MlsAlias;
use arbiter_policy::Policy;
use std::collections::{BTreeSet, HashMap, HashSet};

/// The section keys this module answers.
pub(super) const KEYS: &[&str] = &["category", "sensitivity", "level", "range_trans"];

/// The section for `key`, or `None` when `key` is not one of [`KEYS`].
pub(super) fn section(key: &str, li: &Index<'_>, ri: &Index<'_>) -> Option<Section> {
    let (left, right) = (li.policy(), ri.policy());
    Some(match key {
        "category" => aliased_symbols(
            "Categories",
            "Categories",
            symbols(
                left.categories.iter().map(|c| &*c.name),
                &left.category_aliases,
            ),
            symbols(
                right.categories.iter().map(|c| &*c.name),
                &right.category_aliases,
            ),
        ),
        "sensitivity" => {
            let mut s = aliased_symbols(
                "Sensitivities",
                "Sensitivities",
                symbols(
                    left.sensitivities.iter().map(|s| &*s.name),
                    &left.sensitivity_aliases,
                ),
                symbols(
                    right.sensitivities.iter().map(|s| &*s.name),
                    &right.sensitivity_aliases,
                ),
            );
            // sediff's own spelling of this one sub-header.
            s.added_noun = Some("Sensitivites");
            s
        }
        "level" => levels(left, right),
        "range_trans" => range_transitions(li, ri),
        _ => return None,
    })
}

/// Compares levels and ranges of two policies as setools' `LevelWrapper`/`RangeWrapper` do:
/// by sensitivity name and set of category names.
pub(super) struct LevelMatch<'p> {
    left: &'p Policy,
    right: &'p Policy,
    /// Left category bit -> right category bit of the same name.
    cats: Vec<Option<u32>>,
}

impl<'p> LevelMatch<'p> {
    /// The name mapping between `left` and `right`.
    pub(super) fn new(left: &'p Policy, right: &'p Policy) -> Self {
        let by_name: HashMap<&str, u32> = right
            .categories
            .iter()
            .enumerate()
            .map(|(i, c)| (&*c.name, i as u32))
            .collect();
        let cats = left
            .categories
            .iter()
            .map(|c| by_name.get(&*c.name).copied())
            .collect();
        LevelMatch { left, right, cats }
    }

    /// Whether a left level and a right level are the same level.
    pub(super) fn same_level(&self, l: &MlsLevel, r: &MlsLevel) -> bool {
        sens_name(self.left, l.sens) == sens_name(self.right, r.sens)
            && l.cats.len() == r.cats.len()
            && l.cats.iter().all(|b| {
                self.cats
                    .get(b as usize)
                    .copied()
                    .flatten()
                    .is_some_and(|rb| r.cats.contains(rb))
            })
    }

    /// Whether a left range and a right range have the same low and high levels.
    pub(super) fn same_range(&self, l: &MlsRange, r: &MlsRange) -> bool {
        self.same_level(&l.low, &r.low) && self.same_level(&l.high, &r.high)
    }
}

fn sens_name(p: &Policy, value: u32) -> &str {
    p.sensitivities
        .get((value as usize).wrapping_sub(1))
        .map_or("", |s| &s.name)
}

/// A category or sensitivity: its name and aliases, in value order.
type Aliased<'p> = Vec<(&'p str, BTreeSet<&'p str>)>;

fn symbols<'p>(names: impl Iterator<Item = &'p str>, aliases: &'p [MlsAlias]) -> Aliased<'p> {
    let mut v: Aliased<'p> = names.map(|n| (n, BTreeSet::new())).collect();
    for a in aliases {
        if let Some((_, set)) = v.get_mut((a.value as usize).wrapping_sub(1)) {
            set.insert(&*a.name);
        }
    }
    v.retain(|(n, _)| !n.is_empty());
    v
}

/// Symbols matched by name; modified when their aliases differ.
fn aliased_symbols(
    title: &'static str,
    noun: &'static str,
    left: Aliased<'_>,
    right: Aliased<'_>,
) -> Section {
    let l: HashMap<&str, &BTreeSet<&str>> = left.iter().map(|(n, a)| (*n, a)).collect();
    let r: HashMap<&str, &BTreeSet<&str>> = right.iter().map(|(n, a)| (*n, a)).collect();
    let mut s = Section {
        title,
        noun,
        has_modified: true,
        ..Section::default()
    };
    s.added = right
        .iter()
        .filter(|(n, _)| !l.contains_key(n))
        .map(|(n, _)| n.to_string())
        .collect();
    s.removed = left
        .iter()
        .filter(|(n, _)| !r.contains_key(n))
        .map(|(n, _)| n.to_string())
        .collect();
    // Modified symbols in the left policy's value order.
    let modified = left
        .iter()
        .filter_map(|(n, la)| r.get(n).map(|ra| (*n, la, *ra)))
        .filter(|(_, la, ra)| la != ra);
    for (name, la, ra) in modified {
        let added: Vec<&&str> = ra.difference(la).collect();
        let removed: Vec<&&str> = la.difference(ra).collect();
        let mut change = Vec::new();
        if !added.is_empty() {
            change.push(format!("{} Added Aliases", added.len()));
        }
        if !removed.is_empty() {
            change.push(format!("{} Removed Aliases", removed.len()));
        }
        // sediff prints the "Aliases:" line even when only one side changed.
        let mut details = vec!["Aliases:".to_string()];
        details.extend(added.iter().map(|a| format!("+ {a}")));
        details.extend(removed.iter().map(|a| format!("- {a}")));
        s.modified
            .push((format!("{name} ({})", change.join(", ")), details));
    }
    s
}

/// Level declarations matched by sensitivity name; modified when their categories differ.
fn levels(left: &Policy, right: &Policy) -> Section {
    let decls = |p: &Policy| -> Vec<usize> {
        (0..p.sensitivities.len())
            .filter(|&i| !p.sensitivities[i].name.is_empty())
            .collect()
    };
    let (ld, rd) = (decls(left), decls(right));
    let by_name = |p: &Policy, d: &[usize]| -> HashMap<String, usize> {
        d.iter()
            .map(|&i| (p.sensitivities[i].name.to_string(), i))
            .collect()
    };
    let (lmap, rmap) = (by_name(left, &ld), by_name(right, &rd));
    let mut s = Section {
        title: "Levels",
        noun: "Levels",
        has_modified: true,
        ..Section::default()
    };
    s.added = rd
        .iter()
        .filter(|&&i| !lmap.contains_key(&*right.sensitivities[i].name))
        .map(|&i| render::level(right, &right.sensitivities[i].level))
        .collect();
    s.removed = ld
        .iter()
        .filter(|&&i| !rmap.contains_key(&*left.sensitivities[i].name))
        .map(|&i| render::level(left, &left.sensitivities[i].level))
        .collect();
    let cat_names = |p: &'_ Policy, l: &MlsLevel| -> Vec<String> {
        l.cats
            .iter()
            .filter_map(|b| p.categories.get(b as usize).map(|c| c.name.to_string()))
            .collect()
    };
    // Level declarations in the left policy's sensitivity order.
    for &li in &ld {
        let sens = &left.sensitivities[li];
        let Some(&ri) = rmap.get(&*sens.name) else {
            continue;
        };
        let (lc, rc) = (
            cat_names(left, &sens.level),
            cat_names(right, &right.sensitivities[ri].level),
        );
        let (lset, rset): (HashSet<&String>, HashSet<&String>) =
            (lc.iter().collect(), rc.iter().collect());
        // Each side in its own policy's category order.
        let added: Vec<&String> = rc.iter().filter(|c| !lset.contains(c)).collect();
        let removed: Vec<&String> = lc.iter().filter(|c| !rset.contains(c)).collect();
        if added.is_empty() && removed.is_empty() {
            continue;
        }
        let mut change = Vec::new();
        if !added.is_empty() {
            change.push(format!("{} Added Categories", added.len()));
        }
        if !removed.is_empty() {
            change.push(format!("{} Removed Categories", removed.len()));
        }
        let mut details: Vec<String> = added.iter().map(|c| format!("+ {c}")).collect();
        details.extend(removed.iter().map(|c| format!("- {c}")));
        s.modified
            .push((format!("{} ({})", sens.name, change.join(", ")), details));
    }
    s
}

/// range_transition rules matched by (source, target, class) names; modified when the
/// default range differs.
fn range_transitions(li: &Index<'_>, ri: &Index<'_>) -> Section {
    let (left, right) = (li.policy(), ri.policy());
    // (source, target, class) -> rule index, first rule of a key kept as setools' set keeps it.
    let keyed = |ix: &Index<'_>| -> HashMap<(String, String, String), usize> {
        let mut m = HashMap::new();
        for (i, rt) in ix.policy().range_trans.iter().enumerate() {
            m.entry((
                ix.type_name(rt.source).to_string(),
                ix.type_name(rt.target).to_string(),
                ix.class_name(rt.class).to_string(),
            ))
            .or_insert(i);
        }
        m
    };
    let (lk, rk) = (keyed(li), keyed(ri));
    let statement = |ix: &Index<'_>, i: usize| {
        let rt = &ix.policy().range_trans[i];
        mls_statement(ix, &rt.range, rt.source, rt.target, rt.class)
    };
    let mut s = Section {
        title: "Range_transition Rules",
        noun: "Range_transition Rules",
        has_modified: true,
        ..Section::default()
    };
    s.added = rk
        .iter()
        .filter(|(k, _)| !lk.contains_key(*k))
        .map(|(_, &i)| statement(ri, i))
        .collect();
    s.added.sort();
    s.removed = lk
        .iter()
        .filter(|(k, _)| !rk.contains_key(*k))
        .map(|(_, &i)| statement(li, i))
        .collect();
    s.removed.sort();
    let levels = LevelMatch::new(left, right);
    let mut modified: Vec<(String, String)> = Vec::new();
    for (k, &l) in &lk {
        let Some(&r) = rk.get(k) else { continue };
        let (lr, rr) = (&left.range_trans[l].range, &right.range_trans[r].range);
        if levels.same_range(lr, rr) {
            continue;
        }
        // Brackets around the ranges, which contain " - ", as sediff writes them.
        let line = format!(
            "range_transition {} {}:{} +[{}] -[{}]",
            k.0,
            k.1,
            k.2,
            render::range(right, rr),
            render::range(left, lr)
        );
        modified.push((statement(li, l), line));
    }
    modified.sort();
    s.modified = modified
        .into_iter()
        .map(|(_, line)| (line, Vec::new()))
        .collect();
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn features() -> Policy {
        Policy::from_bytes(include_bytes!("../../../../policies/bin/features.33"))
            .expect("features policy")
    }

    fn level(sens: u32, cats: &[u32]) -> MlsLevel {
        MlsLevel {
            sens,
            cats: arbiter_policy::Ebitmap::from_bits(cats.iter().copied()),
        }
    }

    #[test]
    fn levels_are_compared_by_category_names_not_values() {
        let left = features();
        let mut right = features();
        // The same categories, numbered the other way round.
        right.categories.reverse();
        let last = right.categories.len() as u32 - 1;
        let m = LevelMatch::new(&left, &right);
        assert!(m.same_level(&level(1, &[0, 3]), &level(1, &[last, last - 3])));
        assert!(!m.same_level(&level(1, &[0, 3]), &level(1, &[0, 3])));
        assert!(!m.same_level(&level(1, &[0]), &level(2, &[last])));
    }

    #[test]
    fn alias_changes_print_the_aliases_line_and_each_side_sorted() {
        let left = vec![("c0", BTreeSet::from(["b", "z"])), ("c1", BTreeSet::new())];
        let right = vec![("c0", BTreeSet::from(["a", "b"])), ("c1", BTreeSet::new())];
        let s = aliased_symbols("Categories", "Categories", left, right);
        assert_eq!(
            s.modified,
            vec![(
                "c0 (1 Added Aliases, 1 Removed Aliases)".to_string(),
                vec!["Aliases:".to_string(), "+ a".to_string(), "- z".to_string()]
            )]
        );
    }
}

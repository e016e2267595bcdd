//! Filename transitions in the per-rule form of versions 25 to 32: which rules to write so
//! that the kernel's grouping rebuilds a group of the model.

use std::collections::{HashMap, HashSet};

use crate::ids::TypeId;
use crate::transitions::FilenameTrans;

/// Per-rule filename transitions of one group: (source type value, new type).
type Rules = Vec<(u32, TypeId)>;

/// The per-rule form (before version 33) of a filename transition group: (source type
/// value, new type) rules in an order from which the kernel's grouping (see
/// `read_filename_trans`) rebuilds exactly the group's outcomes. `Err` holds the rules that
/// apply instead (each source with the first outcome listing it) when no order can.
pub(super) fn per_rule(f: &FilenameTrans) -> Result<Rules, Rules> {
    let outcomes: Vec<(Vec<u32>, TypeId)> = f
        .outcomes
        .iter()
        .map(|(bits, t)| (bits.iter().map(|b| b + 1).collect(), *t))
        .collect();
    // The last outcome listing each source.
    let mut last: HashMap<u32, usize> = HashMap::new();
    for (j, (sources, _)) in outcomes.iter().enumerate() {
        for &s in sources {
            last.insert(s, j);
        }
    }
    // Each outcome is created by a source no later outcome lists (so that it can still be
    // added there); the other sources follow, latest outcome first, so that a source
    // listed twice reaches the later outcome before the earlier one holds it.
    let mut rules = Vec::new();
    let mut creator = Vec::with_capacity(outcomes.len());
    for (j, (sources, t)) in outcomes.iter().enumerate() {
        let c = sources
            .iter()
            .copied()
            .find(|s| last[s] == j)
            .or_else(|| sources.first().copied());
        if let Some(c) = c {
            rules.push((c, *t));
        }
        creator.push(c);
    }
    for (j, (sources, t)) in outcomes.iter().enumerate().rev() {
        rules.extend(
            sources
                .iter()
                .filter(|&&s| Some(s) != creator[j])
                .map(|&s| (s, *t)),
        );
    }
    if regroup(&rules) == outcomes {
        return Ok(rules);
    }
    let mut seen = HashSet::new();
    let mut effective = Vec::new();
    for (sources, t) in &outcomes {
        for &s in sources {
            if seen.insert(s) {
                effective.push((s, *t));
            }
        }
    }
    Err(effective)
}

/// The kernel's `filename_trans_read_helper_compat` grouping of one key's rules.
fn regroup(rules: &[(u32, TypeId)]) -> Vec<(Vec<u32>, TypeId)> {
    let mut outcomes: Vec<(Vec<u32>, TypeId)> = Vec::new();
    'rules: for &(s, t) in rules {
        for o in outcomes.iter_mut() {
            if o.0.contains(&s) {
                continue 'rules;
            }
            if o.1 == t {
                o.0.push(s);
                continue 'rules;
            }
        }
        outcomes.push((vec![s], t));
    }
    for o in &mut outcomes {
        o.0.sort_unstable();
    }
    outcomes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ebitmap::Ebitmap;
    use crate::ids::ClassId;

    fn tid(v: u16) -> TypeId {
        TypeId::new(v).unwrap()
    }

    fn group(outcomes: &[(&[u32], u16)]) -> FilenameTrans {
        FilenameTrans {
            target: tid(1),
            class: ClassId::new(1).unwrap(),
            name: "f".into(),
            outcomes: outcomes
                .iter()
                .map(|(bits, t)| (Ebitmap::from_bits(bits.iter().copied()), tid(*t)))
                .collect(),
        }
    }

    #[test]
    fn per_rule_order_rebuilds_disjoint_groups() {
        let f = group(&[(&[0, 2], 7), (&[1, 5], 8)]);
        let rules = per_rule(&f).unwrap();
        assert_eq!(
            regroup(&rules),
            vec![(vec![1, 3], tid(7)), (vec![2, 6], tid(8))]
        );
    }

    #[test]
    fn per_rule_order_rebuilds_a_source_under_two_outcomes() {
        // What the kernel builds from (1→7), (2→8), (2→7): source 2 under both.
        let f = group(&[(&[0, 1], 7), (&[1], 8)]);
        let rules = per_rule(&f).unwrap();
        assert_eq!(
            regroup(&rules),
            vec![(vec![1, 2], tid(7)), (vec![2], tid(8))]
        );
    }

    #[test]
    fn unreproducible_groups_fall_back_to_the_rules_that_apply() {
        // Two outcomes with the same new type cannot come out of the per-rule format.
        let f = group(&[(&[0], 7), (&[1], 8), (&[2], 7)]);
        let rules = per_rule(&f).unwrap_err();
        assert_eq!(rules, vec![(1, tid(7)), (2, tid(8)), (3, tid(7))]);
        // A source only under outcomes that all list it cannot create the later one.
        let f = group(&[(&[0], 7), (&[0], 8)]);
        assert_eq!(per_rule(&f).unwrap_err(), vec![(1, tid(7))]);
    }
}

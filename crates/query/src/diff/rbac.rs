//! The RBAC rule sections: role allow and role_transition.
//!
//! Role allow rules are compared as (role, new role) pairs and can only be added or
//! removed. Role transitions are keyed by (role, target type expanded, class); a key on
//! both sides with a different new role is modified, printed without a closing `;` as
//! sediff prints it. Where several rules expand to one key, the first in the policy's list
//! is the one compared, as in sediff's sets.

use super::Section;
use crate::index::Index;

/// The section keys this module answers.
pub(super) const KEYS: &[&str] = &["role_allow", "role_trans"];

/// The section for `key`, or `None` when `key` is not one of [`KEYS`].
pub(super) fn section(key: &str, left: &Index<'_>, right: &Index<'_>) -> Option<Section> {
    Some(match key {
        "role_allow" => role_allow_section(left, right),
        "role_trans" => role_trans_section(left, right),
        _ => return None,
    })
}

/// Walks two sorted, deduplicated key lists in order, calling `f` with each key's value
/// on the left, the right, or both.
fn pair_sorted<K: Ord + Copy, V: Copy>(
    left: &[(K, V)],
    right: &[(K, V)],
    mut f: impl FnMut(K, Option<V>, Option<V>),
) {
    let (mut i, mut j) = (0, 0);
    while i < left.len() || j < right.len() {
        match (left.get(i), right.get(j)) {
            (Some(a), Some(b)) if a.0 == b.0 => {
                f(a.0, Some(a.1), Some(b.1));
                i += 1;
                j += 1;
            }
            (Some(a), Some(b)) if a.0 < b.0 => {
                f(a.0, Some(a.1), None);
                i += 1;
            }
            (Some(a), None) => {
                f(a.0, Some(a.1), None);
                i += 1;
            }
            (_, Some(b)) => {
                f(b.0, None, Some(b.1));
                j += 1;
            }
            (None, None) => break,
        }
    }
}

/// Sorts keys with their values and keeps the first value of each key (the pairs are
/// numbered in list order, so "first" is the policy's order).
fn first_per_key<K: Ord + Copy, V: Copy>(mut v: Vec<(K, usize, V)>) -> Vec<(K, V)> {
    v.sort_unstable_by_key(|e| (e.0, e.1));
    v.dedup_by_key(|e| e.0);
    v.into_iter().map(|(k, _, val)| (k, val)).collect()
}

/// A policy's role allow rules as (role, new role) keys.
fn role_allows<'a>(idx: &'a Index<'_>) -> Vec<((&'a str, &'a str), ())> {
    let v = idx
        .policy()
        .role_allow
        .iter()
        .enumerate()
        .map(|(i, a)| ((idx.role_name(a.role), idx.role_name(a.new_role)), i, ()))
        .collect();
    first_per_key(v)
}

/// A role transition's key: (role, target type, class).
type TransKey<'a> = (&'a str, &'a str, &'a str);

/// A policy's role transitions by key, with the new role.
fn role_transitions<'a>(idx: &'a Index<'_>) -> Vec<(TransKey<'a>, &'a str)> {
    let mut v = Vec::new();
    for (i, rt) in idx.policy().role_trans.iter().enumerate() {
        let (role, class) = (idx.role_name(rt.role), idx.class_name(rt.class));
        let new = idx.role_name(rt.new_role);
        for &t in idx.expand(rt.ty) {
            v.push(((role, idx.type_name(t), class), i, new));
        }
    }
    first_per_key(v)
}

fn role_allow_section(left: &Index<'_>, right: &Index<'_>) -> Section {
    let (l, r) = (role_allows(left), role_allows(right));
    let mut s = Section {
        title: "Role allow Rules",
        noun: "Role Allow Rules",
        has_modified: false,
        ..Section::default()
    };
    pair_sorted(&l, &r, |(src, tgt), a, b| match (a, b) {
        (Some(()), None) => s.removed.push(format!("allow {src} {tgt};")),
        (None, Some(())) => s.added.push(format!("allow {src} {tgt};")),
        _ => {}
    });
    s.added.sort_unstable();
    s.removed.sort_unstable();
    s
}

fn role_trans_section(left: &Index<'_>, right: &Index<'_>) -> Section {
    let (l, r) = (role_transitions(left), role_transitions(right));
    let mut s = Section {
        title: "Role_transition Rules",
        noun: "Role_transition Rules",
        has_modified: true,
        ..Section::default()
    };
    let statement = |(role, ty, class): TransKey<'_>, new: &str| {
        format!("role_transition {role} {ty}:{class} {new};")
    };
    let mut modified: Vec<(String, String)> = Vec::new();
    pair_sorted(&l, &r, |key, a, b| match (a, b) {
        (Some(old), None) => s.removed.push(statement(key, old)),
        (None, Some(new)) => s.added.push(statement(key, new)),
        (Some(old), Some(new)) if old != new => {
            let (role, ty, class) = key;
            modified.push((
                statement(key, old),
                format!("role_transition {role} {ty}:{class} +{new} -{old}"),
            ));
        }
        _ => {}
    });
    s.added.sort_unstable();
    s.removed.sort_unstable();
    modified.sort_unstable();
    s.modified = modified.into_iter().map(|(_, l)| (l, Vec::new())).collect();
    s
}

//! The other sections: default_* rules and typebounds.
//!
//! A default rule is matched by its kind and class, and is modified when its default
//! (`source`, `target`, `glblub`) or its range part (`low`, `high`, `low_high`) changes. A
//! typebounds rule is matched by its child type and is modified when its parent changes.

use super::Section;
use crate::index::Index;
use crate::info;
use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::{Policy, TypeId};
use std::collections::HashMap;

/// The section keys this module answers.
pub(super) const KEYS: &[&str] = &["default", "typebounds"];

/// The section for `key`, or `None` when `key` is not one of [`KEYS`].
pub(super) fn section(key: &str, li: &Index<'_>, ri: &Index<'_>) -> Option<Section> {
    Some(match key {
        "default" => defaults(li.policy(), ri.policy()),
        "typebounds" => typebounds(li, ri),
        _ => return None,
    })
}

/// One default_* rule: its kind and class (the key), its default and its range part
/// (`default_range` only; `None` also for `glblub`).
struct Default<'p> {
    kind: &'static str,
    class: &'p str,
    default: &'static str,
    range: Option<&'static str>,
}

impl Default<'_> {
    fn statement(&self) -> String {
        match self.range {
            Some(r) => format!("{} {} {} {r};", self.kind, self.class, self.default),
            None => format!("{} {} {};", self.kind, self.class, self.default),
        }
    }
}

fn default_rules(p: &Policy) -> Vec<Default<'_>> {
    let mut v = Vec::new();
    for c in p.classes.iter().filter(|c| !c.name.is_empty()) {
        for (kind, side) in [
            ("default_user", c.default_user),
            ("default_role", c.default_role),
            ("default_type", c.default_type),
        ] {
            if let Some(default) = info::default_side(side) {
                v.push(Default {
                    kind,
                    class: &c.name,
                    default,
                    range: None,
                });
            }
        }
        if let Some((default, range)) = info::default_range_parts(c.default_range) {
            v.push(Default {
                kind: "default_range",
                class: &c.name,
                default,
                range,
            });
        }
    }
    v
}

fn defaults(left: &Policy, right: &Policy) -> Section {
    let (l, r) = (default_rules(left), default_rules(right));
    let keyed = |v: &[Default<'_>]| -> HashMap<(&'static str, String), usize> {
        let mut m = HashMap::new();
        for (i, d) in v.iter().enumerate() {
            m.entry((d.kind, d.class.to_string())).or_insert(i);
        }
        m
    };
    let (lk, rk) = (keyed(&l), keyed(&r));
    let mut s = Section {
        title: "Defaults",
        noun: "Defaults",
        has_modified: true,
        ..Section::default()
    };
    s.added = r
        .iter()
        .filter(|d| !lk.contains_key(&(d.kind, d.class.to_string())))
        .map(Default::statement)
        .collect();
    s.added.sort();
    s.removed = l
        .iter()
        .filter(|d| !rk.contains_key(&(d.kind, d.class.to_string())))
        .map(Default::statement)
        .collect();
    s.removed.sort();
    // Python's None where setools has no range part.
    let text = |r: Option<&str>| r.unwrap_or("None").to_string();
    let mut modified = Vec::new();
    for (key, &i) in &lk {
        let Some(&j) = rk.get(key) else { continue };
        let (a, b) = (&l[i], &r[j]);
        let default_changed = a.default != b.default;
        // sediff compares range parts only of default_range rules, and tests the old
        // part's truth: a change from glblub (None) shows only through its default.
        let range_shown = a.kind == "default_range" && a.range != b.range && a.range.is_some();
        if !(default_changed || range_shown) {
            continue;
        }
        let mut line = format!("{} {} ", a.kind, a.class);
        if default_changed {
            line.push_str(&format!("+{} -{}", b.default, a.default));
        } else {
            line.push_str(a.default);
        }
        if range_shown {
            line.push_str(&format!(" +{} -{};", text(b.range), text(a.range)));
        } else if a.kind == "default_range" {
            line.push_str(&format!(" {};", text(a.range)));
        } else {
            line.push(';');
        }
        modified.push((a.statement(), line));
    }
    modified.sort();
    s.modified = modified.into_iter().map(|(_, m)| (m, Vec::new())).collect();
    s
}

fn typebounds(li: &Index<'_>, ri: &Index<'_>) -> Section {
    // Child name -> parent name.
    let bounds = |ix: &Index<'_>| -> HashMap<String, String> {
        let p = ix.policy();
        (0..p.types.len())
            .filter_map(TypeId::from_index)
            .filter(|t| p.types[t.index()].flavor == TypeFlavor::Type)
            .filter_map(|t| {
                p.types[t.index()]
                    .bounds
                    .map(|b| (ix.type_name(t).to_string(), ix.type_name(b).to_string()))
            })
            .collect()
    };
    let (l, r) = (bounds(li), bounds(ri));
    let statement = |child: &str, parent: &str| format!("typebounds {parent} {child};");
    let mut s = Section {
        title: "Typebounds",
        noun: "Typebounds",
        has_modified: true,
        // sediff prints this section unselected only for added or removed rules.
        modified_hidden_when_unselected: true,
        ..Section::default()
    };
    s.added = r
        .iter()
        .filter(|(c, _)| !l.contains_key(*c))
        .map(|(c, p)| statement(c, p))
        .collect();
    s.added.sort();
    s.removed = l
        .iter()
        .filter(|(c, _)| !r.contains_key(*c))
        .map(|(c, p)| statement(c, p))
        .collect();
    s.removed.sort();
    let mut modified: Vec<(String, String)> = l
        .iter()
        .filter_map(|(c, lp)| r.get(c).filter(|rp| *rp != lp).map(|rp| (c, lp, rp)))
        .map(|(c, lp, rp)| (statement(c, lp), format!("typebounds +{rp} -{lp} {c};")))
        .collect();
    modified.sort();
    s.modified = modified.into_iter().map(|(_, m)| (m, Vec::new())).collect();
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_policy::symbols::DefaultRange;

    fn features() -> Policy {
        Policy::from_bytes(include_bytes!("../../../../policies/bin/features.33"))
            .expect("features policy")
    }

    fn with_lnk_file_range(r: DefaultRange) -> Policy {
        let mut p = features();
        for c in p.classes.iter_mut().filter(|c| &*c.name == "lnk_file") {
            c.default_range = r;
        }
        p
    }

    #[test]
    fn glblub_has_no_range_part_and_prints_python_none() {
        let glblub = with_lnk_file_range(DefaultRange::Glblub);
        let low = with_lnk_file_range(DefaultRange::SourceLow);
        let s = defaults(&glblub, &low);
        let lines: Vec<&str> = s.modified.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(lines, ["default_range lnk_file +source -glblub None;"]);
        let s = defaults(&low, &glblub);
        let lines: Vec<&str> = s.modified.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(
            lines,
            ["default_range lnk_file +glblub -source +None -low;"]
        );
    }

    #[test]
    fn a_changed_range_part_alone_keeps_the_default_unmarked() {
        let a = with_lnk_file_range(DefaultRange::TargetLow);
        let b = with_lnk_file_range(DefaultRange::TargetLowHigh);
        let s = defaults(&a, &b);
        let lines: Vec<&str> = s.modified.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(lines, ["default_range lnk_file target +low_high -low;"]);
        assert!(s.added.is_empty() && s.removed.is_empty());
    }
}

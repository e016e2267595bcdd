//! The component sections: properties, commons, classes, booleans, roles, types, type
//! attributes, users and policy capabilities.

use super::Section;
use crate::index::Index;
use crate::render;
use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::{ClassId, HandleUnknown, Policy, TypeId};
use std::collections::{BTreeMap, BTreeSet};

/// The section keys this module answers.
pub(super) const KEYS: &[&str] = &[
    "property",
    "common",
    "class",
    "bool",
    "role",
    "type",
    "attribute",
    "user",
    "polcap",
];

/// The section for `key`, or `None` when `key` is not one of [`KEYS`].
pub(super) fn section(key: &str, li: &Index<'_>, ri: &Index<'_>) -> Option<Section> {
    let (left, right) = (li.policy(), ri.policy());
    Some(match key {
        "property" => properties(left, right),
        "common" => perm_sets(
            "Commons",
            left.commons.iter().map(|c| (&*c.name, names(&c.perms))),
            right.commons.iter().map(|c| (&*c.name, names(&c.perms))),
        ),
        "class" => perm_sets("Classes", class_perms(li), class_perms(ri)),
        "bool" => booleans(left, right),
        "user" => users(left, right),
        "role" => member_sets("Roles", "types", role_types(li), role_types(ri)),
        "type" => types(li, ri),
        "attribute" => member_sets(
            "Type Attributes",
            "types",
            attribute_members(li),
            attribute_members(ri),
        ),
        "polcap" => polcaps(left, right),
        _ => return None,
    })
}

fn names(perms: &[arbiter_policy::symbols::Perm]) -> BTreeSet<&str> {
    perms.iter().map(|p| &*p.name).collect()
}

fn class_perms<'a, 'p>(
    index: &'a Index<'p>,
) -> impl Iterator<Item = (&'p str, BTreeSet<&'p str>)> + 'a {
    let p = index.policy();
    (0..p.classes.len())
        .filter_map(ClassId::from_index)
        .filter(move |c| !p.classes[c.index()].name.is_empty())
        .map(move |c| {
            (
                index.class_name(c),
                index.class_perms(c).map(|(n, _)| n).collect(),
            )
        })
}

fn perm_sets<'a>(
    title: &'static str,
    left: impl Iterator<Item = (&'a str, BTreeSet<&'a str>)>,
    right: impl Iterator<Item = (&'a str, BTreeSet<&'a str>)>,
) -> Section {
    let l: BTreeMap<&str, BTreeSet<&str>> = left.filter(|(n, _)| !n.is_empty()).collect();
    let r: BTreeMap<&str, BTreeSet<&str>> = right.filter(|(n, _)| !n.is_empty()).collect();
    let mut s = Section {
        title,
        noun: title,
        has_modified: true,
        ..Section::default()
    };
    for (name, rp) in &r {
        match l.get(name) {
            None => s.added.push(name.to_string()),
            Some(lp) => {
                let added: Vec<&str> = rp.difference(lp).copied().collect();
                let removed: Vec<&str> = lp.difference(rp).copied().collect();
                if added.is_empty() && removed.is_empty() {
                    continue;
                }
                let mut change = Vec::new();
                if !added.is_empty() {
                    change.push(format!("{} Added permissions", added.len()));
                }
                if !removed.is_empty() {
                    change.push(format!("{} Removed permissions", removed.len()));
                }
                let mut details: Vec<String> = added.iter().map(|p| format!("+ {p}")).collect();
                details.extend(removed.iter().map(|p| format!("- {p}")));
                s.modified
                    .push((format!("{name} ({})", change.join(", ")), details));
            }
        }
    }
    s.removed = l
        .keys()
        .filter(|n| !r.contains_key(*n))
        .map(|n| n.to_string())
        .collect();
    s
}

/// Named sets compared by name: added, removed, and modified with `N Added WHAT`.
fn member_sets(
    title: &'static str,
    what: &str,
    left: BTreeMap<String, BTreeSet<String>>,
    right: BTreeMap<String, BTreeSet<String>>,
) -> Section {
    let mut s = Section {
        title,
        noun: title,
        has_modified: true,
        ..Section::default()
    };
    for (name, rs) in &right {
        match left.get(name) {
            None => s.added.push(name.clone()),
            Some(ls) => {
                let added: Vec<&String> = rs.difference(ls).collect();
                let removed: Vec<&String> = ls.difference(rs).collect();
                if added.is_empty() && removed.is_empty() {
                    continue;
                }
                let mut change = Vec::new();
                if !added.is_empty() {
                    change.push(format!("{} Added {what}", added.len()));
                }
                if !removed.is_empty() {
                    change.push(format!("{} Removed {what}", removed.len()));
                }
                let mut details: Vec<String> = added.iter().map(|t| format!("+ {t}")).collect();
                details.extend(removed.iter().map(|t| format!("- {t}")));
                s.modified
                    .push((format!("{name} ({})", change.join(", ")), details));
            }
        }
    }
    s.removed = left
        .keys()
        .filter(|n| !right.contains_key(*n))
        .cloned()
        .collect();
    s
}

fn role_types(index: &Index<'_>) -> BTreeMap<String, BTreeSet<String>> {
    let p = index.policy();
    p.roles
        .iter()
        .filter(|r| !r.name.is_empty())
        .map(|r| {
            let types = r
                .types
                .iter()
                .filter_map(|b| TypeId::from_index(b as usize))
                .filter(|&t| {
                    p.types
                        .get(t.index())
                        .is_some_and(|d| d.flavor == TypeFlavor::Type)
                })
                .map(|t| index.type_name(t).to_string())
                .collect();
            (r.name.to_string(), types)
        })
        .collect()
}

fn attribute_members(index: &Index<'_>) -> BTreeMap<String, BTreeSet<String>> {
    let p = index.policy();
    (0..p.types.len())
        .filter_map(TypeId::from_index)
        .filter(|&t| index.is_attribute(t))
        .map(|a| {
            let members = index
                .expand(a)
                .iter()
                .map(|&t| index.type_name(t).to_string())
                .collect();
            (index.type_name(a).to_string(), members)
        })
        .collect()
}

/// A type's attributes, aliases and permissive flag, by type name.
type TypeFacts = BTreeMap<String, (BTreeSet<String>, BTreeSet<String>, bool)>;

fn type_facts(index: &Index<'_>) -> TypeFacts {
    let p = index.policy();
    let mut facts: TypeFacts = (0..p.types.len())
        .filter_map(TypeId::from_index)
        .filter(|t| p.types[t.index()].flavor == TypeFlavor::Type)
        .map(|t| {
            let attrs = index
                .attributes_of(t)
                .map(|a| index.type_name(a).to_string())
                .collect();
            let permissive = p.permissive.contains(u32::from(t.value()));
            (
                index.type_name(t).to_string(),
                (attrs, BTreeSet::new(), permissive),
            )
        })
        .collect();
    for a in &p.type_aliases {
        if let Some(f) = facts.get_mut(index.type_name(a.target)) {
            f.1.insert(a.name.to_string());
        }
    }
    facts
}

fn types(left: &Index<'_>, right: &Index<'_>) -> Section {
    let (l, r) = (type_facts(left), type_facts(right));
    let mut s = Section {
        title: "Types",
        noun: "Types",
        has_modified: true,
        ..Section::default()
    };
    for (name, (ra, ral, rp)) in &r {
        let Some((la, lal, lp)) = l.get(name) else {
            s.added.push(name.clone());
            continue;
        };
        let added_attr: Vec<&String> = ra.difference(la).collect();
        let removed_attr: Vec<&String> = la.difference(ra).collect();
        let added_alias: Vec<&String> = ral.difference(lal).collect();
        let removed_alias: Vec<&String> = lal.difference(ral).collect();
        let perm_changed = lp != rp;
        if added_attr.is_empty()
            && removed_attr.is_empty()
            && added_alias.is_empty()
            && removed_alias.is_empty()
            && !perm_changed
        {
            continue;
        }
        let mut change = Vec::new();
        if !added_attr.is_empty() {
            change.push(format!("{} Added attributes", added_attr.len()));
        }
        if !removed_attr.is_empty() {
            change.push(format!("{} Removed attributes", removed_attr.len()));
        }
        if !added_alias.is_empty() {
            change.push(format!("{} Added aliases", added_alias.len()));
        }
        if !removed_alias.is_empty() {
            change.push(format!("{} Removed aliases", removed_alias.len()));
        }
        if perm_changed {
            change.push(
                if *lp {
                    "Removed permissive"
                } else {
                    "Added permissive"
                }
                .to_string(),
            );
        }
        let mut details = Vec::new();
        if !added_attr.is_empty() || !removed_attr.is_empty() {
            details.push("Attributes:".to_string());
        }
        details.extend(added_attr.iter().map(|a| format!("+ {a}")));
        details.extend(removed_attr.iter().map(|a| format!("- {a}")));
        if !added_alias.is_empty() || !removed_alias.is_empty() {
            details.push("Aliases:".to_string());
        }
        details.extend(added_alias.iter().map(|a| format!("+ {a}")));
        details.extend(removed_alias.iter().map(|a| format!("- {a}")));
        s.modified
            .push((format!("{name} ({})", change.join(", ")), details));
    }
    s.removed = l.keys().filter(|n| !r.contains_key(*n)).cloned().collect();
    s
}

/// A user's roles, default level and range (the texts sediff prints for non-MLS policies
/// when MLS is disabled).
fn user_facts(p: &Policy) -> BTreeMap<String, (BTreeSet<String>, String, String)> {
    p.users
        .iter()
        .filter(|u| !u.name.is_empty())
        .map(|u| {
            let roles = u
                .roles
                .iter()
                .filter_map(|b| p.roles.get(b as usize))
                .map(|r| r.name.to_string())
                .collect();
            let (level, range) = if p.mls {
                (
                    render::level(p, &u.default_level),
                    render::range(p, &u.range),
                )
            } else {
                let none = "None (MLS Disabled)".to_string();
                (none.clone(), none)
            };
            (u.name.to_string(), (roles, level, range))
        })
        .collect()
}

fn users(left: &Policy, right: &Policy) -> Section {
    let (l, r) = (user_facts(left), user_facts(right));
    let mut s = Section {
        title: "Users",
        noun: "Users",
        has_modified: true,
        ..Section::default()
    };
    for (name, (rr, rl, rrange)) in &r {
        let Some((lr, ll, lrange)) = l.get(name) else {
            s.added.push(name.clone());
            continue;
        };
        let added: Vec<&String> = rr.difference(lr).collect();
        let removed: Vec<&String> = lr.difference(rr).collect();
        let (level_changed, range_changed) = (ll != rl, lrange != rrange);
        if added.is_empty() && removed.is_empty() && !level_changed && !range_changed {
            continue;
        }
        let mut change = Vec::new();
        if !added.is_empty() {
            change.push(format!("{} Added roles", added.len()));
        }
        if !removed.is_empty() {
            change.push(format!("{} Removed roles", removed.len()));
        }
        if level_changed {
            change.push("Modified default level".to_string());
        }
        if range_changed {
            change.push("Modified range".to_string());
        }
        let mut details = Vec::new();
        if !added.is_empty() || !removed.is_empty() {
            details.push("Roles:".to_string());
        }
        details.extend(added.iter().map(|a| format!("+ {a}")));
        details.extend(removed.iter().map(|a| format!("- {a}")));
        if level_changed {
            details.extend([
                "Default level:".to_string(),
                format!("+ {rl}"),
                format!("- {ll}"),
            ]);
        }
        if range_changed {
            details.extend([
                "Range:".to_string(),
                format!("+ {rrange}"),
                format!("- {lrange}"),
            ]);
        }
        s.modified
            .push((format!("{name} ({})", change.join(", ")), details));
    }
    s.removed = l.keys().filter(|n| !r.contains_key(*n)).cloned().collect();
    s
}

fn properties(left: &Policy, right: &Policy) -> Section {
    let hu = |h: HandleUnknown| match h {
        HandleUnknown::Deny => "deny",
        HandleUnknown::Reject => "reject",
        HandleUnknown::Allow => "allow",
    };
    let py = |b: bool| if b { "True" } else { "False" };
    let mut m = Vec::new();
    if left.handle_unknown != right.handle_unknown {
        m.push(format!(
            "handle_unknown +{} -{}",
            hu(right.handle_unknown),
            hu(left.handle_unknown)
        ));
    }
    if left.mls != right.mls {
        m.push(format!("MLS +{} -{}", py(right.mls), py(left.mls)));
    }
    if left.version != right.version {
        m.push(format!("version +{} -{}", right.version, left.version));
    }
    // sediff sorts by property name.
    m.sort_by_key(|s| s.split(' ').next().unwrap_or("").to_string());
    Section {
        title: "Policy Properties",
        noun: "Properties",
        has_modified: true,
        modified: m.into_iter().map(|s| (s, Vec::new())).collect(),
        ..Section::default()
    }
}

fn booleans(left: &Policy, right: &Policy) -> Section {
    let l: BTreeMap<&str, bool> = left
        .bools
        .iter()
        .filter(|b| !b.name.is_empty())
        .map(|b| (&*b.name, b.state))
        .collect();
    let r: BTreeMap<&str, bool> = right
        .bools
        .iter()
        .filter(|b| !b.name.is_empty())
        .map(|b| (&*b.name, b.state))
        .collect();
    let py = |b: bool| if b { "True" } else { "False" };
    let mut s = Section {
        title: "Booleans",
        noun: "Booleans",
        has_modified: true,
        ..Section::default()
    };
    for (n, rs) in &r {
        match l.get(n) {
            None => s.added.push(n.to_string()),
            Some(ls) if ls != rs => s.modified.push((
                format!("{n} (Modified default state)"),
                vec![format!("+ {}", py(*rs)), format!("- {}", py(*ls))],
            )),
            Some(_) => {}
        }
    }
    s.removed = l
        .keys()
        .filter(|n| !r.contains_key(*n))
        .map(|n| n.to_string())
        .collect();
    s
}

fn polcaps(left: &Policy, right: &Policy) -> Section {
    let caps = |p: &Policy| -> BTreeSet<String> {
        p.policycaps
            .iter()
            .map(|b| crate::info::polcap_name(b as usize))
            .collect()
    };
    let (l, r) = (caps(left), caps(right));
    Section {
        title: "Policy Capabilities",
        noun: "Policy Capabilities",
        has_modified: false,
        added: r.difference(&l).cloned().collect(),
        removed: l.difference(&r).cloned().collect(),
        ..Section::default()
    }
}

//! `sediff` (setools 4.4.1): differences between two policies, for the sections implemented
//! here (properties, commons, classes, booleans, roles, types, type attributes, users,
//! allow/auditallow/dontaudit rules, policy capabilities), with sediff's text.
//!
//! AV rules are compared as sediff compares them: expanded to (conditional expression,
//! branch, source type, target type, class) keys with permissions unioned per key, and
//! conditional permissions already granted unconditionally dropped. Unlike sediff, the
//! expansion is streamed one source type at a time over an index of rules by source, so
//! memory holds one source type's keys plus the output, never the whole expanded policy.

use crate::argv::{self, Opt, UsageError};
use crate::index::Index;
use crate::render;
use arbiter_policy::avtab::{Avtab, AvtabDatum, AvtabKind};
use arbiter_policy::{ClassId, HandleUnknown, Policy, TypeFlavor, TypeId};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The sections implemented, in sediff's order: (option key, flags).
const SECTIONS: &[(&str, &[&str])] = &[
    ("property", &["--property"]),
    ("common", &["--common"]),
    ("class", &["-c", "--class"]),
    ("bool", &["-b", "--bool"]),
    ("role", &["-r", "--role"]),
    ("type", &["-t", "--type"]),
    ("attribute", &["-a", "--attribute"]),
    ("user", &["-u", "--user"]),
    ("allow", &["--allow"]),
    ("auditallow", &["--auditallow"]),
    ("dontaudit", &["--dontaudit"]),
    ("polcap", &["--polcap"]),
];

/// sediff's options that select sections not implemented here (accepted, reported).
const OTHER_SECTIONS: &[&str] = &[
    "-t",
    "--type",
    "-a",
    "--attribute",
    "-r",
    "--role",
    "-u",
    "--user",
    "--sensitivity",
    "--category",
    "--level",
    "--allowxperm",
    "--auditallowxperm",
    "--dontauditxperm",
    "-T",
    "--type_trans",
    "--type_change",
    "--type_member",
    "--role_allow",
    "--role_trans",
    "--range_trans",
    "--constrain",
    "--mlsconstrain",
    "--validatetrans",
    "--mlsvalidatetrans",
    "--ibendportcon",
    "--ibpkeycon",
    "--initialsid",
    "--fs_use",
    "--genfscon",
    "--netifcon",
    "--nodecon",
    "--portcon",
    "--default",
    "--typebounds",
];

/// The parsed `sediff` command line.
#[derive(Debug, Default, Clone)]
pub struct DiffArgs {
    /// POLICY1 (left) and POLICY2 (right).
    pub policies: Vec<String>,
    /// Selected section keys (empty: every implemented section, skipping empty ones).
    pub sections: Vec<&'static str>,
    /// Selected sections this implementation does not cover.
    pub unsupported: Vec<String>,
    /// `--stats`: headers only.
    pub stats: bool,
    /// `--json`.
    pub json: bool,
}

impl DiffArgs {
    /// Reads a `sediff` command line (without the program name).
    pub fn parse(args: &[String]) -> Result<DiffArgs, UsageError> {
        let mut opts: Vec<Opt> = SECTIONS
            .iter()
            .map(|&(key, names)| Opt {
                names,
                value: None,
                key,
            })
            .collect();
        let others: Vec<&'static [&'static str]> =
            OTHER_SECTIONS.iter().map(std::slice::from_ref).collect();
        for names in &others {
            opts.push(Opt {
                names,
                value: None,
                key: names[0],
            });
        }
        for (names, key) in [
            (&["-A"][..], "A"),
            (&["--stats"][..], "stats"),
            (&["--json"][..], "json"),
            (&["-v", "--verbose"][..], "verbose"),
            (&["--debug"][..], "debug"),
        ] {
            opts.push(Opt {
                names,
                value: None,
                key,
            });
        }
        let p = argv::parse(args, &opts)?;
        if p.positional.len() != 2 {
            let missing = match p.positional.len() {
                0 => "the following arguments are required: POLICY1, POLICY2".to_string(),
                1 => "the following arguments are required: POLICY2".to_string(),
                _ => format!("unrecognized arguments: {}", p.positional[2..].join(" ")),
            };
            return Err(UsageError(missing));
        }
        let mut a = DiffArgs {
            policies: p.positional.clone(),
            stats: p.has("stats"),
            json: p.has("json"),
            ..DiffArgs::default()
        };
        for &(key, _) in SECTIONS {
            if p.has(key) || (key == "allow" && p.has("A")) {
                a.sections.push(key);
            }
        }
        for o in OTHER_SECTIONS {
            if p.has(o) {
                a.unsupported.push(o.to_string());
            }
        }
        if p.has("A") {
            a.unsupported.push("--allowxperm".into());
        }
        Ok(a)
    }
}

/// One section: its header counts and its item lines.
#[derive(Debug, Default)]
pub struct Section {
    /// The section title (`Allow Rules`).
    pub title: &'static str,
    /// The item noun in sub-headers (`Allow Rules`, `Commons`).
    pub noun: &'static str,
    /// Whether the header has a Modified count.
    pub has_modified: bool,
    /// Added items, rendered and sorted.
    pub added: Vec<String>,
    /// Removed items.
    pub removed: Vec<String>,
    /// Modified items, each with its detail lines.
    pub modified: Vec<(String, Vec<String>)>,
}

impl Section {
    fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.modified.is_empty()
    }

    /// sediff's text for the section.
    pub fn render(&self, stats: bool, out: &mut String) {
        if self.title == "Policy Properties" {
            out.push_str(&format!(
                "Policy Properties ({} Modified)\n",
                self.modified.len()
            ));
            if !stats {
                for (line, _) in &self.modified {
                    out.push_str(&format!("      * {line}\n"));
                }
            }
            out.push('\n');
            return;
        }
        if self.has_modified {
            out.push_str(&format!(
                "{} ({} Added, {} Removed, {} Modified)\n",
                self.title,
                self.added.len(),
                self.removed.len(),
                self.modified.len()
            ));
        } else {
            out.push_str(&format!(
                "{} ({} Added, {} Removed)\n",
                self.title,
                self.added.len(),
                self.removed.len()
            ));
        }
        if !stats {
            if !self.added.is_empty() {
                out.push_str(&format!("   Added {}: {}\n", self.noun, self.added.len()));
                for a in &self.added {
                    out.push_str(&format!("      + {a}\n"));
                }
            }
            if !self.removed.is_empty() {
                out.push_str(&format!(
                    "   Removed {}: {}\n",
                    self.noun,
                    self.removed.len()
                ));
                for r in &self.removed {
                    out.push_str(&format!("      - {r}\n"));
                }
            }
            if !self.modified.is_empty() {
                out.push_str(&format!(
                    "   Modified {}: {}\n",
                    self.noun,
                    self.modified.len()
                ));
                for (m, details) in &self.modified {
                    out.push_str(&format!("      * {m}\n"));
                    for d in details {
                        out.push_str(&format!("          {d}\n"));
                    }
                }
            }
        }
        out.push('\n');
    }
}

/// Computes the selected sections (all implemented ones when none is selected).
pub fn sections(left: &Policy, right: &Policy, args: &DiffArgs) -> Vec<Section> {
    let all = args.sections.is_empty() && args.unsupported.is_empty();
    let mut out = Vec::new();
    let (li, ri) = (Index::new(left), Index::new(right));
    for &(key, _) in SECTIONS {
        let selected = args.sections.contains(&key);
        if !all && !selected {
            continue;
        }
        let s = match key {
            "property" => properties(left, right),
            "common" => perm_sets(
                "Commons",
                left.commons.iter().map(|c| (&*c.name, names(&c.perms))),
                right.commons.iter().map(|c| (&*c.name, names(&c.perms))),
            ),
            "class" => perm_sets("Classes", class_perms(&li), class_perms(&ri)),
            "bool" => booleans(left, right),
            "user" => users(left, right),
            "role" => member_sets("Roles", "types", role_types(&li), role_types(&ri)),
            "type" => types(&li, &ri),
            "attribute" => member_sets(
                "Type Attributes",
                "types",
                attribute_members(&li),
                attribute_members(&ri),
            ),
            "allow" => av_section(&li, &ri, AvtabKind::Allowed, "Allow Rules"),
            "auditallow" => av_section(&li, &ri, AvtabKind::AuditAllow, "Auditallow Rules"),
            "dontaudit" => av_section(&li, &ri, AvtabKind::AuditDeny, "Dontaudit Rules"),
            "polcap" => polcaps(left, right),
            _ => continue,
        };
        if selected || !s.is_empty() {
            out.push(s);
        }
    }
    out
}

/// sediff's whole text for the selected sections.
pub fn render_text(sections: &[Section], stats: bool) -> String {
    let mut s = String::new();
    for sec in sections {
        sec.render(stats, &mut s);
    }
    s
}

/// The sections as JSON: `{"sections": [{"name", "added", "removed", "modified"}]}`.
pub fn render_json(sections: &[Section]) -> serde_json::Value {
    let v: Vec<serde_json::Value> = sections
        .iter()
        .map(|s| {
            serde_json::json!({
                "name": s.title,
                "added": s.added,
                "removed": s.removed,
                "modified": s.modified.iter().map(|(m, d)| serde_json::json!({"item": m, "details": d})).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({ "sections": v })
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

/// A rule's place in an expanded key: conditional (interned expression, branch) or none.
type CondKey = Option<(u32, bool)>;

/// One policy's side of the AV comparison, indexed for streaming by source type.
struct AvSide<'a, 'p> {
    index: &'a Index<'p>,
    /// For each type-table slot: the rules written on it as source, as (table, entry,
    /// conditional key).
    by_source: Vec<Vec<(bool, u32, CondKey)>>,
    /// Per class: this policy's permission bit -> shared permission number.
    perm_map: Vec<[u8; 32]>,
    /// Per class slot: the shared class number.
    class_map: Vec<u32>,
    /// Per type slot: the shared type number (`u32::MAX` for attributes).
    type_map: Vec<u32>,
}

/// Names shared by both policies: conditional expressions, type names, class names and
/// per-class permission names, each mapped to a small number.
#[derive(Default)]
struct Shared {
    conds: HashMap<String, u32>,
    cond_text: Vec<String>,
    classes: HashMap<String, u32>,
    class_text: Vec<String>,
    types: HashMap<String, u32>,
    type_text: Vec<String>,
    perms: Vec<HashMap<String, u8>>,
    perm_text: Vec<Vec<String>>,
}

impl Shared {
    fn cond(&mut self, text: String) -> u32 {
        if let Some(&i) = self.conds.get(&text) {
            return i;
        }
        let i = self.cond_text.len() as u32;
        self.conds.insert(text.clone(), i);
        self.cond_text.push(text);
        i
    }
    fn type_name(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.types.get(name) {
            return i;
        }
        let i = self.type_text.len() as u32;
        self.types.insert(name.to_string(), i);
        self.type_text.push(name.to_string());
        i
    }
    fn class(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.classes.get(name) {
            return i;
        }
        let i = self.class_text.len() as u32;
        self.classes.insert(name.to_string(), i);
        self.class_text.push(name.to_string());
        self.perms.push(HashMap::new());
        self.perm_text.push(Vec::new());
        i
    }
    fn perm(&mut self, class: u32, name: &str) -> u8 {
        let m = &mut self.perms[class as usize];
        if let Some(&i) = m.get(name) {
            return i;
        }
        let i = self.perm_text[class as usize].len().min(127) as u8;
        m.insert(name.to_string(), i);
        self.perm_text[class as usize].push(name.to_string());
        i
    }
}

fn av_side<'a, 'p>(index: &'a Index<'p>, kind: AvtabKind, shared: &mut Shared) -> AvSide<'a, 'p> {
    let p = index.policy();
    let mut by_source = vec![Vec::new(); p.types.len()];
    let mut push = |table: &Avtab, cond: bool, i: usize, key: CondKey| {
        if let Some(e) = table.entries.get(i) {
            if e.key.kind == kind {
                if let Some(v) = by_source.get_mut(e.key.source.index()) {
                    v.push((cond, i as u32, key));
                }
            }
        }
    };
    for i in 0..p.avtab.entries.len() {
        push(&p.avtab, false, i, None);
    }
    for node in &p.cond_nodes {
        let text = render::cond_expr(p, &node.expr);
        let id = shared.cond(text);
        for (list, branch) in [(&node.true_list, true), (&node.false_list, false)] {
            for i in list.start..list.end {
                push(&p.cond_avtab, true, i as usize, Some((id, branch)));
            }
        }
    }
    let mut perm_map = Vec::with_capacity(p.classes.len());
    let mut class_map = Vec::with_capacity(p.classes.len());
    for c in 0..p.classes.len() {
        let mut map = [u8::MAX; 32];
        let mut sc = u32::MAX;
        if let Some(cid) = ClassId::from_index(c) {
            if !p.classes[c].name.is_empty() {
                sc = shared.class(index.class_name(cid));
                for (name, bit) in index.class_perms(cid) {
                    map[bit as usize] = shared.perm(sc, name);
                }
            }
        }
        perm_map.push(map);
        class_map.push(sc);
    }
    let type_map = p
        .types
        .iter()
        .map(|t| {
            if t.flavor == TypeFlavor::Type {
                shared.type_name(&t.name)
            } else {
                u32::MAX
            }
        })
        .collect();
    AvSide {
        index,
        by_source,
        perm_map,
        class_map,
        type_map,
    }
}

/// An expanded key of one source type, packed so that sorting groups a (target, class)
/// with its unconditional entry first: target (shared type number, 24 bits) << 40 | shared
/// class (16 bits) << 24 | conditional (24 bits; 0: none, else 1 + 2 * expression + branch).
type Key = u64;

fn pack(target: u32, class: u32, ck: CondKey) -> Key {
    let cond = match ck {
        None => 0,
        Some((c, b)) => (1 + 2 * u64::from(c) + u64::from(b)) & 0xff_ffff,
    };
    (u64::from(target & 0xff_ffff) << 40) | (u64::from(class & 0xffff) << 24) | cond
}

fn unpack(k: Key) -> (u32, u32, CondKey) {
    let cond = k & 0xff_ffff;
    let ck = if cond == 0 {
        None
    } else {
        Some((((cond - 1) / 2) as u32, (cond - 1) % 2 == 1))
    };
    ((k >> 40) as u32, ((k >> 24) & 0xffff) as u32, ck)
}

impl AvSide<'_, '_> {
    /// Every expanded key of source type `s` with its permissions, sorted by key, merged,
    /// and with conditional permissions also granted unconditionally removed.
    fn expand_source(&self, s: TypeId, kind: AvtabKind, out: &mut Vec<(Key, u128)>) {
        out.clear();
        let p = self.index.policy();
        let slots = std::iter::once(s).chain(self.index.attributes_of(s));
        for slot in slots {
            for &(cond, i, ck) in self.by_source.get(slot.index()).into_iter().flatten() {
                let table = if cond { &p.cond_avtab } else { &p.avtab };
                let Some(e) = table.entries.get(i as usize) else {
                    continue;
                };
                let AvtabDatum::Perms(bits) = e.datum else {
                    continue;
                };
                let bits = if kind == AvtabKind::AuditDeny {
                    !bits
                } else {
                    bits
                };
                let (Some(map), Some(&class)) = (
                    self.perm_map.get(e.key.class.index()),
                    self.class_map.get(e.key.class.index()),
                ) else {
                    continue;
                };
                let mut set = 0u128;
                for (b, &shared_bit) in map.iter().enumerate() {
                    if bits & (1 << b) != 0 && shared_bit != u8::MAX {
                        set |= 1u128 << shared_bit;
                    }
                }
                if set == 0 {
                    continue;
                }
                for &t in self.index.expand(e.key.target) {
                    let Some(&tid) = self.type_map.get(t.index()) else {
                        continue;
                    };
                    out.push((pack(tid, class, ck), set));
                }
            }
        }
        out.sort_unstable_by_key(|e| e.0);
        let mut merged: Vec<(Key, u128)> = Vec::with_capacity(out.len());
        let mut uncond: Option<(Key, u128)> = None;
        for &(k, v) in out.iter() {
            if let Some(last) = merged.last_mut() {
                if last.0 == k {
                    last.1 |= v;
                    continue;
                }
            }
            merged.push((k, v));
        }
        let mut w = 0;
        for r in 0..merged.len() {
            let (k, mut v) = merged[r];
            let group = k & !0xff_ffff;
            if k & 0xff_ffff == 0 {
                uncond = Some((group, v));
            } else if let Some((g, u)) = uncond {
                if g == group {
                    v &= !u;
                }
            }
            if v != 0 {
                merged[w] = (k, v);
                w += 1;
            }
        }
        merged.truncate(w);
        *out = merged;
    }
}

fn av_section(
    left: &Index<'_>,
    right: &Index<'_>,
    kind: AvtabKind,
    title: &'static str,
) -> Section {
    let mut shared = Shared::default();
    let l = av_side(left, kind, &mut shared);
    let r = av_side(right, kind, &mut shared);
    let mut s = Section {
        title,
        noun: title,
        has_modified: true,
        ..Section::default()
    };
    let perm_names = |class: u32, set: u128| -> Vec<&str> {
        let mut v: Vec<&str> = (0..128)
            .filter(|b| set & (1u128 << b) != 0)
            .filter_map(|b| {
                shared
                    .perm_text
                    .get(class as usize)?
                    .get(b)
                    .map(String::as_str)
            })
            .collect();
        v.sort_unstable();
        v
    };
    let cond_suffix = |ck: CondKey, block: bool| match ck {
        None => String::new(),
        Some((c, branch)) => {
            let text = shared.cond_text.get(c as usize).map_or("", String::as_str);
            if block {
                format!(" [ {text} ]:{}", if branch { "True" } else { "False" })
            } else {
                format!(" [ {text} ]")
            }
        }
    };
    let kw = kind.name();
    let statement = |src: &str, tgt: &str, class: u32, set: u128, ck: CondKey| {
        let perms = perm_names(class, set);
        let body = if perms.len() > 1 {
            format!("{{ {} }};", perms.join(" "))
        } else {
            format!("{};", perms.first().copied().unwrap_or(""))
        };
        format!(
            "{kw} {src} {tgt}:{} {body}{}",
            shared
                .class_text
                .get(class as usize)
                .map_or("", String::as_str),
            cond_suffix(ck, true)
        )
    };
    let type_ids = |idx: &Index<'_>| -> BTreeMap<String, TypeId> {
        let p = idx.policy();
        (0..p.types.len())
            .filter_map(TypeId::from_index)
            .filter(|t| p.types[t.index()].flavor == TypeFlavor::Type)
            .map(|t| (idx.type_name(t).to_string(), t))
            .collect()
    };
    let (lt, rt) = (type_ids(left), type_ids(right));
    let mut sources: BTreeSet<&str> = lt.keys().map(String::as_str).collect();
    sources.extend(rt.keys().map(String::as_str));
    let mut modified: Vec<(String, String)> = Vec::new();
    let (mut lm, mut rm) = (Vec::new(), Vec::new());
    let tname = |t: u32| shared.type_text.get(t as usize).map_or("", String::as_str);
    for src in sources {
        match lt.get(src) {
            Some(&t) => l.expand_source(t, kind, &mut lm),
            None => lm.clear(),
        }
        match rt.get(src) {
            Some(&t) => r.expand_source(t, kind, &mut rm),
            None => rm.clear(),
        }
        let (mut i, mut j) = (0, 0);
        while i < lm.len() || j < rm.len() {
            let order = match (lm.get(i), rm.get(j)) {
                (Some(a), Some(b)) => a.0.cmp(&b.0),
                (Some(_), None) => std::cmp::Ordering::Less,
                _ => std::cmp::Ordering::Greater,
            };
            match order {
                std::cmp::Ordering::Less => {
                    let (k, lp) = lm[i];
                    let (t, c, ck) = unpack(k);
                    s.removed.push(statement(src, tname(t), c, lp, ck));
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    let (k, rp) = rm[j];
                    let (t, c, ck) = unpack(k);
                    s.added.push(statement(src, tname(t), c, rp, ck));
                    j += 1;
                }
                std::cmp::Ordering::Equal => {
                    let ((k, lp), (_, rp)) = (lm[i], rm[j]);
                    i += 1;
                    j += 1;
                    let common = lp & rp;
                    let (added, removed) = (rp & !common, lp & !common);
                    if added == 0 && removed == 0 {
                        continue;
                    }
                    let (t, c, ck) = unpack(k);
                    let mut words: Vec<String> = perm_names(c, common)
                        .into_iter()
                        .map(str::to_string)
                        .collect();
                    words.extend(perm_names(c, added).into_iter().map(|p| format!("+{p}")));
                    words.extend(perm_names(c, removed).into_iter().map(|p| format!("-{p}")));
                    let line = format!(
                        "{kw} {src} {}:{} {{ {} }};{}",
                        tname(t),
                        shared.class_text.get(c as usize).map_or("", String::as_str),
                        words.join(" "),
                        cond_suffix(ck, false)
                    );
                    // sediff sorts modified rules by the left rule's statement.
                    modified.push((statement(src, tname(t), c, lp, ck), line));
                }
            }
        }
    }
    s.added.sort_unstable();
    s.removed.sort_unstable();
    modified.sort_unstable();
    s.modified = modified.into_iter().map(|(_, l)| (l, Vec::new())).collect();
    s
}

/// Runs `sediff`: the text and exit status.
pub fn execute(left: &Policy, right: &Policy, args: &DiffArgs) -> (String, u8) {
    let secs = sections(left, right, args);
    (render_text(&secs, args.stats), 0)
}

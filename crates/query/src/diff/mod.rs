//! `sediff` (setools 4.4.1): the differences between two policies, section by section, with
//! sediff's text, `--stats` and `--json`.
//!
//! Each section lives in the module named for what it compares; [`SECTIONS`] lists every
//! section of sediff in its order with the options that select it. AV rules are compared as
//! sediff compares them: expanded to (conditional expression, branch, source type, target
//! type, class) keys with permissions unioned per key, and conditional permissions already
//! granted unconditionally dropped. Unlike sediff, the expansion is streamed one source type
//! at a time over an index of rules by source, so memory holds one source type's keys plus
//! the output, never the whole expanded policy.

mod av;
mod constraints;
mod expand;
pub(crate) use crate::terules::{avtab_bucket, avtab_mask};
mod labeling;
mod mls;
mod other;
mod rbac;
mod symbols;
mod terules;
mod xperm;

use crate::argv::{self, Opt, UsageError};
use crate::index::Index;
use arbiter_policy::Policy;

/// Every section of sediff in its order: (key, options that select it). `-A` selects
/// `allow` and `allowxperm`.
pub const SECTIONS: &[(&str, &[&str])] = &[
    ("property", &["--property"]),
    ("common", &["--common"]),
    ("class", &["-c", "--class"]),
    ("bool", &["-b", "--bool"]),
    ("role", &["-r", "--role"]),
    ("type", &["-t", "--type"]),
    ("attribute", &["-a", "--attribute"]),
    ("user", &["-u", "--user"]),
    ("category", &["--category"]),
    ("sensitivity", &["--sensitivity"]),
    ("level", &["--level"]),
    ("allow", &["--allow"]),
    ("allowxperm", &["--allowxperm"]),
    ("neverallow", &["--neverallow"]),
    ("neverallowxperm", &["--neverallowxperm"]),
    ("auditallow", &["--auditallow"]),
    ("auditallowxperm", &["--auditallowxperm"]),
    ("dontaudit", &["--dontaudit"]),
    ("dontauditxperm", &["--dontauditxperm"]),
    ("type_trans", &["-T", "--type_trans"]),
    ("type_change", &["--type_change"]),
    ("type_member", &["--type_member"]),
    ("role_allow", &["--role_allow"]),
    ("role_trans", &["--role_trans"]),
    ("range_trans", &["--range_trans"]),
    ("constrain", &["--constrain"]),
    ("mlsconstrain", &["--mlsconstrain"]),
    ("validatetrans", &["--validatetrans"]),
    ("mlsvalidatetrans", &["--mlsvalidatetrans"]),
    ("initialsid", &["--initialsid"]),
    ("ibendportcon", &["--ibendportcon"]),
    ("ibpkeycon", &["--ibpkeycon"]),
    ("fs_use", &["--fs_use"]),
    ("genfscon", &["--genfscon"]),
    ("netifcon", &["--netifcon"]),
    ("nodecon", &["--nodecon"]),
    ("portcon", &["--portcon"]),
    ("polcap", &["--polcap"]),
    ("default", &["--default"]),
    ("typebounds", &["--typebounds"]),
];

/// The parsed `sediff` command line.
#[derive(Debug, Default, Clone)]
pub struct DiffArgs {
    /// POLICY1 (left) and POLICY2 (right).
    pub policies: Vec<String>,
    /// Selected section keys (empty: every section, skipping empty ones).
    pub sections: Vec<&'static str>,
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
                _ => format!(
                    "unrecognized arguments: {}",
                    arbiter_io::prefix(&p.positional[2..].join(" "))
                ),
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
            let by_a = p.has("A") && (key == "allow" || key == "allowxperm");
            if p.has(key) || by_a {
                a.sections.push(key);
            }
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
    /// The noun of the `Added` sub-header where sediff spells it differently.
    pub added_noun: Option<&'static str>,
    /// Whether the header has a Modified count.
    pub has_modified: bool,
    /// Added items, rendered and sorted.
    pub added: Vec<String>,
    /// Removed items.
    pub removed: Vec<String>,
    /// Modified items, each with its detail lines.
    pub modified: Vec<(String, Vec<String>)>,
    /// sediff leaves a section out of the all-sections run when it has no changes; a few
    /// sections (typebounds) ignore their modified items for that test.
    pub modified_hidden_when_unselected: bool,
}

impl Section {
    /// Whether sediff prints the section in a run that did not select it.
    fn shown_unselected(&self) -> bool {
        !self.added.is_empty()
            || !self.removed.is_empty()
            || (!self.modified.is_empty() && !self.modified_hidden_when_unselected)
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
                out.push_str(&format!(
                    "   Added {}: {}\n",
                    self.added_noun.unwrap_or(self.noun),
                    self.added.len()
                ));
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

/// Computes the selected sections (every section when none is selected, skipping empty
/// ones as sediff does). Each key of [`SECTIONS`] is answered by exactly one module (a unit
/// test holds every key to that).
pub fn sections(left: &Policy, right: &Policy, args: &DiffArgs) -> Vec<Section> {
    let all = args.sections.is_empty();
    let mut out = Vec::new();
    let (li, ri) = (Index::new(left), Index::new(right));
    for &(key, _) in SECTIONS {
        let selected = args.sections.contains(&key);
        if !all && !selected {
            continue;
        }
        let Some(s) = section(key, &li, &ri) else {
            continue;
        };
        if selected || s.shown_unselected() {
            out.push(s);
        }
    }
    out
}

/// How a module answers one of its sections.
type Answer = fn(&str, &Index<'_>, &Index<'_>) -> Option<Section>;

/// The modules: the section keys each answers, and how.
const MODULES: &[(&[&str], Answer)] = &[
    (symbols::KEYS, symbols::section),
    (av::KEYS, av::section),
    (xperm::KEYS, xperm::section),
    (terules::KEYS, terules::section),
    (rbac::KEYS, rbac::section),
    (mls::KEYS, mls::section),
    (constraints::KEYS, constraints::section),
    (labeling::KEYS, labeling::section),
    (other::KEYS, other::section),
];

/// The section for `key` from the module that answers it.
fn section(key: &str, li: &Index<'_>, ri: &Index<'_>) -> Option<Section> {
    let (_, answer) = MODULES.iter().find(|(keys, _)| keys.contains(&key))?;
    answer(key, li, ri)
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

/// Runs `sediff`: the text and exit status.
pub fn execute(left: &Policy, right: &Policy, args: &DiffArgs) -> (String, u8) {
    let secs = sections(left, right, args);
    (render_text(&secs, args.stats), 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sediff_section_is_answered_by_exactly_one_module() {
        let p = Policy::from_bytes(arbiter_policy::BUILTIN_POLICY).expect("builtin policy");
        let i = Index::new(&p);
        let modules: Vec<&[&str]> = MODULES.iter().map(|(keys, _)| *keys).collect();
        for &(key, _) in SECTIONS {
            let owners = modules.iter().filter(|keys| keys.contains(&key)).count();
            assert_eq!(owners, 1, "{key} is listed by {owners} modules");
            assert!(section(key, &i, &i).is_some(), "{key} has no section");
        }
        let listed: usize = modules.iter().map(|k| k.len()).sum();
        assert_eq!(listed, SECTIONS.len(), "no module lists a key sediff lacks");
        assert!(section("no_such_section", &i, &i).is_none());
    }
}

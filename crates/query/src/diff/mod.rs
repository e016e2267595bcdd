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

/// Whether a section key is implemented (each module lists the keys it answers).
pub fn implemented(key: &str) -> bool {
    [
        symbols::KEYS,
        av::KEYS,
        xperm::KEYS,
        terules::KEYS,
        rbac::KEYS,
        mls::KEYS,
        constraints::KEYS,
        labeling::KEYS,
        other::KEYS,
    ]
    .iter()
    .any(|keys| keys.contains(&key))
}

/// The parsed `sediff` command line.
#[derive(Debug, Default, Clone)]
pub struct DiffArgs {
    /// POLICY1 (left) and POLICY2 (right).
    pub policies: Vec<String>,
    /// Selected section keys (empty: every section, skipping empty ones).
    pub sections: Vec<&'static str>,
    /// Options of sections this implementation does not cover yet: refused, never skipped.
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
        for &(key, names) in SECTIONS {
            let by_a = p.has("A") && (key == "allow" || key == "allowxperm");
            if p.has(key) || by_a {
                a.sections.push(key);
                if !implemented(key) {
                    a.unsupported
                        .push(if by_a { "-A" } else { names[names.len() - 1] }.to_string());
                }
            }
        }
        if a.sections.is_empty() {
            a.unsupported = SECTIONS
                .iter()
                .filter(|(key, _)| !implemented(key))
                .map(|(_, names)| names[names.len() - 1].to_string())
                .collect();
        }
        a.unsupported.dedup();
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
/// ones as sediff does). Sections not implemented yet are left out: callers refuse such
/// requests through [`DiffArgs::unsupported`] before calling this.
pub fn sections(left: &Policy, right: &Policy, args: &DiffArgs) -> Vec<Section> {
    let all = args.sections.is_empty();
    let mut out = Vec::new();
    let (li, ri) = (Index::new(left), Index::new(right));
    for &(key, _) in SECTIONS {
        let selected = args.sections.contains(&key);
        if !all && !selected {
            continue;
        }
        let s = symbols::section(key, &li, &ri)
            .or_else(|| av::section(key, &li, &ri))
            .or_else(|| xperm::section(key, &li, &ri))
            .or_else(|| terules::section(key, &li, &ri))
            .or_else(|| rbac::section(key, &li, &ri))
            .or_else(|| mls::section(key, &li, &ri))
            .or_else(|| constraints::section(key, &li, &ri))
            .or_else(|| labeling::section(key, &li, &ri))
            .or_else(|| other::section(key, &li, &ri));
        let Some(s) = s else { continue };
        if selected || s.shown_unselected() {
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

/// Runs `sediff`: the text and exit status.
pub fn execute(left: &Policy, right: &Policy, args: &DiffArgs) -> (String, u8) {
    let secs = sections(left, right, args);
    (render_text(&secs, args.stats), 0)
}

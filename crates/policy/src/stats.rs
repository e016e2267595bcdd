//! Policy statistics with the names and numbers of setools' `seinfo`.
//!
//! Each count follows `docs/seinfo-statistics.md`, which records how setools 4.4.1 derives
//! it from libsepol's in-memory policy; for example rules are counted per access vector
//! table entry (attributes unexpanded, conditional lists included), filename transitions
//! add to Type_trans once per source type, and permissions are counted per class and
//! common without merging names.

use crate::avtab::AvtabKind;
use crate::policy::{HandleUnknown, Policy};
use crate::symbols::{DefaultRange, DefaultSide, TypeFlavor};

/// One statistic's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StatValue {
    Int(u64),
    Bool(bool),
    Text(&'static str),
}

/// The statistics in seinfo's order, as (label, value) pairs. The labels are exactly
/// seinfo's (the text before the colon); `Policy Version` and `MLS` are split in two.
pub fn statistics(p: &Policy) -> Vec<(&'static str, StatValue)> {
    use StatValue::{Bool, Int, Text};
    let n = |x: usize| Int(x as u64);

    let mut kinds = [0u64; 16];
    for e in p.avtab.entries.iter().chain(p.cond_avtab.entries.iter()) {
        kinds[e.key.kind.bits().trailing_zeros() as usize] += 1;
    }
    let kind = |k: AvtabKind| kinds[k.bits().trailing_zeros() as usize];
    let filename_rules: u64 = p
        .filename_trans
        .iter()
        .flat_map(|f| f.outcomes.iter())
        .map(|(src, _)| src.len() as u64)
        .sum();

    let (mut cons, mut mls_cons, mut vt, mut mls_vt, mut defaults) = (0, 0, 0, 0, 0);
    for c in &p.classes {
        for k in c.constraints.iter() {
            if k.is_mls() {
                mls_cons += 1
            } else {
                cons += 1
            }
        }
        for k in c.validatetrans.iter() {
            if k.is_mls() {
                mls_vt += 1
            } else {
                vt += 1
            }
        }
        defaults += [c.default_user, c.default_role, c.default_type]
            .iter()
            .filter(|d| **d != DefaultSide::None)
            .count()
            + usize::from(c.default_range != DefaultRange::None);
    }

    let types = p
        .types
        .iter()
        .filter(|t| t.flavor == TypeFlavor::Type)
        .count();
    let attributes = p
        .types
        .iter()
        .filter(|t| t.flavor == TypeFlavor::Attribute)
        .count();
    let permissives = p
        .types
        .iter()
        .enumerate()
        .filter(|(i, t)| t.flavor == TypeFlavor::Type && p.permissive.contains(*i as u32 + 1))
        .count();
    let typebounds = p
        .types
        .iter()
        .filter(|t| t.flavor == TypeFlavor::Type && t.bounds.is_some())
        .count();
    let perms: usize = p.commons.iter().map(|c| c.perms.len()).sum::<usize>()
        + p.classes.iter().map(|c| c.perms.len()).sum::<usize>();
    let genfscon = p.genfs.len();
    let o = &p.ocontexts;

    let mut stats = vec![
        ("Policy Version", n(p.version as usize)),
        ("MLS", Bool(p.mls)),
        ("Target Policy", Text(target_name(p))),
        (
            "Handle unknown classes",
            Text(match p.handle_unknown {
                HandleUnknown::Deny => "deny",
                HandleUnknown::Reject => "reject",
                HandleUnknown::Allow => "allow",
            }),
        ),
        ("Classes", n(named(p.classes.iter().map(|c| &c.name)))),
        ("Permissions", n(perms)),
        (
            "Sensitivities",
            n(named(p.sensitivities.iter().map(|s| &s.name))),
        ),
        ("Categories", n(named(p.categories.iter().map(|c| &c.name)))),
        ("Types", n(types)),
        ("Attributes", n(attributes)),
        ("Users", n(named(p.users.iter().map(|u| &u.name)))),
        ("Roles", n(named(p.roles.iter().map(|r| &r.name)))),
        ("Booleans", n(named(p.bools.iter().map(|b| &b.name)))),
        ("Cond. Expr.", n(p.cond_nodes.len())),
        ("Allow", Int(kind(AvtabKind::Allowed))),
        ("Neverallow", Int(0)),
        ("Auditallow", Int(kind(AvtabKind::AuditAllow))),
        ("Dontaudit", Int(kind(AvtabKind::AuditDeny))),
        (
            "Type_trans",
            Int(kind(AvtabKind::Transition) + filename_rules),
        ),
        ("Type_change", Int(kind(AvtabKind::Change))),
        ("Type_member", Int(kind(AvtabKind::Member))),
        ("Range_trans", n(p.range_trans.len())),
        ("Role allow", n(p.role_allow.len())),
        ("Role_trans", n(p.role_trans.len())),
        ("Constraints", n(cons)),
        ("Validatetrans", n(vt)),
        ("MLS Constrain", n(mls_cons)),
        ("MLS Val. Tran", n(mls_vt)),
        ("Permissives", n(permissives)),
        ("Polcap", n(p.policycaps.len())),
        ("Defaults", n(defaults)),
        ("Typebounds", n(typebounds)),
    ];
    // seinfo ends a Xen policy's statistics with its object contexts instead of the
    // extended-permission rules and Linux object contexts.
    if o.platform == crate::xen::Platform::Xen {
        let x = &o.xen;
        stats.extend([
            ("Initial SIDs", n(o.initial_sids.len())),
            ("Devicetreecon", n(x.device_trees.len())),
            ("Iomemcon", n(x.iomems.len())),
            ("Ioportcon", n(x.ioports.len())),
            ("Pcidevicecon", n(x.pci_devices.len())),
            ("Pirqcon", n(x.pirqs.len())),
        ]);
        return stats;
    }
    stats.extend([
        ("Allowxperm", Int(kind(AvtabKind::XpermsAllowed))),
        ("Neverallowxperm", Int(0)),
        ("Auditallowxperm", Int(kind(AvtabKind::XpermsAuditAllow))),
        ("Dontauditxperm", Int(kind(AvtabKind::XpermsDontAudit))),
        ("Ibendportcon", n(o.ibendports.len())),
        ("Ibpkeycon", n(o.ibpkeys.len())),
        ("Initial SIDs", n(o.initial_sids.len())),
        ("Fs_use", n(o.fs_use.len())),
        ("Genfscon", n(genfscon)),
        ("Portcon", n(o.ports.len())),
        ("Netifcon", n(o.netifs.len())),
        ("Nodecon", n(o.nodes.len() + o.nodes6.len())),
    ]);
    stats
}

/// seinfo's name of the policy's target platform.
fn target_name(p: &Policy) -> &'static str {
    match p.ocontexts.platform {
        crate::xen::Platform::Selinux => "selinux",
        crate::xen::Platform::Xen => "xen",
    }
}

/// Symbols the file names: values it leaves unnamed are placeholders in the model's
/// arrays, not symbols seinfo would list.
fn named<'a>(names: impl Iterator<Item = &'a Box<str>>) -> usize {
    names.filter(|n| !n.is_empty()).count()
}

/// The statistics as seinfo prints them (`path` as given by the user).
pub fn render_text(p: &Policy, path: &str) -> String {
    use std::fmt::Write;
    let stats = statistics(p);
    let get = |label: &str| {
        stats
            .iter()
            .find(|(l, _)| *l == label)
            .map(|(_, v)| v.clone())
    };
    let mut out = String::new();
    let _ = writeln!(out, "Statistics for policy file: {path}");
    let _ = writeln!(
        out,
        "Policy Version:             {} (MLS {})",
        p.version,
        if p.mls { "enabled" } else { "disabled" }
    );
    let _ = writeln!(out, "Target Policy:              {}", target_name(p));
    if let Some(StatValue::Text(h)) = get("Handle unknown classes") {
        let _ = writeln!(out, "Handle unknown classes:     {h}");
    }
    let counts: Vec<_> = stats
        .iter()
        .filter(|(_, v)| matches!(v, StatValue::Int(_)))
        .filter(|(l, _)| *l != "Policy Version")
        .collect();
    for pair in counts.chunks(2) {
        let mut line = String::new();
        for (i, (label, v)) in pair.iter().enumerate() {
            if let StatValue::Int(x) = v {
                let field = format!("{label}:");
                if i > 0 {
                    line.push_str("    ");
                } else {
                    line.push_str("  ");
                }
                let _ = write!(line, "{field:<17}{x:>7}");
            }
        }
        let _ = writeln!(out, "{line}");
    }
    out
}

/// The statistics as JSON text: `{"statistics": {label: value, ...}}`.
pub fn render_json(p: &Policy, path: &str) -> String {
    let mut out = String::from("{\"path\": ");
    out.push_str(&json_string(path));
    out.push_str(", \"statistics\": {");
    for (i, (label, v)) in statistics(p).iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&json_string(label));
        out.push_str(": ");
        match v {
            StatValue::Int(x) => out.push_str(&x.to_string()),
            StatValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            StatValue::Text(t) => out.push_str(&json_string(t)),
        }
    }
    out.push_str("}}");
    out
}

fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

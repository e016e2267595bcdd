//! Hand-derived expectations for our own policies (`policies/expect/NAME.txt`, written
//! from the policy sources in `policies/src/`): access vectors, labels and ioctl extended
//! permissions, including what libsepol cannot check (nested typebounds, the kernel's
//! handle_unknown class mapping, extended permissions).
//!
//! Line formats (see policies/README.md):
//! `[TAG] SCON TCON CLASS allowed={..} auditallow={..} dontaudit-clears={..} # why`
//! `#create|#member|#relabel SCON TCON CLASS ["NAME"] -> NEWCON`
//! `#xperm SCON TCON CLASS ioctl 0xCMD -> allowed|denied`

use arbiter_decide::{ClassRef, LabelKind, SecurityServer, XpermBase, XpermRule};
use arbiter_policy::{HandleUnknown, ValidPolicy};
use std::collections::BTreeSet;
use std::path::Path;

fn repo(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// The names inside `name={...}` in a line.
fn set(line: &str, name: &str) -> BTreeSet<String> {
    let key = format!("{name}={{");
    let start = line
        .find(&key)
        .unwrap_or_else(|| panic!("no {name}={{..}} in {line:?}"))
        + key.len();
    let end = start + line[start..].find('}').unwrap();
    line[start..end]
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// Checks one expectation file against one binary; `tag` selects `[tag]` lines.
fn check(expect: &str, binary: &str, tag: Option<&str>) -> usize {
    let text = std::fs::read_to_string(repo(expect)).unwrap();
    let server = SecurityServer::new(ValidPolicy::open(repo(binary)).unwrap());
    let snap = server.snapshot();
    let names = snap.names();
    let hu = snap.policy.handle_unknown;
    let mut q = server.query();
    let mut n = 0;
    for (i, raw) in text.lines().enumerate() {
        let at = format!("{expect}:{} ({binary})", i + 1);
        let line = raw.split(" # ").next().unwrap().trim();
        if line.is_empty()
            || (line.starts_with('#')
                && !line.starts_with("#create")
                && !line.starts_with("#member")
                && !line.starts_with("#relabel")
                && !line.starts_with("#xperm"))
        {
            continue;
        }
        let line = match (line.strip_prefix('['), tag) {
            (Some(rest), Some(tag)) => {
                let (t, rest) = rest.split_once(']').unwrap();
                if t != tag {
                    continue;
                }
                rest.trim()
            }
            (Some(_), None) => continue,
            (None, _) => line,
        };
        let f: Vec<&str> = line.split_whitespace().collect();
        if let Some(kind) = f[0].strip_prefix('#') {
            let (s, t) = (
                server.context_to_sid(f[1]).unwrap(),
                server.context_to_sid(f[2]).unwrap(),
            );
            let class = server.known_class(f[3]).unwrap();
            if kind == "xperm" {
                // ioctl CMD -> allowed|denied: the kernel's avc_has_extended_perms.
                let cmd = u16::from_str_radix(f[5].trim_start_matches("0x"), 16).unwrap();
                let (driver, func) = ((cmd >> 8) as u8, cmd as u8);
                let base = names.perm(class, "ioctl").unwrap();
                let d = q.compute_av(s, t, class).unwrap();
                let x = q
                    .compute_xperms(s, t, class, XpermBase::Ioctl, driver)
                    .unwrap();
                let allowed = d.allowed.0 & base != 0
                    && match x.rule {
                        XpermRule::Unrestricted => true,
                        XpermRule::DriverNotListed => false,
                        XpermRule::Driver(x) => x.allows(func),
                    };
                let want = f[7] == "allowed";
                assert_eq!(allowed, want, "{at}: {raw}");
            } else {
                let kind = match kind {
                    "create" => LabelKind::Create,
                    "member" => LabelKind::Member,
                    _ => LabelKind::Relabel,
                };
                let arrow = f.iter().position(|x| *x == "->").unwrap();
                let name = (arrow == 5).then(|| f[4].trim_matches('"'));
                let got = q.compute_label(s, t, class, kind, name).unwrap();
                assert_eq!(
                    server.sid_to_context(got).unwrap(),
                    f[arrow + 1],
                    "{at}: {raw}"
                );
            }
            n += 1;
            continue;
        }
        let (s, t) = (
            server.context_to_sid(f[0]).unwrap(),
            server.context_to_sid(f[1]).unwrap(),
        );
        let cref = server.class(f[2]).unwrap();
        let d = q.compute_av(s, t, cref).unwrap();
        let (allowed, auditallow, clears) = (
            set(line, "allowed"),
            set(line, "auditallow"),
            set(line, "dontaudit-clears"),
        );
        match cref {
            ClassRef::Known(c) => {
                // Permissions the policy defines: exactly the expected ones.
                let defined = names.defined_perms(c);
                let names_of = |bits: u32| -> BTreeSet<String> {
                    names
                        .perms_to_names(c, bits & defined)
                        .into_iter()
                        .map(String::from)
                        .collect()
                };
                let known = |set: &BTreeSet<String>| -> BTreeSet<String> {
                    set.iter()
                        .filter(|p| names.perm(c, p).is_some())
                        .cloned()
                        .collect()
                };
                assert_eq!(
                    names_of(d.allowed.0),
                    known(&allowed),
                    "{at}: allowed: {raw}"
                );
                assert_eq!(
                    names_of(d.auditallow.0),
                    known(&auditallow),
                    "{at}: auditallow: {raw}"
                );
                assert_eq!(
                    names_of(!d.auditdeny.0),
                    known(&clears),
                    "{at}: dontaudit: {raw}"
                );
                // Names the policy lacks are granted only under handle_unknown=allow.
                let unknown: Vec<&String> = allowed
                    .iter()
                    .filter(|p| names.perm(c, p).is_none())
                    .collect();
                if !unknown.is_empty() {
                    assert_eq!(
                        hu,
                        HandleUnknown::Allow,
                        "{at}: unknown permissions expected granted: {raw}"
                    );
                    let req = server
                        .perm_set(
                            f[2],
                            &unknown.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
                        )
                        .unwrap();
                    assert!(
                        req.unknown_allowed() && req.unknown().count() == unknown.len(),
                        "{at}"
                    );
                }
            }
            ClassRef::Unknown if hu == HandleUnknown::Allow => {
                assert_eq!(d.allowed, u32::MAX, "{at}")
            }
            ClassRef::Unknown => assert_eq!(d.allowed, 0, "{at}"),
        }
        n += 1;
    }
    n
}

#[test]
fn default_policy_expectations_hold() {
    assert!(
        check(
            "policies/expect/default.txt",
            "policies/bin/default.33",
            None
        ) >= 15
    );
}

#[test]
fn features_policy_expectations_hold_in_every_build() {
    for b in ["features.33", "features-deny.33", "features-reject.33"] {
        assert!(
            check(
                "policies/expect/features.txt",
                &format!("policies/bin/{b}"),
                None
            ) >= 20
        );
    }
}

#[test]
fn tiny_policy_expectations_hold() {
    assert!(check("policies/expect/tiny.txt", "policies/bin/tiny.33", None) >= 10);
}

#[test]
fn bounds_expectations_hold_including_nested_bounds() {
    assert!(check("policies/expect/bounds.txt", "policies/bin/bounds.33", None) >= 5);
}

#[test]
fn unknown_class_and_permission_expectations_follow_handle_unknown() {
    let a = check(
        "policies/expect/unknown.txt",
        "policies/bin/unknown-allow.33",
        Some("allow"),
    );
    let d = check(
        "policies/expect/unknown.txt",
        "policies/bin/unknown-deny.33",
        Some("deny"),
    );
    assert!(a >= 3 && d >= 3);
}

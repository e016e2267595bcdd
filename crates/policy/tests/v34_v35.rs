//! The format 34 and 35 fixtures, `policies/bin/features.34` and `.35` (made from
//! `features.33` by `examples/mkfixtures.rs`; see `tests/common/fixtures.rs` for what they
//! add): they are what the generator makes, the reader loads them with the additions in
//! the right places, and the statistics count the added rules.
//!
//! Decisions over them are tested in `crates/decide/tests/v34_v35.rs`.

#[path = "common/fixtures.rs"]
mod fixtures;

use arbiter_policy::avtab::{AvtabDatum, AvtabKind, XpermsKind};
use arbiter_policy::cond::CondExpr;
use arbiter_policy::stats::{statistics, StatValue};
use arbiter_policy::Policy;
use std::path::{Path, PathBuf};

fn path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../policies/bin")
        .join(name)
}

fn load(name: &str) -> Policy {
    Policy::open(path(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn stat(p: &Policy, label: &str) -> u64 {
    match statistics(p).into_iter().find(|(l, _)| *l == label) {
        Some((_, StatValue::Int(n))) => n,
        other => panic!("no count {label}: {other:?}"),
    }
}

fn type_value(p: &Policy, name: &str) -> u16 {
    p.types.iter().position(|t| &*t.name == name).unwrap() as u16 + 1
}

#[test]
fn checked_in_fixtures_are_what_the_generator_makes() {
    let base = std::fs::read(path("features.33")).unwrap();
    let (b34, b35) = fixtures::build(&base);
    for (name, want) in [("features.34", b34), ("features.35", b35)] {
        let have = std::fs::read(path(name)).unwrap();
        assert!(
            have == want,
            "policies/bin/{name} is stale: run `bash policies/regen.sh` (or the mkfixtures \
             example, see policies/README.md)"
        );
    }
}

#[test]
fn features_34_holds_an_xperm_rule_in_a_conditional() {
    let p = load("features.34");
    assert_eq!(p.version, 34);
    let b = p
        .bools
        .iter()
        .position(|b| &*b.name == fixtures::COND_BOOL)
        .expect("the new boolean");
    assert!(!p.bools[b].state);
    let node = p.cond_nodes.last().unwrap();
    assert!(matches!(&node.expr[..], [CondExpr::Bool(id)] if id.index() == b));
    assert!(!node.cur_state);
    let staff = type_value(&p, "staff_t");
    let dev = type_value(&p, "dev_t");
    for (range, kind) in [
        (node.true_list.clone(), AvtabKind::XpermsAllowed),
        (node.false_list.clone(), AvtabKind::XpermsDontAudit),
    ] {
        assert_eq!(range.len(), 1);
        let e = p.cond_avtab.entries[range.start as usize];
        assert_eq!(
            (e.key.source.value(), e.key.target.value(), e.key.kind),
            (staff, dev, kind)
        );
        let x = p.cond_avtab.xperms_of(e.datum()).unwrap();
        assert_eq!(
            (x.kind, x.driver, x.perms),
            (
                XpermsKind::IoctlFunction,
                0x8a,
                [0xffff, 0, 0, 0, 0, 0, 0, 0]
            )
        );
    }
    // Moved, not copied: no unconditional rule for driver 0x8a is left.
    let uncond_8a = p
        .avtab
        .entries
        .iter()
        .filter(|e| e.key.source.value() == staff && e.key.kind.is_xperms())
        .filter_map(|e| p.avtab.xperms_of(e.datum()))
        .filter(|x| x.kind == XpermsKind::IoctlFunction && x.driver == 0x8a)
        .count();
    assert_eq!(uncond_8a, 0);
    assert!(p.neveraudit.is_empty());
}

#[test]
fn features_35_holds_nlmsg_xperms_and_a_neveraudit_type() {
    let p = load("features.35");
    assert_eq!(p.version, 35);
    let class = p
        .classes
        .iter()
        .position(|c| &*c.name == fixtures::NETLINK_CLASS)
        .expect("the netlink class") as u16
        + 1;
    let staff = type_value(&p, "staff_t");
    let nlmsg: Vec<_> = p
        .avtab
        .entries
        .iter()
        .filter(|e| e.key.class.value() == class)
        .collect();
    assert_eq!(nlmsg.len(), 3);
    let mut kinds = Vec::new();
    for e in nlmsg {
        assert_eq!((e.key.source.value(), e.key.target.value()), (staff, staff));
        kinds.push(e.key.kind);
        if let AvtabDatum::Xperms(_) = e.datum() {
            let x = p.avtab.xperms_of(e.datum()).unwrap();
            assert_eq!((x.kind, x.driver), (XpermsKind::Nlmsg, 0x00));
            let want = if e.key.kind == AvtabKind::XpermsAllowed {
                (1 << 0x12) | (1 << 0x16) | (1 << 0x1a)
            } else {
                1 << 0x1a
            };
            assert_eq!(x.perms, [want, 0, 0, 0, 0, 0, 0, 0]);
        }
    }
    assert_eq!(
        kinds,
        [
            AvtabKind::Allowed,
            AvtabKind::XpermsAllowed,
            AvtabKind::XpermsAuditAllow
        ]
    );
    // Bit = type value.
    let sysadm = u32::from(type_value(&p, fixtures::NEVERAUDIT_TYPE));
    assert_eq!(p.neveraudit.iter().collect::<Vec<_>>(), [sysadm]);
    assert!(p.policycaps.contains(fixtures::POLICYCAP_NETLINK_XPERM));
    // Everything of features.34 is still there.
    let p34 = load("features.34");
    assert_eq!(p.cond_nodes, p34.cond_nodes);
    assert_eq!(p.cond_avtab, p34.cond_avtab);
}

#[test]
fn statistics_count_the_added_rules() {
    let (p33, p34, p35) = (
        load("features.33"),
        load("features.34"),
        load("features.35"),
    );
    let delta = |a: &Policy, b: &Policy, label: &str| stat(b, label) as i64 - stat(a, label) as i64;
    // 33 -> 34: one boolean, one conditional; the allowxperm moved into it (seinfo counts
    // conditional rules too), a dontauditxperm added in its else branch.
    for (label, want) in [
        ("Booleans", 1),
        ("Cond. Expr.", 1),
        ("Allowxperm", 0),
        ("Auditallowxperm", 0),
        ("Dontauditxperm", 1),
        ("Allow", 0),
        ("Classes", 0),
    ] {
        assert_eq!(delta(&p33, &p34, label), want, "33 -> 34: {label}");
    }
    // 34 -> 35: a class with three permissions, an allow, an allowxperm and an
    // auditallowxperm on it, one more policy capability.
    for (label, want) in [
        ("Classes", 1),
        ("Permissions", 3),
        ("Allow", 1),
        ("Allowxperm", 1),
        ("Auditallowxperm", 1),
        ("Dontauditxperm", 0),
        ("Polcap", 1),
        ("Booleans", 0),
    ] {
        assert_eq!(delta(&p34, &p35, label), want, "34 -> 35: {label}");
    }
    assert_eq!(stat(&p35, "Allowxperm"), 8);
    assert_eq!(stat(&p35, "Dontauditxperm"), 2);
}

#[test]
fn fixtures_do_not_go_below_their_versions() {
    use arbiter_policy::write::{write_policy, Unsupported, WriteError};
    let p34 = load("features.34");
    assert!(matches!(
        write_policy(&p34, 33),
        Err(WriteError::Unsupported {
            what: Unsupported::ConditionalXperms(2),
            ..
        })
    ));
    let p35 = load("features.35");
    assert!(matches!(
        write_policy(&p35, 34),
        Err(WriteError::Unsupported {
            what: Unsupported::NeverAuditTypes(1),
            ..
        })
    ));
    // Up is fine, and gives the same model back.
    let up = Policy::from_bytes(&write_policy(&p34, 35).unwrap()).unwrap();
    assert_eq!(up.cond_avtab, p34.cond_avtab);
}

#[test]
fn dropping_the_conditional_xperms_reports_them_once_at_any_lower_version() {
    use arbiter_policy::write::WriteOptions;
    use arbiter_policy::write::{write_policy_with, Unsupported};
    let p34 = load("features.34");
    for v in [33, 30, 29, 20] {
        let w = write_policy_with(
            &p34,
            v,
            &WriteOptions {
                drop_unsupported: true,
                ..Default::default()
            },
        )
        .unwrap();
        let cond: Vec<_> = w
            .dropped
            .iter()
            .filter(|d| matches!(d, Unsupported::ConditionalXperms(_)))
            .collect();
        assert_eq!(cond, [&Unsupported::ConditionalXperms(2)], "version {v}");
        let back = Policy::from_bytes(&w.bytes).unwrap();
        let node = back.cond_nodes.last().unwrap();
        assert!(
            node.true_list.is_empty() && node.false_list.is_empty(),
            "version {v}"
        );
        assert!(back.cond_avtab.xperms.is_empty());
    }
}

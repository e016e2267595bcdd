//! Explanations: they must grant exactly what `compute_av` grants, every rule they cite must
//! really apply, and on the repository's small policies they must name the right reasons
//! (dontaudit, the boolean that would flip a denial, the failing constraint term, the role
//! check, bounds).
//!
//! The Debian default policy (`selinux-policy-default`, installed by CI) is sampled when
//! present; without it that test prints a note and passes.

use arbiter_decide::internals::eval_cond;
use arbiter_decide::{
    Explanation, PermExplanation, Removal, RuleKind, SecurityServer, Snapshot, TeRule,
};
use arbiter_policy::avtab::{AvtabDatum, AvtabKind};
use arbiter_policy::mls::Context;
use arbiter_policy::{ClassId, Policy, RoleId, TypeId, UserId, ValidPolicy};
use arbiter_testkit::Rng;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const DEBIAN: &str = arbiter_testkit::DEBIAN_DEFAULT;

fn repo_policy(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../policies/bin")
        .join(name)
}

fn server(path: &Path) -> SecurityServer {
    SecurityServer::new(
        ValidPolicy::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
}

/// Explains a query given as strings; also checks it against `compute_av` and the rule
/// tables (see [`check_consistent`]).
fn why(server: &SecurityServer, s: &str, t: &str, class: &str, perms: &[&str]) -> Explanation {
    let ssid = server.context_to_sid(s).unwrap();
    let tsid = server.context_to_sid(t).unwrap();
    let c = server.known_class(class).unwrap();
    let req = server.perm_set(class, perms).unwrap();
    assert_eq!(req.unknown().count(), 0, "{req:?}");
    let snap = server.snapshot();
    let e = server.explain(ssid, tsid, c, req.bits()).unwrap();
    let rules = RuleTable::new(&snap.policy);
    check_consistent(
        &snap,
        &rules,
        &e,
        snap.sids().context(ssid).unwrap(),
        snap.sids().context(tsid).unwrap(),
        c,
    );
    e
}

fn perm<'e>(e: &'e Explanation, name: &str) -> &'e PermExplanation {
    e.perms
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no {name} in {e}"))
}

/// An access-vector key: source, target, class and kind bits.
type Key = (u16, u16, u16, u16);
/// A stored rule: its conditional list (node, branch), if any, and its permission word.
type Stored = (Option<(usize, bool)>, u32);

/// Every access-vector rule by exact key, with the conditional list it is in.
struct RuleTable(HashMap<Key, Vec<Stored>>);

impl RuleTable {
    fn new(p: &Policy) -> RuleTable {
        let mut m: HashMap<_, Vec<_>> = HashMap::new();
        let key = |e: &arbiter_policy::avtab::AvtabEntry| {
            (
                e.key.source.value(),
                e.key.target.value(),
                e.key.class.value(),
                e.key.kind.bits(),
            )
        };
        for e in &p.avtab.entries {
            if let AvtabDatum::Perms(x) = e.datum() {
                m.entry(key(e)).or_default().push((None, x));
            }
        }
        for (n, node) in p.cond_nodes.iter().enumerate() {
            for (branch, list) in [
                (true, node.true_list.clone()),
                (false, node.false_list.clone()),
            ] {
                for e in &p.cond_avtab.entries[list.start as usize..list.end as usize] {
                    if let AvtabDatum::Perms(x) = e.datum() {
                        m.entry(key(e)).or_default().push((Some((n, branch)), x));
                    }
                }
            }
        }
        RuleTable(m)
    }
}

/// Whether type `ty` matches rule side `side` (itself or one of its attributes), from the
/// policy's own map.
fn has(p: &Policy, ty: TypeId, side: TypeId) -> bool {
    match p.type_attr_map.get(ty.index()) {
        Some(m) => m.contains(side.index() as u32),
        None => ty == side,
    }
}

/// Checks that `r` is a real rule of the policy that applies to (s, t, class) and covers
/// `bit`; `enabled` is what its conditional list must be under the snapshot.
fn check_rule(
    p: &Policy,
    snap: &Snapshot,
    rules: &RuleTable,
    r: &TeRule,
    (s, t, class): (&Context, &Context, ClassId),
    bit: u32,
    enabled: bool,
) {
    assert!(
        has(p, s.ty, r.source),
        "{}: source does not match",
        r.text()
    );
    assert!(
        has(p, t.ty, r.target),
        "{}: target does not match",
        r.text()
    );
    assert_eq!(r.class, class);
    assert_eq!(r.source_attribute, r.source != s.ty);
    assert_eq!(r.target_attribute, r.target != t.ty);
    let kind = match r.kind {
        RuleKind::Allow => AvtabKind::Allowed,
        RuleKind::AuditAllow => AvtabKind::AuditAllow,
        RuleKind::DontAudit => AvtabKind::AuditDeny,
    };
    let cond = r.cond.as_ref().map(|c| (c.node, c.branch));
    let stored = rules
        .0
        .get(&(
            r.source.value(),
            r.target.value(),
            class.value(),
            kind.bits(),
        ))
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let found = stored.iter().any(|&(c, x)| {
        c == cond
            && match r.kind {
                RuleKind::DontAudit => x & bit == 0 && r.perms & bit != 0,
                _ => x == r.perms && x & bit != 0,
            }
    });
    assert!(
        found,
        "{} is not a rule of the policy covering bit {bit:#x}",
        r.text_with_cond()
    );
    if let Some(c) = &r.cond {
        let value = eval_cond(&p.cond_nodes[c.node].expr, snap.bools());
        assert_eq!(value, c.value, "{}", r.text_with_cond());
        assert_eq!(value == Some(c.branch), enabled, "{}", r.text_with_cond());
        assert_eq!(c.enabled, enabled);
    }
}

/// The explanation agrees with `compute_av` and every cited rule is real.
fn check_consistent(
    snap: &Snapshot,
    rules: &RuleTable,
    e: &Explanation,
    s: &Context,
    t: &Context,
    class: ClassId,
) {
    let p = &snap.policy;
    let d = arbiter_decide::internals::compute_av(snap, s, t, class);
    let ctx = || format!("{} -> {} : {}", e.scontext, e.tcontext, e.class_name);
    assert_eq!(
        e.granted(),
        d.allowed.0 & e.requested,
        "granted set differs: {}\n{e}",
        ctx()
    );
    assert_eq!(e.allowed, d.allowed.0, "allowed vector differs: {}", ctx());
    assert_eq!(
        e.auditallow,
        d.auditallow.0,
        "auditallow differs: {}",
        ctx()
    );
    assert_eq!(e.auditdeny, d.auditdeny.0, "auditdeny differs: {}", ctx());
    assert!(e.agrees(), "{}", ctx());
    assert_eq!(e.perms.len(), e.requested.count_ones() as usize);
    let mut te = 0;
    for pe in &e.perms {
        assert_eq!(
            pe.granted,
            d.allowed.0 & pe.bit != 0,
            "{} {}",
            ctx(),
            pe.name
        );
        assert_eq!(pe.te_allowed, !pe.allow.is_empty(), "{} {}", ctx(), pe.name);
        if pe.granted {
            assert!(
                pe.te_allowed && pe.removed_by.is_empty(),
                "{} {}",
                ctx(),
                pe.name
            );
        } else if pe.te_allowed {
            assert!(
                !pe.removed_by.is_empty(),
                "{} {}: TE-allowed, denied, but no reason",
                ctx(),
                pe.name
            );
        }
        for r in &pe.allow {
            assert_eq!(r.kind, RuleKind::Allow);
            check_rule(p, snap, rules, r, (s, t, class), pe.bit, true);
            te |= r.perms & pe.bit;
        }
        for r in &pe.auditallow {
            check_rule(p, snap, rules, r, (s, t, class), pe.bit, true);
        }
        for r in &pe.dontaudit {
            check_rule(p, snap, rules, r, (s, t, class), pe.bit, true);
        }
        for w in &pe.would_allow {
            if pe.te_allowed {
                continue; // lifted from a bound: cited against the bound's query
            }
            check_rule(p, snap, rules, &w.rule, (s, t, class), pe.bit, false);
            let c = w
                .rule
                .cond
                .as_ref()
                .expect("a disabled rule is conditional");
            for f in &w.flips {
                let mut b = snap.bools().to_vec();
                b[f.boolean.index()] = f.value;
                assert_eq!(
                    eval_cond(&p.cond_nodes[c.node].expr, &b),
                    Some(c.branch),
                    "flip {}={} does not enable the list",
                    f.name,
                    f.value
                );
            }
        }
    }
    assert_eq!(te, e.te_allowed & e.requested, "{}", ctx());
    let text = e.to_string();
    assert!(text.ends_with('\n'));
}

#[test]
fn default_user_t_cannot_read_shadow_and_dontaudit_silences_it() {
    let srv = server(&repo_policy("default.33"));
    let e = why(
        &srv,
        "user_u:user_r:user_t:s0",
        "system_u:object_r:shadow_t:s0",
        "file",
        &["read", "getattr"],
    );
    let read = perm(&e, "read");
    assert!(!read.granted && !read.te_allowed && read.allow.is_empty() && !read.audited);
    assert_eq!(read.dontaudit.len(), 1);
    assert_eq!(
        read.dontaudit[0].text(),
        "dontaudit user_t shadow_t:file { open read };"
    );
    let getattr = perm(&e, "getattr");
    assert!(getattr.granted);
    assert_eq!(
        getattr.allow[0].text(),
        "allow userdomain shadow_t:file getattr;"
    );
    assert!(getattr.allow[0].source_attribute && !getattr.allow[0].target_attribute);
    let text = e.to_string();
    assert!(
        text.contains("  read: denied\n    no TE rule grants it\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "dontaudit: dontaudit user_t shadow_t:file { open read };  (the denial is not audited)"
        ),
        "{text}"
    );
    assert!(text.contains("allowed by: allow userdomain shadow_t:file getattr;  (user_t has attribute userdomain)"), "{text}");
}

#[test]
fn default_httpd_homedirs_names_the_boolean_that_flips_the_denial() {
    let srv = server(&repo_policy("default.33"));
    let (s, t) = (
        "system_u:system_r:httpd_t:s0",
        "user_u:object_r:user_home_t:s0",
    );
    let e = why(&srv, s, t, "file", &["read"]);
    let read = perm(&e, "read");
    assert!(!read.granted);
    assert_eq!(read.would_allow.len(), 1);
    let w = &read.would_allow[0];
    assert_eq!(
        w.rule.text(),
        "allow httpd_t user_home_t:file { getattr open read };"
    );
    let cond = w.rule.cond.as_ref().unwrap();
    assert_eq!(
        (cond.expr.as_str(), cond.branch, cond.value, cond.enabled),
        ("httpd_enable_homedirs", true, Some(false), false)
    );
    assert_eq!(w.flips.len(), 1);
    assert_eq!(
        (
            w.flips[0].name.as_str(),
            w.flips[0].value,
            w.flips[0].grants
        ),
        ("httpd_enable_homedirs", true, true)
    );
    // The else branch's dontaudit silences the denial meanwhile.
    assert_eq!(read.dontaudit.len(), 1);
    assert!(!read.dontaudit[0].cond.as_ref().unwrap().branch);
    let text = e.to_string();
    assert!(text.contains("would be allowed if: httpd_enable_homedirs=true  (if (httpd_enable_homedirs) [true list; now false: httpd_enable_homedirs=false] allow httpd_t user_home_t:file { getattr open read };)"), "{text}");

    // With the boolean on, the same rule grants it and says so.
    srv.set_booleans(&[("httpd_enable_homedirs", true)])
        .unwrap();
    let e = why(&srv, s, t, "file", &["read"]);
    let read = perm(&e, "read");
    assert!(read.granted && read.would_allow.is_empty() && read.dontaudit.is_empty());
    let c = read.allow[0].cond.as_ref().unwrap();
    assert!(c.enabled && c.branch && c.value == Some(true));
    assert!(e.to_string().contains("allowed by: if (httpd_enable_homedirs) [true list; now true: httpd_enable_homedirs=true] allow httpd_t user_home_t:file { getattr open read };"), "{e}");
}

#[test]
fn default_two_boolean_expression_lists_only_the_flip_that_works() {
    let srv = server(&repo_policy("default.33"));
    srv.set_booleans(&[("secure_mode", true)]).unwrap();
    let e = why(
        &srv,
        "user_u:user_r:user_t:s0",
        "user_u:object_r:user_tmp_t:s0",
        "file",
        &["execute"],
    );
    let x = perm(&e, "execute");
    assert!(!x.granted);
    let w = &x.would_allow[0];
    assert_eq!(
        w.rule.cond.as_ref().unwrap().expr,
        "user_exec_tmp && !secure_mode"
    );
    // user_exec_tmp is already true: only secure_mode=false enables the true list.
    let flips: Vec<(&str, bool)> = w.flips.iter().map(|f| (f.name.as_str(), f.value)).collect();
    assert_eq!(flips, [("secure_mode", false)]);
}

#[test]
fn default_ubac_constraint_shows_the_failing_terms() {
    let srv = server(&repo_policy("default.33"));
    // policies/expect/default.txt: allowed={getattr ioctl lock map open setattr} [ubac]
    let all = [
        "read", "write", "getattr", "open", "create", "append", "unlink", "rename", "ioctl",
        "lock", "map", "setattr",
    ];
    let e = why(
        &srv,
        "user_u:user_r:user_t:s0",
        "staff_u:object_r:user_home_t:s0",
        "file",
        &all,
    );
    let mut granted: Vec<&str> = e
        .perms
        .iter()
        .filter(|p| p.granted)
        .map(|p| p.name.as_str())
        .collect();
    granted.sort();
    assert_eq!(
        granted,
        ["getattr", "ioctl", "lock", "map", "open", "setattr"]
    );
    let ubac = &e.constraints[0];
    assert!(!ubac.mls && !ubac.result);
    assert_eq!(ubac.expr, "u1 == u2 [fail] or u1 == system_u [fail] or u2 == system_u [fail] or t1 == ubac_exempt [fail]");
    assert_eq!(
        ubac.operands,
        [
            ("u1".to_string(), "user_u".to_string()),
            ("u2".into(), "staff_u".into()),
            ("t1".into(), "user_t".into())
        ]
    );
    assert!(ubac.terms.iter().all(|t| !t.value));
    let read = perm(&e, "read");
    assert!(read.te_allowed && read.removed_by == [Removal::Constraint(0)]);
    let text = e.to_string();
    assert!(
        text.contains("constrain file { append create link read relabelfrom relabelto rename unlink write } (u1 == u2 [fail] or u1 == system_u [fail] or u2 == system_u [fail] or t1 == ubac_exempt [fail]) -> fail"),
        "{text}"
    );
    assert!(
        text.contains("where u1=user_u u2=staff_u t1=user_t"),
        "{text}"
    );
}

#[test]
fn default_mls_read_up_is_an_mlsconstrain() {
    let srv = server(&repo_policy("default.33"));
    let e = why(
        &srv,
        "staff_u:staff_r:staff_t:s0",
        "staff_u:object_r:user_home_t:s2",
        "file",
        &["read", "open"],
    );
    assert!(perm(&e, "open").granted && !perm(&e, "read").granted);
    let c = e.constraints.iter().find(|c| !c.result).unwrap();
    assert!(c.mls);
    assert_eq!(c.expr, "l1 dom l2 [fail] or t1 == mlsfileread [fail]");
    assert!(
        c.text()
            .starts_with("mlsconstrain file { execute getattr read } ("),
        "{}",
        c.text()
    );
    assert!(c.operands.contains(&("l2".to_string(), "s2".to_string())));
}

#[test]
fn default_role_change_without_role_allow_is_removed() {
    let srv = server(&repo_policy("default.33"));
    // staff_t may change role (the role constraint lists it), but there is no
    // `allow staff_r system_r;`.
    let e = why(
        &srv,
        "root:staff_r:staff_t:s0",
        "root:system_r:passwd_t:s0",
        "process",
        &["transition"],
    );
    let tr = perm(&e, "transition");
    assert!(tr.te_allowed && !tr.granted);
    assert_eq!(tr.removed_by, [Removal::RoleAllow]);
    let r = e.rbac.as_ref().unwrap();
    assert!(!r.allowed && r.from == "staff_r" && r.to == "system_r");
    assert!(
        e.to_string().contains("no `allow staff_r system_r;`"),
        "{e}"
    );

    // With the allow rule it passes, and the check is still reported.
    let e = why(
        &srv,
        "staff_u:staff_r:staff_t:s0",
        "staff_u:sysadm_r:sysadm_t:s0",
        "process",
        &["transition"],
    );
    assert!(perm(&e, "transition").granted);
    assert!(e.rbac.as_ref().unwrap().allowed);
}

#[test]
fn default_auditallow_is_reported_for_a_grant() {
    let srv = server(&repo_policy("default.33"));
    let e = why(
        &srv,
        "system_u:system_r:sshd_t:s0-s3:c0.c15",
        "system_u:object_r:shadow_t:s0",
        "file",
        &["read"],
    );
    let read = perm(&e, "read");
    assert!(read.granted && read.audited);
    assert_eq!(
        read.auditallow[0].text(),
        "auditallow sshd_t shadow_t:file read;"
    );
    assert!(e
        .to_string()
        .contains("auditallow: auditallow sshd_t shadow_t:file read;  (the grant is audited)"));
}

#[test]
fn bounds_remove_what_the_parent_lacks() {
    let srv = server(&repo_policy("bounds.33"));
    let e = why(
        &srv,
        "system_u:system_r:child_t",
        "system_u:object_r:data_t",
        "file",
        &["read", "write", "unlink", "execute"],
    );
    // policies/expect/bounds.txt: allowed={getattr open read}, dontaudit-clears={execute}
    let granted: Vec<&str> = e
        .perms
        .iter()
        .filter(|p| p.granted)
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(granted, ["read"]);
    for name in ["write", "unlink"] {
        let p = perm(&e, name);
        assert!(p.te_allowed && p.removed_by == [Removal::Bounds], "{name}");
    }
    let b = e.bounds.as_ref().unwrap();
    assert_eq!(
        (
            b.source.as_str(),
            b.bound.as_str(),
            b.target_bound.as_deref()
        ),
        ("child_t", "parent_t", None)
    );
    assert_eq!(b.removes_names, ["write", "unlink"]);
    let nested = b.explanation.as_ref().unwrap();
    assert_eq!(nested.source_type, "parent_t");
    assert!(nested.perms.iter().all(|p| !p.te_allowed));
    // The parent's conditional write rule, lifted: parent_write=true would allow write
    // here too, but nothing gives unlink.
    let w = &perm(&e, "write").would_allow[0];
    assert_eq!(
        w.rule.text(),
        "allow parent_t data_t:file { append write };"
    );
    assert!(w.flips[0].name == "parent_write" && w.flips[0].value && w.flips[0].grants);
    assert!(perm(&e, "unlink").would_allow.is_empty());
    let x = perm(&e, "execute");
    assert!(!x.te_allowed && x.dontaudit[0].text() == "dontaudit child_t data_t:file execute;");
    let text = e.to_string();
    assert!(
        text.contains("bounds: child_t is bounded by parent_t; checked as parent_t -> data_t:file"),
        "{text}"
    );
    assert!(
        text.contains("removes { write unlink }, which parent_t lacks:"),
        "{text}"
    );
}

#[test]
fn nested_and_target_bounds() {
    let srv = server(&repo_policy("bounds.33"));
    let e = why(
        &srv,
        "system_u:system_r:grandchild_t",
        "system_u:object_r:data_t",
        "file",
        &["read", "unlink", "execute"],
    );
    let b = e.bounds.as_ref().unwrap();
    assert_eq!(b.bound, "child_t");
    assert_eq!(b.removes_names, ["unlink", "execute"]);
    // child_t has unlink by its own rule but loses it to parent_t.
    let nested = b.explanation.as_ref().unwrap();
    assert_eq!(perm(nested, "unlink").removed_by, [Removal::Bounds]);
    assert_eq!(nested.bounds.as_ref().unwrap().bound, "parent_t");

    let e = why(
        &srv,
        "system_u:system_r:child_t",
        "system_u:system_r:grandchild_t",
        "process",
        &["transition", "signal"],
    );
    let b = e.bounds.as_ref().unwrap();
    assert_eq!(b.target_bound.as_deref(), Some("child_t"));
    assert_eq!(b.removes_names, ["signal"]);
    assert!(perm(&e, "transition").granted);
}

#[test]
fn json_carries_the_same_facts() {
    let srv = server(&repo_policy("default.33"));
    let e = why(
        &srv,
        "system_u:system_r:httpd_t:s0",
        "user_u:object_r:user_home_t:s0",
        "file",
        &["read", "getattr"],
    );
    let j = e.to_json();
    assert_eq!(j["class"], "file");
    assert_eq!(j["denied"], serde_json::json!(["read", "getattr"]));
    assert_eq!(j["agrees_with_decision"], true);
    let read = &j["permissions"][0];
    assert_eq!(read["name"], "read");
    assert_eq!(
        read["would_allow"][0]["flips"][0]["boolean"],
        "httpd_enable_homedirs"
    );
    assert_eq!(
        read["would_allow"][0]["rule"]["conditional"]["expr"],
        "httpd_enable_homedirs"
    );
    assert_eq!(read["dontaudit_rules"][0]["kind"], "dontaudit");
}

#[test]
fn debian_explanations_agree_with_compute_av() {
    if !Path::new(DEBIAN).exists() {
        eprintln!("note: {DEBIAN} is not installed; skipping (CI installs selinux-policy-default)");
        return;
    }
    let srv = server(Path::new(DEBIAN));
    let p = srv.policy().clone();
    let rules = RuleTable::new(&p);
    // Concrete members of each type or attribute.
    let members = p.members();
    // Users and roles to draw from, so that user, role and MLS constraints fire.
    let users: Vec<UserId> = (0..p.users.len()).filter_map(UserId::from_index).collect();
    let roles: Vec<RoleId> = (0..p.roles.len()).filter_map(RoleId::from_index).collect();
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    let ctx = |ty: TypeId, rng: &mut Rng| {
        let u = users[rng.below(users.len())];
        let range = p.users[u.index()].range.clone();
        let range = if rng.below(2) == 0 {
            range
        } else {
            arbiter_policy::mls::MlsRange {
                low: range.low.clone(),
                high: range.low,
            }
        };
        Context {
            user: u,
            role: roles[rng.below(roles.len())],
            ty,
            range,
        }
    };

    // The first 2000 access-vector rules, then 500 conditional ones.
    let keys: Vec<_> = p
        .avtab
        .entries
        .iter()
        .filter(|e| {
            matches!(
                e.key.kind,
                AvtabKind::Allowed | AvtabKind::AuditAllow | AvtabKind::AuditDeny
            )
        })
        .take(2000)
        .chain(
            p.cond_avtab
                .entries
                .iter()
                .filter(|e| matches!(e.key.kind, AvtabKind::Allowed | AvtabKind::AuditDeny))
                .take(500),
        )
        .map(|e| e.key)
        .collect();
    let snap = srv.snapshot();
    let (mut n, mut denied, mut flips, mut cons) = (0, 0, 0, 0);
    for k in keys {
        let (sm, tm) = (&members[k.source.index()], &members[k.target.index()]);
        if sm.is_empty() || tm.is_empty() {
            continue;
        }
        let s = ctx(sm[rng.below(sm.len())], &mut rng);
        let t = ctx(tm[rng.below(tm.len())], &mut rng);
        // Random combinations, valid or not (the kernel computes decisions for any
        // context it holds), explained directly on the snapshot.
        let requested = snap.names().defined_perms(k.class);
        let e = arbiter_decide::internals::explain_contexts(&snap, &s, &t, k.class, requested);
        check_consistent(&snap, &rules, &e, &s, &t, k.class);
        n += 1;
        denied += e.denied().count_ones();
        flips += e.perms.iter().map(|p| p.would_allow.len()).sum::<usize>();
        cons += e.constraints.iter().filter(|c| !c.result).count();
    }
    eprintln!("{n} explanations checked: {denied} denied permissions, {flips} conditional rules that would grant, {cons} failing constraints");
    assert!(n > 2000 && denied > 0 && flips > 0 && cons > 0);
}

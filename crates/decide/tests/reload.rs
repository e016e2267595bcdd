//! Policy reload: SIDs keep their meaning (the kernel's `sidtab_convert`), contexts a new
//! policy lacks answer as `unlabeled` and revive when a later policy defines them again,
//! sequence numbers only grow, booleans carry over by name, permission sets resolved
//! against an older policy are resolved again, and servers never share state.

use arbiter_decide::internals::compute_av;
use arbiter_decide::{AccessVector, ClassRef, SecurityServer, Sid, Snapshot};
use arbiter_policy::{ValidPolicy, BUILTIN_POLICY};

fn repo_policy(name: &str) -> ValidPolicy {
    let path = arbiter_testkit::repo_policies().join("bin").join(name);
    ValidPolicy::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn builtin() -> ValidPolicy {
    ValidPolicy::from_bytes(BUILTIN_POLICY).unwrap()
}

/// The decision computed directly on one snapshot, bypassing every cache and handle.
fn uncached(snap: &Snapshot, s: Sid, t: Sid, class: &str) -> AccessVector {
    let c = snap.names().class(class).unwrap();
    compute_av(
        snap,
        snap.sids().context(s).unwrap(),
        snap.sids().context(t).unwrap(),
        c,
    )
    .allowed
}

const STAFF: &str = "staff_u:staff_r:staff_t:s0";
const ETC: &str = "system_u:object_r:etc_t:s0";
/// Defined by the builtin (default.conf) policy only.
const USER_HOME: &str = "staff_u:object_r:user_home_t:s0";

/// The bug this server replaced: a per-thread snapshot keyed by the server's address made a
/// new server built where a dropped one lived answer with the dropped one's policy.
#[test]
fn servers_built_at_one_address_never_answer_for_each_other() {
    let policies = [
        ("features.33", repo_policy("features.33")),
        ("default.33", repo_policy("default.33")),
    ];
    let mut answers = Vec::new();
    for round in 0..20 {
        for (name, policy) in &policies {
            let server = SecurityServer::new(policy.clone());
            let (s, t) = (
                server.context_to_sid(STAFF).unwrap(),
                server.context_to_sid(ETC).unwrap(),
            );
            let file = server.known_class("file").unwrap();
            let got = server.compute_av(s, t, file).unwrap().allowed;
            let mut q = server.query();
            let via_handle = q.compute_av(s, t, file).unwrap().allowed;
            let want = uncached(&server.snapshot(), s, t, "file");
            assert_eq!(
                got, want,
                "{name}, round {round}: server answered another policy"
            );
            assert_eq!(via_handle, want, "{name}, round {round}: handle");
            answers.push((*name, got));
        }
    }
    // The two policies really differ here, so a mix-up could not go unnoticed.
    assert_ne!(answers[0].1, answers[1].1);
}

#[test]
fn reload_keeps_sids_and_revives_contexts_a_later_policy_defines() {
    let server = SecurityServer::new(builtin());
    let staff = server.context_to_sid(STAFF).unwrap();
    let etc = server.context_to_sid(ETC).unwrap();
    let home = server.context_to_sid(USER_HOME).unwrap();
    let before = (
        server
            .compute_av(staff, etc, server.known_class("file").unwrap())
            .unwrap(),
        server
            .compute_av(staff, home, server.known_class("file").unwrap())
            .unwrap(),
    );
    let seq0 = server.seqno();

    // features.33 has no user_home_t: that SID keeps its number and text but is invalid.
    let r = server.load_policy(repo_policy("features.33")).unwrap();
    assert_eq!(r.seqno, seq0 + 1);
    assert!(r.sids.invalidated >= 1, "{r:?}");
    assert!(server.sid_is_valid(staff) && server.sid_is_valid(etc));
    assert!(!server.sid_is_valid(home));
    assert_eq!(server.sid_to_context(home).unwrap(), USER_HOME);
    assert_eq!(
        server.context_to_sid(STAFF).unwrap(),
        staff,
        "same context, same SID"
    );
    assert!(
        server.context_to_sid(USER_HOME).is_err(),
        "not a context of this policy"
    );
    // Decisions on the invalid SID are the unlabeled initial SID's, as in the kernel.
    let snap = server.snapshot();
    let unlabeled = Sid::new(3).unwrap();
    assert_eq!(
        uncached(&snap, staff, home, "file"),
        uncached(&snap, staff, unlabeled, "file")
    );
    let file = server.known_class("file").unwrap();
    assert_eq!(
        server.compute_av(staff, home, file).unwrap().allowed,
        uncached(&snap, staff, unlabeled, "file")
    );
    // The valid ones are decided under the new policy.
    assert_eq!(
        server.compute_av(staff, etc, file).unwrap().allowed,
        uncached(&snap, staff, etc, "file")
    );

    // Back to the builtin policy: the same SIDs mean the same contexts and decide as before.
    let r = server.load_policy(builtin()).unwrap();
    assert_eq!(r.seqno, seq0 + 2);
    assert!(server.sid_is_valid(home), "revived");
    assert_eq!(server.sid_to_context(home).unwrap(), USER_HOME);
    assert_eq!(server.context_to_sid(USER_HOME).unwrap(), home);
    let file = server.known_class("file").unwrap();
    let after = (
        server.compute_av(staff, etc, file).unwrap(),
        server.compute_av(staff, home, file).unwrap(),
    );
    assert_eq!(
        (before.0.allowed, before.1.allowed),
        (after.0.allowed, after.1.allowed)
    );
    // New SIDs continue after the old ones.
    let fresh = server
        .context_to_sid("system_u:object_r:shadow_t:s0")
        .unwrap();
    assert!(fresh > home);
}

#[test]
fn initial_sids_take_the_new_policys_contexts() {
    let server = SecurityServer::new(builtin());
    let kernel = Sid::new(1).unwrap();
    assert_eq!(
        server.sid_to_context(kernel).unwrap(),
        "system_u:system_r:kernel_t:s0-s3:c0.c15"
    );
    server.load_policy(repo_policy("tiny.33")).unwrap();
    let tiny = SecurityServer::new(repo_policy("tiny.33"));
    assert_eq!(
        server.sid_to_context(kernel).unwrap(),
        tiny.sid_to_context(kernel).unwrap()
    );
}

#[test]
fn booleans_keep_their_values_by_name_across_a_reload() {
    let server = SecurityServer::new(builtin());
    let flipped = server
        .set_booleans(&[("httpd_enable_homedirs", true), ("user_exec_tmp", false)])
        .unwrap();
    let r = server.load_policy(builtin()).unwrap();
    assert_eq!(r.seqno, flipped + 1);
    let values: std::collections::HashMap<String, bool> = server.booleans().into_iter().collect();
    assert!(values["httpd_enable_homedirs"]);
    assert!(!values["user_exec_tmp"]);
    assert!(!values["secure_mode"]);
}

#[test]
fn perm_sets_from_an_older_policy_are_resolved_again() {
    let server = SecurityServer::new(builtin());
    let staff = server.context_to_sid(STAFF).unwrap();
    let etc = server.context_to_sid(ETC).unwrap();
    let read = server.perm_set("file", &["read", "getattr"]).unwrap();
    let old_class = read.class();
    server.load_policy(repo_policy("features.33")).unwrap();
    let fresh = server.perm_set("file", &["read", "getattr"]).unwrap();
    // The class value moved between the policies, so reusing the old value would be wrong.
    assert_ne!(old_class, fresh.class());
    assert_eq!(
        server.check(staff, etc, &read).unwrap().allowed(),
        server.check(staff, etc, &fresh).unwrap().allowed()
    );
    assert_eq!(
        server.check(staff, etc, &read).unwrap().granted,
        server.check(staff, etc, &fresh).unwrap().granted
    );
}

#[test]
fn unknown_classes_follow_handle_unknown_through_check() {
    // default.33 denies unknown classes and permissions; unknown.conf policies allow them.
    let server = SecurityServer::new(builtin());
    let staff = server.context_to_sid(STAFF).unwrap();
    let etc = server.context_to_sid(ETC).unwrap();
    match server.class("no_such_class") {
        Ok(ClassRef::Unknown) => {
            let ps = server.perm_set("no_such_class", &["frob"]).unwrap();
            let v = server.check(staff, etc, &ps).unwrap();
            assert_eq!(v.allowed(), ps.unknown_allowed());
            assert_eq!(ps.denied_names(&v).is_empty(), ps.unknown_allowed());
        }
        Ok(other) => panic!("resolved to {other:?}"),
        Err(e) => assert!(e.to_string().contains("rejects"), "{e}"),
    }
}

#[test]
fn a_policy_changed_after_reading_is_validated_again_and_refused() {
    let server = SecurityServer::new(builtin());
    let seqno = server.seqno();
    let mut changed = builtin().into_policy();
    changed.type_attr_map.pop();
    let e = server.load_policy(changed).unwrap_err();
    assert!(
        matches!(&e, arbiter_decide::DecideError::InvalidPolicy(m) if m.contains("type attribute map")),
        "{e}"
    );
    assert_eq!(server.seqno(), seqno, "the running policy stays");
    // The same policy unchanged, as a plain Policy, is checked and taken.
    assert!(server.load_policy(builtin().into_policy()).is_ok());
    assert!(arbiter_policy::ValidPolicy::check(builtin().into_policy()).is_ok());
}

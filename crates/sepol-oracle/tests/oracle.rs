//! Behaviour of the libsepol oracle on Debian's two binary policies.
//!
//! Facts checked here come from `sesearch`/`seinfo` on the same files, e.g.
//! `sesearch -A -s init_t -t etc_t -c file /etc/selinux/default/policy/policy.33`.
//! Tests run in parallel threads; each `Oracle::load` blocks until the
//! previous test's oracle is dropped (libsepol's services layer is global).

use std::path::Path;
use std::time::Duration;

use sepol_oracle::{
    is_statically_linked, policydb_read_only, HandleUnknown, Oracle, REASON_CONS, REASON_TE,
};

use arbiter_testkit::{DEBIAN_DEFAULT as DEFAULT, DEBIAN_MLS as MLS};
const BOTH: [&str; 2] = [DEFAULT, MLS];

const EINVAL: i32 = 22;
const EBUSY: i32 = 16;
const EDEADLK: i32 = 35;

fn load(path: &str) -> Oracle {
    assert!(is_statically_linked(), "the oracle needs libsepol.a");
    assert!(Path::new(path).exists(), "{path} missing");
    Oracle::load(path).unwrap_or_else(|e| panic!("loading {path}: {e}"))
}

fn sid(o: &Oracle, ctx: &str) -> u32 {
    o.context_to_sid(ctx)
        .unwrap_or_else(|e| panic!("{ctx}: {e}"))
}

#[test]
fn both_debian_policies_load_with_expected_shape() {
    for (path, hu) in [(DEFAULT, HandleUnknown::Allow), (MLS, HandleUnknown::Deny)] {
        let o = load(path);
        assert_eq!(o.policy_version(), 33, "{path}");
        assert!(o.mls_enabled(), "{path}");
        assert_eq!(o.handle_unknown(), hu, "{path}");
        assert_eq!(o.class_count(), 134, "{path}");
        assert_eq!(o.bool_names().len(), 291, "{path}");
        // 27 initial SIDs numbered 1..=27, loaded by policydb_load_isids.
        let isids = o.initial_sids();
        assert_eq!(isids.len(), 27, "{path}");
        assert_eq!(o.sid_count(), 27, "{path}");
        assert!(
            isids.iter().map(|(s, _)| *s).eq(1..=27),
            "{path}: {isids:?}"
        );
        assert!(
            isids[0].1.starts_with("system_u:system_r:kernel_t:"),
            "{path}: {isids:?}"
        );
        assert!(
            isids[26].1.starts_with("system_u:object_r:null_device_t:"),
            "{path}"
        );
    }
}

#[test]
fn known_context_round_trips_and_gets_a_stable_fresh_sid() {
    for path in BOTH {
        let o = load(path);
        let ctx = "system_u:system_r:init_t:s0";
        let s = sid(&o, ctx);
        assert!(
            s > 27,
            "{path}: new contexts are numbered after the initial SIDs, got {s}"
        );
        assert_eq!(o.sid_to_context(s).unwrap(), ctx, "{path}");
        assert_eq!(sid(&o, ctx), s, "{path}: same context, same SID");
        assert!(o.sid_exists(s));

        let s2 = sid(&o, "system_u:object_r:etc_t:s0");
        assert_eq!(s2, s + 1, "{path}: SIDs are handed out sequentially");

        let mls_ctx = "system_u:system_r:init_t:s0-s0:c0.c1023";
        let s3 = sid(&o, mls_ctx);
        assert_eq!(o.sid_to_context(s3).unwrap(), mls_ctx, "{path}");

        // The kernel SID is initial SID 1.
        assert!(o
            .sid_to_context(1)
            .unwrap()
            .starts_with("system_u:system_r:kernel_t:s"));
    }
}

#[test]
fn unknown_sids_fall_back_to_unlabeled_like_the_kernel() {
    let o = load(DEFAULT);
    assert!(!o.sid_exists(123_456));
    assert_eq!(
        o.sid_to_context(123_456).unwrap(),
        "system_u:object_r:unlabeled_t:s0"
    );
    // A context equal to several initial SIDs' contexts maps to the lowest.
    assert_eq!(sid(&o, "system_u:object_r:unlabeled_t:s0"), 3);
}

#[test]
fn malformed_contexts_are_errors() {
    for path in BOTH {
        let o = load(path);
        for bad in [
            "",
            "garbage",
            "system_u:object_r",
            "system_u:object_r:etc_t", // MLS policy: level required
            "nosuch_u:object_r:etc_t:s0",
            "system_u:nosuch_r:etc_t:s0",
            "system_u:object_r:nosuch_t:s0",
            "system_u:object_r:etc_t:s99",
            "system_u:object_r:etc_t:s0:c99999",
            "system_u:object_r:etc_t:s0-",
            "user_u:system_r:init_t:s0", // user_u may not have system_r
            "system_u:user_r:init_t:s0", // system_u may not have user_r
        ] {
            let e = o.context_to_sid(bad).expect_err(bad);
            assert!(e.code < 0, "{bad:?}: {e:?}");
            assert!(!e.message.is_empty(), "{bad:?}");
        }
    }
}

#[test]
fn init_t_may_read_etc_t_files() {
    for path in BOTH {
        let o = load(path);
        let init = sid(&o, "system_u:system_r:init_t:s0");
        let etc = sid(&o, "system_u:object_r:etc_t:s0");
        let file = o.class_value("file").unwrap();
        let d = o.compute_av(init, etc, file, 0).unwrap();
        // allow init_t etc_t:file { execute ... open read }; plus
        // files_unconfined_type file_type:file { ... write ... }.
        let want = o
            .av_bits(
                "file",
                &[
                    "read",
                    "open",
                    "getattr",
                    "ioctl",
                    "lock",
                    "map",
                    "execute",
                    "execute_no_trans",
                    "write",
                ],
            )
            .unwrap();
        assert_eq!(
            d.allowed & want,
            want,
            "{path}: {:?}",
            o.av_to_names(file, d.allowed)
        );
        let never = o.av_bits("file", &["entrypoint", "execmod"]).unwrap();
        assert_eq!(
            d.allowed & never,
            0,
            "{path}: {:?}",
            o.av_to_names(file, d.allowed)
        );
        assert_eq!(d.decided, u32::MAX);
        assert_eq!(d.auditallow, 0);
        assert_eq!(d.auditdeny, u32::MAX);
        assert_eq!(d.seqno, 0);
        assert_eq!(d.flags, 0);

        let read = o.av_bit("file", "read").unwrap();
        let (d2, reason, _) = o.compute_av_reason(init, etc, file, read).unwrap();
        assert_eq!(d2, d);
        assert_eq!(reason, 0, "{path}: read is granted, no reason to deny");
        let (_, reason, _) = o.compute_av_reason(init, etc, file, read | never).unwrap();
        assert_eq!(reason, REASON_TE, "{path}");
    }
}

#[test]
fn class_and_permission_values_follow_kernel_numbering() {
    let o = load(DEFAULT);
    let file = o.class_value("file").unwrap();
    assert_eq!(o.class_name(file).as_deref(), Some("file"));
    assert_eq!(o.class_value("nosuchclass"), None);
    assert_eq!(o.class_name(0), None);
    assert_eq!(o.class_name(o.class_count() + 1), None);
    for c in 1..=o.class_count() {
        let name = o.class_name(c).unwrap();
        assert_eq!(o.class_value(&name), Some(c));
    }
    // `file` inherits common `file` (ioctl read write create ...) and adds
    // execute_no_trans, entrypoint after the common's permissions.
    assert_eq!(o.perm_value("file", "ioctl"), Some(1));
    assert_eq!(o.perm_value("file", "read"), Some(2));
    assert_eq!(o.perm_value("file", "write"), Some(3));
    let common_n = o.perm_value("file", "execute_no_trans").unwrap();
    assert!(common_n > 20);
    assert_eq!(o.perm_value("file", "entrypoint"), Some(common_n + 1));
    assert_eq!(o.av_bit("file", "read"), Some(1 << 1));
    assert_eq!(o.perm_value("file", "nosuchperm"), None);
    assert_eq!(o.perm_value("nosuchclass", "read"), None);
    assert_eq!(o.perm_name(file, 2).as_deref(), Some("read"));
    assert_eq!(
        o.perm_name(file, common_n).as_deref(),
        Some("execute_no_trans")
    );
    for v in 1..=o.perm_count(file) {
        let n = o.perm_name(file, v).unwrap();
        assert_eq!(o.perm_value("file", &n), Some(v));
    }
}

#[test]
fn unknown_class_is_an_error_regardless_of_handle_unknown() {
    for path in BOTH {
        let o = load(path);
        let init = sid(&o, "system_u:system_r:init_t:s0");
        for bad in [0, o.class_count() + 1, u16::MAX] {
            let e = o.compute_av(init, init, bad, 1).unwrap_err();
            assert_eq!(e.code, -EINVAL, "{path}: class {bad}: {e}");
            let e = o.validate_transition(init, init, init, bad).unwrap_err();
            assert_eq!(e.code, -EINVAL, "{path}: class {bad}: {e}");
        }
    }
}

#[test]
fn boolean_commit_flips_conditional_allow_rules() {
    for path in BOTH {
        let mut o = load(path);
        // allow httpd_t gds_db_port_t:tcp_socket name_connect; [ httpd_can_network_connect_db ]:True
        // allow httpd_t port_type:tcp_socket name_connect; [ httpd_can_network_connect ]:True
        let httpd = sid(&o, "system_u:system_r:httpd_t:s0");
        let port = sid(&o, "system_u:object_r:gds_db_port_t:s0");
        let tcp = o.class_value("tcp_socket").unwrap();
        let nc = o.av_bit("tcp_socket", "name_connect").unwrap();
        let allowed = |o: &Oracle| o.compute_av(httpd, port, tcp, nc).unwrap().allowed & nc != 0;

        assert!(!o.bool_get("httpd_can_network_connect_db").unwrap());
        assert!(!o.bool_get("httpd_can_network_connect").unwrap());
        assert!(!allowed(&o), "{path}: denied with the default booleans");

        o.set_bool("httpd_can_network_connect_db", true).unwrap();
        assert!(!allowed(&o), "{path}: staged, not committed");
        assert!(!o.bool_get("httpd_can_network_connect_db").unwrap());
        o.commit_bools().unwrap();
        assert!(o.bool_get("httpd_can_network_connect_db").unwrap());
        assert!(allowed(&o), "{path}: allowed once the boolean is committed");
        assert_eq!(
            o.compute_av(httpd, port, tcp, nc).unwrap().seqno,
            0,
            "libsepol never bumps seqno"
        );

        o.set_bool("httpd_can_network_connect_db", false).unwrap();
        o.commit_bools().unwrap();
        assert!(!allowed(&o), "{path}: denied again");

        // The other guard of the same permission.
        o.set_bool("httpd_can_network_connect", true).unwrap();
        o.commit_bools().unwrap();
        assert!(allowed(&o), "{path}: allowed via port_type rule");
        o.set_bool("httpd_can_network_connect", false).unwrap();
        o.commit_bools().unwrap();
        assert!(!allowed(&o));

        // False-list rule: allow nscd_t accountsd_t:file { ... read }; [ nscd_use_shm ]:False
        let nscd = sid(&o, "system_u:system_r:nscd_t:s0");
        let accountsd = sid(&o, "system_u:system_r:accountsd_t:s0");
        let file = o.class_value("file").unwrap();
        let read = o.av_bit("file", "read").unwrap();
        assert!(!o.bool_get("nscd_use_shm").unwrap());
        assert_ne!(
            o.compute_av(nscd, accountsd, file, read).unwrap().allowed & read,
            0,
            "{path}"
        );
        o.set_bool("nscd_use_shm", true).unwrap();
        o.commit_bools().unwrap();
        assert_eq!(
            o.compute_av(nscd, accountsd, file, read).unwrap().allowed & read,
            0,
            "{path}"
        );

        assert_eq!(o.set_bool("no_such_boolean", true).unwrap_err().code, -2);
        assert!(o.bool_get("no_such_boolean").is_err());
    }
}

#[test]
fn booleans_reset_on_reload() {
    {
        let mut o = load(DEFAULT);
        o.set_bool("httpd_can_network_connect_db", true).unwrap();
        o.commit_bools().unwrap();
        assert!(o.bool_get("httpd_can_network_connect_db").unwrap());
    }
    let o = load(DEFAULT);
    assert!(!o.bool_get("httpd_can_network_connect_db").unwrap());
}

#[test]
fn constraint_denials_are_reported_with_reason_text() {
    // default: UBAC (u1 == u2 or ... or t2 != ubac_constrained_type);
    // mls: read needs l1 dom l2.
    for (path, target) in [
        (DEFAULT, "staff_u:object_r:user_home_t:s0"),
        (MLS, "system_u:object_r:user_home_t:s1"),
    ] {
        let o = load(path);
        let user = sid(&o, "user_u:user_r:user_t:s0");
        let own = sid(&o, "user_u:object_r:user_home_t:s0");
        let other = sid(&o, target);
        let file = o.class_value("file").unwrap();
        let read = o.av_bit("file", "read").unwrap();
        assert_ne!(
            o.compute_av(user, own, file, read).unwrap().allowed & read,
            0,
            "{path}"
        );
        let (d, reason, text) = o.compute_av_reason(user, other, file, read).unwrap();
        assert_eq!(d.allowed & read, 0, "{path}");
        assert_eq!(reason, REASON_CONS, "{path}");
        let text = text.expect("reason text for a constraint denial");
        assert!(text.contains("constrain file"), "{path}: {text}");
        assert!(text.contains("DENIED"), "{path}: {text}");
        let (_, _, all) = o.compute_av_reason_all(user, own, file, read).unwrap();
        assert!(all.unwrap_or_default().contains("GRANTED"), "{path}");
    }
}

#[test]
fn transition_member_and_change_sids_follow_type_rules() {
    for path in BOTH {
        let o = load(path);
        let init = sid(&o, "system_u:system_r:init_t:s0");
        let etc = sid(&o, "system_u:object_r:etc_t:s0");
        let file = o.class_value("file").unwrap();
        // type_transition init_t etc_t:file etc_runtime_t;
        let t = o.transition_sid(init, etc, file).unwrap();
        assert_eq!(
            o.sid_to_context(t).unwrap(),
            "system_u:object_r:etc_runtime_t:s0",
            "{path}"
        );
        // No rule: the new object keeps the parent's type, role object_r.
        let dir = o.class_value("dir").unwrap();
        let bin = sid(&o, "system_u:object_r:bin_t:s0");
        let t = o.transition_sid(init, bin, dir).unwrap();
        assert_eq!(
            o.sid_to_context(t).unwrap(),
            "system_u:object_r:bin_t:s0",
            "{path}"
        );

        let user = sid(&o, "user_u:user_r:user_t:s0");
        // type_member user_t tmp_t:dir user_tmp_t;
        let tmp = sid(&o, "system_u:object_r:tmp_t:s0");
        let m = o.member_sid(user, tmp, dir).unwrap();
        assert_eq!(
            o.sid_to_context(m).unwrap(),
            "system_u:object_r:user_tmp_t:s0",
            "{path}"
        );
        // type_change user_t sshd_devpts_t:chr_file user_devpts_t;
        let pts = sid(&o, "system_u:object_r:sshd_devpts_t:s0");
        let chr = o.class_value("chr_file").unwrap();
        let c = o.change_sid(user, pts, chr).unwrap();
        assert_eq!(
            o.sid_to_context(c).unwrap(),
            "user_u:object_r:user_devpts_t:s0",
            "{path}"
        );
    }
}

#[test]
fn validate_transition_applies_mlsvalidatetrans() {
    let o = load(MLS);
    let file = o.class_value("file").unwrap();
    let old = sid(&o, "system_u:object_r:etc_t:s0");
    let same = sid(&o, "system_u:object_r:etc_runtime_t:s0");
    let up = sid(&o, "system_u:object_r:etc_t:s1");
    let task = sid(&o, "user_u:user_r:user_t:s0");
    assert!(o.validate_transition(old, same, task, file).unwrap());
    assert!(!o.validate_transition(old, up, task, file).unwrap());
    let (ok, text) = o
        .validate_transition_reason(old, up, task, file, false)
        .unwrap();
    assert!(!ok);
    assert!(text.unwrap_or_default().contains("mlsvalidatetrans file"));

    // The default policy has no validatetrans rules at all.
    drop(o);
    let o = load(DEFAULT);
    let a = sid(&o, "system_u:object_r:etc_t:s0");
    let b = sid(&o, "system_u:object_r:etc_t:s0:c1");
    let task = sid(&o, "user_u:user_r:user_t:s0");
    assert!(o
        .validate_transition(a, b, task, o.class_value("file").unwrap())
        .unwrap());
}

#[test]
fn truncated_or_garbage_policies_are_errors_not_crashes() {
    let bytes = std::fs::read(DEFAULT).unwrap();
    let n = bytes.len();
    let mut cuts = vec![
        0,
        1,
        4,
        8,
        12,
        16,
        40,
        100,
        1000,
        n / 3,
        n / 2,
        n - 100,
        n - 1,
    ];
    cuts.extend((1..64).map(|i| i * n / 64));
    for cut in cuts {
        let e = Oracle::load_bytes(&bytes[..cut]).expect_err("truncated policy must fail");
        assert!(e.code < 0, "cut {cut}: {e:?}");
        assert!(policydb_read_only(&bytes[..cut]).is_err(), "cut {cut}");
    }
    let mut bad_magic = bytes.clone();
    bad_magic[0] ^= 0xff;
    assert!(Oracle::load_bytes(&bad_magic).is_err());
    assert!(policydb_read_only(&bad_magic).is_err());
    assert!(Oracle::load_bytes(&vec![0u8; 4096]).is_err());

    let e = Oracle::load("/nonexistent/policy.33").unwrap_err();
    assert_eq!(e.code, -2, "{e}");

    // Still perfectly usable afterwards.
    let o = Oracle::load_bytes(&bytes).unwrap();
    assert!(o.context_to_sid("system_u:system_r:init_t:s0").is_ok());
}

#[test]
fn only_one_oracle_at_a_time() {
    let o = load(DEFAULT);
    // Same thread: can never succeed, so it is refused outright.
    assert_eq!(Oracle::load(DEFAULT).unwrap_err().code, -EDEADLK);
    assert_eq!(Oracle::try_load(DEFAULT).unwrap_err().code, -EDEADLK);
    // Another thread: try_load refuses, load waits for the drop.
    let e = std::thread::spawn(|| Oracle::try_load(DEFAULT).map(|_| ()))
        .join()
        .unwrap()
        .unwrap_err();
    assert_eq!(e.code, -EBUSY);
    let waiter = std::thread::spawn(|| {
        let o = Oracle::load(MLS)?;
        o.context_to_sid("system_u:system_r:init_t:s15:c0.c1023")
    });
    std::thread::sleep(Duration::from_millis(100));
    // Our oracle is still installed and unaffected by the waiting thread.
    assert!(o.context_to_sid("system_u:system_r:init_t:s0").is_ok());
    drop(o);
    assert!(waiter.join().unwrap().is_ok());
}

#[test]
fn policydb_read_only_is_independent_of_the_oracle() {
    let bytes = std::fs::read(MLS).unwrap();
    let o = load(DEFAULT);
    let a = policydb_read_only(&bytes).unwrap();
    let b = policydb_read_only(&bytes).unwrap();
    assert_eq!(a.policy_version(), 33);
    assert_eq!(a.class_count(), 134);
    assert_eq!(a.bool_count(), 291);
    assert_eq!(a.type_count(), b.type_count());
    drop((a, b));
    // The installed oracle still answers from the default policy.
    assert_eq!(
        o.sid_to_context(sid(&o, "system_u:object_r:etc_t:s0"))
            .unwrap(),
        "system_u:object_r:etc_t:s0"
    );
}

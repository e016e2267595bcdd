//! audit2why's boolean verdict: a denial that a conditional allow rule would grant, with
//! the boolean that enables it set the other way, names that boolean.
//!
//! The engine finds its candidates in a map keyed by class and source; with a padded
//! `(ClassId, u32)` key LLVM's x86 backend built every key wrong in the release library
//! (llvm/llvm-project#205291) once `ClassId` was byte-aligned, and every such denial
//! came out as "should be dontaudit'd". The expected answers are audit2why's (checked
//! with policycoreutils 3.4).

use arbiter_denials::{BoolFix, Engine, Verdict};

fn fix(name: &str, value: bool) -> Verdict {
    Verdict::Boolean(vec![BoolFix {
        name: name.to_string(),
        value,
    }])
}

#[test]
fn a_denial_granted_under_a_boolean_names_it_on_the_features_policy() {
    let e = Engine::open(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../policies/bin/features.33"
    ))
    .unwrap();
    let web = e
        .analyze(
            "system_u:web_r:web_t:s0",
            "system_u:object_r:web_content_t:s0",
            "file",
            &["write"],
        )
        .unwrap();
    assert_eq!(web, fix("web_write", true));
    let staff = e
        .analyze(
            "staff_u:staff_r:staff_t:s0",
            "staff_u:object_r:staff_tmp_t:s0",
            "file",
            &["execute"],
        )
        .unwrap();
    assert_eq!(staff, fix("staff_exec_tmp", true));
}

#[test]
fn a_denial_granted_under_a_boolean_names_it_on_the_debian_policy() {
    let path = "/etc/selinux/default/policy/policy.33";
    if !std::path::Path::new(path).exists() {
        eprintln!("skipped: {path} missing");
        return;
    }
    let e = Engine::open(path).unwrap();
    let v = e
        .analyze(
            "system_u:system_r:bacula_t:s0",
            "system_u:system_r:nscd_t:s0",
            "fd",
            &["use"],
        )
        .unwrap();
    assert_eq!(v, fix("nscd_use_shm", true));
}

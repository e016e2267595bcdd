//! Debian's default and MLS module stores compiled by arbiter and by secilc 3.4 (`-N`, as
//! semodule runs it with `expand-check=0`): the policies must agree section by section and
//! the file_contexts text byte for byte.

mod common;

use arbiter_cil::{compile, Options};
use arbiter_policy::Policy;

fn check_store(store: &str) {
    if common::skip() {
        return;
    }
    let Some(sources) = common::store_sources(store) else {
        if std::env::var_os("ARBITER_NO_SECILC").is_some() {
            return;
        }
        panic!("module store {store} not installed");
    };
    let dir = common::scratch(store);
    let run = common::secilc(&dir, &["-N"], &sources);
    assert_eq!(run.status, 0, "secilc failed: {}", run.stderr);
    let theirs = Policy::from_bytes(run.policy.as_deref().expect("policy")).expect("readable");
    let opts = Options {
        disable_neverallow: true,
        ..Options::default()
    };
    let ours = compile(&sources, &opts).unwrap_or_else(|e| panic!("arbiter failed: {e}"));
    let diffs = common::compare(&ours.policy, &theirs);
    assert!(
        diffs.is_empty(),
        "{store}: policies differ:\n{}",
        diffs.join("\n")
    );
    let fc = run.file_contexts.expect("file_contexts");
    assert!(
        ours.file_contexts == fc,
        "{store}: file_contexts differ (ours {} bytes, secilc {} bytes)",
        ours.file_contexts.len(),
        fc.len()
    );
    // seusers / users_extra as semodule installed them for this store.
    let active = std::path::Path::new("/var/lib/selinux")
        .join(store)
        .join("active");
    if let Ok(s) = std::fs::read(active.join("seusers.linked")) {
        assert_eq!(
            String::from_utf8_lossy(&ours.seusers),
            String::from_utf8_lossy(&s)
        );
    }
    if let Ok(s) = std::fs::read(active.join("users_extra.linked")) {
        assert_eq!(
            String::from_utf8_lossy(&ours.users_extra),
            String::from_utf8_lossy(&s)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn debian_default_store_matches_secilc() {
    check_store("default");
}

#[test]
fn debian_mls_store_matches_secilc() {
    check_store("mls");
}

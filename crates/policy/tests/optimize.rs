//! The optimiser (`arbiter_policy::optimize`) against libsepol 3.4's, through `secilc -O`:
//! secilc's build without `-O`, read, optimised and written in libsepol's layout, must be
//! the bytes of secilc's build with `-O`.
//!
//! * The CIL policies beside the tests (`tests/cil`), MLS on and off, at several versions.
//! * Debian's default and MLS module stores: the installed `policy.33` is what `semodule
//!   -B` built from the store, the same bytes as `secilc -N` on the store's modules
//!   (cil.md §10), so it stands for the unoptimised build; secilc runs once per store, with
//!   `-N -O` (about 10 s each).
//!
//! secilc must be installed (CI installs it); `ARBITER_NO_SECILC=1` skips these tests.

#[path = "common/secilc.rs"]
mod secilc;

use arbiter_policy::optimize::optimize;
use arbiter_policy::write::{write_policy_with, Layout, WriteOptions};
use arbiter_policy::Policy;
use std::path::Path;

const SLOTS: u32 = 1 << 20;

/// `unoptimised` read, optimised, written in libsepol's layout; panics unless the bytes
/// are `optimised`. Returns how many rules went.
fn assert_optimises_to(what: &str, unoptimised: &[u8], optimised: &[u8]) -> usize {
    let mut p = Policy::from_bytes(unoptimised).unwrap_or_else(|e| panic!("{what}: {e}"));
    let stats = optimize(&mut p, SLOTS).unwrap_or_else(|e| panic!("{what}: {e}"));
    let opts = WriteOptions {
        layout: Layout::Libsepol34 { avtab_slots: SLOTS },
        ..Default::default()
    };
    let ours = write_policy_with(&p, p.version, &opts)
        .unwrap_or_else(|e| panic!("{what}: {e}"))
        .bytes;
    if ours != optimised {
        let at = ours
            .iter()
            .zip(optimised)
            .position(|(a, b)| a != b)
            .unwrap_or(ours.len().min(optimised.len()));
        panic!(
            "{what}: optimised policy differs from secilc -O's from byte {at} \
             (ours {} bytes, theirs {}; {stats:?})",
            ours.len(),
            optimised.len()
        );
    }
    // What went is in the model too: reading secilc's output gives the same rule counts.
    let theirs = Policy::from_bytes(optimised).unwrap();
    assert_eq!(p.avtab.len(), theirs.avtab.len(), "{what}");
    assert_eq!(p.cond_nodes.len(), theirs.cond_nodes.len(), "{what}");
    stats.rules + stats.cond_rules
}

#[test]
fn optimised_cil_policies_equal_secilc_dash_o() {
    if !secilc::available() {
        return;
    }
    let mut removed = 0;
    for (name, files) in secilc::cil_policies() {
        for mls in ["true", "false"] {
            for v in ["24", "30", "33"] {
                let what = format!("{name}.cil -M {mls} -c {v}");
                let plain = secilc::try_compile(&["-M", mls, "-c", v], &files);
                let Ok(plain) = plain else {
                    continue; // a version the policy does not fit (extended permissions)
                };
                let optimised = secilc::compile(&["-O", "-M", mls, "-c", v], &files);
                removed += assert_optimises_to(&what, &plain, &optimised);
            }
        }
    }
    assert!(
        removed > 0,
        "the test policies gave the optimiser nothing to do"
    );
}

#[test]
fn optimised_cil_policies_with_other_options_equal_secilc_dash_o() {
    if !secilc::available() {
        return;
    }
    // -X 3 keeps attributes of three or more types that only av rules name; -P makes
    // tunables booleans (more conditional lists); -D drops dontaudits.
    for (name, files) in secilc::cil_policies() {
        for variant in [&["-X", "3"][..], &["-P"], &["-D", "-X", "2"]] {
            let what = format!("{name}.cil {variant:?}");
            let plain = secilc::compile(variant, &files);
            let mut args = variant.to_vec();
            args.push("-O");
            let optimised = secilc::compile(&args, &files);
            assert_optimises_to(&what, &plain, &optimised);
        }
    }
}

fn store_case(store: &str) {
    if !secilc::available() {
        return;
    }
    let installed = format!("/etc/selinux/{store}/policy/policy.33");
    let active = format!("/var/lib/selinux/{store}/active");
    if !Path::new(&installed).exists() || !Path::new(&active).exists() {
        assert!(
            std::env::var_os("ARBITER_NO_DEBIAN").is_some(),
            "{installed} or {active} missing (set ARBITER_NO_DEBIAN=1 to skip)"
        );
        return;
    }
    let files = secilc::decompressed_store(Path::new(&active));
    let optimised = secilc::compile(&["-N", "-O"], &files);
    if let Some(dir) = files.first().and_then(|f| f.parent()) {
        let _ = std::fs::remove_dir_all(dir);
    }
    let plain = std::fs::read(&installed).unwrap();
    let removed = assert_optimises_to(&format!("{store} store"), &plain, &optimised);
    assert!(removed > 0);
}

#[test]
fn optimised_debian_default_store_equals_secilc_dash_o() {
    store_case("default");
}

#[test]
fn optimised_debian_mls_store_equals_secilc_dash_o() {
    store_case("mls");
}

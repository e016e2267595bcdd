//! Running the real `secilc` (libsepol 3.4) for oracle tests: on the CIL files beside the
//! tests, and on a Debian module store decompressed as libsemanage feeds it to libsepol.
//!
//! secilc must be installed: a test that needs it fails when it is missing, unless
//! `ARBITER_NO_SECILC=1` asks to skip (then [`available`] says so and returns false).

#![allow(dead_code)] // each test binary takes what it needs

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Whether secilc tests run: true when secilc is installed; false, with a note, when
/// `ARBITER_NO_SECILC=1`; a failure otherwise.
pub fn available() -> bool {
    if std::env::var_os("ARBITER_NO_SECILC").is_some_and(|v| v == "1") {
        eprintln!("note: ARBITER_NO_SECILC=1: skipping the secilc comparisons");
        return false;
    }
    let found = Command::new("secilc").arg("--help").output().is_ok();
    assert!(
        found,
        "secilc is not installed (apt-get install secilc, or ARBITER_NO_SECILC=1 to skip)"
    );
    true
}

/// A fresh scratch directory under the system's temporary directory.
pub fn scratch(what: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "arbiter-{what}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `secilc ARGS -o OUT -f FC FILES` and returns the policy's bytes; panics with
/// secilc's messages when it fails.
pub fn compile(args: &[&str], files: &[PathBuf]) -> Vec<u8> {
    try_compile(args, files).unwrap_or_else(|e| panic!("secilc {args:?} {files:?} failed: {e}"))
}

/// Runs `secilc ARGS -o OUT -f FC FILES`: the policy's bytes, or secilc's messages.
pub fn try_compile(args: &[&str], files: &[PathBuf]) -> Result<Vec<u8>, String> {
    let dir = scratch("secilc");
    let out = dir.join("policy");
    let run = Command::new("secilc")
        .args(args)
        .arg("-o")
        .arg(&out)
        .arg("-f")
        .arg(dir.join("file_contexts"))
        .args(files)
        .output()
        .expect("running secilc");
    let result = if run.status.success() {
        Ok(std::fs::read(&out).unwrap())
    } else {
        Err(String::from_utf8_lossy(&run.stderr).into_owned())
    };
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// The CIL test policies beside the tests (`tests/cil/*.cil` but `base.cil`), each as the
/// file list to compile: `base.cil` then the policy.
pub fn cil_policies() -> Vec<(String, Vec<PathBuf>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cil");
    let base = dir.join("base.cil");
    let mut out: Vec<(String, Vec<PathBuf>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cil") && *p != base)
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            (name, vec![base.clone(), p])
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no CIL test policies in {}", dir.display());
    out
}

/// A module store's CIL, as `semodule -B` hands it to libsepol (cil.md §10): each module
/// of the highest priority that is not disabled, decompressed, ordered by name. Written
/// into a scratch directory; returns the file paths in that order.
pub fn decompressed_store(active: &Path) -> Vec<PathBuf> {
    let modules = active.join("modules");
    let disabled: Vec<String> = std::fs::read_dir(modules.join("disabled"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    // name -> (priority, path); the highest priority wins.
    let mut chosen: std::collections::BTreeMap<String, (u32, PathBuf)> = Default::default();
    for prio in std::fs::read_dir(&modules).unwrap() {
        let prio = prio.unwrap();
        let Ok(level) = prio.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        for m in std::fs::read_dir(prio.path()).unwrap() {
            let m = m.unwrap();
            let name = m.file_name().to_string_lossy().into_owned();
            if disabled.contains(&name) {
                continue;
            }
            let cil = m.path().join("cil");
            if chosen.get(&name).is_none_or(|(p, _)| *p < level) {
                chosen.insert(name, (level, cil));
            }
        }
    }
    let dir = scratch("store");
    // BTreeMap orders names bytewise, as libsemanage's strcmp does.
    chosen
        .into_iter()
        .map(|(name, (_, cil))| {
            let out = dir.join(format!("{name}.cil"));
            let run = Command::new("bzcat")
                .arg(&cil)
                .output()
                .expect("running bzcat (Debian package bzip2)");
            assert!(run.status.success(), "bzcat {}", cil.display());
            std::fs::write(&out, run.stdout).unwrap();
            out
        })
        .collect()
}

//! Whole-policy dumps through the real command line, byte for byte against the real
//! `sesearch` (setools 4.4.1) run at test time: the full `-A` of the Debian default
//! policy (100,000 lines, in setools' statement order), every conditional allow rule (the
//! same rule key under several conditional blocks), and dontaudit plus type transitions
//! (complemented permission bits, filename transitions) on the MLS policy.
//!
//! Skipped, with a note, where sesearch or the Debian policies are not installed.

use std::path::Path;
use std::process::Command;

const SESEARCH: &str = "/usr/bin/sesearch";
use arbiter_testkit::{DEBIAN_DEFAULT as DEFAULT, DEBIAN_MLS as MLS};

/// Runs arbiter and sesearch on the same arguments; returns a description of the first
/// difference in exit status or stdout.
fn compare(args: &[&str]) -> Option<String> {
    let ours = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .arg("search")
        .args(args)
        .output()
        .expect("run arbiter");
    let theirs = Command::new(SESEARCH)
        .args(args)
        .output()
        .expect("run sesearch");
    if theirs.stdout.is_empty() || theirs.status.code() != Some(0) {
        // A dump that prints nothing would compare equal without showing anything.
        return Some(format!("sesearch failed: {:?}", theirs.status.code()));
    }
    if ours.status.code() != theirs.status.code() {
        return Some(format!(
            "exit {:?} vs sesearch {:?}",
            ours.status.code(),
            theirs.status.code()
        ));
    }
    if ours.stdout == theirs.stdout {
        return None;
    }
    let (a, b) = (
        String::from_utf8_lossy(&ours.stdout),
        String::from_utf8_lossy(&theirs.stdout),
    );
    let line = a.lines().zip(b.lines()).position(|(x, y)| x != y);
    Some(format!(
        "{} vs {} lines; first difference at line {line:?}: ours {:?} theirs {:?}",
        a.lines().count(),
        b.lines().count(),
        line.and_then(|i| a.lines().nth(i)),
        line.and_then(|i| b.lines().nth(i)),
    ))
}

fn available() -> bool {
    let ok = [SESEARCH, DEFAULT, MLS]
        .iter()
        .all(|p| Path::new(p).exists());
    if !ok {
        eprintln!("skipped: needs {SESEARCH}, {DEFAULT} and {MLS}");
    }
    ok
}

#[test]
fn full_dumps_are_byte_identical_to_sesearch() {
    if !available() {
        return;
    }
    let cases: [&[&str]; 3] = [
        &["-A", DEFAULT],
        &["-A", "-b", ".", "-rb", DEFAULT],
        &["--dontaudit", "-T", MLS],
    ];
    let failures: Vec<String> = std::thread::scope(|s| {
        let runs: Vec<_> = cases
            .iter()
            .map(|args| s.spawn(move || compare(args).map(|d| format!("{args:?}: {d}"))))
            .collect();
        runs.into_iter()
            .filter_map(|r| r.join().expect("comparison thread"))
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

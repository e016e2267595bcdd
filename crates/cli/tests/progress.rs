//! Progress bars stay off the record: with stderr a pipe (as in CI, a test harness or
//! `2> log`), every command that has a bar writes to stderr exactly what it writes with
//! bars turned off by `ARBITER_NO_PROGRESS`, and no carriage return or escape sequence.
//! `TERM` is set to a terminal that could draw bars and `CI` is removed, so only the pipe
//! keeps them off. (Whether a terminal gets bars is the unit test of `progress::bars_on`.)

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(args: &[&str], dir: &Path, bars_opted_out: bool) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    cmd.args(args)
        .current_dir(dir)
        .env("TERM", "xterm-256color")
        .env_remove("CI")
        .env_remove("ARBITER_NO_PROGRESS");
    if bars_opted_out {
        cmd.env("ARBITER_NO_PROGRESS", "1");
    }
    cmd.output().expect("run arbiter")
}

fn assert_no_escape(args: &[&str], piped: &Output) {
    let err = String::from_utf8_lossy(&piped.stderr);
    assert!(
        !err.contains('\r') && !err.contains('\x1b'),
        "arbiter {args:?}: a bar reached a pipe: {err:?}"
    );
}

fn assert_no_bar(args: &[&str], dir: &Path) {
    let piped = run(args, dir, false);
    let opted_out = run(args, dir, true);
    assert_no_escape(args, &piped);
    let err = String::from_utf8_lossy(&piped.stderr);
    assert_eq!(
        err,
        String::from_utf8_lossy(&opted_out.stderr),
        "arbiter {args:?}: stderr"
    );
    assert_eq!(piped.stdout, opted_out.stdout, "arbiter {args:?}: stdout");
    assert_eq!(
        piped.status.code(),
        opted_out.status.code(),
        "arbiter {args:?}"
    );
}

#[test]
fn diff_why_and_bsm_draw_no_bar_into_a_pipe() {
    let root = repo();
    let trail = root.join("tests/data/bsm/synthetic/edge.bsm");
    let trail = trail.to_str().unwrap();
    let log = root.join("crates/denials/tests/data/edge.log");
    let log = log.to_str().unwrap();
    for args in [
        &["diff", "builtin", "builtin"][..],
        &["why", "-p", "builtin", log],
        &["bsm", "print", "-l", trail],
        &["bsm", "reduce", "-c", "lo", trail],
    ] {
        assert_no_bar(args, &root);
    }
}

#[test]
fn build_draws_no_bar_into_a_pipe() {
    let data = repo().join("crates/store/tests/data/tiny");
    let dir = std::env::temp_dir().join(format!("arbiter-progress-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for m in ["base.cil", "extra.cil"] {
        std::fs::copy(data.join(m), dir.join(m)).unwrap();
    }
    assert_no_bar(&["build", "base.cil", "extra.cil"], &dir);
    // A failing build too: its diagnostics are the whole of stderr.
    std::fs::write(dir.join("bad.cil"), "(bad").unwrap();
    assert_no_bar(&["build", "bad.cil"], &dir);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_draws_no_bar_into_a_pipe() {
    // Its figures are timings, so only stderr's cleanliness is compared.
    let args = ["bench", "landlock", "--repetitions", "1", "--checks", "1"];
    let piped = run(&args, &repo(), false);
    assert!(piped.status.success(), "{piped:?}");
    assert_no_escape(&args, &piped);
}

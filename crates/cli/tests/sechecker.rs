//! `arbiter sechecker` as a process against `/usr/bin/sechecker`: what only the command
//! line does (the report written with `-o`, nothing on stdout; a missing policy or
//! configuration; the exit status). The reports themselves are compared in
//! crates/analysis/tests/sechecker_oracle.rs.

use std::path::{Path, PathBuf};
use std::process::Command;

fn tiny() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../policies/bin/tiny.33")
        .display()
        .to_string()
}

fn tiny_ini() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../analysis/tests/data/sechecker/tiny.ini")
}

/// stdout, exit status, and the `-o` file's content (times dropped) when one was asked for.
fn run(bin: &str, args: &[&str], out_file: Option<&Path>) -> (String, i32, Option<String>) {
    if let Some(f) = out_file {
        let _ = std::fs::remove_file(f);
    }
    let o = Command::new(bin)
        .args(args)
        .env("PYTHONHASHSEED", "1")
        .output()
        .expect("running the command");
    let file = out_file
        .and_then(|f| std::fs::read_to_string(f).ok())
        .map(|s| {
            s.lines()
                .filter(|l| !l.starts_with("Start time: ") && !l.starts_with("End time: "))
                .collect::<Vec<_>>()
                .join("\n")
        });
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        o.status.code().unwrap_or(-1),
        file,
    )
}

fn oracle() -> bool {
    let ok = Path::new("/usr/bin/sechecker").exists();
    if !ok && std::env::var_os("ARBITER_SKIP_SETOOLS").is_none() {
        panic!("/usr/bin/sechecker missing; install setools or set ARBITER_SKIP_SETOOLS=1");
    }
    ok
}

#[test]
fn output_file_missing_policy_and_missing_config_behave_as_sechecker() {
    if !oracle() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("arbiter-sechecker-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let ini = tiny_ini().display().to_string();
    let policy = tiny();
    let ours = env!("CARGO_BIN_EXE_arbiter");
    let report = dir.join("report.txt");
    let report_s = report.display().to_string();
    let cases: Vec<Vec<&str>> = vec![
        vec![&ini, &policy, "-o", &report_s],
        vec![&ini, "/nonexistent/policy.33"],
        vec!["/nonexistent/checks.ini", &policy],
        vec![&ini, &policy, "-o", "/nonexistent/dir/report.txt"],
    ];
    for args in cases {
        let theirs = run("/usr/bin/sechecker", &args, Some(&report));
        let mut a = vec!["sechecker"];
        a.extend(args.iter().copied());
        let mine = run(ours, &a, Some(&report));
        assert_eq!(mine, theirs, "arbiter sechecker {args:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn json_output_keeps_the_exit_status() {
    let ini = tiny_ini().display().to_string();
    let o = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["sechecker", &ini, &tiny(), "--json"])
        .output()
        .expect("running arbiter");
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    let failures = doc["failures"].as_u64().expect("a count");
    assert_eq!(o.status.code(), Some(i32::from(failures > 0)));
}

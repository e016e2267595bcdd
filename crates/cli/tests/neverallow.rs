//! `arbiter neverallow`: exit status (0 none violated, 1 some, 2 error), the default report
//! compared with checkpolicy's at test time, the grouped one, and errors that name the
//! file and line. What is violated, and by which rules, is compared with checkpolicy and
//! secilc in `crates/analysis/tests/neverallow.rs`.

use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_arbiter");

fn tiny() -> String {
    format!("{}/../../policies/bin/tiny.33", env!("CARGO_MANIFEST_DIR"))
}

fn arbiter(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("neverallow")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_statement_that_holds_exits_0_silently() {
    let out = arbiter(&[&tiny(), "-n", "neverallow user_t etc_t:file write;"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
}

#[test]
fn a_violated_statement_exits_1_with_the_granting_rule() {
    let out = arbiter(&[
        &tiny(),
        "-n",
        "neverallow user_t etc_t:file write;\nneverallow domain self:process sigkill;",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.ends_with("libsepol.check_assertions: 1 neverallow failures occurred\n"),
        "{text}"
    );
    let grouped = arbiter(&[
        &tiny(),
        "-n",
        "neverallow user_t etc_t:file write;\nneverallow domain self:process sigkill;",
        "--by-statement",
    ]);
    assert_eq!(grouped.status.code(), Some(1), "{grouped:?}");
    assert_eq!(
        String::from_utf8(grouped.stdout).unwrap(),
        "neverallow check failed at -n#1:2\n  neverallow domain self:process sigkill;\n    \
         allow init_t domain:process { sigkill signal };\n"
    );
    let json = arbiter(&[
        &tiny(),
        "-n",
        "(neverallow domain self (process (sigkill)))",
        "--json",
    ]);
    assert_eq!(json.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["checked"], 1);
    assert_eq!(doc["violated"][0]["rules"][0]["kind"], "allow");
}

#[test]
fn errors_exit_2_naming_file_and_line() {
    let dir = std::env::temp_dir().join(format!("arbiter-neverallow-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("rules.te");
    std::fs::write(
        &file,
        "neverallow user_t etc_t:file write;\n\nneverallow user_t nosuch_t:file read;\n",
    )
    .unwrap();
    let out = arbiter(&[&tiny(), file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("rules.te:3: unknown type or attribute 'nosuch_t'"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    for args in [
        vec![tiny(), dir.join("missing").display().to_string()],
        vec![tiny()],
        vec![
            dir.display().to_string(),
            "-n".into(),
            "neverallow a b:c d;".into(),
        ],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = arbiter(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(
            !out.stderr.is_empty() && out.stdout.is_empty(),
            "{args:?}: {out:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The default report is checkpolicy's: the statements put into `policies/src/tiny.conf`
/// and compiled by checkpolicy as `na.conf` (run in one directory), and checked by us from
/// a file of the same name whose statements stand on the same lines (in another).
#[test]
fn the_default_report_is_checkpolicys() {
    let repo = format!("{}/../..", env!("CARGO_MANIFEST_DIR"));
    let conf = std::fs::read_to_string(format!("{repo}/policies/src/tiny.conf")).unwrap();
    let statements = "neverallow domain self:process sigkill;\n\
                      neverallow domain { etc_t home_t }:{ file dir } { unlink setattr };\n\
                      neverallow user_t file_type:file ~{ read getattr open };\n";
    let lines: Vec<&str> = conf.lines().collect();
    let at = lines.iter().position(|l| l.starts_with("role ")).unwrap();
    let base =
        std::env::temp_dir().join(format!("arbiter-neverallow-report-{}", std::process::id()));
    let (theirs_dir, ours_dir) = (base.join("checkpolicy"), base.join("arbiter"));
    std::fs::create_dir_all(&theirs_dir).unwrap();
    std::fs::create_dir_all(&ours_dir).unwrap();
    let whole = format!(
        "{}\n{statements}{}\n",
        lines[..at].join("\n"),
        lines[at..].join("\n")
    );
    std::fs::write(theirs_dir.join("na.conf"), whole).unwrap();
    std::fs::write(
        ours_dir.join("na.conf"),
        format!("{}{statements}", "\n".repeat(at)),
    )
    .unwrap();
    let theirs = Command::new("checkpolicy")
        .args(["-o", "/dev/null", "na.conf"])
        .current_dir(&theirs_dir)
        .output()
        .expect("checkpolicy is needed for this test");
    assert!(!theirs.status.success());
    let stderr = String::from_utf8_lossy(&theirs.stderr);
    let start = stderr
        .find("libsepol.report_")
        .expect("checkpolicy reported no failure");
    let end = stderr[start..]
        .find("neverallow failures occurred\n")
        .map(|e| start + e + "neverallow failures occurred\n".len())
        .unwrap();
    let ours = Command::new(BIN)
        .args(["neverallow", &tiny(), "na.conf"])
        .current_dir(&ours_dir)
        .output()
        .unwrap();
    assert_eq!(ours.status.code(), Some(1), "{ours:?}");
    assert_eq!(String::from_utf8_lossy(&ours.stdout), &stderr[start..end]);
    let _ = std::fs::remove_dir_all(&base);
}

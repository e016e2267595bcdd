//! The command line end to end, on the embedded policy: exit codes, output formats and
//! error reporting as the README documents them.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn arbiter(args: &[&str], stdin: Option<&str>) -> Output {
    arbiter_bytes(args, stdin.map(str::as_bytes))
}

fn arbiter_bytes(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run arbiter");
    if let Some(input) = stdin {
        child.stdin.take().unwrap().write_all(input).unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const HTTPD: &str = "system_u:system_r:httpd_t:s0";
const CONTENT: &str = "system_u:object_r:httpd_content_t:s0";
const HOME: &str = "user_u:object_r:user_home_t:s0";

#[test]
fn check_exits_zero_when_allowed_and_one_when_denied() {
    let ok = arbiter(
        &["check", "builtin", HTTPD, CONTENT, "file", "read", "open"],
        None,
    );
    assert_eq!(ok.status.code(), Some(0));
    assert_eq!(text(&ok.stdout).trim(), "allowed");
    let no = arbiter(&["check", "builtin", HTTPD, HOME, "file", "read"], None);
    assert_eq!(no.status.code(), Some(1));
    assert!(text(&no.stdout).starts_with("denied { read }"));
}

#[test]
fn check_explain_names_the_boolean_that_would_grant() {
    let out = arbiter(
        &["check", "builtin", HTTPD, HOME, "file", "read", "--explain"],
        None,
    );
    assert!(
        text(&out.stdout).contains("httpd_enable_homedirs=true"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn boolean_override_flips_the_decision() {
    let out = arbiter(
        &[
            "check",
            "builtin",
            HTTPD,
            HOME,
            "file",
            "read",
            "--bool",
            "httpd_enable_homedirs=on",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    let bad = arbiter(
        &[
            "check",
            "builtin",
            HTTPD,
            HOME,
            "file",
            "read",
            "--bool",
            "no_such_bool=1",
        ],
        None,
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("no_such_bool"));
}

#[test]
fn check_json_carries_the_hex_decision() {
    let out = arbiter(
        &["check", "builtin", HTTPD, CONTENT, "file", "read", "--json"],
        None,
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["allowed"], true);
    assert_eq!(v["decision"]["allowed"].as_str().unwrap().len(), 8);
}

#[test]
fn malformed_context_is_an_error_naming_the_part() {
    let out = arbiter(
        &[
            "check",
            "builtin",
            "user_u:user_r:nosuch_t:s0",
            CONTENT,
            "file",
            "read",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("nosuch_t"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn av_batch_keeps_going_after_a_bad_line_and_reports_it() {
    let input = format!("{HTTPD} {CONTENT} file\nnot a query\n\n# comment\n{HTTPD} {HOME} file\n");
    for extra in [&[][..], &["--no-cache"][..]] {
        let mut args = vec!["av", "builtin"];
        args.extend_from_slice(extra);
        let out = arbiter(&args, Some(&input));
        assert_eq!(out.status.code(), Some(1));
        let lines: Vec<String> = text(&out.stdout).lines().map(String::from).collect();
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[0]
            .split(' ')
            .all(|h| h.len() == 8 && u32::from_str_radix(h, 16).is_ok()));
        assert_eq!(lines[1], "error");
        assert!(
            text(&out.stderr).contains("line 2"),
            "{}",
            text(&out.stderr)
        );
    }
}

#[test]
fn av_answers_every_line_even_invalid_utf8_and_huge_ones() {
    let mut input = format!("{HTTPD} {CONTENT} file\n").into_bytes();
    input.extend_from_slice(b"system_u:object_r:\xff\xfe_t:s0 x file\n");
    input.extend(std::iter::repeat_n(b'a', 200_000));
    input.push(b'\n');
    input.extend_from_slice(format!("{HTTPD} {HOME} file").as_bytes()); // no final newline
    let out = arbiter_bytes(&["av", "builtin"], Some(&input));
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<String> = text(&out.stdout).lines().map(String::from).collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert_eq!((&*lines[1], &*lines[2]), ("error", "error"));
    assert_ne!(lines[3], "error");
    let err = text(&out.stderr);
    assert!(err.contains("line 2: not valid UTF-8"), "{err}");
    assert!(err.contains("line 3: longer than"), "{err}");
}

#[test]
fn info_on_a_directory_says_so() {
    let out = arbiter(&["info", "/tmp"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("is a directory"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn cached_and_uncached_av_agree() {
    let input = format!("{HTTPD} {CONTENT} file\n{HTTPD} {HOME} file\n{HTTPD} {CONTENT} file\n");
    let cached = arbiter(&["av", "builtin", "--stats"], Some(&input));
    let plain = arbiter(&["av", "builtin", "--no-cache"], Some(&input));
    assert_eq!(cached.status.code(), Some(0));
    assert_eq!(cached.stdout, plain.stdout);
    assert!(
        text(&cached.stderr).contains("lookups"),
        "{}",
        text(&cached.stderr)
    );
}

#[test]
fn label_applies_filename_transitions() {
    let out = arbiter(
        &[
            "label",
            "builtin",
            "user_u:user_r:passwd_t:s0",
            "system_u:object_r:etc_t:s0",
            "file",
            "shadow",
        ],
        None,
    );
    assert_eq!(text(&out.stdout).trim(), "system_u:object_r:shadow_t:s0");
}

#[test]
fn info_json_has_seinfo_labels() {
    let out = arbiter(&["info", "builtin", "--json"], None);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["statistics"];
    assert_eq!(s["Policy Version"], 33);
    assert_eq!(s["MLS"], true);
    assert!(s["Allow"].as_u64().unwrap() > 0);
    assert!(s.get("Cond. Expr.").is_some());
}

#[test]
fn a_file_that_is_not_a_policy_is_a_clear_error() {
    let dir = std::env::temp_dir().join(format!("arbiter-cli-{}", std::process::id()));
    std::fs::write(&dir, b"definitely not a policy").unwrap();
    let out = arbiter(&["info", dir.to_str().unwrap()], None);
    std::fs::remove_file(&dir).ok();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("magic"), "{}", text(&out.stderr));
}

#[test]
fn demo_runs_end_to_end() {
    let out = arbiter(&["demo"], None);
    assert_eq!(out.status.code(), Some(0));
    let s = text(&out.stdout);
    assert!(
        s.contains("Statistics for policy file: builtin")
            && s.contains("system_u:object_r:shadow_t:s0")
            && s.contains("# policy reloaded: sequence number 3")
    );
}

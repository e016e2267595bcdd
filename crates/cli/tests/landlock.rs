//! `arbiter landlock check|run` end to end: first lines, exit codes, batch and JSON output,
//! config errors, and the sandboxer applying the same file for real.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn arbiter(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run arbiter");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A fixture `a/f`, `b/` and a layer granting reads and file moves in `a` and `b`.
fn fixture(name: &str) -> (PathBuf, PathBuf) {
    let d = std::env::temp_dir().join(format!(
        "arbiter-landlock-cli-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("a")).unwrap();
    std::fs::create_dir_all(d.join("b")).unwrap();
    std::fs::write(d.join("a/f"), b"hello\n").unwrap();
    let layer = d.join("layer.toml");
    std::fs::write(
        &layer,
        format!(
            "abi = 7\n[[ruleset]]\nhandled_access_fs = [\"abi.all\"]\n\
             [[path_beneath]]\nallowed_access = [\"read_file\", \"read_dir\", \"remove_file\", \"refer\"]\nparent = [\"{a}\"]\n\
             [[path_beneath]]\nallowed_access = [\"make_reg\", \"refer\"]\nparent = [\"{b}\"]\n",
            a = d.join("a").display(),
            b = d.join("b").display()
        ),
    )
    .unwrap();
    (d, layer)
}

fn p(d: &Path, rel: &str) -> String {
    d.join(rel).display().to_string()
}

#[test]
fn check_prints_the_verdict_first_and_exits_by_it() {
    let (d, layer) = fixture("verdict");
    let l = layer.to_str().unwrap();
    let ok = arbiter(
        &[
            "landlock",
            "check",
            "--layer",
            l,
            "--",
            "read",
            &p(&d, "a/f"),
        ],
        None,
    );
    assert_eq!(text(&ok.stdout).lines().next(), Some("allowed"));
    assert_eq!(ok.status.code(), Some(0));
    let no = arbiter(
        &[
            "landlock",
            "check",
            "--layer",
            l,
            "--",
            "write",
            &p(&d, "a/f"),
        ],
        None,
    );
    assert_eq!(text(&no.stdout).lines().next(), Some("denied EACCES"));
    assert_eq!(no.status.code(), Some(1));
    // Moving the file into b gains read_file there? No: b grants less, so it is allowed;
    // moving it back would gain read_file in a: EXDEV.
    let mv = arbiter(
        &[
            "landlock",
            "check",
            "--layer",
            l,
            "--",
            "rename",
            &p(&d, "a/f"),
            &p(&d, "b/f"),
        ],
        None,
    );
    assert_eq!(
        text(&mv.stdout).lines().next(),
        Some("allowed"),
        "{}",
        text(&mv.stderr)
    );
    let m = arbiter(
        &[
            "landlock",
            "check",
            "--layer",
            l,
            "--",
            "mount",
            &p(&d, "a"),
        ],
        None,
    );
    assert_eq!(text(&m.stdout).lines().next(), Some("denied EPERM"));
    let gone = arbiter(
        &[
            "landlock",
            "check",
            "--layer",
            l,
            "--",
            "read",
            &p(&d, "a/nope"),
        ],
        None,
    );
    assert_eq!(text(&gone.stdout).lines().next(), Some("fails ENOENT"));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn explain_names_the_denying_layer_and_the_granting_rule() {
    let (d, layer) = fixture("explain");
    let l = layer.to_str().unwrap();
    let o = arbiter(
        &[
            "landlock",
            "check",
            "--layer",
            l,
            "--layer",
            l,
            "--explain",
            "--",
            "readwrite",
            &p(&d, "a/f"),
        ],
        None,
    );
    let out = text(&o.stdout);
    assert!(out.starts_with("denied EACCES\n"), "{out}");
    assert!(out.contains("layer 1 denies write_file"), "{out}");
    assert!(out.contains("layer 2 denies write_file"), "{out}");
    assert!(
        out.contains(&format!(
            "layer 2 grants read_file by the rule on {}",
            p(&d, "a")
        )),
        "{out}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn batch_answers_every_line_and_goes_on_past_a_bad_one() {
    let (d, layer) = fixture("batch");
    let input = format!("read {}\nfly away\nmkdir {}\n", p(&d, "a/f"), p(&d, "b/x"));
    let o = arbiter(
        &[
            "landlock",
            "check",
            "--batch",
            "--layer",
            layer.to_str().unwrap(),
        ],
        Some(&input),
    );
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[0], "allowed");
    assert!(
        lines[1].starts_with("error line 2: unknown operation `fly`"),
        "{out}"
    );
    assert_eq!(lines[2], "denied EACCES");
    assert_eq!(o.status.code(), Some(2));
    let j = arbiter(
        &[
            "landlock",
            "check",
            "--batch",
            "--json",
            "--layer",
            layer.to_str().unwrap(),
        ],
        Some(&input),
    );
    let first: serde_json::Value =
        serde_json::from_str(text(&j.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(first["verdict"], "allowed");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_bad_config_is_an_error_naming_file_and_key() {
    let d = std::env::temp_dir().join(format!("arbiter-landlock-cli-{}-bad", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let f = d.join("bad.toml");
    std::fs::write(&f, "[[ruleset]]\nhandled_access_fs = [\"read_files\"]\n").unwrap();
    let o = arbiter(
        &[
            "landlock",
            "check",
            "--layer",
            f.to_str().unwrap(),
            "--",
            "read",
            "/etc/hostname",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("bad.toml")
            && err.contains("ruleset[0].handled_access_fs[0]")
            && err.contains("read_files"),
        "{err}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn run_applies_the_same_layer_in_the_kernel() {
    if arbiter_landlock::sys::landlock_abi().unwrap_or(0) == 0 {
        eprintln!("skipped: no Landlock in this kernel");
        return;
    }
    let (d, layer) = fixture("run");
    // The sandboxed arbiter itself checks, via the kernel, what the evaluator predicted: the
    // layer grants no execute on the binary, so exec is denied.
    let o = arbiter(
        &[
            "landlock",
            "run",
            "--layer",
            layer.to_str().unwrap(),
            "--",
            env!("CARGO_BIN_EXE_arbiter"),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("Permission denied"),
        "{}",
        text(&o.stderr)
    );
    std::fs::remove_dir_all(&d).unwrap();
}

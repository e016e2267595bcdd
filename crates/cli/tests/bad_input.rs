//! Batch and log inputs on a bad day, and inputs given as users give them.
//!
//! - Over-long lines (300 MB), run under a 192 MiB address-space limit (`prlimit --as`):
//!   the line is that line's error (or, for `why`, the record inside it is still found),
//!   and the rest of the batch is answered.
//! - Non-UTF-8 lines, CRLF line ends, a last line without a newline: each answered or
//!   reported, the rest answered; `why`'s CRLF handling compared with audit2why's.
//! - Policies, logs and rulesets from a pipe (`/dev/stdin`) and from a FIFO: the same
//!   answers as from the regular file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_arbiter");
const HTTPD: &str = "system_u:system_r:httpd_t:s0";
const CONTENT: &str = "system_u:object_r:httpd_content_t:s0";
const HOME: &str = "user_u:object_r:user_home_t:s0";
/// The address-space limit the long-line runs get: well below the line's size.
const AS_LIMIT: u64 = 192 << 20;
/// The over-long line's size.
const HUGE: usize = 300 << 20;

fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .unwrap()
}

fn policy_file() -> PathBuf {
    workspace_root().join("policies/bin/default.33")
}

/// Runs arbiter (under `prlimit --as` when `limit`), streaming `input` pieces to stdin.
fn run_streaming(
    args: &[&str],
    limit: Option<u64>,
    input: &mut dyn FnMut(&mut dyn Write),
) -> Output {
    let mut cmd = match limit {
        Some(bytes) => {
            let mut c = Command::new("prlimit");
            c.arg(format!("--as={bytes}")).arg(BIN);
            c
        }
        None => Command::new(BIN),
    };
    let mut child = cmd
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run arbiter (and prlimit, from util-linux)");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::scope(|s| {
        let h = s.spawn(|| child.wait_with_output().unwrap());
        input(&mut stdin);
        drop(stdin);
        h.join().unwrap()
    });
    writer
}

fn run(args: &[&str], input: &[u8]) -> Output {
    run_streaming(args, None, &mut |w| {
        let _ = w.write_all(input);
    })
}

/// `prefix`, then `HUGE` bytes of `fill` (no newline), then `suffix`, written in blocks.
fn huge_line(prefix: &[u8], fill: u8, suffix: &[u8]) -> impl FnMut(&mut dyn Write) {
    let (prefix, suffix) = (prefix.to_vec(), suffix.to_vec());
    move |w: &mut dyn Write| {
        let block = vec![fill; 1 << 20];
        let _ = w.write_all(&prefix);
        for _ in 0..HUGE >> 20 {
            if w.write_all(&block).is_err() {
                return;
            }
        }
        let _ = w.write_all(&suffix);
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn denial(scontext: &str, tcontext: &str) -> String {
    format!(
        "type=AVC msg=audit(1.0:1): avc:  denied  {{ read }} for  pid=1 comm=\"cat\" \
         scontext={scontext} tcontext={tcontext} tclass=file permissive=0"
    )
}

#[test]
fn av_answers_the_lines_around_a_300_mb_line_in_bounded_memory() {
    let after = format!("\n{HTTPD} {CONTENT} file\n");
    let o = run_streaming(
        &["av", "builtin"],
        Some(AS_LIMIT),
        &mut huge_line(
            format!("{HTTPD} {CONTENT} file\n").as_bytes(),
            b'x',
            after.as_bytes(),
        ),
    );
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}\n{}", text(&o.stderr));
    assert_eq!(lines[1], "error");
    assert_eq!(lines[0], lines[2]);
    assert!(
        text(&o.stderr).contains(&format!("line 2: longer than 65536 bytes ({HUGE} bytes)")),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn landlock_batch_answers_the_lines_around_a_300_mb_line_in_bounded_memory() {
    let o = run_streaming(
        &["landlock", "check", "--batch"],
        Some(AS_LIMIT),
        &mut huge_line(b"read /etc/passwd\nread /", b'a', b"\nread /etc/passwd\n"),
    );
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}\n{}", text(&o.stderr));
    assert_eq!(lines[0], "allowed");
    assert!(
        lines[1].starts_with("error line 2: longer than 65536 bytes"),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], "allowed");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn why_finds_a_record_behind_300_mb_of_a_line_in_bounded_memory_and_reports_the_line() {
    let record = denial(HTTPD, HOME);
    let other = denial("user_u:user_r:user_t:s0", "system_u:object_r:shadow_t:s0");
    let suffix = format!(" {record}\n{other}\n");
    let o = run_streaming(
        &["why", "builtin"],
        Some(AS_LIMIT),
        &mut huge_line(b"", b'x', suffix.as_bytes()),
    );
    let out = text(&o.stdout);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    // Both records explained, the first quoted from its own start.
    assert!(out.starts_with(&format!("{record}\n")), "{:.300}", out);
    assert_eq!(out.matches("Was caused by:").count(), 2, "{out}");
    assert!(
        err.contains(&format!(
            "-:1: unreadable: line of {} bytes",
            HUGE + suffix.find('\n').unwrap()
        )),
        "{err}"
    );
}

#[test]
fn av_answers_non_utf8_crlf_and_unterminated_lines_in_order() {
    let mut bytes = format!("{HTTPD} {CONTENT} file\r\n{HTTPD} ").into_bytes();
    bytes.extend_from_slice(b"\xff file\n\x01\n");
    bytes.extend_from_slice(format!("{HTTPD} {CONTENT} file").as_bytes());
    let o = run(&["av", "builtin"], &bytes);
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert_eq!(
        lines[0], lines[3],
        "CRLF line and unterminated last line answered alike"
    );
    assert_ne!(lines[0], "error");
    assert_eq!(lines[1], "error");
    assert_eq!(lines[2], "error");
    let err = text(&o.stderr);
    assert!(err.contains("line 2: not valid UTF-8 (byte"), "{err}");
    assert!(err.contains("line 3: expected 3 fields"), "{err}");
}

#[test]
fn landlock_batch_answers_non_utf8_crlf_and_unterminated_lines_in_order() {
    let o = run(
        &["landlock", "check", "--batch"],
        b"read /etc/passwd\r\nread /tmp/\xff\nread /etc/passwd",
    );
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[0], "allowed");
    assert!(
        lines[1].starts_with("error line 2: not valid UTF-8"),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], "allowed");
}

/// audit2why keeps a record's `\r` when it reads standard input (Python's `sys.stdin`
/// splits at `\n` only) and drops it when it reads a named file (universal newlines):
/// arbiter's reports are byte-identical in both cases, and for a last line without `\n`.
#[test]
fn why_crlf_and_unterminated_records_match_audit2why_on_stdin_and_files() {
    let policy = "/etc/selinux/default/policy/policy.33";
    assert!(
        Path::new(policy).exists(),
        "the Debian policy is part of the test setup"
    );
    let log = format!(
        "{}\r\n{}\r\n{}",
        denial(
            "system_u:system_r:httpd_t:s0",
            "unconfined_u:object_r:user_home_t:s0"
        ),
        denial(
            "system_u:system_r:sshd_t:s0",
            "system_u:object_r:shadow_t:s0"
        ),
        denial("system_u:system_r:httpd_t:s0", "system_u:object_r:etc_t:s0"),
    );
    let dir = std::env::temp_dir().join(format!("arbiter-bad-input-crlf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("crlf.log");
    std::fs::write(&file, &log).unwrap();
    let file = file.to_str().unwrap();
    let real = |args: &[&str], stdin: &[u8]| {
        let mut c = Command::new("audit2why")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("audit2why (policycoreutils-python-utils)");
        c.stdin.take().unwrap().write_all(stdin).unwrap();
        c.wait_with_output().unwrap()
    };
    let want_stdin = real(&["-p", policy], log.as_bytes());
    let want_file = real(&["-p", policy, "-i", file], b"");
    let got_stdin = run(&["why", policy], log.as_bytes());
    let got_file = run(&["why", policy, file], b"");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        text(&want_stdin.stdout).contains("\r\n"),
        "audit2why keeps \\r on stdin"
    );
    assert_eq!(text(&got_stdin.stdout), text(&want_stdin.stdout));
    assert_eq!(text(&got_file.stdout), text(&want_file.stdout));
}

/// A FIFO fed with a file's bytes by a `cat` child (killed if arbiter never opens it).
struct Fifo {
    path: PathBuf,
    writer: Child,
}

impl Fifo {
    fn new(name: &str, source: &Path) -> Fifo {
        let dir = std::env::temp_dir().join(format!("arbiter-bad-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        let _ = std::fs::remove_file(&path);
        let made = Command::new("mkfifo").arg(&path).status().expect("mkfifo");
        assert!(made.success());
        let writer = Command::new("sh")
            .arg("-c")
            .arg("exec cat \"$1\" > \"$2\"")
            .arg("sh")
            .arg(source)
            .arg(&path)
            .spawn()
            .unwrap();
        Fifo { path, writer }
    }

    fn arg(&self) -> &str {
        self.path.to_str().unwrap()
    }
}

impl Drop for Fifo {
    fn drop(&mut self) {
        let _ = self.writer.kill();
        let _ = self.writer.wait();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Runs `args` with `{}` replaced by the regular file, by `/dev/stdin` (a pipe) and by a
/// FIFO; the three outputs must be equal once the name itself is masked.
fn same_from_file_pipe_and_fifo(args: &[&str], source: &Path, stdin_when_file: &[u8]) {
    let file = source.to_str().unwrap();
    let with = |name: &str| -> Vec<String> { args.iter().map(|a| a.replace("{}", name)).collect() };
    let mask = |o: &Output, name: &str| text(&o.stdout).replace(name, "POLICY");
    let a = with(file);
    let from_file = run(
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
        stdin_when_file,
    );
    assert!(
        from_file.status.code().is_some_and(|c| c < 2),
        "{args:?}: {}",
        text(&from_file.stderr)
    );
    assert!(!from_file.stdout.is_empty(), "{args:?} printed nothing");
    let want = mask(&from_file, file);

    if stdin_when_file.is_empty() {
        let a = with("/dev/stdin");
        let piped = run(
            &a.iter().map(String::as_str).collect::<Vec<_>>(),
            &std::fs::read(source).unwrap(),
        );
        assert_eq!(
            mask(&piped, "/dev/stdin"),
            want,
            "{args:?} from a pipe: {}",
            text(&piped.stderr)
        );
        assert_eq!(piped.status.code(), from_file.status.code());
    }

    let fifo = Fifo::new("input", source);
    let a = with(fifo.arg());
    let fed = run(
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
        stdin_when_file,
    );
    assert_eq!(
        mask(&fed, fifo.arg()),
        want,
        "{args:?} from a FIFO: {}",
        text(&fed.stderr)
    );
    assert_eq!(fed.status.code(), from_file.status.code());
}

#[test]
fn every_policy_reader_takes_a_pipe_or_fifo() {
    let p = policy_file();
    let batch = format!("{HTTPD} {CONTENT} file\n");
    let other = workspace_root().join("policies/bin/features.33");
    let other = other.to_str().unwrap();
    for args in [
        &["info", "{}"][..],
        &["info", "{}", "-t"],
        &["check", "{}", HTTPD, CONTENT, "file", "read"],
        &["label", "{}", HTTPD, CONTENT, "file"],
        &["bools", "{}"],
        &["search", "-A", "-s", "httpd_t", "{}"],
        &["diff", "--stats", "{}", other],
    ] {
        same_from_file_pipe_and_fifo(args, &p, b"");
    }
    same_from_file_pipe_and_fifo(&["av", "{}"], &p, batch.as_bytes());
    let log = format!("{}\n", denial(HTTPD, HOME));
    same_from_file_pipe_and_fifo(&["why", "{}"], &p, log.as_bytes());
}

#[test]
fn logs_and_rulesets_from_a_pipe_or_fifo() {
    let dir = std::env::temp_dir().join(format!("arbiter-bad-input-src-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("audit.log");
    std::fs::write(&log, format!("{}\n", denial(HTTPD, HOME))).unwrap();
    same_from_file_pipe_and_fifo(&["why", "builtin", "{}"], &log, b"");
    let layer = dir.join("layer.toml");
    std::fs::write(
        &layer,
        "abi = 4\n[[ruleset]]\nhandled_access_fs = [\"abi.all\"]\n\
         [[path_beneath]]\nallowed_access = [\"read_file\"]\nparent = [\"/etc\"]\n",
    )
    .unwrap();
    same_from_file_pipe_and_fifo(
        &[
            "landlock",
            "check",
            "--layer",
            "{}",
            "--",
            "read",
            "/etc/passwd",
        ],
        &layer,
        b"",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn endless_policy_pipe_is_refused_at_the_documented_bound() {
    let o = run_streaming(&["info", "/dev/stdin"], Some(1 << 30), &mut |w| {
        // A valid-looking start is not needed: the bound is checked before parsing.
        let block = vec![0u8; 1 << 20];
        for _ in 0..300 {
            if w.write_all(&block).is_err() {
                return;
            }
        }
    });
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("larger than 268435456 bytes"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn non_utf8_policy_paths_are_paths() {
    use std::os::unix::ffi::OsStrExt;
    let dir = std::env::temp_dir().join(format!("arbiter-bad-input-name-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let name = dir.join(std::ffi::OsStr::from_bytes(b"policy-\xff.33"));
    std::fs::copy(policy_file(), &name).unwrap();
    for sub in [&["bools"][..], &["info"], &["search", "-A"]] {
        let o = Command::new(BIN).args(sub).arg(&name).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{sub:?}: {}", text(&o.stderr));
        assert!(!o.stdout.is_empty());
    }
    // Elsewhere than as a path, a non-UTF-8 argument is refused with its position.
    let o = Command::new(BIN)
        .args(["search", "-A", "-s"])
        .arg(std::ffi::OsStr::from_bytes(b"t\xff"))
        .arg(&name)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("argument 3"),
        "{}",
        text(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn non_utf8_cil_and_trail_paths_are_paths() {
    use std::os::unix::ffi::OsStrExt;
    let root = workspace_root();
    let dir = std::env::temp_dir().join(format!("arbiter-bad-input-cil-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let os = |b: &[u8]| dir.join(std::ffi::OsStr::from_bytes(b));
    // build: a CIL input and both outputs named with non-UTF-8 bytes; the same bytes as
    // from plain names.
    let cil = os(b"base-\xff.cil");
    std::fs::copy(root.join("crates/cil/tests/corpus/base.cil"), &cil).unwrap();
    let o = Command::new(BIN)
        .args(["build", "-N", "-o"])
        .arg(os(b"policy-\xff"))
        .arg("-f")
        .arg(os(b"fc-\xff"))
        .arg(&cil)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = Command::new(BIN)
        .args(["build", "-N", "-o"])
        .arg(dir.join("policy-plain"))
        .arg("-f")
        .arg(dir.join("fc-plain"))
        .arg(root.join("crates/cil/tests/corpus/base.cil"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        std::fs::read(os(b"policy-\xff")).unwrap(),
        std::fs::read(dir.join("policy-plain")).unwrap()
    );
    assert_eq!(
        std::fs::read(os(b"fc-\xff")).unwrap(),
        std::fs::read(dir.join("fc-plain")).unwrap()
    );
    // A missing non-UTF-8 input is secilc's error, not a usage error.
    let o = Command::new(BIN)
        .args(["build", "-N"])
        .arg(os(b"missing-\xff.cil"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(255));
    assert!(
        text(&o.stderr).contains("Could not open file"),
        "{}",
        text(&o.stderr)
    );
    // bsm reduce: a trail named with non-UTF-8 bytes reads as the same trail.
    let trail = root.join("tests/data/bsm/synthetic/medium.bsm");
    let odd = os(b"trail-\xff");
    std::fs::copy(&trail, &odd).unwrap();
    let plain = Command::new(BIN)
        .args(["bsm", "reduce", "-c", "lo"])
        .arg(&trail)
        .output()
        .unwrap();
    let bytes = Command::new(BIN)
        .args(["bsm", "reduce", "-c", "lo"])
        .arg(&odd)
        .output()
        .unwrap();
    assert_eq!(plain.status.code(), Some(0), "{}", text(&plain.stderr));
    assert_eq!(
        bytes.status.code(),
        plain.status.code(),
        "{}",
        text(&bytes.stderr)
    );
    assert!(!plain.stdout.is_empty());
    assert_eq!(bytes.stdout, plain.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn errors_quote_a_bounded_prefix_of_a_huge_input() {
    let huge = format!("{}:r:t:s0", "u".repeat(100_000));
    let o = run(&["check", "builtin", &huge, CONTENT, "file", "read"], b"");
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.len() < 1000, "{} bytes of error", err.len());
    assert!(
        err.contains("…(100000 bytes)") || err.contains("…(100008 bytes)"),
        "{err}"
    );
}

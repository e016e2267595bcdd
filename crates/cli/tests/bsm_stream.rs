//! `arbiter bsm print` and `bsm reduce` stream: a trail far larger than the memory the
//! process may use, generated on the fly and piped in, comes out whole, under an
//! address-space limit (`prlimit --as`), identical to the output for one block of it
//! printed from a file; and a damaged trail fails alike from a file and from a pipe.
//!
//! Size: `ARBITER_BSM_STREAM_MIB` MiB of trail for `print` (default 1024; set it to 4096
//! for the 4 GB check), a quarter of that for `reduce`.

use arbiter_bsm::Config;
use arbiter_lab::bsm_study::synthetic_trail;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The address-space limit of the child: what the issue allows a 4 GB trail.
const ADDRESS_SPACE: u64 = 64 << 20;

fn arbiter() -> &'static str {
    env!("CARGO_BIN_EXE_arbiter")
}

fn temp_file(name: &str, data: &[u8]) -> PathBuf {
    let p = std::env::temp_dir().join(format!("arbiter-bsm-stream-{}-{name}", std::process::id()));
    std::fs::write(&p, data).expect("write temp file");
    p
}

/// One run of `arbiter bsm ARGS FILE`: (stdout, stderr, exit status).
fn run_on_file(args: &[&str], file: &Path) -> (Vec<u8>, String, Option<i32>) {
    let out = Command::new(arbiter())
        .args(["bsm"])
        .args(args)
        .arg(file)
        .output()
        .expect("run arbiter");
    (
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

/// Pipes `copies` copies of `block` into `prlimit --as=LIMIT arbiter bsm ARGS` and checks
/// that standard output is `expected` repeated `copies` times, without holding either
/// in memory. Returns (stderr, exit status).
fn stream_copies(
    args: &[&str],
    block: &[u8],
    copies: usize,
    expected: &[u8],
) -> (String, Option<i32>) {
    assert!(!expected.is_empty(), "the block prints nothing");
    let mut child = Command::new("prlimit")
        .arg(format!("--as={ADDRESS_SPACE}"))
        .arg("--")
        .arg(arbiter())
        .arg("bsm")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("prlimit (util-linux) runs arbiter");
    let mut stdin = child.stdin.take().expect("stdin");
    let block = block.to_vec();
    let feeder = std::thread::spawn(move || {
        for _ in 0..copies {
            if stdin.write_all(&block).is_err() {
                return false;
            }
        }
        true
    });
    let mut stderr = child.stderr.take().expect("stderr");
    let errs = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let mut stdout = child.stdout.take().expect("stdout");
    let mut buf = vec![0u8; 1 << 16];
    let mut at = 0usize; // bytes of output compared so far
    loop {
        let n = stdout.read(&mut buf).expect("read stdout");
        if n == 0 {
            break;
        }
        for (i, &b) in buf[..n].iter().enumerate() {
            let want = expected[(at + i) % expected.len()];
            assert_eq!(
                b,
                want,
                "output differs at byte {} (copy {}, byte {} of the block's output)",
                at + i,
                (at + i) / expected.len(),
                (at + i) % expected.len()
            );
        }
        at += n;
    }
    let fed = feeder.join().expect("feeder");
    let status = child.wait().expect("wait").code();
    let errs = errs.join().expect("stderr reader");
    assert!(fed, "arbiter stopped reading its input early: {errs}");
    assert_eq!(
        at,
        expected.len() * copies,
        "output length ({} copies expected); stderr: {errs}",
        copies
    );
    (errs, status)
}

fn stream_mib() -> usize {
    std::env::var("ARBITER_BSM_STREAM_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024)
}

/// One block of trail: about 4 MiB of the synthetic token mix.
fn block() -> Vec<u8> {
    synthetic_trail(&Config::builtin(), 20_000, 7)
}

#[test]
fn a_trail_larger_than_the_address_space_limit_prints_whole_from_a_pipe() {
    let block = block();
    let file = temp_file("print.bsm", &block);
    let (expected, errs, status) = run_on_file(&["print", "-n", "-l"], &file);
    std::fs::remove_file(&file).ok();
    assert_eq!(status, Some(0), "{errs}");
    let copies = (stream_mib() << 20).div_ceil(block.len());
    let (errs, status) = stream_copies(&["print", "-n", "-l"], &block, copies, &expected);
    assert_eq!(errs, "");
    // praudit's status after reading standard input.
    assert_eq!(status, Some(1));
}

#[test]
fn a_trail_larger_than_the_address_space_limit_reduces_whole_from_a_pipe() {
    let block = block();
    let file = temp_file("reduce.bsm", &block);
    let (expected, errs, status) = run_on_file(&["reduce", "-c", "lo,fr"], &file);
    std::fs::remove_file(&file).ok();
    assert_eq!(status, Some(0), "{errs}");
    let copies = (stream_mib() << 20).div_ceil(4 * block.len());
    let (errs, status) = stream_copies(&["reduce", "-c", "lo,fr"], &block, copies, &expected);
    assert_eq!(errs, "");
    assert_eq!(status, Some(0));
}

/// Every way a trail can break (a byte that starts no record, a size below 5, a size
/// field running past the end, a size far over the limit, a record cut short) stops
/// `print` at the same byte, with the same message, whether the trail is a file or a
/// pipe; with `--resync` too.
#[test]
fn a_damaged_trail_fails_alike_from_a_file_and_from_a_pipe() {
    let good = synthetic_trail(&Config::builtin(), 200, 3);
    let second = {
        let mut it = arbiter_bsm::records(&good);
        it.next();
        it.next().expect("second").expect("record").offset
    };
    type Damage = Box<dyn Fn(&mut Vec<u8>)>;
    let damages: Vec<(&str, Damage)> = vec![
        ("not a record", Box::new(move |d| d[second] = 0x99)),
        ("size below 5", Box::new(move |d| d[second + 4] = 2)),
        ("size past the end", Box::new(move |d| d[second + 2] = 0x01)),
        (
            "size over the 16 MiB limit and past the end",
            Box::new(move |d| d[second + 1] = 0x7f),
        ),
        ("cut short", Box::new(|d| d.truncate(d.len() - 9))),
    ];
    for (what, damage) in &damages {
        let mut data = good.clone();
        damage(&mut data);
        let file = temp_file("damaged.bsm", &data);
        for resync in [false, true] {
            let mut args = vec!["print", "-n"];
            if resync {
                args.push("--resync");
            }
            let (from_file, file_errs, file_status) = run_on_file(&args, &file);
            let mut child = Command::new(arbiter())
                .arg("bsm")
                .args(&args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("run arbiter");
            let mut stdin = child.stdin.take().expect("stdin");
            let input = data.clone();
            let feeder = std::thread::spawn(move || stdin.write_all(&input).is_ok());
            let piped = child.wait_with_output().expect("wait");
            assert!(feeder.join().expect("feeder"), "{what}: input not read");
            let pipe_errs = String::from_utf8_lossy(&piped.stderr)
                .replace("arbiter: stdin:", &format!("arbiter: {}:", file.display()));
            assert!(!file_errs.is_empty(), "{what}: no error reported");
            assert_eq!(from_file, piped.stdout, "{what} (resync {resync}): stdout");
            assert_eq!(file_errs, pipe_errs, "{what} (resync {resync}): stderr");
            assert_eq!(file_status, Some(0), "{what}: {file_errs}");
            assert_eq!(piped.status.code(), Some(1), "{what}");
        }
        std::fs::remove_file(&file).ok();
    }
}

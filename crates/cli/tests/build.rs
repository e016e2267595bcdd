//! `arbiter build` against secilc 3.4 at test time: the same stdout, stderr and exit status
//! for the command-line cases that end before compiling (usage, bad option values, missing
//! or unreadable files, `-n`), and for a small CIL policy the same policy and file_contexts
//! bytes once the compiler is there (until then: a failure that writes nothing).

use std::path::Path;
use std::process::{Command, Output};

fn have_secilc() -> bool {
    let found = Command::new("secilc").arg("-h").output().is_ok();
    assert!(
        found || std::env::var_os("CI").is_none(),
        "secilc is not installed"
    );
    found
}

fn run(prog: &str, args: &[&str], dir: &Path) -> Output {
    let mut c = if prog == "secilc" {
        Command::new("secilc")
    } else {
        let mut c = Command::new(env!("CARGO_BIN_EXE_arbiter"));
        c.arg("build");
        c
    };
    c.args(args).current_dir(dir).output().unwrap()
}

fn scratch(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("arbiter-build-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn option_errors_match_secilc() {
    if !have_secilc() {
        return;
    }
    let dir = scratch("opts");
    std::fs::write(dir.join("x.cil"), "(bad").unwrap();
    let cases: &[&[&str]] = &[
        &["-h"],
        &["--help"],
        &[],
        &["-N"],
        &["-c", "99", "x.cil"],
        &["-c", "14", "x.cil"],
        &["-c", "3x", "x.cil"],
        &["--policyvers=abc", "x.cil"],
        &["-M", "maybe", "x.cil"],
        &["-U", "ignore", "x.cil"],
        &["-t", "Xen", "x.cil"],
        &["-X", "-1", "x.cil"],
        &["-X", "q", "x.cil"],
        &["-n", "x.cil"],
        &["-N", "missing.cil"],
        &["-vN", "-o"],
        &["--p", "missing.cil"],
        &["--output"],
        &["--mls"],
        &["--optimize=1", "missing.cil"],
        &["--zz", "missing.cil"],
        &["-z", "missing.cil"],
        &["-X5", "-c33", "--pol", "31", "-h"],
        &["--", "-N"],
        // Words clap would take for itself elsewhere (`main` hands every word after
        // `build` to secilc's getopt without clap).
        &["-V"],
        &["--version"],
        &["help"],
    ];
    for args in cases {
        let want = run("secilc", args, &dir);
        let got = run("arbiter", args, &dir);
        let norm = |b: &[u8]| String::from_utf8_lossy(b).replace("secilc", "arbiter build");
        assert_eq!(
            got.status.code(),
            want.status.code(),
            "exit status for {args:?}"
        );
        assert_eq!(norm(&got.stdout), norm(&want.stdout), "stdout for {args:?}");
        assert_eq!(norm(&got.stderr), norm(&want.stderr), "stderr for {args:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unknown_option_is_reported_and_the_build_goes_on() {
    if !have_secilc() {
        return;
    }
    let dir = scratch("unknown");
    std::fs::write(dir.join("x.cil"), "(bad").unwrap();
    let want = run("secilc", &["-z", "x.cil"], &dir);
    let got = run("arbiter", &["-z", "x.cil"], &dir);
    let first = |b: &[u8]| {
        String::from_utf8_lossy(b)
            .lines()
            .next()
            .unwrap_or("")
            .replace("secilc", "arbiter build")
    };
    assert_eq!(first(&got.stderr), first(&want.stderr));
    // Both went on to compile the (broken) file and failed there.
    assert_ne!(want.status.code(), Some(0));
    assert_ne!(got.status.code(), Some(0));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn small_policy_matches_secilc_or_fails_writing_nothing() {
    if !have_secilc() {
        return;
    }
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../store/tests/data/tiny");
    let (d1, d2) = (scratch("tiny1"), scratch("tiny2"));
    for d in [&d1, &d2] {
        for m in ["base.cil", "extra.cil"] {
            std::fs::copy(data.join(m), d.join(m)).unwrap();
        }
    }
    let want = run("secilc", &["base.cil", "extra.cil"], &d1);
    assert!(
        want.status.success(),
        "{}",
        String::from_utf8_lossy(&want.stderr)
    );
    let got = run("arbiter", &["base.cil", "extra.cil"], &d2);
    if got.status.success() {
        for f in ["policy.33", "file_contexts"] {
            assert!(
                std::fs::read(d1.join(f)).unwrap() == std::fs::read(d2.join(f)).unwrap(),
                "{f} differs from secilc's"
            );
        }
    } else {
        eprintln!(
            "arbiter build failed: {}",
            String::from_utf8_lossy(&got.stderr)
        );
        let mut left: Vec<_> = std::fs::read_dir(&d2)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        left.sort();
        assert_eq!(
            left,
            ["base.cil", "extra.cil"],
            "a failed build left files behind"
        );
    }
    std::fs::remove_dir_all(&d1).unwrap();
    std::fs::remove_dir_all(&d2).unwrap();
}

/// Outputs that are not plain files: a FIFO (as `/dev/null` or `/dev/stdout` would be) is
/// written into and stays a FIFO — a rename over it would put a regular file in its place —
/// and a symbolic link keeps pointing at the file it names, which gets the new policy.
#[test]
fn special_and_linked_outputs_are_written_through() {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../store/tests/data/tiny");
    let dir = scratch("special");
    for m in ["base.cil", "extra.cil"] {
        std::fs::copy(data.join(m), dir.join(m)).unwrap();
    }
    let plain = run(
        "arbiter",
        &["-o", "plain.33", "-f", "plain.fc", "base.cil", "extra.cil"],
        &dir,
    );
    assert!(
        plain.status.success(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
    let fifo = dir.join("fc.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success(), "mkfifo");
    std::fs::write(dir.join("real.33"), b"old").unwrap();
    std::os::unix::fs::symlink("real.33", dir.join("link.33")).unwrap();
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(&fifo).unwrap())
    };
    let got = run(
        "arbiter",
        &["-o", "link.33", "-f", "fc.fifo", "base.cil", "extra.cil"],
        &dir,
    );
    assert!(
        got.status.success(),
        "{}",
        String::from_utf8_lossy(&got.stderr)
    );
    // Checked before waiting for the reader: had the FIFO been renamed over, the reader
    // would wait on the old one forever.
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo(),
        "the FIFO was replaced"
    );
    // If the build never opened the FIFO, let the reader see an end (no reader left: ENXIO).
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(0o4000) // O_NONBLOCK
        .open(&fifo);
    let through_fifo = reader.join().unwrap();
    assert_eq!(through_fifo, std::fs::read(dir.join("plain.fc")).unwrap());
    assert!(
        std::fs::symlink_metadata(dir.join("link.33"))
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link was replaced"
    );
    assert_eq!(
        std::fs::read(dir.join("real.33")).unwrap(),
        std::fs::read(dir.join("plain.33")).unwrap()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn store_mode_requires_no_reload() {
    let dir = scratch("store");
    let out = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["build", "--store", "-p"])
        .arg(&dir)
        .args(["-s", "none"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs -n"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every regular file under `dir` with its bytes, lock files and module trees aside.
fn tree(dir: &Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(dir).unwrap().to_path_buf();
            let s = rel.to_string_lossy().into_owned();
            if p.is_dir() {
                stack.push(p);
            } else if !s.ends_with(".LOCK") && !s.contains("/active/modules/") {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn store_mode_matches_semodule_or_fails_touching_nothing() {
    let have_semodule = Command::new("semodule").arg("-h").output().is_ok();
    assert!(
        have_semodule || std::env::var_os("CI").is_none(),
        "semodule is not installed"
    );
    if !have_semodule {
        return;
    }
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../store/tests/data/tiny");
    let (r1, r2) = (scratch("store1"), scratch("store2"));
    for r in [&r1, &r2] {
        std::fs::create_dir_all(r.join("etc/selinux/tiny")).unwrap();
        std::fs::write(
            r.join("etc/selinux/semanage.conf"),
            "module-store = direct\nexpand-check=0\n",
        )
        .unwrap();
        for m in ["base", "extra"] {
            let d = r.join("var/lib/selinux/tiny/active/modules/100").join(m);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::copy(data.join(format!("{m}.cil")), d.join("cil")).unwrap();
            std::fs::write(d.join("lang_ext"), "cil").unwrap();
        }
    }
    let before = tree(&r2);
    let sem = Command::new("semodule")
        .arg("-p")
        .arg(&r1)
        .args(["-s", "tiny", "-B", "-n"])
        .output()
        .unwrap();
    assert!(
        sem.status.success(),
        "{}",
        String::from_utf8_lossy(&sem.stderr)
    );
    let ours = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["build", "--store", "-p"])
        .arg(&r2)
        .args(["-s", "tiny", "-n"])
        .output()
        .unwrap();
    if ours.status.success() {
        assert!(
            tree(&r1) == tree(&r2),
            "the store build differs from semodule's"
        );
    } else {
        eprintln!(
            "arbiter build --store failed: {}",
            String::from_utf8_lossy(&ours.stderr)
        );
        assert_ne!(ours.status.code(), Some(0));
        assert!(tree(&r2) == before, "a failed store build changed files");
    }
    std::fs::remove_dir_all(&r1).unwrap();
    std::fs::remove_dir_all(&r2).unwrap();
}

/// `arbiter build -t xen` on policies/cil/xen.cil: secilc's exit status and bytes at
/// version 30 and at the default version (which has no Xen layout: both fail); and
/// `arbiter info` on the Xen policy prints what `seinfo` prints (target "xen", the Xen
/// statistics).
#[test]
fn xen_target_matches_secilc_and_info_matches_seinfo() {
    if !have_secilc() {
        return;
    }
    let dir = scratch("xen");
    let cil = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policies/cil/xen.cil");
    let cil = cil.to_str().unwrap();
    for version in [&["-c", "30"][..], &[]] {
        let mut args = vec!["-t", "xen", "-f", "/dev/null"];
        args.extend(version);
        let _ = std::fs::remove_file(dir.join("ours"));
        let theirs = run(
            "secilc",
            &[&args[..], &["-o", "theirs", cil]].concat(),
            &dir,
        );
        let ours = run("arbiter", &[&args[..], &["-o", "ours", cil]].concat(), &dir);
        assert_eq!(ours.status.code(), theirs.status.code(), "{version:?}");
        if theirs.status.success() {
            let t = std::fs::read(dir.join("theirs")).unwrap();
            assert!(
                std::fs::read(dir.join("ours")).unwrap() == t,
                "{version:?}: bytes differ"
            );
        } else {
            assert!(!dir.join("ours").exists(), "a failed build left a file");
        }
    }
    // The last build (version 33) failed: build version 30 again for seinfo.
    let built = run(
        "secilc",
        &[
            "-t",
            "xen",
            "-c",
            "30",
            "-f",
            "/dev/null",
            "-o",
            "theirs",
            cil,
        ],
        &dir,
    );
    assert!(built.status.success());
    let seinfo = Command::new("seinfo")
        .arg("theirs")
        .current_dir(&dir)
        .output();
    if let Ok(seinfo) = seinfo {
        let info = Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .args(["info", "theirs"])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&info.stdout),
            String::from_utf8_lossy(&seinfo.stdout)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `build` compiles on the main thread after raising a small soft stack limit, and on the
/// compiler thread when the hard limit forbids that: a constraint nested at the parser's
/// 4096-level bound (the deepest recursion measured, over 1 MB in a release build) builds
/// secilc's policy either way.
#[test]
fn deep_constraint_builds_under_small_stack_limits() {
    if !have_secilc() {
        return;
    }
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cil/tests/corpus/base.cil");
    let d = scratch("deep");
    std::fs::copy(base, d.join("base.cil")).unwrap();
    let mut case = b"(constrain (file (read)) ".to_vec();
    case.extend(b"(not ".repeat(4090));
    case.extend_from_slice(b"(eq t1 t2)");
    case.extend(b")".repeat(4091));
    std::fs::write(d.join("deep.cil"), case).unwrap();
    let want = run(
        "secilc",
        &["-o", "want.pol", "-f", "want.fc", "base.cil", "deep.cil"],
        &d,
    );
    assert!(want.status.success());
    // Soft limit 1 MB (raised to 64 MB), then hard limit 4 MB (the thread's stack).
    for (tag, limits) in [
        ("soft", "ulimit -S -s 1024"),
        ("hard", "ulimit -S -s 2048 && ulimit -H -s 4096"),
    ] {
        let got = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "{limits} && exec \"$0\" build -o {tag}.pol -f {tag}.fc base.cil deep.cil"
            ))
            .arg(env!("CARGO_BIN_EXE_arbiter"))
            .current_dir(&d)
            .output()
            .unwrap();
        assert!(
            got.status.success(),
            "{tag}: {:?} {}",
            got.status,
            String::from_utf8_lossy(&got.stderr)
        );
        for (ours, theirs) in [(".pol", "want.pol"), (".fc", "want.fc")] {
            assert!(
                std::fs::read(d.join(format!("{tag}{ours}"))).unwrap()
                    == std::fs::read(d.join(theirs)).unwrap(),
                "{tag}{ours} differs from secilc's"
            );
        }
    }
    std::fs::remove_dir_all(&d).unwrap();
}

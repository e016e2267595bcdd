//! `build_store` against `semodule -p ROOT -s NAME -B -n` (libsemanage 3.4) on copies of the
//! same root: every file of the two roots is compared byte for byte after the builds (the
//! module trees and lock files aside). Besides the whole build, the parts are checked on
//! their own against the real tools, so that a difference points at its step: module
//! selection and decompression (through `modules_checksum`, and by compiling our module
//! list with secilc and comparing with semodule's policy), the file_contexts /
//! homedir_template split (of secilc's own file_contexts), genhomedircon (from semodule's
//! own inputs), what the `[setfiles]` program is shown, and that a failed build leaves
//! every file untouched.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use arbiter_store::homedirs::{genhomedircon, HostAccounts, Inputs};
use arbiter_store::{active_modules, modules_checksum, read_cil};
use arbiter_store::{build_store, StoreBuild, StoreError};
use arbiter_store::{parse_seusers, parse_users_extra, split_fc};

/// Whether an oracle tool is installed. In CI (`CI` set) a missing tool is a failure, not a
/// skip: scripts/test.sh installs them.
fn have(tool: &str) -> bool {
    let found = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found || std::env::var_os("CI").is_none(),
        "{tool} is not installed"
    );
    found
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("arbiter-store-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn cp(from: &str, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    let st = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(st.success(), "cp -a {from} {}", to.display());
}

/// Every regular file under `dir`, with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.is_file() {
                out.insert(
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    out
}

/// `semodule -p ROOT -s STORE -B -n`, its output whatever its status.
fn semodule_rebuild(root: &Path, store: &str) -> std::process::Output {
    Command::new("semodule")
        .arg("-p")
        .arg(root)
        .args(["-s", store, "-B", "-n"])
        .output()
        .unwrap()
}

fn semodule(root: &Path, store: &str) {
    let out = semodule_rebuild(root, store);
    assert!(
        out.status.success(),
        "semodule failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The files semodule changed, created or removed (relative to the root), excluding the
/// module tree it copies through its sandbox unchanged, and its lock files.
fn changed(
    before: &BTreeMap<PathBuf, Vec<u8>>,
    after: &BTreeMap<PathBuf, Vec<u8>>,
) -> Vec<PathBuf> {
    let mut paths: Vec<&PathBuf> = before.keys().chain(after.keys()).collect();
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter(|p| before.get(*p) != after.get(*p))
        .filter(|p| {
            let s = p.to_string_lossy();
            !s.contains("/active/modules/") && !s.ends_with(".LOCK")
        })
        .cloned()
        .collect()
}

/// Runs our build on `root2` and compares every file with semodule's `root1`.
fn compare_build(
    root1: &Path,
    root2: &Path,
    store: &str,
    before: &BTreeMap<PathBuf, Vec<u8>>,
) -> arbiter_store::BuildReport {
    let after1 = snapshot(root1);
    let written = changed(before, &after1);
    assert!(!written.is_empty());
    let r = build_store(
        &StoreBuild {
            root: root2.to_path_buf(),
            name: store.into(),
            ..Default::default()
        },
        &mut |_| {},
    );
    let report = match r {
        Ok(report) => report,
        Err(e) => {
            assert_eq!(&snapshot(root2), before, "a failed build changed files");
            panic!("store build failed where semodule succeeded: {e}");
        }
    };
    let after2 = snapshot(root2);
    // Every file of the two roots (not only those semodule changed): the final states must
    // be identical, the module trees and lock files aside.
    let differ = changed(&after1, &after2);
    assert!(
        differ.is_empty(),
        "files differing from semodule's (semodule wrote {written:?}): {differ:?}"
    );
    report
}

/// The steps compared one by one, against semodule's outputs in `root1` and
/// secilc run on our module list: selection, order, decompression and `modules_checksum`;
/// the file_contexts split; genhomedircon.
fn oracle_checks(dir: &Path, root1: &Path, root2: &Path, store: &str) {
    let a1 = root1.join("var/lib/selinux").join(store).join("active");
    let read = |n: &str| std::fs::read(a1.join(n)).unwrap();

    // Selection, order and decompression: our module list, compiled by secilc, is semodule's
    // policy, and its checksum is semodule's.
    let mods = active_modules(
        &root2
            .join("var/lib/selinux")
            .join(store)
            .join("active/modules"),
    )
    .unwrap();
    let cils = read_cil(&mods, "/usr/libexec/selinux/hll").unwrap();
    assert_eq!(
        modules_checksum(&cils),
        read("modules_checksum"),
        "modules_checksum"
    );
    let cdir = dir.join("cil");
    std::fs::create_dir_all(&cdir).unwrap();
    let mut files = Vec::new();
    for (m, c) in mods.iter().zip(&cils) {
        let f = cdir.join(format!("{}.cil", m.name));
        std::fs::write(&f, c).unwrap();
        files.push(f);
    }
    // semanage.conf's optimize-policy is secilc's -O.
    let conf = std::fs::read_to_string(root2.join("etc/selinux/semanage.conf")).unwrap_or_default();
    let optimize = conf
        .lines()
        .any(|l| l.replace(' ', "") == "optimize-policy=true");
    let st = Command::new("secilc")
        .current_dir(dir)
        .args(["-N", "-o", "policy", "-f", "fc"])
        .args(optimize.then_some("-O"))
        .args(&files)
        .status()
        .unwrap();
    assert!(st.success());
    assert!(
        std::fs::read(dir.join("policy")).unwrap() == read("policy.kern"),
        "secilc on our module list differs from semodule's policy.kern"
    );

    // The file_contexts / homedir_template split of secilc's own file_contexts.
    let (fc, tmpl) = split_fc(&std::fs::read(dir.join("fc")).unwrap());
    assert!(fc == read("file_contexts"), "file_contexts split");
    assert!(tmpl == read("homedir_template"), "homedir_template split");

    // genhomedircon from semodule's inputs.
    let policy = arbiter_policy::Policy::open(a1.join("policy.kern")).unwrap();
    let seusers = parse_seusers(&String::from_utf8_lossy(&read("seusers"))).unwrap();
    let extra = parse_users_extra(&String::from_utf8_lossy(&read("users_extra"))).unwrap();
    let g = genhomedircon(
        &Inputs {
            policy: &policy,
            homedir_template: &tmpl,
            file_contexts: &fc,
            seusers: &seusers,
            users_extra: &extra,
            usepasswd: true,
            ignoredirs: None,
        },
        &HostAccounts::from_system(),
    )
    .unwrap();
    assert!(
        g.text == read("file_contexts.homedirs"),
        "file_contexts.homedirs differs from semodule's:\n{}",
        String::from_utf8_lossy(&g.text)
    );
}

fn debian_store(store: &str) {
    let present = Path::new("/var/lib/selinux").join(store).is_dir();
    assert!(
        present || std::env::var_os("CI").is_none(),
        "the {store} module store is missing"
    );
    if !have("semodule") || !have("secilc") || !present {
        eprintln!("skipped: semodule, secilc or the {store} store is missing");
        return;
    }
    let dir = scratch(store);
    let (root1, root2) = (dir.join("r1"), dir.join("r2"));
    for r in [&root1, &root2] {
        cp("/etc/selinux", &r.join("etc/selinux"));
        cp("/var/lib/selinux", &r.join("var/lib/selinux"));
    }
    let before = snapshot(&root2);
    semodule(&root1, store);
    oracle_checks(&dir, &root1, &root2, store);
    let report = compare_build(&root1, &root2, store, &before);
    // The same files as semodule's, with `setfiles -c`'s verdict reached in process.
    assert_eq!(report.setfiles_run, None, "setfiles -c was run");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn default_store_matches_semodule() {
    debian_store("default");
}

#[test]
fn mls_store_matches_semodule() {
    debian_store("mls");
}

/// A two-module CIL store (tests/data/tiny) under a fresh root.
fn tiny_root(dir: &Path) -> PathBuf {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tiny");
    std::fs::create_dir_all(dir.join("etc/selinux/tiny")).unwrap();
    std::fs::write(
        dir.join("etc/selinux/semanage.conf"),
        "module-store = direct\nexpand-check=0\n",
    )
    .unwrap();
    for m in ["base", "extra"] {
        let d = dir.join("var/lib/selinux/tiny/active/modules/100").join(m);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::copy(data.join(format!("{m}.cil")), d.join("cil")).unwrap();
        std::fs::write(d.join("lang_ext"), "cil").unwrap();
    }
    dir.join("var/lib/selinux/tiny/active/modules")
}

/// Applies `change` to two copies of the tiny store, runs semodule on one and compares
/// our selection (via modules_checksum) and, when the compiler exists, every file.
fn tiny_scenario(tag: &str, change: impl Fn(&Path)) {
    if !have("semodule") {
        eprintln!("skipped: semodule missing");
        return;
    }
    let dir = scratch(tag);
    let (root1, root2) = (dir.join("r1"), dir.join("r2"));
    for r in [&root1, &root2] {
        change(&tiny_root(r));
    }
    let before = snapshot(&root2);
    semodule(&root1, "tiny");
    if have("secilc") {
        oracle_checks(&dir, &root1, &root2, "tiny");
    } else {
        let mods = active_modules(&root2.join("var/lib/selinux/tiny/active/modules")).unwrap();
        let cils = read_cil(&mods, "/usr/libexec/selinux/hll").unwrap();
        assert_eq!(
            modules_checksum(&cils),
            std::fs::read(root1.join("var/lib/selinux/tiny/active/modules_checksum")).unwrap(),
            "{tag}: module selection differs from semodule's"
        );
    }
    compare_build(&root1, &root2, "tiny", &before);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `build_store` on the tiny store under `root`.
fn build_tiny(root: &Path) -> Result<arbiter_store::BuildReport, StoreError> {
    build_store(
        &StoreBuild {
            root: root.to_path_buf(),
            name: "tiny".into(),
            ..Default::default()
        },
        &mut |_| {},
    )
}

#[test]
fn tiny_store_matches_semodule() {
    tiny_scenario("tiny", |_| {});
}

#[test]
fn disabled_module_is_left_out() {
    tiny_scenario("disabled", |m| {
        std::fs::create_dir_all(m.join("disabled")).unwrap();
        std::fs::write(m.join("disabled/extra"), "").unwrap();
    });
}

#[test]
fn re_enabled_module_is_built() {
    tiny_scenario("reenabled", |m| {
        // A disabled directory with no marker for the module: enabled again.
        std::fs::create_dir_all(m.join("disabled")).unwrap();
    });
}

#[test]
fn higher_priority_copy_overrides() {
    tiny_scenario("priority", |m| {
        let d = m.join("400/extra");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("cil"), "(allow kernel_t file_t (file (getattr)))\n").unwrap();
        std::fs::write(d.join("lang_ext"), "cil").unwrap();
    });
}

#[test]
fn store_flags_are_cleared_by_a_plain_rebuild() {
    // `semodule -B` without -D/-P builds with dontaudit rules and without preserved
    // tunables, and removes the flag files.
    tiny_scenario("flags", |m| {
        let active = m.parent().unwrap();
        std::fs::write(active.join("disable_dontaudit"), "").unwrap();
        std::fs::write(active.join("preserve_tunables"), "").unwrap();
    });
}

#[test]
fn store_without_login_mappings() {
    // No selinuxuser/userprefix: semodule writes header-only seusers and users_extra, no
    // .linked files, and a homedirs file whose lines all fail the context check.
    tiny_scenario("nologins", |m| {
        let cil = m.join("100/base/cil");
        let text = std::fs::read_to_string(&cil).unwrap();
        let kept: String = text
            .lines()
            .filter(|l| !l.contains("selinuxuser") && !l.contains("userprefix"))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&cil, kept).unwrap();
    });
}

#[test]
fn bad_semanage_conf_line_names_file_and_line() {
    let dir = scratch("badconf");
    tiny_root(&dir);
    let conf = dir.join("etc/selinux/semanage.conf");
    std::fs::write(
        &conf,
        "module-store = direct\nexpand-check=0\nusepasswd = sometimes\n",
    )
    .unwrap();
    let before = snapshot(&dir);
    let e = build_tiny(&dir).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}:3: usepasswd can only be 'true' or 'false'",
            conf.display()
        )
    );
    if have("semodule") {
        let st = semodule_rebuild(&dir, "tiny");
        assert!(!st.status.success(), "semodule accepts the line we refuse");
    }
    let _ = std::fs::remove_dir_all(dir.join("var/lib/selinux/tiny/tmp"));
    let mut after = snapshot(&dir);
    after.retain(|p, _| !p.to_string_lossy().ends_with(".LOCK"));
    assert_eq!(after, before);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn module_without_cil_is_named() {
    let dir = scratch("hll");
    let m = tiny_root(&dir);
    std::fs::remove_file(m.join("100/extra/cil")).unwrap();
    std::fs::write(m.join("100/extra/lang_ext"), "pp").unwrap();
    std::fs::write(m.join("100/extra/hll"), "not a policy package").unwrap();
    let before = snapshot(&dir);
    let e = build_tiny(&dir).unwrap_err();
    assert!(
        matches!(&e, StoreError::HllOnly { name, .. } if name == "extra"),
        "{e}"
    );
    assert!(
        e.to_string().contains("module `extra` has no cil file"),
        "{e}"
    );
    assert_eq!(snapshot(&dir), before);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A damaged bzip2 module is reported by path even when an earlier module fails to parse:
/// the build streams modules into the compiler, but reading errors keep their precedence
/// over compiler errors (every module used to be read before compiling).
#[test]
fn damaged_module_wins_over_an_earlier_parse_error() {
    let dir = scratch("bz");
    let m = tiny_root(&dir);
    let base = m.join("100/base/cil");
    let mut text = std::fs::read(&base).unwrap();
    text.extend_from_slice(b"\n(unbalanced\n");
    std::fs::write(&base, text).unwrap();
    let extra = m.join("100/extra/cil");
    std::fs::write(&extra, b"BZh91AY&SY not really bzip2").unwrap();
    let before = snapshot(&dir);
    let e = build_tiny(&dir).unwrap_err();
    assert!(
        matches!(&e, StoreError::Store { path, msg } if path == &extra && msg.contains("damaged bzip2")),
        "{e}"
    );
    // The parse error alone is a compiler error naming base.
    std::fs::copy(m.join("100/base/cil"), &extra).unwrap();
    let e = build_tiny(&dir).unwrap_err();
    assert!(matches!(&e, StoreError::Compile(_)), "{e}");
    assert_eq!(snapshot(&dir).len(), before.len());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unwritable_output_fails_and_keeps_old_files() {
    let dir = scratch("readonly");
    tiny_root(&dir);
    // Root ignores permission bits, so the installed policy directory is made a plain file:
    // nothing can be created below it.
    std::fs::write(dir.join("etc/selinux/tiny/policy"), "not a directory").unwrap();
    std::fs::write(dir.join("var/lib/selinux/tiny/active/policy.kern"), "old").unwrap();
    let before = snapshot(&dir);
    let r = build_tiny(&dir);
    assert!(r.is_err(), "build succeeded writing under a file");
    assert_eq!(snapshot(&dir), before, "a failed build changed files");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn optimize_policy_matches_semodule() {
    // `optimize-policy = true`: libsemanage runs libsepol's optimiser before writing; the
    // extra module's rules are covered by an attribute rule and go.
    tiny_scenario("optimize", |m| {
        let root = m.ancestors().nth(6).unwrap();
        std::fs::write(
            root.join("etc/selinux/semanage.conf"),
            "module-store = direct\nexpand-check=0\noptimize-policy = true\n",
        )
        .unwrap();
        std::fs::write(
            m.join("100/extra/cil"),
            "(typeattribute kdom)\n(typeattributeset kdom (kernel_t))\n\
             (allow kdom file_t (file (read getattr)))\n\
             (allow kernel_t file_t (file (getattr)))\n",
        )
        .unwrap();
    });
}

/// semanage.conf for the tiny store with an extra external-program block.
fn tiny_conf_with(root: &Path, block: &str) {
    std::fs::write(
        root.join("etc/selinux/semanage.conf"),
        format!("module-store = direct\nexpand-check=0\n{block}"),
    )
    .unwrap();
}

#[test]
fn setfiles_sees_the_files_semodule_shows_it() {
    // `setfiles -c` is given file_contexts; libselinux also reads file_contexts.homedirs
    // and .local beside it (and a newer .bin instead of the text). A `[setfiles]` program
    // that records which file_contexts* files lie beside its argument must see the same
    // under both builders, and the two roots must end up identical.
    if !have("semodule") {
        eprintln!("skipped: semodule missing");
        return;
    }
    let dir = scratch("setfiles-sees");
    let script = dir.join("record-setfiles.sh");
    let saw = dir.join("setfiles-saw");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nls \"$(dirname \"$2\")\" | grep '^file_contexts' > {}\n",
            saw.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let (root1, root2) = (dir.join("r1"), dir.join("r2"));
    for r in [&root1, &root2] {
        tiny_root(r);
        tiny_conf_with(
            r,
            &format!(
                "[setfiles]\npath = {}\nargs = \"$@ $<\"\n[end]\n",
                script.display()
            ),
        );
        std::fs::write(
            r.join("var/lib/selinux/tiny/active/file_contexts.local"),
            "/opt/local(/.*)? system_u:object_r:file_t:s0\n",
        )
        .unwrap();
    }
    let before = snapshot(&root2);
    semodule(&root1, "tiny");
    let theirs = std::fs::read_to_string(&saw).expect("semodule ran the [setfiles] program");
    std::fs::remove_file(&saw).unwrap();
    compare_build(&root1, &root2, "tiny", &before);
    let ours = std::fs::read_to_string(&saw).expect("build_store ran the [setfiles] program");
    assert_eq!(
        ours, theirs,
        "files beside the file_contexts setfiles checks"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn failing_external_program_installs_nothing() {
    if !have("semodule") {
        eprintln!("skipped: semodule missing");
        return;
    }
    for block in [
        "[setfiles]\npath = /bin/false\n[end]\n",
        "[sefcontext_compile]\npath = /bin/false\n[end]\n",
    ] {
        let dir = scratch("extfail");
        let (root1, root2) = (dir.join("r1"), dir.join("r2"));
        for r in [&root1, &root2] {
            tiny_root(r);
            tiny_conf_with(r, block);
        }
        let st = semodule_rebuild(&root1, "tiny");
        assert!(!st.status.success(), "semodule accepted {block:?}");
        let before = snapshot(&root2);
        match build_tiny(&root2) {
            Err(StoreError::External(msg)) => assert!(msg.contains("false"), "{msg}"),
            other => panic!("{block:?}: expected the program's failure, got {other:?}"),
        }
        assert_eq!(snapshot(&root2), before, "a failed build changed files");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn file_contexts_setfiles_rejects_fail_as_in_semodule() {
    // With the default `[setfiles]`, file contexts the in-process check does not pass are
    // left to the real `setfiles -c`: the build fails as semodule's does, with setfiles'
    // messages, and installs nothing.
    if !have("semodule") || !Path::new("/sbin/setfiles").exists() {
        eprintln!("skipped: semodule or /sbin/setfiles missing");
        return;
    }
    for (what, extra) in [
        (
            "a bad regex",
            "(filecon \"/y(\" any (system_u object_r file_t ((s0) (s0))))\n",
        ),
        (
            "a duplicate",
            "(filecon \"/x(/.*)?\" file (system_u object_r file_t ((s0) (s0))))\n",
        ),
    ] {
        let dir = scratch("fcbad");
        let (root1, root2) = (dir.join("r1"), dir.join("r2"));
        for r in [&root1, &root2] {
            let m = tiny_root(r);
            let cil = m.join("100/extra/cil");
            let mut text = std::fs::read_to_string(&cil).unwrap();
            text.push_str(extra);
            std::fs::write(&cil, text).unwrap();
        }
        let st = semodule_rebuild(&root1, "tiny");
        assert!(!st.status.success(), "semodule accepted {what}");
        let theirs = String::from_utf8_lossy(&st.stderr);
        let before = snapshot(&root2);
        match build_tiny(&root2) {
            Err(StoreError::External(msg)) => {
                assert!(
                    msg.starts_with("setfiles returned error code"),
                    "{what}: {msg}"
                );
                // setfiles' own message (after the path, which differs), as semodule shows it.
                let last = msg.lines().last().unwrap();
                let tail = last.rsplit(':').next().unwrap();
                assert!(theirs.contains(tail), "{what}: {msg}\nsemodule: {theirs}");
            }
            other => panic!("{what}: expected setfiles' failure, got {other:?}"),
        }
        assert_eq!(snapshot(&root2), before, "a failed build changed files");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

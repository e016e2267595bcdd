//! Differential test of audit2allow's module options against Debian's audit2allow
//! (policycoreutils 3.4) on the Debian default and MLS policies: `-m NAME`, `-r`, `-D`,
//! `-x`, `-v`, `-e`, `-t REGEX`, `-l` and combinations must print byte-identical text, and `-M NAME` must write the
//! same `NAME.te`, print the same notice and build `NAME.pp` with the same commands.
//!
//! The one normalisation: sepolgen prints the types and roles of the require block, and the
//! types of a role under ROLES, in Python's set order, which string-hash randomisation
//! changes on every run (audit2allow runs `python3 -E`, so `PYTHONHASHSEED` cannot pin it);
//! arbiter prints them sorted, and the oracle's runs of such lines are sorted before
//! comparing. Nothing else is normalised.
//!
//! `-M`'s `NAME.pp` depends on the order of the types in `NAME.te` (checkmodule numbers
//! symbols in declaration order), so audit2allow's package differs from arbiter's whenever
//! its random order differs from the sorted one. The test therefore checks that each
//! package is exactly what `checkmodule -m` + `semodule_package` make of its own `NAME.te`
//! (so arbiter builds as audit2allow builds), and that the two are equal when the two
//! `.te` files are.
//!
//! `ARBITER_A2A_LINES` sets the generated lines per policy (default 600). Needs
//! /usr/bin/audit2allow, checkmodule, semodule_package and the policies (scripts/test.sh
//! installs them); `ARBITER_NO_ORACLE=1` skips on a machine without them.

use arbiter_denials::corpus::{self, Format};
use arbiter_denials::package;
use arbiter_denials::{
    BoolDescriptions, Engine, Explanation, Generation, Mode, ModuleName, Options, Session,
    TypeFilter,
};
use std::path::{Path, PathBuf};
use std::process::Command;

use arbiter_testkit::{DEBIAN_DEFAULT as DEFAULT, DEBIAN_MLS as MLS};
const AUDIT2ALLOW: &str = "/usr/bin/audit2allow";

fn oracle_available() -> bool {
    let have = [
        DEFAULT,
        MLS,
        AUDIT2ALLOW,
        package::CHECKMODULE,
        package::SEMODULE_PACKAGE,
    ]
    .iter()
    .all(|p| Path::new(p).exists());
    if !have && std::env::var_os("ARBITER_NO_ORACLE").is_none() {
        panic!("audit2allow, checkmodule, semodule_package or the Debian policies are missing: install policycoreutils-python-utils checkpolicy semodule-utils selinux-policy-default selinux-policy-mls, or set ARBITER_NO_ORACLE=1");
    }
    have
}

fn lines_per_policy() -> usize {
    std::env::var("ARBITER_A2A_LINES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600)
}

/// ioctl commands for `-x`: runs that merge into ranges, a lone value, zero and an
/// unparsable value (both ignored by sepolgen), a negative value (Python's `hex`).
const IOCTLS: [&str; 10] = [
    "0x5401", "0x5403", "0x5402", "0x8910", "0x0", "0x5405", "zz", "-0x2", "0x1", "0x5404",
];

/// Records beside the generated ones: invalid contexts (ROLES, and roles in the require
/// block; one role with two types), an unknown class (still generated) and unknown names
/// (dropped).
fn extra_lines(level: &str) -> String {
    format!(
        "type=SELINUX_ERR msg=audit(1.0:1): security_compute_sid:  invalid context user_u:user_r:httpd_t{level} for scontext=user_u:user_r:user_t{level} tcontext=system_u:object_r:httpd_exec_t{level} tclass=process
type=SELINUX_ERR msg=audit(1.0:2): security_compute_sid:  invalid context user_u:user_r:sshd_t{level} for scontext=user_u:user_r:user_t{level} tcontext=system_u:object_r:sshd_exec_t{level} tclass=process
type=SELINUX_ERR msg=audit(1.0:3): security_compute_sid:  invalid context staff_u:staff_r:init_t{level} for scontext=staff_u:staff_r:staff_t{level} tcontext=system_u:object_r:init_exec_t{level} tclass=process
type=AVC msg=audit(1.0:4): avc:  denied  {{ read }} for  pid=1 comm=\"x\" scontext=system_u:system_r:init_t{level} tcontext=system_u:object_r:etc_t{level} tclass=no_such_class permissive=0
type=AVC msg=audit(1.0:5): avc:  denied  {{ read }} for  pid=1 comm=\"x\" scontext=system_u:system_r:init_t{level} tcontext=system_u:object_r:no_such_t{level} tclass=file permissive=0
"
    )
}

/// The generated corpus in every format, plus ioctl records with varied commands.
fn corpus_log(engine: &Engine, n: usize, seed: u64) -> String {
    let accesses = corpus::accesses(engine, n, seed);
    assert!(
        accesses.len() >= n * 9 / 10,
        "generator found too few accesses"
    );
    let level = if engine.policy().mls { ":s0" } else { "" };
    // An AVC_PATH record before the AVC record it belongs to (same header): `-v` names
    // its path.
    let mut log = format!(
        "type=AVC_PATH msg=audit(1700009999.000:77):  path=\"/etc/shadow\"
type=AVC msg=audit(1700009999.000:77): avc:  denied  {{ read }} for  pid=1 comm=\"cat\" exe=\"/bin/cat\" scontext=system_u:system_r:init_t{level} tcontext=system_u:object_r:shadow_t{level} tclass=file permissive=0
"
    );
    for (i, a) in accesses.iter().enumerate() {
        log.push_str(&corpus::render(a, Format::ALL[i % Format::ALL.len()], i));
        log.push('\n');
    }
    let ioctl: Vec<_> = accesses
        .iter()
        .filter(|a| a.perms.iter().any(|p| p == "ioctl"))
        .take(6)
        .collect();
    assert!(!ioctl.is_empty(), "no ioctl denial generated");
    for (j, a) in ioctl.iter().enumerate() {
        for k in 0..=j + 2 {
            let line = corpus::render(a, Format::AuditLog, n + j * 16 + k);
            let cmd = IOCTLS[(j + k) % IOCTLS.len()];
            log.push_str(&line.replace(" ioctlcmd=0x5401", &format!(" ioctlcmd={cmd}")));
            log.push('\n');
        }
    }
    log.push_str(&extra_lines(level));
    log
}

/// Sorts the runs of lines sepolgen prints in set order: `\ttype X;` and `\trole X;` in a
/// require block, `role R types T;` of one role under ROLES.
fn normalise_set_order(text: &str) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let key = |l: &str| -> Option<String> {
        if l.starts_with("\ttype ") || l.starts_with("\trole ") {
            Some(l[..6].to_string())
        } else if let Some(rest) = l.strip_prefix("role ") {
            rest.split_once(" types ").map(|(r, _)| format!("role {r}"))
        } else {
            None
        }
    };
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        match key(lines[i]) {
            Some(k) => {
                let mut j = i;
                while j < lines.len() && key(lines[j]).as_deref() == Some(&k) {
                    j += 1;
                }
                let mut run = lines[i..j].to_vec();
                run.sort_unstable();
                out.extend(run);
                i = j;
            }
            None => {
                out.push(lines[i]);
                i += 1;
            }
        }
    }
    out.join("\n")
}

fn ours(engine: &Engine, log: &str, g: &Generation) -> String {
    let opts = Options {
        mode: Mode::Allow,
        ..Options::default()
    };
    ours_with(engine, log, g, opts, None)
}

fn ours_with(
    engine: &Engine,
    log: &str,
    g: &Generation,
    opts: Options,
    type_filter: Option<&str>,
) -> String {
    let mut s = Session::new(engine, opts)
        .with_descriptions(BoolDescriptions::system())
        .with_generation(g.clone());
    if let Some(p) = type_filter {
        s = s.with_type_filter(TypeFilter::new(p).unwrap());
    }
    let mut out = Vec::new();
    s.feed("log", log.as_bytes(), &mut out).unwrap();
    s.finish(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn audit2allow(policy: &str, log: &Path, args: &[&str], dir: &Path) -> String {
    let out = Command::new(AUDIT2ALLOW)
        .args(["-p", policy, "-i"])
        .arg(log)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "audit2allow {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The option sets compared, as audit2allow's arguments and arbiter's [`Generation`].
fn option_sets() -> Vec<(Vec<&'static str>, Generation)> {
    let name = || Some(ModuleName::parse("local_fix").unwrap());
    vec![
        (
            vec!["-m", "local_fix"],
            Generation {
                module: name(),
                ..Generation::default()
            },
        ),
        (
            vec!["-r"],
            Generation {
                requires: true,
                ..Generation::default()
            },
        ),
        (
            vec!["-D"],
            Generation {
                dontaudit: true,
                ..Generation::default()
            },
        ),
        (
            vec!["-x"],
            Generation {
                xperms: true,
                ..Generation::default()
            },
        ),
        (
            vec!["-v"],
            Generation {
                explain: Explanation::Short,
                ..Generation::default()
            },
        ),
        (
            vec!["-e", "-r"],
            Generation {
                explain: Explanation::Long,
                requires: true,
                mls_kernel: package::kernel_mls_enabled(),
                ..Generation::default()
            },
        ),
        (
            vec!["-m", "local_fix", "-D", "-x", "-v"],
            Generation {
                module: name(),
                dontaudit: true,
                xperms: true,
                explain: Explanation::Short,
                ..Generation::default()
            },
        ),
    ]
}

fn first_difference(expected: &str, got: &str) -> String {
    for (i, (e, g)) in expected.lines().zip(got.lines()).enumerate() {
        if e != g {
            return format!("line {}: expected {e:?}, got {g:?}", i + 1);
        }
    }
    format!(
        "lengths differ: expected {} lines, got {}",
        expected.lines().count(),
        got.lines().count()
    )
}

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let d = std::env::temp_dir().join(format!("arbiter-a2a-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn check_options(policy: &str, n: usize, seed: u64, tag: &str) {
    let engine = Engine::open(policy).unwrap();
    let log = corpus_log(&engine, n, seed);
    let dir = TempDir::new(tag);
    let file = dir.0.join("denials.log");
    std::fs::write(&file, &log).unwrap();
    let mut checked = 0;
    for (args, g) in option_sets() {
        let expected = normalise_set_order(&audit2allow(policy, &file, &args, &dir.0));
        let got = ours(&engine, &log, &g);
        assert!(
            got == expected,
            "audit2allow {args:?} differs on {policy}: {}",
            first_difference(&expected, &got)
        );
        if g.xperms {
            assert!(got.contains("xperm "), "no xperm rule exercised");
            assert!(got.contains("-0x2"), "no negative command exercised");
            assert!(got.contains("0x5401-0x5405"), "no range exercised");
        }
        if g.explain != Explanation::None {
            assert!(got.contains(" comm=\"cat\" exe=\"/bin/cat\" path=\"/etc/shadow\""));
        }
        if g.writes_requires() {
            assert!(got.contains("\trole user_r;\n"), "no role required");
        }
        checked += 1;
    }
    assert_eq!(checked, option_sets().len());

    // -t: types matching from the start; invalid-context records filtered too (httpd_t
    // matches, the sshd_t and init_t records match none of their three types).
    let pattern = "[a-h][a-z]*_(t|exec_t)$";
    let expected = normalise_set_order(&audit2allow(policy, &file, &["-r", "-t", pattern], &dir.0));
    let g = Generation {
        requires: true,
        ..Generation::default()
    };
    let opts = Options {
        mode: Mode::Allow,
        ..Options::default()
    };
    let got = ours_with(&engine, &log, &g, opts, Some(pattern));
    assert!(
        got == expected,
        "audit2allow -t differs on {policy}: {}",
        first_difference(&expected, &got)
    );
    assert!(got.contains("role user_r types httpd_t;"));
    assert!(!got.contains("role user_r types sshd_t;") && !got.contains("role staff_r"));
}

/// Builds `NAME.pp` from `NAME.te` in `dir` with audit2allow's commands (non-MLS kernel).
fn package_of(te: &Path, dir: &Path, name: &str) -> Vec<u8> {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::copy(te, dir.join(format!("{name}.te"))).unwrap();
    let mls = package::kernel_mls_enabled();
    let mut args = Vec::new();
    if mls {
        args.push("-M".to_string());
    }
    args.extend(["-m", "-o", &format!("{name}.mod"), &format!("{name}.te")].map(String::from));
    let ok = Command::new(package::CHECKMODULE)
        .args(&args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let ok = Command::new(package::SEMODULE_PACKAGE)
        .args(["-o", &format!("{name}.pp"), "-m", &format!("{name}.mod")])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    std::fs::read(dir.join(format!("{name}.pp"))).unwrap()
}

fn check_module_package(policy: &str, n: usize, seed: u64, tag: &str) {
    let engine = Engine::open(policy).unwrap();
    let log = corpus_log(&engine, n, seed);
    let dir = TempDir::new(tag);
    let file = dir.0.join("denials.log");
    std::fs::write(&file, &log).unwrap();
    let name = "local.fix-1";
    let (theirs_dir, ours_dir) = (dir.0.join("theirs"), dir.0.join("ours"));
    std::fs::create_dir_all(&theirs_dir).unwrap();
    std::fs::create_dir_all(&ours_dir).unwrap();

    let notice = audit2allow(policy, &file, &["-M", name], &theirs_dir);
    let module = ModuleName::parse(name).unwrap();
    assert_eq!(package::activation_notice(&module), notice);
    let g = Generation {
        module: Some(module.clone()),
        ..Generation::default()
    };
    let te = ours(&engine, &log, &g);
    let built = package::build(&ours_dir, &module, &te, package::kernel_mls_enabled()).unwrap();

    let mut left: Vec<String> = std::fs::read_dir(&theirs_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    let mut ours_left: Vec<String> = std::fs::read_dir(&ours_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    ours_left.sort();
    assert_eq!(left, [format!("{name}.pp"), format!("{name}.te")]);
    assert_eq!(
        ours_left, left,
        "the same files are left (NAME.mod removed)"
    );

    let their_te = std::fs::read_to_string(theirs_dir.join(format!("{name}.te"))).unwrap();
    let our_te = std::fs::read_to_string(&built.te).unwrap();
    assert_eq!(our_te, te);
    assert!(
        our_te == normalise_set_order(&their_te),
        "{name}.te differs on {policy}: {}",
        first_difference(&normalise_set_order(&their_te), &our_te)
    );

    let their_pp = std::fs::read(theirs_dir.join(format!("{name}.pp"))).unwrap();
    let our_pp = std::fs::read(&built.pp).unwrap();
    assert!(!our_pp.is_empty());
    assert!(
        their_pp
            == package_of(
                &theirs_dir.join(format!("{name}.te")),
                &dir.0.join("re-theirs"),
                name
            ),
        "audit2allow's {name}.pp is not checkmodule -m + semodule_package of its {name}.te"
    );
    assert!(
        our_pp == package_of(&built.te, &dir.0.join("re-ours"), name),
        "arbiter's {name}.pp is not checkmodule -m + semodule_package of its {name}.te"
    );
    if their_te == our_te {
        assert!(their_pp == our_pp, "same {name}.te, different {name}.pp");
    }
}

#[test]
fn module_options_agree_byte_for_byte_on_the_default_policy() {
    if !oracle_available() {
        return;
    }
    check_options(DEFAULT, lines_per_policy(), 21, "default");
}

#[test]
fn module_options_agree_byte_for_byte_on_the_mls_policy() {
    if !oracle_available() {
        return;
    }
    check_options(MLS, lines_per_policy(), 23, "mls");
}

#[test]
fn module_package_writes_the_same_te_and_builds_it_the_same_way() {
    if !oracle_available() {
        return;
    }
    check_module_package(DEFAULT, lines_per_policy() / 2, 25, "pkg-default");
    check_module_package(MLS, lines_per_policy() / 2, 27, "pkg-mls");
}

/// `-l`: only what follows the last policy load (or auditd start) counts, in audit2allow's
/// rules and audit2why's reports; a log ending in a reload gives nothing at all.
#[test]
fn last_reload_keeps_only_records_after_the_last_policy_load() {
    if !oracle_available() {
        return;
    }
    let engine = Engine::open(DEFAULT).unwrap();
    let log = corpus_log(&engine, 240, 29);
    let lines: Vec<&str> = log.lines().collect();
    let third = lines.len() / 3;
    let reload = "type=MAC_POLICY_LOAD msg=audit(1700000100.000:90): auid=4294967295 ses=4294967295 lsm=selinux res=1";
    let auditd = "type=DAEMON_START msg=audit(1700000200.000:91): auditd start, ver=3.0.9 format=enriched kernel=6.1.0 auid=4294967295 pid=1 uid=0 ses=4294967295 res=success";
    let other_start =
        "type=DAEMON_START msg=audit(1700000300.000:92): op=start ver=3.0.9 res=success";
    let mut cases: Vec<(&str, String)> = Vec::new();
    let joined = |parts: &[&[&str]]| -> String {
        let mut v: Vec<&str> = Vec::new();
        for p in parts {
            v.extend_from_slice(p);
        }
        v.join("\n") + "\n"
    };
    cases.push((
        "reloads",
        joined(&[
            &lines[..third],
            &[reload],
            &lines[third..2 * third],
            &[auditd],
            &lines[2 * third..],
            &[other_start],
        ]),
    ));
    cases.push(("ends-in-reload", joined(&[&lines[..third], &[reload]])));
    let dir = TempDir::new("lastreload");
    for (tag, text) in cases {
        let file = dir.0.join(format!("{tag}.log"));
        std::fs::write(&file, &text).unwrap();
        for (mode, extra) in [
            (Mode::Allow, vec!["-l", "-x"]),
            (Mode::Why, vec!["-l", "-w"]),
        ] {
            let g = Generation {
                xperms: mode == Mode::Allow,
                ..Generation::default()
            };
            let opts = Options {
                mode,
                last_reload: true,
                ..Options::default()
            };
            let expected = normalise_set_order(&audit2allow(DEFAULT, &file, &extra, &dir.0));
            let got = ours_with(&engine, &text, &g, opts, None);
            assert!(
                got == expected,
                "audit2allow {extra:?} differs on {tag}: {}",
                first_difference(&expected, &got)
            );
            assert_eq!(got.is_empty(), tag == "ends-in-reload", "{tag} {mode:?}");
        }
    }
}

/// The normalisation sorts only runs of set-ordered lines, nothing else.
#[test]
fn set_order_normalisation_sorts_only_set_ordered_runs() {
    let text = "require {\n\ttype b_t;\n\ttype a_t;\n\tclass z read;\n\tclass a read;\n\trole r2;\n\trole r1;\n}\nallow b_t a_t:z read;\nallow a_t a_t:z read;\nrole r types t2;\nrole r types t1;\nrole q types t0;\n";
    assert_eq!(
        normalise_set_order(text),
        "require {\n\ttype a_t;\n\ttype b_t;\n\tclass z read;\n\tclass a read;\n\trole r1;\n\trole r2;\n}\nallow b_t a_t:z read;\nallow a_t a_t:z read;\nrole r types t1;\nrole r types t2;\nrole q types t0;\n"
    );
}

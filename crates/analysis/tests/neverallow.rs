//! Neverallow checking compared with the real compilers at test time: statements in the
//! policy language appended to `policies/src/tiny.conf` and compiled by checkpolicy (which
//! lists every violating (source, target, class) of its expanded table), statements in CIL
//! added to a small CIL policy and compiled by secilc (which lists the violated statements
//! and the allow / allowx rules behind them), and Debian's own neverallow rules against
//! Debian's policy (secilc compiled it with them, so none may be violated).

use arbiter_analysis::neverallow::{self, covered_pairs, Assertion, Grant, NeverallowError};
use arbiter_policy::Policy;
use arbiter_query::{terules, Index};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(test: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("arbiter-neverallow-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs a tool, returning (success, stdout + stderr).
fn run(tool: &str, args: &[&str]) -> (bool, String) {
    let out = Command::new(tool)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{tool} is needed for this test: {e}"));
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

fn load(path: &Path) -> Policy {
    Policy::from_bytes(&std::fs::read(path).unwrap()).unwrap()
}

fn check_text(
    index: &Index<'_>,
    file: &str,
    text: &str,
) -> (Vec<Assertion>, Vec<neverallow::Violation>) {
    let src = neverallow::parse(file, text).unwrap_or_else(|e| panic!("{e}"));
    let assertions = neverallow::resolve(index, &src).unwrap_or_else(|e| panic!("{e}"));
    let violations = neverallow::check(index, &assertions);
    (assertions, violations)
}

/// checkpolicy's report of failed assertions: its lines from the first libsepol report
/// through the failure count (a report can span two lines).
fn checkpolicy_report(output: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for l in output.lines() {
        inside |= l.starts_with("libsepol.report_");
        if inside {
            out.push_str(l);
            out.push('\n');
            if l.starts_with("libsepol.check_assertions:") {
                break;
            }
        }
    }
    out
}

/// Our libsepol-worded report of `statements` as if they stood at line `first` of `file`
/// (where the test put them for checkpolicy).
fn our_report(index: &Index<'_>, file: &str, first: usize, statements: &str) -> String {
    let text = format!("{}{statements}", "\n".repeat(first - 1));
    let (assertions, violations) = check_text(index, file, &text);
    let mut out = String::new();
    neverallow::libsepol_report(index, &assertions, &violations, |l| {
        out.push_str(l);
        out.push('\n');
        Ok::<(), ()>(())
    })
    .unwrap();
    out
}

/// Policy-language statements: attributes, `-type`, `~`, `*`, `self`, class sets,
/// complemented permissions, an alias, conditional rules.
const CONF_STATEMENTS: &str = "\
neverallow user_t etc_t:file write;
neverallow domain etc_t:file { write append };
neverallow { domain -admin_t } etc_t:file write;
neverallow ~admin_t file_type:file setattr;
neverallow domain self:process sigkill;
neverallow domain { self }:process fork;
neverallow * *:{ file dir } relabelto;
neverallow user_t ~{ home_t tmp_t user_tmp_t }:dir write;
neverallow user_t file_type:file ~{ read getattr open };
neverallow login_domain sysadm_t:process *;
neverallow { kernel_t init_t } file_type:file write;
neverallow domain { etc_t home_t }:{ file dir } { unlink setattr };
neverallow user_t net_t:tcp_socket name_connect;
neverallow user_t { tmp_t self }:dir remove_name;
neverallow init_t domain:process transition;
";

#[test]
fn policy_language_violations_match_checkpolicy() {
    let dir = scratch("conf");
    let tiny = std::fs::read_to_string(neverallow_repo().join("src/tiny.conf")).unwrap();
    let lines: Vec<&str> = tiny.lines().collect();
    let at = lines.iter().position(|l| l.starts_with("role ")).unwrap();
    let mut with = lines[..at].join("\n");
    with.push('\n');
    with.push_str(CONF_STATEMENTS);
    with.push_str(&lines[at..].join("\n"));
    with.push('\n');
    std::fs::write(dir.join("with.conf"), &with).unwrap();
    std::fs::write(dir.join("tiny.conf"), &tiny).unwrap();
    let with_path = dir.join("with.conf");
    let (ok, theirs) = run(
        "checkpolicy",
        &["-o", "/dev/null", with_path.to_str().unwrap()],
    );
    assert!(!ok, "checkpolicy accepted violated neverallows:\n{theirs}");
    // line -> {(source, target, class)} from `neverallow on line N of … violated by allow S T:C {`
    let mut expected: BTreeMap<u32, BTreeSet<(String, String, String)>> = BTreeMap::new();
    for l in theirs.lines() {
        let Some(rest) = l.split("neverallow on line ").nth(1) else {
            continue;
        };
        let line: u32 = rest.split(' ').next().unwrap().parse().unwrap();
        let by = rest.split("violated by allow ").nth(1).unwrap();
        let mut w = by.split([' ', ':']);
        let (s, t, c) = (w.next().unwrap(), w.next().unwrap(), w.next().unwrap());
        expected
            .entry(line - at as u32)
            .or_default()
            .insert((s.into(), t.into(), c.into()));
    }
    assert!(
        !expected.is_empty(),
        "no failures parsed from checkpolicy:\n{theirs}"
    );
    let bin = dir.join("tiny.bin");
    let (ok, msg) = run(
        "checkpolicy",
        &[
            "-o",
            bin.to_str().unwrap(),
            dir.join("tiny.conf").to_str().unwrap(),
        ],
    );
    assert!(ok, "{msg}");
    let policy = load(&bin);
    let index = Index::new(&policy);
    let (assertions, violations) = check_text(&index, "na.te", CONF_STATEMENTS);
    assert_eq!(assertions.len(), CONF_STATEMENTS.lines().count());
    let mut ours: BTreeMap<u32, BTreeSet<(String, String, String)>> = BTreeMap::new();
    for v in &violations {
        let a = &assertions[v.assertion];
        for g in &v.grants {
            let e = terules::entry(&policy, g.rule()).unwrap();
            for (s, t) in covered_pairs(&index, a, g.rule()) {
                ours.entry(a.line).or_default().insert((
                    index.type_name(s).into(),
                    index.type_name(t).into(),
                    index.class_name(e.key.class).into(),
                ));
            }
        }
    }
    assert_eq!(ours, expected, "checkpolicy said:\n{theirs}");
    // Some statements must hold too, or the comparison proves little.
    assert!(expected.len() < assertions.len());
    // And the report itself, byte for byte, in checkpolicy's order.
    let text = our_report(&index, with_path.to_str().unwrap(), at + 1, CONF_STATEMENTS);
    assert_eq!(text, checkpolicy_report(&theirs));
}

/// neverallowxperm statements over `features.conf`'s allowxperm rules: single numbers,
/// ranges within and across drivers, whole drivers, complements, attributes-free sets.
const XPERM_STATEMENTS: &str = "\
neverallowxperm staff_t dev_t:chr_file ioctl 0x5402;
neverallowxperm staff_t dev_t:chr_file ioctl 0x5405;
neverallowxperm staff_t dev_t:chr_file ioctl 0x42ab;
neverallowxperm sysadm_t dev_t:chr_file ioctl { 0x4100-0x41ff };
neverallowxperm sysadm_t dev_t:chr_file ioctl 0x4300;
neverallowxperm guest_t dev_t:chr_file ioctl { 0x5400-0x54ff };
neverallowxperm guest_t dev_t:chr_file ioctl ~{ 0x5400-0x54ff };
neverallowxperm { staff_t sysadm_t } dev_t:chr_file ioctl 0x8a00;
neverallowxperm staff_t dev_t:chr_file ioctl 0x8a10;
neverallowxperm * dev_t:chr_file ioctl { 0x5401 };
neverallowxperm staff_t dev_t:chr_file ioctl { 0x8a00-0x8aff 0x5400 };
";

#[test]
fn policy_language_xperm_violations_match_checkpolicy() {
    let dir = scratch("xperm");
    let conf = std::fs::read_to_string(neverallow_repo().join("src/features.conf")).unwrap();
    let lines: Vec<&str> = conf.lines().collect();
    // After the policy's own neverallowxperm, among the rules it restricts.
    let at = 1 + lines
        .iter()
        .position(|l| l.starts_with("neverallowxperm"))
        .unwrap();
    let mut with = lines[..at].join("\n");
    with.push('\n');
    with.push_str(XPERM_STATEMENTS);
    with.push_str(&lines[at..].join("\n"));
    with.push('\n');
    let (with_path, conf_path, bin) = (
        dir.join("with.conf"),
        dir.join("features.conf"),
        dir.join("f.bin"),
    );
    std::fs::write(&with_path, &with).unwrap();
    std::fs::write(&conf_path, &conf).unwrap();
    let (ok, theirs) = run(
        "checkpolicy",
        &[
            "-M",
            "-c",
            "33",
            "-o",
            "/dev/null",
            with_path.to_str().unwrap(),
        ],
    );
    assert!(
        !ok,
        "checkpolicy accepted violated neverallowxperms:\n{theirs}"
    );
    // line -> {(rule kind, source, target, class)}; each report spans two lines.
    let mut expected: BTreeMap<u32, BTreeSet<(String, String, String, String)>> = BTreeMap::new();
    let report: Vec<&str> = theirs.lines().collect();
    for (k, l) in report.iter().enumerate() {
        let Some(rest) = l.split("neverallowxperm on line ").nth(1) else {
            continue;
        };
        let line: u32 = rest.split(' ').next().unwrap().parse().unwrap();
        let mut w = report[k + 1].split([' ', ':']);
        let (kind, s, t, c) = (
            w.next().unwrap(),
            w.next().unwrap(),
            w.next().unwrap(),
            w.next().unwrap(),
        );
        expected.entry(line - at as u32).or_default().insert((
            kind.into(),
            s.into(),
            t.into(),
            c.into(),
        ));
    }
    assert!(
        !expected.is_empty(),
        "no failures parsed from checkpolicy:\n{theirs}"
    );
    let (ok, msg) = run(
        "checkpolicy",
        &[
            "-M",
            "-c",
            "33",
            "-o",
            bin.to_str().unwrap(),
            conf_path.to_str().unwrap(),
        ],
    );
    assert!(ok, "{msg}");
    let policy = load(&bin);
    let index = Index::new(&policy);
    let (assertions, violations) = check_text(&index, "x.te", XPERM_STATEMENTS);
    let mut ours: BTreeMap<u32, BTreeSet<(String, String, String, String)>> = BTreeMap::new();
    for v in &violations {
        let a = &assertions[v.assertion];
        for &g in &v.grants {
            let e = terules::entry(&policy, g.rule()).unwrap();
            let (kind, pairs) = match g {
                Grant::AllowXperm(_) => ("allowxperm", vec![(e.key.source, e.key.target)]),
                Grant::Allow(r) => ("allow", covered_pairs(&index, a, r)),
            };
            for (s, t) in pairs {
                ours.entry(a.line).or_default().insert((
                    kind.into(),
                    index.type_name(s).into(),
                    index.type_name(t).into(),
                    index.class_name(e.key.class).into(),
                ));
            }
        }
    }
    assert_eq!(ours, expected, "checkpolicy said:\n{theirs}");
    assert!(expected.len() < assertions.len());
    let text = our_report(
        &index,
        with_path.to_str().unwrap(),
        at + 1,
        XPERM_STATEMENTS,
    );
    assert_eq!(text, checkpolicy_report(&theirs));
}

/// Debian's own rules with their exemptions dropped (`~can_read_shadow_passwords` and
/// `~can_load_kernmodule` replaced by `domain`), and written ones, one of them an ioctl
/// rule.
const DEBIAN_STATEMENTS: &str = "\
neverallow domain shadow_t:file read;
neverallow sshd_t shadow_t:file { read getattr };
neverallow { passwd_t sysadm_t } shadow_t:file write;
neverallow domain self:capability sys_module;
neverallowxperm sysadm_t tty_device_t:chr_file ioctl 0x5401;
neverallow user_t etc_t:file write;
";

#[test]
fn debian_violations_are_reported_as_checkpolicy_reports_them() {
    let policy_path = Path::new(arbiter_testkit::DEBIAN_DEFAULT);
    if !policy_path.exists() {
        eprintln!("SKIPPED: {} is not installed", policy_path.display());
        return;
    }
    // checkpolicy checks assertions in policy language: Debian's policy written as
    // policy.conf, compiled with the statements (the report) and without (the binary we
    // check, whose type values are checkpolicy's, as its report order depends on them).
    let dir = scratch("debian");
    let (conf, with, bin) = (
        dir.join("debian.conf"),
        dir.join("with.conf"),
        dir.join("debian.bin"),
    );
    let (ok, msg) = run(
        "checkpolicy",
        &[
            "-M",
            "-b",
            "-F",
            "-o",
            conf.to_str().unwrap(),
            policy_path.to_str().unwrap(),
        ],
    );
    assert!(ok, "{msg}");
    let text = std::fs::read_to_string(&conf).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| l.starts_with("role ")).unwrap();
    let mut body = lines[..at].join("\n");
    body.push('\n');
    body.push_str(DEBIAN_STATEMENTS);
    body.push_str(&lines[at..].join("\n"));
    body.push('\n');
    std::fs::write(&with, body).unwrap();
    let (ok, theirs) = run(
        "checkpolicy",
        &["-M", "-o", "/dev/null", with.to_str().unwrap()],
    );
    assert!(!ok, "checkpolicy accepted violated neverallows");
    let (ok, msg) = run(
        "checkpolicy",
        &["-M", "-o", bin.to_str().unwrap(), conf.to_str().unwrap()],
    );
    assert!(ok, "{msg}");
    let policy = load(&bin);
    let index = Index::new(&policy);
    let expected = checkpolicy_report(&theirs);
    assert!(expected.lines().count() > 10, "{theirs}");
    let ours = our_report(&index, with.to_str().unwrap(), at + 1, DEBIAN_STATEMENTS);
    assert_eq!(ours, expected);
    let _ = std::fs::remove_dir_all(&dir);
}

fn neverallow_repo() -> PathBuf {
    arbiter_testkit::repo_policies()
}

/// A small CIL policy: an attribute, a boolean, allowx.
const CIL_BASE: &str = "\
(handleunknown deny)
(mls false)
(sensitivity s0)
(sensitivityorder (s0))
(level low (s0))
(class process (fork transition))
(class file (getattr open read write ioctl))
(classorder (process file))
(sid kernel)
(sidorder (kernel))
(user u)
(role r)
(userrole u r)
(userlevel u low)
(userrange u (low low))
(type a_t)
(type b_t)
(type c_t)
(type d_t)
(roletype r a_t)
(typeattribute dom)
(typeattributeset dom (a_t b_t d_t))
(sidcontext kernel (u r a_t ((s0) (s0))))
(boolean bw false)
(allow dom c_t (file (read getattr ioctl)))
(allowx a_t c_t (ioctl file ((range 0x8900 0x8905))))
(allowx d_t c_t (ioctl file (0x1234)))
(booleanif bw (true (allow b_t c_t (file (write)))))
(allow a_t self (process (fork)))
(allow dom d_t (process (transition)))
";

/// CIL statements, some violated, with a local attribute as refpolicy's modules write them.
const CIL_STATEMENTS: &str = "\
(typeattribute na_not_a)
(typeattributeset na_not_a (not (a_t)))
(neverallow dom c_t (file (write)))
(neverallow a_t c_t (file (read)))
(neverallow na_not_a c_t (file (open)))
(neverallow na_not_a self (process (fork)))
(neverallow a_t self (process (fork)))
(neverallow dom dom (process (transition)))
(neverallow b_t d_t (process (all)))
(neverallow na_not_a c_t (file (not (write))))
(neverallowx a_t c_t (ioctl file (0x8901)))
(neverallowx a_t c_t (ioctl file ((range 0x8906 0x89ff))))
(neverallowx b_t c_t (ioctl file (0x8901)))
(neverallowx d_t c_t (ioctl file (0x1234)))
(neverallowx d_t c_t (ioctl file (not (0x1234))))
";

#[test]
fn cil_violations_and_rules_match_secilc() {
    let dir = scratch("cil");
    let full = format!("{CIL_BASE}{CIL_STATEMENTS}");
    let offset = CIL_BASE.lines().count() as u32;
    std::fs::write(dir.join("p.cil"), &full).unwrap();
    let cil = dir.join("p.cil");
    let bin = dir.join("p.bin");
    let (ok, theirs) = run(
        "secilc",
        &["-o", "/dev/null", "-f", "/dev/null", cil.to_str().unwrap()],
    );
    assert!(!ok, "secilc accepted violated neverallows:\n{theirs}");
    // line -> (is neverallowx, {(source, target, class)} of the rules secilc lists)
    let mut expected: BTreeMap<u32, BTreeSet<(String, String, String)>> = BTreeMap::new();
    let mut current = None;
    for l in theirs.lines() {
        if let Some(rest) = l.split(" check failed at ").nth(1) {
            let line: u32 = rest.rsplit(':').next().unwrap().parse().unwrap();
            current = Some(line - offset);
            expected.entry(line - offset).or_default();
        } else if let (Some(n), Some(rule)) = (current, l.strip_prefix("      (")) {
            let w: Vec<&str> = rule
                .split([' ', '(', ')'])
                .filter(|w| !w.is_empty())
                .collect();
            let (s, t) = (w[1], if w[2] == "self" { w[1] } else { w[2] });
            let class = if w[0] == "allowx" { w[4] } else { w[3] };
            expected
                .get_mut(&n)
                .unwrap()
                .insert((s.into(), t.into(), class.into()));
        }
    }
    let (ok, msg) = run(
        "secilc",
        &[
            "-N",
            "-o",
            bin.to_str().unwrap(),
            "-f",
            "/dev/null",
            cil.to_str().unwrap(),
        ],
    );
    assert!(ok, "{msg}");
    let policy = load(&bin);
    let index = Index::new(&policy);
    let (assertions, violations) = check_text(&index, "na.cil", CIL_STATEMENTS);
    let mut ours: BTreeMap<u32, BTreeSet<(String, String, String)>> = BTreeMap::new();
    for v in &violations {
        let a = &assertions[v.assertion];
        let set = ours.entry(a.line).or_default();
        for &g in &v.grants {
            // secilc lists the allowx rules of a neverallowx, never the allow granting ioctl.
            if a.is_xperm() && matches!(g, Grant::Allow(_)) {
                continue;
            }
            let e = terules::entry(&policy, g.rule()).unwrap();
            set.insert((
                index.type_name(e.key.source).into(),
                index.type_name(e.key.target).into(),
                index.class_name(e.key.class).into(),
            ));
        }
    }
    assert_eq!(ours, expected, "secilc said:\n{theirs}");
    assert!(expected.len() < assertions.len());
}

#[test]
fn debian_neverallow_rules_hold_on_debian_policies() {
    for (policy, store) in [
        (
            arbiter_testkit::DEBIAN_DEFAULT,
            "/var/lib/selinux/default/active/modules/100",
        ),
        (
            arbiter_testkit::DEBIAN_MLS,
            "/var/lib/selinux/mls/active/modules/100",
        ),
    ] {
        let (policy_path, store) = (Path::new(policy), Path::new(store));
        if !policy_path.exists() || !store.exists() {
            eprintln!("SKIPPED: {policy} or its module store is not installed");
            continue;
        }
        debian_rules_hold(policy_path, store);
    }
}

/// The store's neverallow rules (with the attribute declarations they need) hold on the
/// policy secilc compiled from it.
fn debian_rules_hold(policy_path: &Path, store: &Path) {
    let mut modules = String::new();
    for entry in std::fs::read_dir(store).unwrap() {
        let cil = entry.unwrap().path().join("cil");
        if !cil.exists() {
            continue;
        }
        let raw = std::fs::read(&cil).unwrap();
        let out = Command::new("bzcat").arg(&cil).output().unwrap();
        let text = if out.status.success() {
            out.stdout
        } else {
            raw
        };
        modules.push_str(&String::from_utf8_lossy(&text));
        modules.push('\n');
    }
    let rules: Vec<&str> = modules
        .lines()
        .filter(|l| l.starts_with("(neverallow"))
        .collect();
    assert!(!rules.is_empty());
    let policy = load(policy_path);
    let index = Index::new(&policy);
    // The attributes the binary does not keep (the generated `base_typeattr_N` the rules
    // name, attributes no allow rule uses), with their declarations.
    let mut text = String::new();
    // Members set inside `optional` blocks count too (indented lines): an optional the
    // store disabled would only make such an attribute larger than secilc's.
    // Attributes of modules the store lacks are set in optionals that stay disabled.
    let declared: BTreeSet<&str> = modules
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("(typeattribute "))
        .filter_map(|r| r.split([' ', ')']).next())
        .collect();
    for l in modules.lines().map(str::trim_start) {
        let decl = l.starts_with("(typeattribute ") || l.starts_with("(typeattributeset ");
        let name = l.split([' ', ')']).nth(1).unwrap_or("");
        if decl && declared.contains(name) && index.type_or_attr(name).is_none() {
            text.push_str(l);
            text.push('\n');
        }
    }
    for r in &rules {
        text.push_str(r);
        text.push('\n');
    }
    let (assertions, violations) = check_text(&index, "debian.cil", &text);
    assert_eq!(assertions.len(), rules.len());
    assert!(violations.is_empty(), "{violations:?}");
    // The same rules with their exemptions dropped (the attribute replaced by `domain`)
    // must be violated, or the check above could never fail.
    let widened = "(neverallow domain shadow_t (file (read)))\n";
    let (_, violations) = check_text(&index, "widened.cil", widened);
    assert_eq!(violations.len(), 1);
}

fn error_of(index: &Index<'_>, text: &str) -> NeverallowError {
    match neverallow::parse("bad.te", text).and_then(|s| neverallow::resolve(index, &s)) {
        Ok(a) => panic!("accepted {text:?}: {a:?}"),
        Err(e) => e,
    }
}

#[test]
fn bad_statements_are_errors_naming_file_and_line() {
    let policy = load(&neverallow_repo().join("bin/tiny.33"));
    let index = Index::new(&policy);
    for (text, line, words) in [
        ("neverallow user_t nosuch_t:file read;", 1, "nosuch_t"),
        ("\nneverallow user_t etc_t:nosuch read;", 2, "nosuch"),
        ("neverallow user_t etc_t:file\n  fly;", 1, "fly"),
        ("neverallow user_t etc_t:file read", 1, "';'"),
        ("neverallow user_t etc_t file read;", 1, "':'"),
        ("allow user_t etc_t:file read;", 1, "allow"),
        ("neverallow user_t etc_t:file read; @", 1, "'@'"),
        (
            "neverallowxperm user_t etc_t:file ioctl 0x10000;",
            1,
            "0x10000",
        ),
        (
            "neverallowxperm user_t etc_t:file ioctl 0x20-0x10;",
            1,
            "range",
        ),
        ("(neverallow user_t etc_t (file (read))", 1, "')'"),
        (
            "(neverallow user_t etc_t (file (read)))\n(neverallow user_t)",
            2,
            "neverallow",
        ),
        ("(neverallow user_t etc_t (file (read))))", 1, "')'"),
        ("(allow user_t etc_t (file (read)))", 1, "allow"),
        ("(neverallow user_t etc_t cp_named)", 1, "named"),
        ("(neverallowx user_t etc_t (nlmsg file (1)))", 1, "nlmsg"),
        (
            "(typeattribute x)\n(typeattributeset x (y))\n(neverallow x etc_t (file (read)))",
            3,
            "'y'",
        ),
        (
            "(typeattribute x)\n(typeattributeset x (x))\n(neverallow x etc_t (file (read)))",
            1,
            "itself",
        ),
        ("(neverallow user_t etc_t (file (not)))", 1, "operands"),
    ] {
        let e = error_of(&index, text).to_string();
        let want = format!("bad.te:{line}: ");
        assert!(
            e.starts_with(&want) && e.contains(words),
            "{text:?} gave {e:?}"
        );
    }
}

#[test]
fn mutated_statements_never_panic() {
    let policy = load(&neverallow_repo().join("bin/tiny.33"));
    let index = Index::new(&policy);
    let seeds = [
        CONF_STATEMENTS,
        "neverallowxperm user_t etc_t:file ioctl { 0x8900-0x89ff ~0x8901 };",
        "(typeattribute x)\n(typeattributeset x (and (domain) (not (user_t))))\n\
         (neverallow x self (process (not (fork))))\n\
         (neverallowx user_t etc_t (ioctl file (not ((range 0x1 0x2) 0x5))))",
    ];
    let alphabet = b"(){}~-*:;, \nx0self";
    let mut rng = arbiter_testkit::Rng::new(18);
    for _ in 0..3000 {
        let mut text = rng.pick(&seeds).unwrap().as_bytes().to_vec();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(text.len() + 1);
            match rng.below(3) {
                0 if at < text.len() => {
                    text.remove(at);
                }
                1 => text.insert(at, *rng.pick(alphabet).unwrap()),
                _ => text.truncate(at),
            }
        }
        let text = String::from_utf8_lossy(&text);
        if let Ok(src) = neverallow::parse("m.te", &text) {
            if let Ok(a) = neverallow::resolve(&index, &src) {
                neverallow::check(&index, &a);
            }
        }
    }
    // Deep nesting is refused, not a stack overflow.
    for text in [
        format!("neverallow {}user_t etc_t:file read;", "~".repeat(100_000)),
        "(".repeat(100_000),
    ] {
        assert!(neverallow::parse("deep.te", &text).is_err());
    }
}

//! Differential test against the real `sediff` (setools 4.4.1) for the rule sections of
//! xperm rules, neverallow rules, type_transition/type_change/type_member and role
//! allow/role_transition: between neighbouring pairs of this repository's policies, between
//! `features.33` and a variant compiled at test time with checkpolicy (changes in every one
//! of these sections, including xperms, filename and conditional transitions and role
//! transitions with a class), and between the Debian default and MLS policies; both
//! directions, with and without `--stats`, with the sections selected and in a run that
//! selects nothing (there only these sections of sediff's output are compared).
//!
//! The text is compared byte for byte: nothing in these sections depends on Python's hash
//! order (ioctl numbers are printed as sorted runs, type rules carry no permission sets).
//! ARBITER_DIFF_FULL=1 adds a Debian default-vs-MLS run selecting every section.

mod oracle;

use arbiter_policy::Policy;
use arbiter_query::diff::{self, DiffArgs};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const SEDIFF: &str = "/usr/bin/sediff";

/// The options selecting this file's sections.
const OPTIONS: &[&str] = &[
    "--allowxperm",
    "--auditallowxperm",
    "--dontauditxperm",
    "--neverallow",
    "--neverallowxperm",
    "-T",
    "--type_change",
    "--type_member",
    "--role_allow",
    "--role_trans",
];

/// The titles of this file's sections, for picking them out of a run that selects none.
const TITLES: &[&str] = &[
    "Allowxperm Rules",
    "Neverallow Rules",
    "Neverallowxperm Rules",
    "Auditallowxperm Rules",
    "Dontauditxperm Rules",
    "Type_transition Rules",
    "Type_change Rules",
    "Type_member Rules",
    "Role allow Rules",
    "Role_transition Rules",
];

/// One sediff run to compare: its arguments, and whether only this file's sections of
/// the output are compared (a run selecting every section).
struct Case {
    argv: Vec<String>,
    only_ours: bool,
}

/// Keeps the sections of `text` whose title is one of [`TITLES`] (each section is its
/// header line and everything up to and including the blank line after it).
fn our_sections(text: &str) -> String {
    let mut out = String::new();
    let mut keep = false;
    let mut header = true;
    for line in text.split_inclusive('\n') {
        if header {
            keep = TITLES.iter().any(|t| line.starts_with(&format!("{t} (")));
            header = false;
        }
        if keep {
            out.push_str(line);
        }
        if line == "\n" {
            header = true;
        }
    }
    out
}

/// A directory removed when dropped, also when the test fails.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        let dir = std::env::temp_dir().join(format!("arbiter-sediff-rules-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Replaces `from` (which must occur) by `to`.
fn edit(src: String, from: &str, to: &str) -> String {
    assert!(src.contains(from), "features.conf no longer has {from:?}");
    src.replacen(from, to, 1)
}

/// `features.conf` with changes in every section this test covers, compiled with
/// checkpolicy into `dir`.
fn build_variant(dir: &Path) -> PathBuf {
    let conf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policies/src/features.conf");
    let mut s = std::fs::read_to_string(&conf).expect("read features.conf");
    // allowxperm: a changed set (a removed command and an added range), and a rule on an
    // attribute over three ioctl drivers, added for the other domains and merged into the
    // existing rules of staff_t, sysadm_t and guest_t.
    s = edit(
        s,
        "ioctl { 0x5401 0x5403-0x5410 0x89f0-0x8a0f 0x4200-0x42ff };",
        "ioctl { 0x5401 0x5404-0x5412 0x89f0-0x8a0f 0x4200-0x42ff };\n\
         allowxperm domain dev_t:chr_file ioctl { 0x5401 0x8901 0x1234 };",
    );
    // Added keys made by several rules (an attribute's and types', over several drivers):
    // sediff prints the first table entry setools lists for each, with only its numbers.
    s = edit(
        s,
        "# ---- guest ----",
        "allowxperm domain port_t:tcp_socket ioctl { 0x8910 0x4401 };\n\
         allowxperm { staff_t guest_t } port_t:tcp_socket ioctl { 0x5401 0x8911 };\n\
         allowxperm sysadm_t port_t:tcp_socket ioctl { 0x0001-0x0003 0x7f00-0x7fff };\n\
         allowxperm domain { etc_t secret_t log_t tmp_t dev_t web_exec_t }:lnk_file ioctl 0x1201;\n\
         allowxperm staff_t { etc_t secret_t log_t tmp_t dev_t web_exec_t }:lnk_file ioctl 0x1202;\n\
         # ---- guest ----",
    );
    // auditallowxperm: modified, and a whole driver added.
    s = edit(
        s,
        "auditallowxperm sysadm_t dev_t:chr_file ioctl 0x5401;",
        "auditallowxperm sysadm_t dev_t:chr_file ioctl { 0x5401 0x5405 };\n\
         auditallowxperm staff_t dev_t:chr_file ioctl { 0x8900-0x89ff };",
    );
    // dontauditxperm: one removed, one added.
    s = edit(
        s,
        "dontauditxperm guest_t dev_t:chr_file ioctl { 0x5401-0x5402 };",
        "dontauditxperm staff_t dev_t:chr_file ioctl { 0x5401-0x5402 0x5410 };",
    );
    // type_transition: a changed default, a removed rule, a rule on an attribute, a
    // conditional one changed and one added in a false branch; filename transitions
    // changed, removed and added.
    s = edit(
        s,
        "type_transition staff_t su_exec_t:process sysadm_t;",
        "type_transition staff_t su_exec_t:process guest_t;\n\
         type_transition domain log_t:dir tmp_t;",
    );
    s = edit(s, "type_transition web_t web_exec_t:process web_cgi_t;", "");
    s = edit(
        s,
        "type_transition staff_t staff_tmp_t:process staff_t;",
        "type_transition staff_t staff_tmp_t:process sysadm_t;\n\
         \ttype_change staff_t log_t:file tmp_t;",
    );
    s = edit(
        s,
        "\tdontaudit web_t web_content_t:file { write append };",
        "\tdontaudit web_t web_content_t:file { write append };\n\
         \ttype_transition web_t web_content_t:file tmp_t;",
    );
    s = edit(
        s,
        "type_transition staff_t tmp_t:file log_t \"app.log\";",
        "type_transition staff_t tmp_t:file tmp_t \"app.log\";\n\
         type_transition sysadm_t tmp_t:file log_t \"new.log\";",
    );
    s = edit(
        s,
        "type_transition staff_t tmp_t:file secret_t \"keyring\";",
        "",
    );
    // type_change and type_member: changed defaults and added rules.
    s = edit(
        s,
        "type_member staff_t tmp_t:dir staff_tmp_t;",
        "type_member staff_t tmp_t:dir log_t;\ntype_member guest_t tmp_t:dir tmp_t;",
    );
    s = edit(
        s,
        "type_change sysadm_t staff_tmp_t:file tmp_t;",
        "type_change sysadm_t staff_tmp_t:file log_t;\ntype_change staff_t tmp_t:file staff_tmp_t;",
    );
    // role allow: one removed, one added; role_transition: a changed new role, a removed
    // rule, and an added one on an attribute with a class.
    s = edit(s, "allow system_r web_r;", "allow guest_r staff_r;");
    s = edit(
        s,
        "role_transition staff_r su_exec_t:process sysadm_r;",
        "role_transition staff_r su_exec_t:process guest_r;",
    );
    s = edit(
        s,
        "role_transition sysadm_r secret_t:file sysadm_r;",
        "role_transition guest_r file_type:file guest_r;",
    );
    // A boolean's default flipped: conditional rules are keyed by expression and branch,
    // so this changes none of them.
    s = edit(s, "bool web_write false;", "bool web_write true;");
    let src = dir.join("variant.conf");
    std::fs::write(&src, s).expect("write variant.conf");
    let out = dir.join("variant.33");
    let status = Command::new("checkpolicy")
        .args(["-M", "-c", "33", "-o"])
        .arg(&out)
        .arg(&src)
        .output()
        .expect("run checkpolicy");
    assert!(
        status.status.success(),
        "checkpolicy failed: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    out
}

#[test]
fn rule_sections_match_sediff() {
    if !oracle::oracle_available(SEDIFF) {
        return;
    }
    let dir = TempDir::new();
    let variant = build_variant(&dir.0);
    let paths = oracle::policies();
    let s = |p: &Path| p.to_string_lossy().to_string();
    let ours: Vec<&PathBuf> = paths
        .iter()
        .filter(|p| p.to_string_lossy().contains("policies/bin"))
        .collect();
    let features = ours
        .iter()
        .find(|p| p.ends_with("features.33"))
        .expect("features.33");
    let mut pairs: Vec<(String, String)> = Vec::new();
    for w in ours.windows(2) {
        pairs.push((s(w[0]), s(w[1])));
        pairs.push((s(w[1]), s(w[0])));
    }
    pairs.push((s(features), s(&variant)));
    pairs.push((s(&variant), s(features)));
    let mut cases = Vec::new();
    let selected = |extra: &[&str], a: &str, b: &str| {
        let mut argv: Vec<String> = extra.iter().map(|o| o.to_string()).collect();
        argv.extend(OPTIONS.iter().map(|o| o.to_string()));
        argv.extend([a.to_string(), b.to_string()]);
        argv
    };
    for (a, b) in &pairs {
        cases.push(Case {
            argv: selected(&[], a, b),
            only_ours: false,
        });
        cases.push(Case {
            argv: selected(&["--stats"], a, b),
            only_ours: false,
        });
        cases.push(Case {
            argv: vec![a.clone(), b.clone()],
            only_ours: true,
        });
    }
    for (a, b) in [(s(features), s(&variant)), (s(&variant), s(features))] {
        cases.push(Case {
            argv: vec!["--stats".into(), a.clone(), b.clone()],
            only_ours: true,
        });
        // -A selects allow and allowxperm; only the latter is compared here.
        cases.push(Case {
            argv: vec!["-A".into(), a.clone(), b.clone()],
            only_ours: true,
        });
        for opt in OPTIONS {
            cases.push(Case {
                argv: vec![opt.to_string(), a.clone(), b.clone()],
                only_ours: false,
            });
        }
    }
    // The Debian policies: sediff needs about 5 s per run for these sections.
    if paths.len() >= 2 && paths[0].starts_with("/etc") && paths[1].starts_with("/etc") {
        let (d, m) = (s(&paths[0]), s(&paths[1]));
        for (a, b) in [(&d, &m), (&m, &d)] {
            cases.push(Case {
                argv: selected(&[], a, b),
                only_ours: false,
            });
        }
        cases.push(Case {
            argv: selected(&["--stats"], &d, &m),
            only_ours: false,
        });
        // A run selecting nothing computes every section, the AV rules too: minutes and
        // over a gigabyte in sediff, so only on request.
        if std::env::var_os("ARBITER_DIFF_FULL").is_some() {
            cases.push(Case {
                argv: vec![d.clone(), m.clone()],
                only_ours: true,
            });
        }
    }
    let argvs: Vec<Vec<String>> = cases.iter().map(|c| c.argv.clone()).collect();
    let theirs = oracle::run_oracle(SEDIFF, &argvs, 2);
    assert_eq!(theirs.len(), cases.len(), "the harness answered every case");
    let mut loaded: HashMap<String, Policy> = HashMap::new();
    let mut failures = Vec::new();
    let mut nonempty = [0usize; 3];
    for (case, theirs) in cases.iter().zip(&theirs) {
        let args = DiffArgs::parse(&case.argv).expect("valid sediff arguments");
        for p in &args.policies {
            loaded
                .entry(p.clone())
                .or_insert_with(|| Policy::open(p).unwrap_or_else(|e| panic!("{p}: {e}")));
        }
        let (l, r) = (&loaded[&args.policies[0]], &loaded[&args.policies[1]]);
        let (ours, code) = if case.only_ours {
            let secs = diff::sections(l, r, &args);
            (our_sections(&diff::render_text(&secs, args.stats)), 0)
        } else {
            diff::execute(l, r, &args)
        };
        let expected = if case.only_ours {
            our_sections(&theirs.out)
        } else {
            theirs.out.clone()
        };
        for (n, c) in nonempty
            .iter_mut()
            .zip(["      + ", "      - ", "      * "])
        {
            *n += expected.lines().filter(|l| l.starts_with(c)).count();
        }
        if i64::from(code) != theirs.code || ours != expected {
            let first = ours.lines().zip(expected.lines()).position(|(x, y)| x != y);
            failures.push(format!(
                "sediff {}: exit {code} vs {} ({}); {} vs {} lines; first difference at {first:?}: ours {:?} theirs {:?}",
                case.argv.join(" "),
                theirs.code,
                theirs.err.trim(),
                ours.lines().count(),
                expected.lines().count(),
                first.and_then(|i| ours.lines().nth(i)),
                first.and_then(|i| expected.lines().nth(i)),
            ));
        }
    }
    eprintln!(
        "{} cases, {} differences; sediff printed {} added, {} removed, {} modified items",
        cases.len(),
        failures.len(),
        nonempty[0],
        nonempty[1],
        nonempty[2]
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

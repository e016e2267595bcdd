//! Differential test against the real `sediff` (setools 4.4.1) for the MLS, constraint,
//! labeling, default and typebounds sections: between neighbouring pairs of this
//! repository's policies, between the Debian default and MLS policies, and between
//! policies built here with checkpolicy from `policies/src` and variants of them edited so
//! that every one of these sections has added, removed and modified items. Each pair is
//! compared both ways, with the sections selected (with and without `--stats`) and
//! unselected (sediff's all-sections run, where only non-empty sections are printed).

mod oracle;

use arbiter_policy::Policy;
use arbiter_query::diff::{self, DiffArgs};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const SEDIFF: &str = "/usr/bin/sediff";

/// The section options under test.
const OPTIONS: &[&str] = &[
    "--category",
    "--sensitivity",
    "--level",
    "--range_trans",
    "--constrain",
    "--mlsconstrain",
    "--validatetrans",
    "--mlsvalidatetrans",
    "--initialsid",
    "--ibendportcon",
    "--ibpkeycon",
    "--fs_use",
    "--genfscon",
    "--netifcon",
    "--nodecon",
    "--portcon",
    "--default",
    "--typebounds",
];

/// Their section titles (an all-sections run is compared on these sections only).
const TITLES: &[&str] = &[
    "Categories",
    "Sensitivities",
    "Levels",
    "Range_transition Rules",
    "Constraints",
    "MLS Constraints",
    "Validatetrans",
    "MLS Validatetrans",
    "Initial SIDs",
    "Ibendportcons",
    "Ibpkeycons",
    "Fs_use",
    "Genfscons",
    "Netifcons",
    "Nodecons",
    "Portcons",
    "Defaults",
    "Typebounds",
];

/// The sections of an output (each ends with a blank line) whose title is in [`TITLES`].
fn our_sections(text: &str) -> Vec<&str> {
    text.split_inclusive("\n\n")
        .filter(|block| {
            let title = block.split(" (").next().unwrap_or("");
            TITLES.contains(&title)
        })
        .collect()
}

/// Text edits: each `old` must occur exactly once.
fn edit(text: &str, edits: &[(&str, &str)], what: &str) -> String {
    let mut s = text.to_string();
    for (old, new) in edits {
        assert_eq!(
            s.matches(old).count(),
            1,
            "{what}: {old:?} must occur exactly once in the source"
        );
        s = s.replacen(old, new, 1);
    }
    s
}

/// Additions to features.conf made in both the base and the variant, so that the variant
/// can modify them: a netifcon whose interface context alone changes, an ibpkeycon range
/// whose context changes, and typebounds over types without rules (checkpolicy refuses
/// bounds that the rules violate).
const FEATURES_BOTH: &[(&str, &str)] = &[
    (
        "typebounds web_t web_cgi_t;\n",
        "typebounds web_t web_cgi_t;\ntype tb_a_t;\ntype tb_b_t;\ntype tb_child_t;\n\
         type tb_gone_t;\ntype tb_new_t;\ntypebounds tb_a_t tb_child_t;\n\
         typebounds tb_a_t tb_gone_t;\n",
    ),
    (
        "netifcon lo system_u:object_r:net_t:s0 system_u:object_r:net_t:s0\n",
        "netifcon lo system_u:object_r:net_t:s0 system_u:object_r:net_t:s0\n\
         netifcon eth1 system_u:object_r:net_t:s0 system_u:object_r:net_t:s0\n",
    ),
    (
        "ibpkeycon fe80:: 0xFFFF system_u:object_r:ib_t:s0\n",
        "ibpkeycon fe80:: 0xFFFF system_u:object_r:ib_t:s0\n\
         ibpkeycon fe80:: 0x100-0x1ff system_u:object_r:ib_t:s0\n",
    ),
];

/// The variant of features.conf: added, removed and modified items in every section.
const FEATURES_VARIANT: &[(&str, &str)] = &[
    // Categories: aliases added and removed, a category added; levels: categories added
    // and removed, a sensitivity and its level added, sensitivity aliases changed.
    ("category c3;", "category c3 alias secret_c3;"),
    ("category c5 alias project_x;", "category c5;"),
    (
        "category c15 alias { nato ctf };",
        "category c15 alias { nato ctf };\ncategory c16;",
    ),
    (
        "sensitivity s0 alias unclassified;",
        "sensitivity s0 alias { unclassified public };",
    ),
    (
        "sensitivity s3 alias { topsecret ts };",
        "sensitivity s3 alias topsecret;\nsensitivity s4;",
    ),
    ("dominance { s0 s1 s2 s3 }", "dominance { s0 s1 s2 s3 s4 }"),
    ("level s2:c0.c15;", "level s2:c0.c7;"),
    ("level s3:c0.c15;", "level s3:c0.c16;\nlevel s4:c0.c3;"),
    // range_transition: one removed, one added, one with a new range.
    ("range_transition init_t web_exec_t s0 - s0:c0.c3;", ""),
    (
        "range_transition sysadm_t etc_t:file s2:c0.c7;",
        "range_transition sysadm_t etc_t:file s1:c0.c7;\n\
         range_transition staff_t web_exec_t:process s0;",
    ),
    // Constraints of each kind changed (an old one removed, a new one added).
    ("( u1 != guest_u );", "( u1 != { guest_u staff_u } );"),
    (
        "mlsconstrain { tcp_socket dccp_socket } name_connect\n\t( h1 dom l2 );",
        "mlsconstrain { tcp_socket dccp_socket } name_connect\n\t( h1 dom h2 );",
    ),
    (
        "( ( t1 != secret_t ) or ( t2 == secret_t ) or ( t3 == mlsrelabel ) )",
        "( ( t1 != secret_t ) or ( t2 == { secret_t etc_t } ) or ( t3 == mlsrelabel ) )",
    ),
    (
        "( ( ( l1 eq l2 ) and ( h1 eq h2 ) ) or ( t3 == mlsrelabel ) );",
        "( ( ( l1 eq l2 ) and ( h1 eq h2 ) ) or ( t3 == { mlsrelabel init_t } ) );",
    ),
    // Initial SIDs: a range and a type changed, one added.
    ("sid node\n", "sid node\nsid igmp_packet\n"),
    (
        "sid node        system_u:object_r:net_t:s0 - s3:c0.c15",
        "sid node        system_u:object_r:net_t:s0\n\
         sid igmp_packet system_u:object_r:net_t:s0",
    ),
    (
        "sid port        system_u:object_r:port_t:s0",
        "sid port        system_u:object_r:net_t:s0",
    ),
    // fs_use: one modified, one removed, one added.
    (
        "fs_use_xattr ext4 system_u:object_r:fs_t:s0;",
        "fs_use_xattr ext4 system_u:object_r:fs_t:s1;",
    ),
    (
        "fs_use_trans devpts system_u:object_r:dev_t:s0;",
        "fs_use_xattr btrfs system_u:object_r:fs_t:s0;",
    ),
    // genfscon: a context changed, a file type changed (removed + added), one added.
    (
        "genfscon proc /sys -d system_u:object_r:etc_t:s0",
        "genfscon proc /sys -d system_u:object_r:fs_t:s0",
    ),
    (
        "genfscon sysfs /link -l system_u:object_r:etc_t:s0",
        "genfscon sysfs /link -d system_u:object_r:etc_t:s0\n\
         genfscon selinuxfs / system_u:object_r:security_t:s0",
    ),
    // netifcon: both contexts, the packet context alone, the interface context alone.
    (
        "netifcon eth0 system_u:object_r:net_t:s0 - s3:c0.c15 system_u:object_r:net_t:s0",
        "netifcon eth0 system_u:object_r:net_t:s0 system_u:object_r:port_t:s0",
    ),
    (
        "netifcon lo system_u:object_r:net_t:s0 system_u:object_r:net_t:s0",
        "netifcon lo system_u:object_r:net_t:s0 system_u:object_r:net_t:s1\n\
         netifcon wlan0 system_u:object_r:net_t:s0 system_u:object_r:net_t:s0",
    ),
    (
        "netifcon eth1 system_u:object_r:net_t:s0 system_u:object_r:net_t:s0",
        "netifcon eth1 system_u:object_r:net_t:s1 system_u:object_r:net_t:s0",
    ),
    // nodecon: IPv4 and IPv6 contexts changed, an IPv6 one removed, an IPv4 one added.
    (
        "nodecon 127.0.0.1 255.255.255.255 system_u:object_r:net_t:s0",
        "nodecon 127.0.0.1 255.255.255.255 system_u:object_r:net_t:s1",
    ),
    (
        "nodecon ::1 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff system_u:object_r:net_t:s0",
        "nodecon 10.0.0.0 255.0.0.0 system_u:object_r:net_t:s0",
    ),
    (
        "nodecon 2001:db8:: ffff:ffff:ffff:: system_u:object_r:net_t:s2:c0.c3",
        "nodecon 2001:db8:: ffff:ffff:ffff:: system_u:object_r:net_t:s2:c0.c2",
    ),
    // portcon: a port and a range modified, one removed, a port and a range added.
    (
        "portcon tcp 80 system_u:object_r:port_t:s0",
        "portcon tcp 80 system_u:object_r:net_t:s0",
    ),
    (
        "portcon tcp 8000-8080 system_u:object_r:port_t:s2:c0.c7",
        "portcon tcp 8000-8080 system_u:object_r:port_t:s2:c0.c5\n\
         portcon tcp 6000-6010 system_u:object_r:port_t:s0",
    ),
    (
        "portcon udp 53 system_u:object_r:port_t:s0",
        "portcon udp 5353 system_u:object_r:port_t:s0",
    ),
    // ibpkeycon and ibendportcon: modified, removed and added.
    (
        "ibpkeycon fe80:: 0xFFFF system_u:object_r:ib_t:s0",
        "ibpkeycon fe80:: 0xFFFF system_u:object_r:ib_t:s1",
    ),
    (
        "ibpkeycon fe80:: 0x8000-0x80ff system_u:object_r:ib_t:s1",
        "ibpkeycon fe80:: 0x9000-0x90ff system_u:object_r:ib_t:s1",
    ),
    (
        "ibpkeycon fe80:: 0x100-0x1ff system_u:object_r:ib_t:s0",
        "ibpkeycon fe80:: 0x100-0x1ff system_u:object_r:ib_t:s2",
    ),
    (
        "ibendportcon mlx4_0 1 system_u:object_r:ib_t:s0",
        "ibendportcon mlx4_0 1 system_u:object_r:ib_t:s1",
    ),
    (
        "ibendportcon mlx5_0 2 system_u:object_r:ib_t:s0 - s3:c0.c15",
        "ibendportcon mlx5_0 3 system_u:object_r:ib_t:s0 - s3:c0.c15",
    ),
    // Defaults: a default changed, one removed, one added; default_range with the range
    // alone, the default alone, both, and glblub replaced.
    (
        "default_user { file dir } target;",
        "default_user file target;\ndefault_user dir source;",
    ),
    ("default_role process source;", ""),
    (
        "default_type lnk_file target;",
        "default_type lnk_file target;\ndefault_type file source;",
    ),
    (
        "default_range file target low;",
        "default_range file target high;",
    ),
    (
        "default_range dir source high;",
        "default_range dir target high;",
    ),
    (
        "default_range chr_file target low-high;",
        "default_range chr_file source low;",
    ),
    (
        "default_range lnk_file glblub;",
        "default_range lnk_file source low;",
    ),
    // Typebounds: a parent changed, one removed, one added.
    (
        "typebounds tb_a_t tb_child_t;\ntypebounds tb_a_t tb_gone_t;",
        "typebounds tb_b_t tb_child_t;\ntypebounds tb_b_t tb_new_t;",
    ),
];

/// A typebounds rule whose parent alone changes: sediff leaves the Typebounds section out
/// of its all-sections run when nothing was added or removed.
const TYPEBOUNDS_PARENT_ONLY: &[(&str, &str)] = &[(
    "typebounds tb_a_t tb_child_t;",
    "typebounds tb_b_t tb_child_t;",
)];

/// A non-MLS variant of tiny.conf: contexts modified without ranges.
const TINY_VARIANT: &[(&str, &str)] = &[
    (
        "sid port        system_u:object_r:net_t",
        "sid port        system_u:object_r:fs_t",
    ),
    (
        "portcon tcp 22 system_u:object_r:net_t",
        "portcon tcp 22 system_u:object_r:fs_t",
    ),
    (
        "netifcon eth0 system_u:object_r:net_t system_u:object_r:net_t",
        "netifcon eth0 system_u:object_r:fs_t system_u:object_r:net_t",
    ),
    (
        "fs_use_task pipefs system_u:object_r:fs_t;",
        "fs_use_task pipefs system_u:object_r:net_t;",
    ),
];

/// A directory for the policies built here, removed when the test ends (or fails).
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        let dir =
            std::env::temp_dir().join(format!("arbiter-sediff-components-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temporary directory");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn checkpolicy(conf: &Path, out: &Path, flags: &[&str]) {
    let run = Command::new("checkpolicy")
        .args(flags)
        .args(["-c", "33", "-o"])
        .arg(out)
        .arg(conf)
        .output()
        .expect("run checkpolicy");
    assert!(
        run.status.success(),
        "checkpolicy {}: {}",
        conf.display(),
        String::from_utf8_lossy(&run.stderr)
    );
}

/// Builds (base, variant) binaries from a source and its edits.
fn build_pair(
    dir: &Path,
    name: &str,
    both: &[(&str, &str)],
    variant: &[(&str, &str)],
    flags: &[&str],
) -> (PathBuf, PathBuf) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../policies/src/{name}.conf"));
    let text = std::fs::read_to_string(&src).expect("read the policy source");
    let base = edit(&text, both, name);
    let changed = edit(&base, variant, name);
    let mut out = Vec::new();
    for (tag, conf) in [("base", base), ("variant", changed)] {
        let c = dir.join(format!("{name}-{tag}.conf"));
        std::fs::write(&c, conf).expect("write the policy source");
        let b = dir.join(format!("{name}-{tag}.33"));
        checkpolicy(&c, &b, flags);
        out.push(b);
    }
    (out[0].clone(), out[1].clone())
}

/// The cases for one pair, both ways: the sections selected (with and without `--stats`)
/// and unselected; `each` adds every option on its own.
fn cases_for(a: &Path, b: &Path, unselected: bool, each: bool) -> Vec<Vec<String>> {
    let s = |p: &Path| p.to_string_lossy().to_string();
    let mut cases = Vec::new();
    for (l, r) in [(a, b), (b, a)] {
        let all: Vec<String> = OPTIONS.iter().map(|o| o.to_string()).collect();
        let mut v = all.clone();
        v.extend([s(l), s(r)]);
        cases.push(v);
        let mut v = vec!["--stats".to_string()];
        v.extend(all);
        v.extend([s(l), s(r)]);
        cases.push(v);
        if unselected {
            cases.push(vec![s(l), s(r)]);
            cases.push(vec!["--stats".into(), s(l), s(r)]);
        }
        if each {
            for o in OPTIONS {
                cases.push(vec![o.to_string(), s(l), s(r)]);
            }
        }
    }
    cases
}

#[test]
fn mls_constraint_labeling_and_other_sections_match_sediff() {
    if !oracle::oracle_available(SEDIFF) {
        return;
    }
    let tmp = TempDir::new();
    let dir = tmp.0.as_path();
    let mut cases: Vec<Vec<String>> = Vec::new();

    // Policies built here and their variants.
    let (fb, fv) = build_pair(
        dir,
        "features",
        FEATURES_BOTH,
        FEATURES_VARIANT,
        &["-M", "-U", "allow"],
    );
    cases.extend(cases_for(&fb, &fv, true, true));
    // A directory of its own, so that the two builds of features do not share files.
    let bounds_dir = dir.join("bounds");
    std::fs::create_dir_all(&bounds_dir).expect("temporary directory");
    let (bb, bv) = build_pair(
        &bounds_dir,
        "features",
        FEATURES_BOTH,
        TYPEBOUNDS_PARENT_ONLY,
        &["-M", "-U", "allow"],
    );
    cases.extend(cases_for(&bb, &bv, true, false));
    let (tb, tv) = build_pair(dir, "tiny", &[], TINY_VARIANT, &["-U", "deny"]);
    cases.extend(cases_for(&tb, &tv, true, false));

    // Neighbouring pairs of the checked-in policies (versions, MLS and non-MLS).
    let paths = oracle::policies();
    let ours: Vec<&PathBuf> = paths
        .iter()
        .filter(|p| p.to_string_lossy().contains("policies/bin"))
        .collect();
    for w in ours.windows(2) {
        cases.extend(cases_for(w[0], w[1], true, false));
    }

    // The Debian default and MLS policies (sediff is quick on these sections).
    if paths.len() >= 2 && paths[0].starts_with("/etc") && paths[1].starts_with("/etc") {
        cases.extend(cases_for(&paths[0], &paths[1], false, false));
    }

    let started = std::time::Instant::now();
    let theirs = oracle::run_oracle(SEDIFF, &cases, 2);
    let sediff_time = started.elapsed();
    assert_eq!(theirs.len(), cases.len(), "the harness answered every case");

    let mut loaded: HashMap<String, Policy> = HashMap::new();
    let mut failures = Vec::new();
    let started = std::time::Instant::now();
    for (argv, theirs) in cases.iter().zip(&theirs) {
        let args = DiffArgs::parse(argv).expect("valid sediff arguments");
        for p in &args.policies {
            loaded
                .entry(p.clone())
                .or_insert_with(|| Policy::open(p).unwrap_or_else(|e| panic!("{p}: {e}")));
        }
        let (text, code) = diff::execute(
            &loaded[&args.policies[0]],
            &loaded[&args.policies[1]],
            &args,
        );
        let mine: Vec<String> = our_sections(&text)
            .into_iter()
            .map(oracle::normalize_sediff)
            .collect();
        let want: Vec<String> = our_sections(&theirs.out)
            .into_iter()
            .map(oracle::normalize_sediff)
            .collect();
        if i64::from(code) != theirs.code || mine != want {
            let (a, b) = (mine.concat(), want.concat());
            let first = a.lines().zip(b.lines()).position(|(x, y)| x != y);
            failures.push(format!(
                "sediff {}: exit {code} vs {}; {} vs {} lines; first difference at {first:?}: ours {:?} theirs {:?}",
                argv.join(" "),
                theirs.code,
                a.lines().count(),
                b.lines().count(),
                first.and_then(|i| a.lines().nth(i)),
                first.and_then(|i| b.lines().nth(i)),
            ));
        }
    }
    eprintln!(
        "{} cases, {} differences (sediff {:.1?}, arbiter {:.1?} including policy loading)",
        cases.len(),
        failures.len(),
        sediff_time,
        started.elapsed()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn constraint_name_sets_are_compared_with_their_words_sorted() {
    let block = "Constraints (2 Added, 0 Removed)\n   Added Constraints: 2\n      \
                 + constrain b x (t1 == { b a }  ); \n      + constrain a x (t1 == { d c }  ); \n\n";
    assert_eq!(
        oracle::normalize_sediff(block),
        "Constraints (2 Added, 0 Removed)\n   Added Constraints: 2\n      \
         + constrain a x (t1 == { c d }  ); \n      + constrain b x (t1 == { a b }  ); \n\n"
    );
}

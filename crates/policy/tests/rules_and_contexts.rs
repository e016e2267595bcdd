//! The rule and object-context sections of real policies: the Debian reference policies
//! against the counts `seinfo` reports for them, and policies rewritten by `checkpolicy`
//! into older format versions, which must read to the same model wherever the older format
//! can hold the same rules (the per-rule filename transitions of versions 25..=32, the
//! avtab format of version 20, the per-node lists of every version).
//!
//! A test whose input is missing (the Debian policy packages, or `checkpolicy`) prints a
//! note and passes, so that the suite runs on a machine without them.

use arbiter_policy::avtab::Avtab;
use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::Policy;
use std::path::{Path, PathBuf};
use std::process::Command;

const DEFAULT: &str = arbiter_testkit::DEBIAN_DEFAULT;
const MLS: &str = arbiter_testkit::DEBIAN_MLS;

fn load(path: &str) -> Option<Policy> {
    if !Path::new(path).exists() {
        eprintln!("note: {path} is not installed; skipping");
        return None;
    }
    Some(Policy::open(path).unwrap_or_else(|e| panic!("{path}: {e}")))
}

/// Runs `checkpolicy` with `args`, or `None` (with a note) when it is not installed.
fn checkpolicy(args: &[&str]) -> Option<()> {
    match Command::new("checkpolicy").args(args).output() {
        Ok(out) if out.status.success() => Some(()),
        Ok(out) => panic!(
            "checkpolicy {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(_) => {
            eprintln!("note: checkpolicy is not installed; skipping");
            None
        }
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rules_and_contexts");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The rule and context statistics `seinfo` prints, computed as setools does: rules per
/// access vector table entry over both tables, filename transitions once per source type.
#[derive(Debug, PartialEq, Eq)]
struct RuleCounts {
    allow: usize,
    auditallow: usize,
    dontaudit: usize,
    type_trans: usize,
    type_change: usize,
    type_member: usize,
    range_trans: usize,
    role_allow: usize,
    role_trans: usize,
    cond_expr: usize,
    initial_sids: usize,
    fs_use: usize,
    genfscon: usize,
    portcon: usize,
    netifcon: usize,
    nodecon: usize,
}

fn rule_counts(p: &Policy) -> RuleCounts {
    use arbiter_policy::avtab::AvtabKind as K;
    let kind = |k: K| {
        p.avtab
            .entries
            .iter()
            .chain(p.cond_avtab.entries.iter())
            .filter(|e| e.key.kind == k)
            .count()
    };
    let filename_rules: usize = p
        .filename_trans
        .iter()
        .flat_map(|f| f.outcomes.iter())
        .map(|(sources, _)| sources.len())
        .sum();
    RuleCounts {
        allow: kind(K::Allowed),
        auditallow: kind(K::AuditAllow),
        dontaudit: kind(K::AuditDeny),
        type_trans: kind(K::Transition) + filename_rules,
        type_change: kind(K::Change),
        type_member: kind(K::Member),
        range_trans: p.range_trans.len(),
        role_allow: p.role_allow.len(),
        role_trans: p.role_trans.len(),
        cond_expr: p.cond_nodes.len(),
        initial_sids: p.ocontexts.initial_sids.len(),
        fs_use: p.ocontexts.fs_use.len(),
        genfscon: p.genfs.len(),
        portcon: p.ocontexts.ports.len(),
        netifcon: p.ocontexts.netifs.len(),
        nodecon: p.ocontexts.nodes.len() + p.ocontexts.nodes6.len(),
    }
}

#[test]
fn default_policy_rule_counts_match_seinfo() {
    let Some(p) = load(DEFAULT) else { return };
    assert_eq!(
        rule_counts(&p),
        RuleCounts {
            allow: 104302,
            auditallow: 21,
            dontaudit: 16813,
            type_trans: 9245,
            type_change: 123,
            type_member: 16,
            range_trans: 14,
            role_allow: 32,
            role_trans: 376,
            cond_expr: 321,
            initial_sids: 27,
            fs_use: 29,
            genfscon: 93,
            portcon: 479,
            netifcon: 0,
            nodecon: 0,
        }
    );
}

#[test]
fn mls_policy_rule_counts_match_seinfo() {
    let Some(p) = load(MLS) else { return };
    assert_eq!(
        rule_counts(&p),
        RuleCounts {
            allow: 104235,
            auditallow: 21,
            dontaudit: 16826,
            type_trans: 9240,
            type_change: 123,
            type_member: 16,
            range_trans: 31,
            role_allow: 32,
            role_trans: 376,
            cond_expr: 321,
            initial_sids: 27,
            fs_use: 29,
            genfscon: 93,
            portcon: 479,
            netifcon: 1,
            nodecon: 0,
        }
    );
}

/// Each node's true list, then its false list, in node order, cover the conditional table
/// exactly: nothing is shared between nodes and nothing is left over.
fn assert_lists_tile_the_table(p: &Policy) {
    let mut next = 0;
    for n in &p.cond_nodes {
        assert_eq!(n.true_list.start, next);
        assert_eq!(n.false_list.start, n.true_list.end);
        next = n.false_list.end;
    }
    assert_eq!(next as usize, p.cond_avtab.len());
}

#[test]
fn conditional_lists_tile_the_conditional_table() {
    for path in [DEFAULT, MLS] {
        let Some(p) = load(path) else { continue };
        assert_lists_tile_the_table(&p);
    }
}

#[test]
fn filename_transitions_are_sorted_and_name_types() {
    let Some(p) = load(DEFAULT) else { return };
    assert!(p
        .filename_trans
        .windows(2)
        .all(|w| (w[0].target, w[0].class, &w[0].name) < (w[1].target, w[1].class, &w[1].name)));
    for f in &p.filename_trans {
        for (_, new_type) in f.outcomes.iter() {
            assert_eq!(p.type_datum(*new_type).flavor, TypeFlavor::Type);
        }
    }
}

#[test]
fn genfs_entries_are_in_kernel_lookup_order() {
    let Some(p) = load(DEFAULT) else { return };
    for w in p.genfs.windows(2) {
        assert!(
            w[0].fstype < w[1].fstype
                || (w[0].fstype == w[1].fstype && w[0].path.len() >= w[1].path.len()),
            "{} {} before {} {}",
            w[0].fstype,
            w[0].path,
            w[1].fstype,
            w[1].path
        );
    }
    // proc has a catch-all "/" entry, which must come last among proc's entries.
    let proc: Vec<&str> = p
        .genfs
        .iter()
        .filter(|g| &*g.fstype == "proc")
        .map(|g| &*g.path)
        .collect();
    assert_eq!(proc.last(), Some(&"/"));
}

/// The entries of a table as a sorted list: rewriting a policy rehashes its table, so the
/// file order changes while the rules do not.
fn sorted(a: &Avtab) -> Vec<String> {
    let mut v: Vec<String> = a
        .entries
        .iter()
        .map(|e| match a.xperms_of(e.datum()) {
            Some(x) => format!("{:?} {x:?}", e.key),
            None => format!("{:?} {:?}", e.key, e.datum()),
        })
        .collect();
    v.sort_unstable();
    v
}

#[test]
fn older_format_versions_of_the_default_policy_read_alike() {
    let Some(base) = load(DEFAULT) else { return };
    let base_rules = sorted(&base.avtab);
    for version in [20, 24, 25, 26, 32] {
        let out = scratch(&format!("default.{version}"));
        let out_s = out.to_str().unwrap();
        let v = version.to_string();
        if checkpolicy(&["-M", "-b", "-c", &v, "-o", out_s, DEFAULT]).is_none() {
            return;
        }
        let p = Policy::open(&out).unwrap_or_else(|e| panic!("version {version}: {e}"));
        assert_eq!(p.version, version);
        assert_eq!(sorted(&p.avtab), base_rules, "version {version}");
        assert_eq!(p.cond_nodes, base.cond_nodes, "version {version}");
        assert_eq!(p.cond_avtab, base.cond_avtab, "version {version}");
        assert_eq!(p.role_allow, base.role_allow, "version {version}");
        assert_eq!(p.range_trans, base.range_trans, "version {version}");
        assert_eq!(p.ocontexts, base.ocontexts, "version {version}");
        assert_eq!(p.genfs, base.genfs, "version {version}");
        if version >= 25 {
            // Per-rule filename transitions (before 33) group to the compact model.
            assert_eq!(p.filename_trans, base.filename_trans, "version {version}");
        } else {
            assert!(p.filename_trans.is_empty());
        }
        // Every Debian role transition is for `process`, which older formats imply.
        assert_eq!(p.role_trans, base.role_trans, "version {version}");
        let _ = std::fs::remove_file(&out);
    }
}

#[test]
fn tiny_policy_reads_at_every_version() {
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/../../policies/src/tiny.conf");
    if !Path::new(src).exists() {
        eprintln!("note: {src} is missing; skipping");
        return;
    }
    let mut newest: Option<Policy> = None;
    for version in (15..=33).rev() {
        let out = scratch(&format!("tiny.{version}"));
        let v = version.to_string();
        if checkpolicy(&["-c", &v, "-o", out.to_str().unwrap(), src]).is_none() {
            return;
        }
        let p = Policy::open(&out).unwrap_or_else(|e| panic!("tiny version {version}: {e}"));
        let _ = std::fs::remove_file(&out);
        assert_lists_tile_the_table(&p);
        let base = newest.get_or_insert_with(|| p.clone());
        if version >= 20 {
            assert_eq!(sorted(&p.avtab), sorted(&base.avtab), "version {version}");
        } else {
            // The old format stores attribute rules expanded to types.
            assert!(p.avtab.len() >= base.avtab.len(), "version {version}");
        }
        if version >= 16 {
            assert_eq!(
                p.cond_nodes.iter().map(|n| &n.expr).collect::<Vec<_>>(),
                base.cond_nodes.iter().map(|n| &n.expr).collect::<Vec<_>>(),
                "version {version}"
            );
        } else {
            assert!(p.cond_nodes.is_empty());
        }
        assert_eq!(
            p.ocontexts.initial_sids, base.ocontexts.initial_sids,
            "version {version}"
        );
        assert_eq!(p.ocontexts.ports, base.ocontexts.ports, "version {version}");
        assert_eq!(
            p.ocontexts.fs_use, base.ocontexts.fs_use,
            "version {version}"
        );
        assert_eq!(p.genfs, base.genfs, "version {version}");
    }
}

#[test]
fn feature_policy_filename_transitions_read_alike_in_both_formats() {
    let src = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../policies/src/features.conf"
    );
    if !Path::new(src).exists() {
        eprintln!("note: {src} is missing; skipping");
        return;
    }
    let read = |version: &str| {
        let out = scratch(&format!("features.{version}"));
        checkpolicy(&["-M", "-c", version, "-o", out.to_str().unwrap(), src])?;
        let p = Policy::open(&out).unwrap_or_else(|e| panic!("features {version}: {e}"));
        let _ = std::fs::remove_file(&out);
        Some(p)
    };
    let (Some(per_rule), Some(compact)) = (read("32"), read("33")) else {
        return;
    };
    assert!(!compact.filename_trans.is_empty());
    assert_eq!(per_rule.filename_trans, compact.filename_trans);
    assert!(!compact.avtab.xperms.is_empty());
    assert_eq!(sorted(&per_rule.avtab), sorted(&compact.avtab));
    assert_eq!(per_rule.ocontexts, compact.ocontexts);
    assert_eq!(per_rule.range_trans, compact.range_trans);
}

/// Version 19 stores every rule with its attributes expanded (a 100 MB file that takes
/// checkpolicy several seconds to write), so this runs on request only:
/// `cargo test --release -- --ignored old_avtab_format`.
#[test]
#[ignore]
fn old_avtab_format_of_the_default_policy_reads() {
    let Some(base) = load(DEFAULT) else { return };
    let out = scratch("default.19");
    if checkpolicy(&["-M", "-b", "-c", "19", "-o", out.to_str().unwrap(), DEFAULT]).is_none() {
        return;
    }
    let p = Policy::open(&out).unwrap_or_else(|e| panic!("version 19: {e}"));
    let _ = std::fs::remove_file(&out);
    assert!(p.avtab.len() > base.avtab.len());
    assert_lists_tile_the_table(&p);
    assert_eq!(
        p.cond_nodes
            .iter()
            .map(|n| (&n.expr, n.cur_state))
            .collect::<Vec<_>>(),
        base.cond_nodes
            .iter()
            .map(|n| (&n.expr, n.cur_state))
            .collect::<Vec<_>>()
    );
    assert_eq!(p.ocontexts, base.ocontexts);
    assert_eq!(p.genfs, base.genfs);
}

/// Prints how long reading the Debian policies takes: the best of 20 reads from memory, and
/// one `Policy::open` of the file. Meaningful in an optimised build:
/// `cargo test --release -p arbiter-policy --test rules_and_contexts -- --ignored --nocapture load_time`.
#[test]
#[ignore]
fn load_time_of_the_debian_policies() {
    for path in [DEFAULT, MLS] {
        if !Path::new(path).exists() {
            eprintln!("note: {path} is not installed; skipping");
            continue;
        }
        let bytes = std::fs::read(path).unwrap();
        let mut best = std::time::Duration::MAX;
        for _ in 0..20 {
            let start = std::time::Instant::now();
            let policy = Policy::from_bytes(&bytes).unwrap();
            best = best.min(start.elapsed());
            drop(policy);
        }
        let start = std::time::Instant::now();
        let policy = Policy::open(path).unwrap();
        let open = start.elapsed();
        eprintln!(
            "{path}: {} bytes, {} + {} rules; from_bytes best of 20 {best:?}, open {open:?}",
            bytes.len(),
            policy.avtab.len(),
            policy.cond_avtab.len()
        );
    }
}

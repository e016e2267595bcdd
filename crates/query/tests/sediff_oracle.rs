//! Differential test against the real `sediff` (setools 4.4.1) for the sections arbiter
//! implements: between pairs of this repository's policies (every section, with and without
//! `--stats`), and between the Debian default and MLS policies for the symbol sections.
//! ARBITER_DIFF_FULL=1 adds the Debian default-vs-MLS allow/auditallow/dontaudit
//! comparison (sediff needs minutes and over a gigabyte for it).

mod oracle;

use arbiter_policy::Policy;
use arbiter_query::diff::{self, DiffArgs};

const SEDIFF: &str = "/usr/bin/sediff";

/// sediff writes the permissions of a modified rule in Python's per-process set order
/// (`{ getattr open search -read -ioctl -lock }` reorders between runs); arbiter writes
/// the kept, added and removed permissions each sorted. Modified rule lines are compared
/// with each group sorted.
fn normalize(text: &str) -> String {
    text.lines()
        .map(|l| {
            if !l.starts_with("      * ") {
                return l.to_string();
            }
            let (Some(open), Some(close)) = (l.find("{ "), l.find(" };")) else {
                return l.to_string();
            };
            let words: Vec<&str> = l[open + 2..close].split(' ').collect();
            let mut kept: Vec<&str> = words
                .iter()
                .copied()
                .filter(|w| !w.starts_with(['+', '-']))
                .collect();
            let mut added: Vec<&str> = words
                .iter()
                .copied()
                .filter(|w| w.starts_with('+'))
                .collect();
            let mut removed: Vec<&str> = words
                .iter()
                .copied()
                .filter(|w| w.starts_with('-'))
                .collect();
            kept.sort_unstable();
            added.sort_unstable();
            removed.sort_unstable();
            kept.extend(added);
            kept.extend(removed);
            format!("{}{}{}", &l[..open + 2], kept.join(" "), &l[close..])
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn implemented_sections_match_sediff() {
    if !oracle::oracle_available(SEDIFF) {
        return;
    }
    let paths = oracle::policies();
    let ours: Vec<&std::path::PathBuf> = paths
        .iter()
        .filter(|p| p.to_string_lossy().contains("policies/bin"))
        .collect();
    let mut cases: Vec<Vec<String>> = Vec::new();
    let s = |p: &std::path::PathBuf| p.to_string_lossy().to_string();
    // Neighbouring pairs of our policies (different versions and feature sets), both ways.
    for w in ours.windows(2) {
        for (a, b) in [(w[0], w[1]), (w[1], w[0])] {
            for opt in [
                "--property",
                "--common",
                "-c",
                "-b",
                "--allow",
                "--auditallow",
                "--dontaudit",
                "--polcap",
            ] {
                cases.push(vec![opt.into(), s(a), s(b)]);
            }
            cases.push(vec![
                "--stats".into(),
                "--allow".into(),
                "-b".into(),
                s(a),
                s(b),
            ]);
        }
    }
    if paths.len() >= 2 && paths[0].starts_with("/etc") && paths[1].starts_with("/etc") {
        let (d, m) = (s(&paths[0]), s(&paths[1]));
        for opt in [
            "--property",
            "--common",
            "-c",
            "-b",
            "-r",
            "-t",
            "-a",
            "--polcap",
        ] {
            cases.push(vec![opt.into(), d.clone(), m.clone()]);
            cases.push(vec![opt.into(), m.clone(), d.clone()]);
        }
        if std::env::var_os("ARBITER_DIFF_FULL").is_some() {
            cases.push(vec![
                "--allow".into(),
                "--auditallow".into(),
                "--dontaudit".into(),
                d.clone(),
                m.clone(),
            ]);
        }
    }
    let theirs = oracle::run_oracle(SEDIFF, &cases, 2);
    assert_eq!(theirs.len(), cases.len(), "the harness answered every case");
    let mut loaded: std::collections::HashMap<String, Policy> = Default::default();
    let mut failures = Vec::new();
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
        if i64::from(code) != theirs.code || normalize(&text) != normalize(&theirs.out) {
            let (a, b) = (normalize(&text), normalize(&theirs.out));
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
    eprintln!("{} cases, {} differences", cases.len(), failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

//! Differential test against the real `sediff` (setools 4.4.1), whole runs: sediff with no
//! section option (every section, empty ones left out) and with `--stats`, between
//! neighbouring pairs of this repository's policies both ways, and between the Debian
//! default and MLS policies (sediff needs about 1.5 minutes and 1.3 GB for that pair; its
//! `--stats` text is derived from the same run: the header lines and blank lines of the
//! full text, which is what sediff prints with `--stats`, pinned on our pairs). Also the
//! symbol and AV sections selected one by one, which print even when empty.
//! The sections' own edge cases are in `sediff_components_oracle.rs` and
//! `sediff_rules_oracle.rs`, on variants built with checkpolicy.

mod oracle;

use arbiter_policy::Policy;
use arbiter_query::diff::{self, DiffArgs};
use std::collections::HashMap;

const SEDIFF: &str = "/usr/bin/sediff";

/// sediff's `--stats` text from its full text: section headers and blank lines.
fn stats_of(full: &str) -> String {
    full.split_inclusive('\n')
        .filter(|l| !l.starts_with(' '))
        .collect()
}

#[test]
fn whole_runs_and_selected_sections_match_sediff() {
    if !oracle::oracle_available(SEDIFF) {
        return;
    }
    let paths = oracle::policies();
    let ours: Vec<&std::path::PathBuf> = paths
        .iter()
        .filter(|p| p.to_string_lossy().contains("policies/bin"))
        .collect();
    let s = |p: &std::path::PathBuf| p.to_string_lossy().to_string();
    let mut cases: Vec<Vec<String>> = Vec::new();
    // Neighbouring pairs of our policies (different versions and feature sets), both ways.
    for w in ours.windows(2) {
        for (a, b) in [(w[0], w[1]), (w[1], w[0])] {
            cases.push(vec![s(a), s(b)]);
            cases.push(vec!["--stats".into(), s(a), s(b)]);
            for opt in [
                "--property",
                "--common",
                "-c",
                "-b",
                "-r",
                "-t",
                "-a",
                "-u",
                "--allow",
                "--auditallow",
                "--dontaudit",
                "--polcap",
            ] {
                cases.push(vec![opt.into(), s(a), s(b)]);
            }
        }
    }
    let debian = paths.len() >= 2 && paths[0].starts_with("/etc") && paths[1].starts_with("/etc");
    if debian {
        let (d, m) = (s(&paths[0]), s(&paths[1]));
        cases.push(vec![d.clone(), m.clone()]);
        for opt in ["-r", "-t", "-a", "-u"] {
            cases.push(vec![opt.into(), m.clone(), d.clone()]);
        }
    }
    let theirs = oracle::run_oracle(SEDIFF, &cases, 2);
    assert_eq!(theirs.len(), cases.len(), "the harness answered every case");
    let mut loaded: HashMap<String, Policy> = HashMap::new();
    let mut failures = Vec::new();
    let mut compare = |argv: &[String], code: u8, ours: &str, their_code: i64, theirs: &str| {
        let (a, b) = (
            oracle::normalize_sediff(ours),
            oracle::normalize_sediff(theirs),
        );
        if i64::from(code) != their_code || a != b {
            let first = a.lines().zip(b.lines()).position(|(x, y)| x != y);
            failures.push(format!(
                "sediff {}: exit {code} vs {their_code}; {} vs {} lines; first difference at {first:?}: ours {:?} theirs {:?}",
                argv.join(" "),
                a.lines().count(),
                b.lines().count(),
                first.and_then(|i| a.lines().nth(i)),
                first.and_then(|i| b.lines().nth(i)),
            ));
        }
    };
    let mut whole_lines = 0;
    for (argv, theirs) in cases.iter().zip(&theirs) {
        let args = DiffArgs::parse(argv).expect("valid sediff arguments");
        for p in &args.policies {
            loaded
                .entry(p.clone())
                .or_insert_with(|| Policy::open(p).unwrap_or_else(|e| panic!("{p}: {e}")));
        }
        let (left, right) = (&loaded[&args.policies[0]], &loaded[&args.policies[1]]);
        let (text, code) = diff::execute(left, right, &args);
        compare(argv, code, &text, theirs.code, &theirs.out);
        if args.sections.is_empty() && !args.stats {
            whole_lines += theirs.out.lines().count();
            // sediff --stats prints exactly the headers and blank lines of the full run
            // (checked on our pairs, where both runs are made); the Debian pair's --stats
            // comparison uses that instead of a second 1.5-minute sediff run.
            let mut stats_args = args.clone();
            stats_args.stats = true;
            let (stats, code) = diff::execute(left, right, &stats_args);
            let mut stats_argv = vec!["--stats".to_string()];
            stats_argv.extend(argv.iter().cloned());
            compare(
                &stats_argv,
                code,
                &stats,
                theirs.code,
                &stats_of(&theirs.out),
            );
        }
    }
    // The derivation itself, on the pairs where sediff ran both ways.
    let by_argv: HashMap<&[String], &str> = cases
        .iter()
        .zip(&theirs)
        .map(|(c, o)| (c.as_slice(), o.out.as_str()))
        .collect();
    let mut derived = 0;
    for (argv, stats) in &by_argv {
        if argv.first().map(String::as_str) == Some("--stats") {
            if let Some(full) = by_argv.get(&argv[1..]) {
                assert_eq!(
                    stats_of(full),
                    *stats,
                    "sediff {}: --stats is the headers of the full run",
                    argv.join(" ")
                );
                derived += 1;
            }
        }
    }
    assert!(derived > 0, "the --stats derivation was checked");
    assert!(
        whole_lines > 5_000,
        "the whole runs compared {whole_lines} lines"
    );
    eprintln!(
        "{} cases ({whole_lines} lines of whole runs), {} differences",
        cases.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

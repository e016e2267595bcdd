//! Differential test against the real `seinfo` (setools 4.4.1): every component option,
//! with and without `-x`, without a name and with names taken from the listing (and one
//! that does not exist), plus `--flat` and `--all`, on the Debian default and MLS policies
//! and this repository's policies. Output and exit status must be identical.
//!
//! ARBITER_INFO_CASES=all also runs every named variant on every policy (the CI default
//! samples names on the small policies).

mod oracle;

use arbiter_policy::{stats, Policy};
use arbiter_query::info::{self, InfoArgs};
use arbiter_query::Index;
use oracle::Rng;

const SEINFO: &str = "/usr/bin/seinfo";

const OPTIONS: &[&str] = &[
    "-b",
    "--category",
    "-c",
    "--common",
    "--constrain",
    "--default",
    "--fs_use",
    "--genfscon",
    "--ibendportcon",
    "--ibpkeycon",
    "--initialsid",
    "--netifcon",
    "--nodecon",
    "--permissive",
    "--polcap",
    "--portcon",
    "-r",
    "--sensitivity",
    "--typebounds",
    "-t",
    "-a",
    "-u",
    "--validatetrans",
];

/// A name to filter `option` by, taken from the policy's own listing.
fn name_for(index: &Index<'_>, option: &str, rng: &mut Rng) -> Option<String> {
    let key_args = InfoArgs::parse(&[option.to_string()]).ok()?;
    let comps = info::components(index, &key_args).ok()?;
    let items = &comps.first()?.items;
    let (plain, _) = rng.pick(items)?;
    let words: Vec<&str> = plain.split_whitespace().collect();
    Some(match option {
        "--constrain" | "--validatetrans" | "--default" => words.get(1)?.to_string(),
        "--fs_use" | "--genfscon" => words.get(1)?.to_string(),
        "--ibendportcon" | "--netifcon" => words.get(1)?.to_string(),
        "--portcon" => words.get(2)?.split('-').next()?.to_string(),
        "--ibpkeycon" => words.get(2)?.to_string(),
        "--nodecon" => {
            let addr = words.get(1)?;
            let mask = words.get(2)?;
            format!("{addr}/{mask}")
        }
        "--typebounds" => words.get(2)?.trim_end_matches(';').to_string(),
        _ => plain.clone(),
    })
}

/// setools prints the name sets of constraints in Python's per-process hash order (run
/// seinfo twice on policies/bin/default.26 and `t1 == { ... }` changes), and sorts the
/// lines by that text; arbiter writes the names sorted. Constraint listings are compared
/// with the names of each set, and then the lines, in sorted order.
fn same_up_to_set_order(ours: &str, theirs: &str) -> bool {
    fn norm(text: &str) -> Vec<String> {
        let mut lines: Vec<String> = text
            .lines()
            .map(|line| {
                let mut out = String::new();
                let mut rest = line;
                while let Some(start) = rest.find("{ ") {
                    let Some(len) = rest[start..].find(" }") else {
                        break;
                    };
                    out.push_str(&rest[..start]);
                    let mut words: Vec<&str> = rest[start + 2..start + len].split(' ').collect();
                    words.sort_unstable();
                    out.push_str(&format!("{{ {} }}", words.join(" ")));
                    rest = &rest[start + len + 2..];
                }
                out.push_str(rest);
                out
            })
            .collect();
        lines.sort();
        lines
    }
    let is_constraint = |t: &str| t.contains("constrain ") || t.contains("validatetrans ");
    is_constraint(theirs) && norm(ours) == norm(theirs)
}

#[test]
fn component_listings_match_seinfo() {
    if !oracle::oracle_available(SEINFO) {
        return;
    }
    let full = std::env::var("ARBITER_INFO_CASES").is_ok_and(|v| v == "all");
    let paths = oracle::policies();
    let policies: Vec<Policy> = paths
        .iter()
        .map(|p| Policy::open(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .collect();
    let indexes: Vec<Index> = policies.iter().map(Index::new).collect();
    let mut rng = Rng(0x5e1f_0001);
    let mut cases: Vec<(usize, Vec<String>)> = Vec::new();
    for (i, path) in paths.iter().enumerate() {
        let path = path.to_string_lossy().to_string();
        let big = i < 2;
        for option in OPTIONS {
            for x in [false, true] {
                let mut base = vec![path.clone(), option.to_string()];
                if x {
                    base.push("-x".into());
                }
                cases.push((i, base.clone()));
                if big || full || rng.pct(25) {
                    if let Some(name) = name_for(&indexes[i], option, &mut rng) {
                        let mut named = vec![path.clone(), option.to_string(), name];
                        if x {
                            named.push("-x".into());
                        }
                        cases.push((i, named));
                    }
                }
            }
            if big || full {
                let unknown = match *option {
                    "--portcon" => "65001",
                    "--nodecon" => "10.99.0.0/16",
                    "--ibpkeycon" => "0x7fff",
                    _ => "no_such_name",
                };
                cases.push((i, vec![path.clone(), option.to_string(), unknown.into()]));
            }
        }
        cases.push((
            i,
            vec![path.clone(), "-t".into(), "-a".into(), "--flat".into()],
        ));
        cases.push((i, vec![path.clone(), "--all".into()]));
        if big {
            cases.push((i, vec![path.clone(), "--portcon".into(), "http".into()]));
        }
    }
    let argvs: Vec<Vec<String>> = cases.iter().map(|(_, a)| a.clone()).collect();
    let theirs = oracle::run_oracle(SEINFO, &argvs, 2);
    assert_eq!(theirs.len(), cases.len(), "the harness answered every case");
    let mut failures = Vec::new();
    for ((p, argv), theirs) in cases.iter().zip(&theirs) {
        let (text, code) = match InfoArgs::parse(argv) {
            Err(e) => (e.0, 2),
            Ok(args) => {
                let stats = stats::render_text(&policies[*p], &paths[*p].to_string_lossy());
                let (t, c) = info::execute(&indexes[*p], &args, &stats);
                (t, i64::from(c))
            }
        };
        let ok = if theirs.code == 2 {
            code == 2 && theirs.err.trim_end().ends_with(&text)
        } else {
            code == theirs.code && (text == theirs.out || same_up_to_set_order(&text, &theirs.out))
        };
        if !ok {
            let first = text
                .lines()
                .zip(theirs.out.lines())
                .position(|(a, b)| a != b);
            failures.push(format!(
                "seinfo {}: exit {code} vs {}; first difference at line {first:?}: ours {:?} theirs {:?}",
                argv.join(" "),
                theirs.code,
                first.and_then(|i| text.lines().nth(i)),
                first.and_then(|i| theirs.out.lines().nth(i)),
            ));
        }
    }
    eprintln!("{} cases, {} differences", cases.len(), failures.len());
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

//! Differential test of `arbiter search --expand` against setools itself: the real
//! `/usr/bin/sesearch` runs with every rule it prints replaced by setools' own
//! `rule.expand()` (the harness's ARBITER_SETOOLS_EXPAND mode), so the oracle is setools'
//! expansion in sesearch's order. Queries: fixed ones covering every rule family (AV,
//! conditional, xperm, type/filename transitions, role transitions, range transitions) on
//! the Debian policies, and generated ones on rules written on attributes.
//!
//! ARBITER_EXPAND_CASES sets the number of generated cases (CI default 30).

mod oracle;

use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::Policy;
use arbiter_query::search::{self, SearchArgs};
use arbiter_query::Index;
use oracle::Rng;

const SESEARCH: &str = "/usr/bin/sesearch";
use arbiter_testkit::{DEBIAN_DEFAULT as DEFAULT, DEBIAN_MLS as MLS};

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

/// Queries on rules whose source or target is an attribute, picked from the policy's rules.
fn generated(path: &str, rng: &mut Rng, n: usize) -> Vec<Vec<String>> {
    let policy = Policy::open(path).expect("policy");
    let attr = |t: arbiter_policy::TypeId| {
        policy
            .types
            .get(t.index())
            .is_some_and(|d| d.flavor != TypeFlavor::Type)
    };
    let entries: Vec<_> = policy
        .avtab
        .entries
        .iter()
        .filter(|e| attr(e.key.source) || attr(e.key.target))
        .collect();
    let index = Index::new(&policy);
    let mut cases = Vec::new();
    for _ in 0..n {
        let Some(e) = rng.pick(&entries) else { break };
        let mut argv = vec![
            oracle::kind_option(e.key.kind).to_string(),
            "-s".into(),
            index.type_name(e.key.source).to_string(),
            "-ds".into(),
            "-c".into(),
            index.class_name(e.key.class).to_string(),
        ];
        // A direct target keeps the expansion to this rule's own pairs.
        argv.extend([
            "-t".into(),
            index.type_name(e.key.target).to_string(),
            "-dt".into(),
        ]);
        argv.push(path.to_string());
        cases.push(argv);
    }
    cases
}

#[test]
fn expanded_rules_are_setools_own_expansion_in_sesearch_order() {
    if !oracle::oracle_available(SESEARCH)
        || !std::path::Path::new(DEFAULT).is_file()
        || !std::path::Path::new(MLS).is_file()
    {
        return;
    }
    let mut cases: Vec<Vec<String>> = [
        "-A -s domain -t cpu_online_t -c file",
        "--allow -s httpd_t -c packet -b httpd_can_network_connect",
        "--dontaudit -s domain -ds -t proc_t -c file",
        "--auditallow -c process",
        "-T -s unconfined_domain_type -ds -c file",
        "-T -t tmp_t -c dir",
        "--type_change -c chr_file -t devpts_t",
        "--type_member -t devpts_t",
        "--allowxperm -c tcp_socket",
        "--dontauditxperm",
        "--role_trans",
        "--role_allow",
        "--range_trans -c process",
        "-A --role_trans --range_trans -s sysadm_t",
        "--allow -s file_type -ds -c filesystem",
        "--allow -s no_such_type_t",
    ]
    .iter()
    .flat_map(|q| {
        [DEFAULT, MLS].map(|p| {
            let mut argv = words(q);
            argv.push(p.to_string());
            argv
        })
    })
    .collect();
    let n = oracle::case_count("ARBITER_EXPAND_CASES", 30);
    let mut rng = Rng(0x0e9a_4d11);
    cases.extend(generated(DEFAULT, &mut rng, n / 2));
    cases.extend(generated(MLS, &mut rng, n - n / 2));

    let outcomes = oracle::run_oracle_with(SESEARCH, &cases, 2, &[("ARBITER_SETOOLS_EXPAND", "1")]);
    assert_eq!(
        outcomes.len(),
        cases.len(),
        "the harness answered every case"
    );
    let mut policies: std::collections::HashMap<String, Policy> = Default::default();
    let (mut lines, mut differences) = (0usize, Vec::new());
    for (argv, want) in cases.iter().zip(&outcomes) {
        let path = argv.last().expect("policy path").clone();
        let policy = policies
            .entry(path.clone())
            .or_insert_with(|| Policy::open(&path).expect("policy"));
        let index = Index::new(policy);
        let mut args: Vec<String> = vec!["--expand".into()];
        args.extend(argv.iter().cloned());
        let parsed = SearchArgs::parse(&args).expect("arguments parse");
        let (out, code) = search::execute(&index, &parsed);
        lines += out.lines().count();
        if out != want.out || i64::from(code) != want.code {
            differences.push(format!(
                "sesearch {}\n--- setools (exit {}):\n{}\n--- arbiter (exit {code}):\n{}",
                argv.join(" "),
                want.code,
                want.out.lines().take(8).collect::<Vec<_>>().join("\n"),
                out.lines().take(8).collect::<Vec<_>>().join("\n")
            ));
        }
    }
    assert!(lines > 1_000, "the cases expand to many rules ({lines})");
    assert!(
        differences.is_empty(),
        "{} of {} cases differ:\n{}",
        differences.len(),
        cases.len(),
        differences.join("\n\n")
    );
}

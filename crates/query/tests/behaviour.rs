//! Behaviours pinned without the setools oracle.

use arbiter_policy::Policy;
use arbiter_query::search::{self, SearchArgs};
use arbiter_query::Index;
use std::path::Path;

fn repo_policy(name: &str) -> Policy {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../policies/bin")
        .join(name);
    Policy::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn args(v: &[&str]) -> SearchArgs {
    SearchArgs::parse(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>()).expect("arguments")
}

/// setools 4.4.1 dies with SIGSEGV on any rule query of a policy older than format 24
/// (attributes have no names there); arbiter answers, naming no unnamed attribute.
#[test]
fn rule_queries_work_on_policies_older_than_version_24() {
    for v in 15..24 {
        let p = repo_policy(&format!("tiny.{v}"));
        let index = Index::new(&p);
        let (text, code) = search::execute(&index, &args(&["--allow"]));
        assert_eq!(code, 0, "tiny.{v}");
        let allow = arbiter_policy::avtab::AvtabKind::Allowed;
        let mut expected = p
            .avtab
            .entries
            .iter()
            .filter(|e| e.key.kind == allow)
            .count();
        for n in &p.cond_nodes {
            for r in [&n.true_list, &n.false_list] {
                expected += p.cond_avtab.entries[r.start as usize..r.end as usize]
                    .iter()
                    .filter(|e| e.key.kind == allow)
                    .count();
            }
        }
        assert_eq!(
            text.lines().count(),
            expected,
            "one line per allow entry (tiny.{v})"
        );
        assert!(
            !text.contains("  ") && !text.contains(" :"),
            "no unnamed symbol (tiny.{v})"
        );
    }
}

#[test]
fn a_query_without_rule_type_is_a_usage_error() {
    let err = SearchArgs::parse(&["-s".to_string(), "x".to_string()]).unwrap_err();
    assert_eq!(err.0, "At least one rule type must be specified.");
}

#[test]
fn unknown_names_are_reported_as_setools_reports_them() {
    let p = repo_policy("default.33");
    let index = Index::new(&p);
    let (text, code) = search::execute(&index, &args(&["--allow", "-s", "no_such_t"]));
    assert_eq!(
        (text.as_str(), code),
        ("no_such_t is not a valid type attribute\n", 1)
    );
    let (text, code) = search::execute(&index, &args(&["--allow", "-c", "no_such_class"]));
    assert_eq!(
        (text.as_str(), code),
        ("no_such_class is not a valid class\n", 1)
    );
}

#[test]
fn sorting_puts_each_family_in_statement_order() {
    let p = repo_policy("default.33");
    let index = Index::new(&p);
    let (text, _) = search::execute(&index, &args(&["--allow", "--dontaudit", "-T"]));
    let lines: Vec<&str> = text.lines().collect();
    let mut sorted = lines.clone();
    sorted.sort_unstable();
    assert_eq!(lines, sorted);
    assert!(!lines.is_empty());
}

/// Every range_transition is found by its own default range, including ranges over a
/// sensitivity that has an alias (which setools 4.4.1 never matches: see
/// `aliased_sensitivity_range_bug` in sesearch_oracle.rs).
#[test]
fn range_transitions_are_found_by_their_own_range() {
    let p = repo_policy("features.31");
    assert!(!p.sensitivity_aliases.is_empty() && !p.range_trans.is_empty());
    let index = Index::new(&p);
    for rt in &p.range_trans {
        let range = arbiter_query::render::range(&p, &rt.range);
        let (text, code) = search::execute(&index, &args(&["--range_trans", "-D", &range]));
        assert_eq!(code, 0);
        let statement = search::mls_statement(&index, &rt.range, rt.source, rt.target, rt.class);
        assert!(
            text.lines().any(|l| l == statement),
            "{statement} for -D {range}"
        );
    }
}

/// The policy-order iterator the Python binding streams from says how many hits it holds
/// before the first is read (the binding sizes its kept rules by it), and yields each
/// match once, in `terules()` order, exactly as the collected form does.
#[test]
fn policy_order_iterator_length_is_its_hit_count() {
    let p = repo_policy("default.33");
    let index = Index::new(&p);
    for a in [
        vec!["-A"],
        vec!["-T"],
        vec!["--allow", "-p", "write"],
        vec!["-A", "-T"],
    ] {
        let a = args(&a);
        let mut it = search::te_policy_order(&index, &a).expect("query");
        let mut n = it.len();
        assert!(n > 0, "{a:?} matched nothing on default.33");
        let mut seen = Vec::new();
        while let Some(h) = it.next() {
            n -= 1;
            assert_eq!(it.len(), n, "{a:?}");
            seen.push(format!("{h:?}"));
        }
        assert_eq!(n, 0, "{a:?}");
        let collected: Vec<String> = search::search_te_policy_order(&index, &a)
            .expect("query")
            .iter()
            .map(|h| format!("{h:?}"))
            .collect();
        assert_eq!(seen, collected, "{a:?}");
    }
}

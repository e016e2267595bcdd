//! `arbiter dta` against sedta 4.4.1: the same command lines, byte-identical reports (after
//! [`common::normalise`]) and exit status, on our small policies and on Debian's default
//! and MLS policies, over seeded random domains, the most connected ones, and every option.

mod common;

use common::{argv, compare, domains, oracle_available, small_policies, types};

/// A few seeded cases per policy, covering every option.
fn cases(policy: &str, seed: u64, n: usize, fixed: &[&str]) -> Vec<Vec<String>> {
    let mut rng = arbiter_testkit::Rng::new(seed);
    let (doms, names) = (domains(policy), types(policy));
    let mut out: Vec<Vec<String>> = fixed
        .iter()
        .map(|f| argv(&format!("-p {policy} {f}")))
        .collect();
    for k in 0..n {
        let s = rng.pick(&doms).cloned().unwrap_or_default();
        let t = rng.pick(&doms).cloned().unwrap_or_default();
        let x = rng.pick(&names).cloned().unwrap_or_default();
        let case = match k % 5 {
            0 => format!("-s {s} --full --stats"),
            1 => format!("-s {s} -r --full -l 7"),
            2 => format!("-s {s} -t {t} -S --full"),
            3 => format!("-s {s} -t {t} -A 3 --full -l 5 {x}"),
            _ => format!("-s {s} -t {t} -A 4 -r --stats {x}"),
        };
        out.push(argv(&format!("-p {policy} {case}")));
    }
    out
}

fn run(cases: Vec<Vec<String>>) {
    let failures: Vec<String> = cases.iter().filter_map(|c| compare("sedta", c)).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn transitions_and_paths_match_sedta_on_small_policies() {
    if !oracle_available("/usr/bin/sedta") {
        return;
    }
    let policies = small_policies();
    assert!(
        !policies.is_empty(),
        "policies/bin holds our small policies"
    );
    let mut all = Vec::new();
    for (i, p) in policies.iter().enumerate().filter(|(i, _)| i % 3 == 0) {
        all.extend(cases(&p.to_string_lossy(), 7 + i as u64, 6, &[]));
    }
    run(all);
}

#[test]
fn transitions_and_paths_match_sedta_on_debian_default() {
    if !oracle_available("/usr/bin/sedta")
        || !std::path::Path::new(arbiter_testkit::DEBIAN_DEFAULT).exists()
    {
        eprintln!("skipped: Debian default policy not installed");
        return;
    }
    let fixed = [
        "-s init_t --full",
        "-s user_t -r --full",
        "-s sshd_t -t sysadm_t -S --full",
        "-s sshd_t -t sysadm_t -A 5 -l 40",
        "-s unconfined_t -t httpd_t -A 3 --full -l 10 bin_t",
        "-s sysadm_t --full -r bin_t shell_exec_t --stats",
        "-s init_t -t init_t -S",
        "-s bin_t -t bin_t -S",
        "-s init_t -t sshd_t -A -1",
        "-s init_t -t sshd_t -A 0",
        "-s init_t -t sshd_t",
        "-s nosuch_t",
        "-s domain",
        "-s init_t nosuch_t",
    ];
    let n = if std::env::var_os("ARBITER_ANALYSIS_SWEEP").is_some() {
        60
    } else {
        5
    };
    run(cases(arbiter_testkit::DEBIAN_DEFAULT, 11, n, &fixed));
}

#[test]
fn transitions_and_paths_match_sedta_on_debian_mls() {
    if !oracle_available("/usr/bin/sedta")
        || !std::path::Path::new(arbiter_testkit::DEBIAN_MLS).exists()
    {
        eprintln!("skipped: Debian MLS policy not installed");
        return;
    }
    let n = if std::env::var_os("ARBITER_ANALYSIS_SWEEP").is_some() {
        40
    } else {
        3
    };
    run(cases(
        arbiter_testkit::DEBIAN_MLS,
        13,
        n,
        &["-s sshd_t -t sysadm_t -S --full", "-s init_t -l 30"],
    ));
}

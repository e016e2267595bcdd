//! A small driver for profiling a policy reload under callgrind: builds a server on the
//! first policy with live SIDs, then reloads alternately (`reload`), or builds only the
//! decision index (`index`).
//!
//! `valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*load_policy*' \
//!   target/release/examples/reload_profile reload 2`

use arbiter_decide::{internals::PolicyIndex, SecurityServer};
use arbiter_policy::ValidPolicy;

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "reload".into());
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2);
    let paths = arbiter_testkit::debian_policies();
    let policies: Vec<ValidPolicy> = paths
        .iter()
        .map(|p| ValidPolicy::from_bytes(&std::fs::read(p).expect("read policy")).expect("parse"))
        .collect();
    assert!(!policies.is_empty(), "no Debian policies installed");
    match mode.as_str() {
        "index" => {
            for i in 0..n {
                let idx = PolicyIndex::build(&policies[i % policies.len()]);
                std::hint::black_box(&idx);
            }
        }
        "plans" => {
            // First-query cost: each type's plans built on demand, timed one by one.
            let p = &policies[0];
            let idx = PolicyIndex::build(p);
            let class = arbiter_policy::ClassId::from_index(0).expect("a class");
            let mut us: Vec<(f64, usize)> = PolicyIndex::concrete_types(p)
                .into_iter()
                .map(|t| {
                    let t0 = std::time::Instant::now();
                    std::hint::black_box(idx.av_plan(t, class));
                    (t0.elapsed().as_secs_f64() * 1e6, t.index())
                })
                .collect();
            us.sort_by(|a, b| a.0.total_cmp(&b.0));
            let q = |f: f64| us[((us.len() - 1) as f64 * f) as usize].0;
            let total: f64 = us.iter().map(|x| x.0).sum();
            for &(u, t) in us.iter().rev().take(6) {
                eprintln!("  {u:.1} us {}", p.types[t].name);
            }
            let (_, rules, _) = idx.plan_stats();
            println!(
                "{} types: first query builds the plans: median {:.1} us, p90 {:.1}, p99 {:.1}, max {:.1} us ({}); all {:.1} ms, {} merged rules",
                us.len(), q(0.5), q(0.9), q(0.99), q(1.0), p.types[us[us.len() - 1].1].name, total / 1e3, rules
            );
        }
        _ => {
            let server = SecurityServer::new(policies[0].clone());
            let sids = arbiter_lab::reload::live_contexts(&server, 10_000);
            eprintln!("{} live SIDs", sids.len());
            for i in 0..n {
                let p = policies[(i + 1) % policies.len()].clone();
                let t0 = std::time::Instant::now();
                let r = server.load_policy(p).expect("reload");
                eprintln!("reload {i}: {:?} ({} SIDs)", t0.elapsed(), r.sids.converted);
            }
        }
    }
}

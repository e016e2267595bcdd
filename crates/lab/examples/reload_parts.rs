use arbiter_decide::internals::PolicyIndex;
use arbiter_policy::Policy;
use std::time::Instant;
fn main() {
    let p = Policy::open("/etc/selinux/default/policy/policy.33").unwrap();
    for budget in [None, Some(0), Some(1000), Some(10000)] {
        let t = Instant::now();
        let idx = PolicyIndex::build_with(&p, false, budget);
        println!(
            "budget {budget:?}: index {:?} plan_stats {:?}",
            t.elapsed(),
            idx.plan_stats()
        );
    }
}

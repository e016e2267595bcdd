//! `write_layout`: the cost of writing a policy in libsepol 3.4's layout, against the
//! value-order writer, and of the optimiser (`secilc -O`'s `policydb_optimize`).
//!
//! ```text
//! cargo run --release -p arbiter-oracle-tests --bin write_layout -- [PATH] [--reps R]
//! ```
//!
//! Reads PATH (default Debian's default `policy.33`) once, then R times (default 11), in
//! turn: writes it in value order, writes it in `Layout::Libsepol34 { avtab_slots: 1 << 20 }`
//! (secilc's avtab size), and optimises a copy. Prints the median and range of each.
//! Nothing is asserted.

use arbiter_policy::optimize::optimize;
use arbiter_policy::write::{write_policy_with, Layout, WriteOptions};
use arbiter_policy::Policy;
use arbiter_testkit::{median, timed};

fn main() {
    let mut path = arbiter_testkit::DEBIAN_DEFAULT.to_string();
    let mut reps = 11usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--reps" => reps = args.next().and_then(|n| n.parse().ok()).expect("--reps N"),
            _ => path = a,
        }
    }
    let p = Policy::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let sepol = WriteOptions {
        layout: Layout::Libsepol34 {
            avtab_slots: 1 << 20,
        },
        ..Default::default()
    };
    let (mut plain, mut layout, mut opt) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps {
        let (_, t) = timed(|| write_policy_with(&p, p.version, &WriteOptions::default()).unwrap());
        plain.push(t.as_secs_f64() * 1e3);
        let (_, t) = timed(|| write_policy_with(&p, p.version, &sepol).unwrap());
        layout.push(t.as_secs_f64() * 1e3);
        let mut copy = p.clone();
        let (_, t) = timed(|| optimize(&mut copy, 1 << 20).unwrap());
        opt.push(t.as_secs_f64() * 1e3);
    }
    println!("{path}: {} avtab entries, {reps} runs each", p.avtab.len());
    for (what, v) in [
        ("write, value order", &plain),
        ("write, libsepol 3.4 layout", &layout),
        ("optimise (policydb_optimize)", &opt),
    ] {
        let (lo, hi) = v
            .iter()
            .fold((f64::MAX, 0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        println!(
            "{what:30} median {:8.2} ms  (min {lo:.2}, max {hi:.2})",
            median(v)
        );
    }
}

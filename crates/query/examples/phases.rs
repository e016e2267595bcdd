//! Where the time of one `search` goes: loading the policy, building the index, running
//! the query, dropping the policy.
//!
//! `cargo run --release -p arbiter-query --example phases -- [--cold] POLICY SESEARCH-ARGS...`
//!
//! By default each phase is the median of 21 runs in one process (warm allocator and page
//! cache). `--cold` runs each phase once, as a fresh `arbiter search` process does: the
//! difference between the two is the first-touch cost of fresh heap and mapped pages.

use arbiter_policy::Policy;
use arbiter_query::search::SearchArgs;
use arbiter_query::{search, Index};
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut argv: Vec<String> = std::env::args().skip(1).collect();
    let cold = argv.first().is_some_and(|a| a == "--cold");
    if cold {
        argv.remove(0);
    }
    let (path, rest) = argv
        .split_first()
        .ok_or("usage: phases [--cold] POLICY SESEARCH-ARGS...")?;
    let args = SearchArgs::parse(rest)?;
    let runs = if cold { 1 } else { 21 };
    let (mut load, mut index, mut query, mut drop) = (vec![], vec![], vec![], vec![]);
    let mut lines = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let p = Policy::open(path)?;
        load.push(t.elapsed());
        let t = Instant::now();
        let ix = Index::new(&p);
        index.push(t.elapsed());
        let t = Instant::now();
        let mut bytes = 0usize;
        let _ = search::run(&ix, &args, &mut |line| {
            bytes += line.len() + 1;
            lines += 1;
        });
        query.push(t.elapsed());
        let t = Instant::now();
        std::mem::drop(ix);
        std::mem::drop(p);
        drop.push(t.elapsed());
    }
    println!(
        "load {:?}  index {:?}  query {:?}  drop {:?}  ({} lines)",
        median(load),
        median(index),
        median(query),
        median(drop),
        lines / runs
    );
    Ok(())
}

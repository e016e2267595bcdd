//! Where the time of one `search` goes: loading the policy, building the index, running
//! the query (median of 21 runs each).
//!
//! `cargo run --release -p arbiter-query --example phases -- POLICY SESEARCH-ARGS...`

use arbiter_policy::Policy;
use arbiter_query::{search, Index, SearchArgs};
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let (path, rest) = argv
        .split_first()
        .ok_or("usage: phases POLICY SESEARCH-ARGS...")?;
    let args = SearchArgs::parse(rest)?;
    let (mut load, mut index, mut query) = (Vec::new(), Vec::new(), Vec::new());
    let mut lines = 0;
    for _ in 0..21 {
        let t = Instant::now();
        let p = Policy::open(path)?;
        load.push(t.elapsed());
        let t = Instant::now();
        let ix = Index::new(&p);
        index.push(t.elapsed());
        let t = Instant::now();
        let (text, _) = search::execute(&ix, &args);
        query.push(t.elapsed());
        lines = text.lines().count();
    }
    println!(
        "load {:?}  index {:?}  query {:?}  ({lines} lines)",
        median(load),
        median(index),
        median(query)
    );
    Ok(())
}

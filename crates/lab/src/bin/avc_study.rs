//! Runs the AVC benchmark on a synthetic trace over fake policy triples and the fake
//! decision source: `cargo run -p arbiter-avc --release --example avc_bench -- [--json]
//! [--quick] [--queries N] [--distinct N] [--zipf S] [--reps N] [--compute-cost N]`.

use arbiter_avc::fake::FakeSource;
use arbiter_lab::avc_study::{fake_triples, run, synthetic_trace, BenchOptions, TraceOptions};

fn main() {
    let mut args = std::env::args().skip(1);
    let mut trace_opts = TraceOptions::default();
    let mut opts = BenchOptions::default();
    let mut json = false;
    let mut src = FakeSource::new();
    while let Some(a) = args.next() {
        let mut num = || {
            args.next()
                .and_then(|v| v.parse::<f64>().ok())
                .expect("numeric argument")
        };
        match a.as_str() {
            "--json" => json = true,
            "--quick" => {
                trace_opts.queries = 100_000;
                opts.repetitions = 3;
                opts.throughput_lookups = 500_000;
            }
            "--queries" => trace_opts.queries = num() as usize,
            "--distinct" => trace_opts.distinct = num() as usize,
            "--zipf" => trace_opts.zipf = num(),
            "--reps" => opts.repetitions = num() as usize,
            "--compute-cost" => src.compute_cost = num() as u32,
            other => panic!("unknown argument {other}"),
        }
    }
    let triples = fake_triples(trace_opts.distinct * 2, 42);
    let trace = synthetic_trace(&triples, &trace_opts);
    let report = run(&trace, &src, &opts);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report.to_json()).expect("json")
        );
    } else {
        print!("{}", report.to_text());
    }
}

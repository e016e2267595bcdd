//! The BSM trail reader, printer and selector on arbitrary bytes.
//!
//! Nothing may panic; every decoded token must re-encode to exactly the bytes it was read
//! from; output stays proportional to the input.
#![no_main]

use std::sync::OnceLock;

use arbiter_bsm::config::Config;
use arbiter_bsm::print::{PrintOptions, Printer};
use arbiter_bsm::reduce::{ReduceOptions, Reducer};
use arbiter_bsm::{decode, encode, records};
use libfuzzer_sys::fuzz_target;

fn config() -> &'static Config {
    static C: OnceLock<Config> = OnceLock::new();
    C.get_or_init(Config::builtin)
}

/// Built once: the preselection map behind `-c` is a 65,536-entry table.
fn reducer() -> &'static Reducer {
    static R: OnceLock<Reducer> = OnceLock::new();
    R.get_or_init(|| {
        let args: Vec<String> =
            ["-c", "lo", "-o", "file=^/etc/"].iter().map(|s| s.to_string()).collect();
        let (o, _) = ReduceOptions::parse(&args, config()).expect("options parse");
        Reducer::new(o, config())
    })
}

fuzz_target!(|data: &[u8]| {
    let cfg = config();
    for rec in records(data).flatten() {
        let mut pos = 0;
        while pos < rec.bytes.len() {
            let Ok((t, n)) = decode(&rec.bytes[pos..]) else { break };
            let mut again = Vec::new();
            encode(&t, &mut again);
            assert_eq!(&again[..], &rec.bytes[pos..pos + n], "{t:?}");
            pos += n;
        }
    }
    for opts in [
        PrintOptions { noresolve: true, ..PrintOptions::default() },
        PrintOptions { raw: true, oneline: true, ..PrintOptions::default() },
        PrintOptions { xml: true, noresolve: true, ..PrintOptions::default() },
    ] {
        let mut out = Vec::new();
        let _ = Printer::new(&cfg.events, opts).print_trail(data, &mut out);
        assert!(out.len() <= 64 * data.len() + 4096);
    }
    let mut out = Vec::new();
    reducer().reduce_trail(data, &mut out);
    assert!(out.len() <= data.len());
});

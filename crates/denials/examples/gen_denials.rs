//! Writes a generated denial log: `gen_denials POLICY FORMAT COUNT [SEED]` to stdout.
//! FORMAT is one of audit.log, ausearch, journal, dmesg, logcat, user_avc, or `mixed`.

use arbiter_denials::corpus::{self, Format};
use arbiter_denials::Engine;
use std::io::Write;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        return Err("usage: gen_denials POLICY FORMAT COUNT [SEED]".into());
    }
    let engine = Engine::open(&args[1])?;
    let count: usize = args[3].parse()?;
    let seed: u64 = args.get(4).map(|s| s.parse()).transpose()?.unwrap_or(1);
    let formats: Vec<Format> = if args[2] == "mixed" {
        Format::ALL.to_vec()
    } else {
        Format::ALL
            .into_iter()
            .filter(|f| f.name() == args[2])
            .collect()
    };
    if formats.is_empty() {
        return Err(format!("unknown format {}", args[2]).into());
    }
    let accesses = corpus::accesses(&engine, count, seed);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (i, a) in accesses.iter().enumerate() {
        writeln!(out, "{}", corpus::render(a, formats[i % formats.len()], i))?;
    }
    Ok(())
}

//! Compiles CIL files with arbiter's compiler as `secilc [-N] FILE...` would, for timing
//! side by side with secilc (`scripts/bench-build.sh`). Writes the file_contexts text to
//! `-f PATH` when given; prints the policy's sizes. The binary policy itself is not written
//! (the libsepol-3.4 byte layout of the writer is a separate piece of work).

use arbiter_cil::{compile, Options, Source};

fn main() {
    let mut opts = Options::default();
    let mut fc_out = None;
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "-N" => opts.disable_neverallow = true,
            "-f" => fc_out = args.next(),
            _ => files.push(a),
        }
    }
    let sources: Vec<Source> = files
        .iter()
        .map(|f| Source {
            name: f.clone(),
            text: std::fs::read(f).unwrap_or_else(|e| {
                eprintln!("Could not open file: {f}: {e}");
                std::process::exit(255)
            }),
        })
        .collect();
    match compile(&sources, &opts) {
        Ok(out) => {
            if let Some(p) = fc_out {
                if let Err(e) = std::fs::write(&p, &out.file_contexts) {
                    eprintln!("cannot write {p}: {e}");
                    std::process::exit(255);
                }
            }
            println!(
                "{} types, {} avtab entries, {} conditional nodes",
                out.policy.types.len(),
                out.policy.avtab.len(),
                out.policy.cond_nodes.len()
            );
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(i32::from(e.status));
        }
    }
}

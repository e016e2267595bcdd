//! Writes the format 34 and 35 fixtures `features.34` and `features.35` from
//! `features.33` (see `policies/README.md`; what they add is documented in
//! `tests/common/fixtures.rs`).
//!
//! ```text
//! cargo run -q -p arbiter-policy --example mkfixtures -- policies/bin/features.33 policies/bin
//! ```
//!
//! The output is deterministic: the same features.33 gives the same bytes.

#[path = "../tests/common/fixtures.rs"]
mod fixtures;

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, out_dir] = args.as_slice() else {
        eprintln!("usage: mkfixtures FEATURES.33 OUT_DIR");
        return ExitCode::from(2);
    };
    let bytes = match std::fs::read(input) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("mkfixtures: cannot read {input}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (b34, b35) = fixtures::build(&bytes);
    for (name, b) in [("features.34", &b34), ("features.35", &b35)] {
        // Refuse to leave behind a file our own reader would not load.
        if let Err(e) = arbiter_policy::Policy::from_bytes(b) {
            eprintln!("mkfixtures: {name} does not read back: {e}");
            return ExitCode::FAILURE;
        }
        let path = PathBuf::from(out_dir).join(name);
        if let Err(e) = std::fs::write(&path, b) {
            eprintln!("mkfixtures: cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!(
            "building {}: {} bytes from {input}",
            path.display(),
            b.len()
        );
    }
    ExitCode::SUCCESS
}

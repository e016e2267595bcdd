//! `arbiter bools`: the policy's booleans.

use crate::load;
use crate::out::{CliError, Out};
use std::io::Write;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Policy file, or `builtin`.
    #[arg(default_value = load::BUILTIN_NAME)]
    policy: std::ffi::OsString,
}

pub fn run(a: Args, out: &mut Out) -> Result<ExitCode, CliError> {
    let p = load::policy(&a.policy)?;
    let mut bools: Vec<_> = p.bools.iter().collect();
    bools.sort_by(|a, b| a.name.cmp(&b.name));
    for b in bools {
        writeln!(out, "{} {}", b.name, if b.state { "on" } else { "off" })?;
    }
    Ok(ExitCode::SUCCESS)
}

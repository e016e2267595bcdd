//! `arbiter info`: seinfo-compatible statistics.

use crate::load;
use arbiter_policy::stats;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Policy file, or `builtin` (default).
    #[arg(default_value = load::BUILTIN_NAME)]
    policy: String,
    /// Print JSON: {"path": ..., "statistics": {label: value}}.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Result<ExitCode, String> {
    let p = load::policy(&a.policy)?;
    if a.json {
        println!("{}", stats::render_json(&p, &a.policy));
    } else {
        print!("{}", stats::render_text(&p, &a.policy));
    }
    Ok(ExitCode::SUCCESS)
}

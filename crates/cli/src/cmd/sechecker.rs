//! `arbiter sechecker CONFIG.ini POLICY`: sechecker 4.4.1's configuration format, checks,
//! report and exit status (0 passed, 1 failures, 2 configuration error, 3 other error),
//! plus `--json`.

use crate::load;
use crate::out::{CliError, Out};
use arbiter_analysis::checker::errno_text;
use arbiter_analysis::sechecker::{self, SecheckerArgs};
use arbiter_query::Index;
use std::io::Write;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The checker configuration (.ini): one section per check, `check_type` one of
    /// assert_te, assert_rbac, empty_typeattr, ro_execs.
    config: String,
    /// The binary policy to check.
    policy: String,
    /// Write the report to FILE instead of standard output.
    #[arg(short = 'o', long = "output_file", value_name = "FILE")]
    output_file: Option<String>,
    /// Progress messages on standard error.
    #[arg(short = 'v', long)]
    verbose: bool,
    /// Accepted for sechecker compatibility; as --verbose.
    #[arg(long)]
    debug: bool,
    /// One JSON document (each check's status, failures and failing items) instead of the
    /// text report; the exit status is the same.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args, out: &mut Out) -> Result<ExitCode, CliError> {
    // sechecker opens the policy first; its errors are status 3, printed on stdout.
    if let Err(e) = std::fs::metadata(&a.policy) {
        writeln!(out, "{}", errno_text(&e, &a.policy))?;
        return Ok(ExitCode::from(3));
    }
    let policy = match load::policy(&a.policy) {
        Ok(p) => std::mem::ManuallyDrop::new(p),
        Err(e) => {
            writeln!(out, "{e}")?;
            return Ok(ExitCode::from(3));
        }
    };
    let index = std::mem::ManuallyDrop::new(Index::new(&policy));
    let args = SecheckerArgs {
        config: a.config.clone(),
        policy: a.policy.clone(),
        json: a.json,
        verbose: a.verbose || a.debug,
        config_text: None,
    };
    let mut err = std::io::stderr();
    let status = match &a.output_file {
        None => sechecker::execute(&index, &args, out, &mut err)?,
        Some(path) => {
            // The report goes to the file; errors still go to stdout, as with sechecker.
            let mut report = Vec::new();
            let status = sechecker::execute(&index, &args, &mut report, &mut err)?;
            if status >= 2 {
                out.write_all(&report)?;
            } else if let Err(e) = std::fs::write(path, &report) {
                writeln!(out, "{}", errno_text(&e, path))?;
                return Ok(ExitCode::from(3));
            }
            status
        }
    };
    out.flush()?;
    Ok(ExitCode::from(status))
}

//! `sechecker` 4.4.1's behaviour once the policy is open: validate the configuration,
//! run the checks, print the report (or the error) on the given output, and return its
//! exit status (0 no failures, 1 failures, 2 configuration error, 3 other error).

use crate::checker::report::{utc_now, Report};
use crate::checker::PolicyChecker;
use arbiter_query::Index;
use std::io::{self, Write};

/// What the run needs besides the policy.
#[derive(Debug, Clone, Default)]
pub struct SecheckerArgs {
    /// The configuration path as given.
    pub config: String,
    /// The policy path as given (printed in the report).
    pub policy: String,
    /// One JSON document instead of the text report.
    pub json: bool,
    /// setools' `-v`: progress messages on stderr.
    pub verbose: bool,
    /// The configuration's text when the caller already has it (`config` is then only
    /// its name in the report); `None` reads the file `config`.
    pub config_text: Option<String>,
}

/// Validates and runs `args.config` against `index`; the report (or sechecker's error
/// message) goes to `out`, diagnostics (the error's `FILE:LINE`, what setools logs) to
/// `err`. Returns sechecker's exit status.
pub fn execute(
    index: &Index<'_>,
    args: &SecheckerArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<u8> {
    if args.verbose {
        writeln!(err, "Opening policy checker config {}.", args.config)?;
        writeln!(err, "Validating configuration settings.")?;
    }
    let checker = match &args.config_text {
        Some(text) => PolicyChecker::new(index, &args.config, text),
        None => PolicyChecker::open(index, &args.config),
    };
    let checker = match checker {
        Ok(c) => c,
        Err(e) => {
            if let Some(logged) = e.logged() {
                writeln!(err, "{logged}")?;
            }
            writeln!(err, "arbiter sechecker: {}: {e}", e.location())?;
            if args.json {
                let doc = serde_json::json!({
                    "error": e.to_string(),
                    "location": e.location(),
                    "exit_status": e.exit_status(),
                });
                writeln!(out, "{doc}")?;
            } else {
                writeln!(out, "{e}")?;
            }
            return Ok(e.exit_status());
        }
    };
    if args.verbose {
        writeln!(
            err,
            "Successfully opened policy checker config {}.",
            args.config
        )?;
    }
    let start = utc_now();
    let results = checker.run(index);
    let end = utc_now();
    let report = Report {
        config: &args.config,
        policy: &args.policy,
        results: &results,
    };
    if args.json {
        writeln!(out, "{}", report.json())?;
    } else {
        report.write_text(out, &start, &end)?;
    }
    let failures = report.failures();
    if args.verbose {
        writeln!(
            err,
            "{failures} failures found in {} checks.",
            results.len()
        )?;
    }
    Ok(u8::from(failures > 0))
}

//! `sechecker` 4.4.1's behaviour once the policy is open: validate the configuration,
//! run the checks, print the report (or the error) on the given output, and return its
//! exit status (0 no failures, 1 failures, 2 configuration error, 3 other error).

use crate::checker::report::{utc_now, CheckStatus, Report};
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
    // What setools logs at info level, which its `-v` prints: the policy opened, the
    // configuration read, the notes of its validation, each check's start and rule queries,
    // the failure count. (Its `--debug` lines, query internals with timestamps, are not
    // reproduced: `--debug` is taken as `-v`.)
    let mut log = Vec::new();
    if args.verbose {
        writeln!(err, "Opening SELinux policy \"{}\"", args.policy)?;
        writeln!(
            err,
            "Successfully opened SELinux policy \"{}\"",
            args.policy
        )?;
        writeln!(err, "Opening policy checker config {}.", args.config)?;
    }
    let text = match &args.config_text {
        Some(text) => Ok(text.clone()),
        None => crate::checker::read_config(&args.config),
    };
    let checker =
        text.and_then(|text| PolicyChecker::new_logged(index, &args.config, &text, &mut log));
    if args.verbose {
        for line in &log {
            writeln!(err, "{line}")?;
        }
    }
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
        for (check, result) in checker.checks.iter().zip(&results) {
            if matches!(result.status, CheckStatus::Disabled(_)) {
                continue;
            }
            let (start, rules) = check.kind.start_log(index);
            writeln!(err, "{start}")?;
            if let CheckStatus::Ran(out) = &result.status {
                for _ in 0..out.rule_queries {
                    writeln!(err, "Generating {rules} rule results from {}", args.policy)?;
                }
            }
        }
        writeln!(
            err,
            "{failures} failures found in {} checks.",
            results.len()
        )?;
    }
    Ok(u8::from(failures > 0))
}

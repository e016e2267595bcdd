//! `arbiter search`: sesearch's options and output (setools 4.4.1), plus `--json` and
//! `--expand` (each rule on attributes replaced by the rules on types it stands for).
//!
//! Exit status as sesearch: 0 with or without results, 1 for a query error (message on
//! stdout, as setools prints it), 2 for a usage error (stderr).

use crate::load;
use crate::out::{CliError, Out};
use arbiter_query::search::SearchArgs;
use arbiter_query::{search, Index};
use std::io::Write;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(disable_help_flag = true)]
pub struct Args {
    /// sesearch's options and the policy file, e.g. `-A -s httpd_t policy.33`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    args: Vec<std::ffi::OsString>,
}

const USAGE: &str = "usage: arbiter search [-A] [--allow] [--allowxperm] [--auditallow] \
[--auditallowxperm] [--dontaudit] [--dontauditxperm] [-T] [--type_change] [--type_member] \
[--role_allow] [--role_trans] [--range_trans] [-s SOURCE] [-t TARGET] [-c TCLASS] [-p PERMS] \
[-x XPERMS] [-D DEFAULT] [-b BOOL] [-eb] [-ep] [-ex] [-Sp] [-ds] [-dt] [-rs] [-rt] [-rc] [-rd] \
[-rb] [--expand] [--json [--set-bool NAME=VALUE]...] POLICY";

pub fn run(a: Args, out: &mut Out) -> Result<ExitCode, CliError> {
    let raw = crate::args::Args::new(a.args);
    if raw.strings.iter().any(|s| s == "-h" || s == "--help") {
        writeln!(out, "{USAGE}")?;
        return Ok(ExitCode::SUCCESS);
    }
    let args = match SearchArgs::parse(&raw.strings) {
        Ok(args) => args,
        Err(e) => {
            crate::diag!("{USAGE}\narbiter search: error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let Some(path) = args.policy.as_deref() else {
        crate::diag!("{USAGE}\narbiter search: error: a policy file is required");
        return Ok(ExitCode::from(2));
    };
    raw.check_only_paths([path])?;
    let policy = match load::policy(raw.path(path)) {
        Ok(p) => p,
        Err(e) => {
            writeln!(out, "{e}")?;
            return Ok(ExitCode::from(1));
        }
    };
    // The process ends after printing: freeing the policy's many small allocations one by
    // one would cost a short query a tenth of its time.
    let policy = std::mem::ManuallyDrop::new(policy);
    let index = std::mem::ManuallyDrop::new(Index::new(&policy));
    if args.json {
        return match arbiter_query::json::search(&index, &args) {
            Ok(v) => {
                writeln!(out, "{v}")?;
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                writeln!(out, "{e}")?;
                Ok(ExitCode::from(1))
            }
        };
    }
    // The search streams its lines through a callback that cannot fail; the first failed
    // write is kept, and later lines are dropped unwritten.
    let mut failed: Option<std::io::Error> = None;
    let result = search::run(&index, &args, &mut |line| {
        if failed.is_none() {
            if let Err(e) = out
                .write_all(line.as_bytes())
                .and_then(|()| out.write_all(b"\n"))
            {
                failed = Some(e);
            }
        }
    });
    if let Some(e) = failed {
        return Err(e.into());
    }
    Ok(match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            writeln!(out, "{e}")?;
            ExitCode::from(1)
        }
    })
}

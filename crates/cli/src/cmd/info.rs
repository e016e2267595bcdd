//! `arbiter info`: seinfo-compatible statistics and component listings.
//!
//! `arbiter info POLICY` prints the statistics (text, or `--json`); seinfo's component
//! options (`-t`, `-a`, `--portcon 80`, `-x`, `--flat`, `--all`, ...) list components
//! with seinfo 4.4.1's text, or as JSON with `--json`.

use crate::load;
use crate::out::{CliError, Out};
use arbiter_policy::stats;
use arbiter_query::info::{self, InfoArgs};
use arbiter_query::Index;
use std::io::Write;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(disable_help_flag = true)]
pub struct Args {
    /// Policy file, or `builtin` (default), then seinfo's component options.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    args: Vec<std::ffi::OsString>,
}

const USAGE: &str = "usage: arbiter info [POLICY] [-x] [--flat] [--json] [-a [ATTR]] [-b [BOOL]] \
[-c [CLASS]] [-r [ROLE]] [-t [TYPE]] [-u [USER]] [--category [CAT]] [--common [COMMON]] \
[--constrain [CLASS]] [--default [CLASS]] [--fs_use [FS_TYPE]] [--genfscon [FS_TYPE]] \
[--ibpkeycon [SUBNET_PREFIX]] [--ibendportcon [DEVICE]] [--initialsid [NAME]] \
[--netifcon [NAME]] [--nodecon [ADDR]] [--permissive [TYPE]] [--polcap [NAME]] \
[--portcon [PORTNUM]] [--sensitivity [SENS]] [--typebounds [BOUND_TYPE]] \
[--validatetrans [CLASS]] [--all]";

pub fn run(a: Args, out: &mut Out) -> Result<ExitCode, CliError> {
    let raw = crate::args::Args::new(a.args);
    if raw.strings.iter().any(|s| s == "-h" || s == "--help") {
        writeln!(out, "{USAGE}")?;
        return Ok(ExitCode::SUCCESS);
    }
    let args = match InfoArgs::parse(&raw.strings) {
        Ok(args) => args,
        Err(e) => {
            crate::diag!("{USAGE}\narbiter info: error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    raw.check_only_paths(args.policy.as_deref())?;
    let arg = args.policy.as_deref().unwrap_or(load::BUILTIN_NAME);
    let p = load::policy(raw.path(arg))?;
    let shown = raw.display(arg);
    let path = shown.as_str();
    if args.components.is_empty() && !args.all {
        if args.json {
            writeln!(out, "{}", stats::render_json(&p, path))?;
        } else {
            out.write_all(stats::render_text(&p, path).as_bytes())?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let index = Index::new(&p);
    if args.json {
        return match info::components(&index, &args) {
            Ok(c) => {
                writeln!(out, "{}", info::render_json(&c))?;
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                writeln!(out, "{e}")?;
                Ok(ExitCode::from(1))
            }
        };
    }
    let (text, code) = info::execute(&index, &args, &stats::render_text(&p, path));
    out.write_all(text.as_bytes())?;
    Ok(ExitCode::from(code))
}

//! `arbiter diff`: sediff's sections and text (setools 4.4.1), `--stats`, `--json`.

use crate::load;
use crate::out::progress::Bar;
use crate::out::{CliError, Out};
use arbiter_query::diff::{self, DiffArgs};
use std::io::Write;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(disable_help_flag = true)]
pub struct Args {
    /// sediff's options, then POLICY1 POLICY2.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    args: Vec<std::ffi::OsString>,
}

const USAGE: &str =
    "usage: arbiter diff [--stats] [--json] [-v] [--debug] [SECTION OPTIONS] POLICY1 POLICY2
section options (sediff's; none selects every section):
  --common -c/--class -t/--type -a/--attribute -r/--role -u/--user -b/--bool
  --sensitivity --category --level
  -A --allow --neverallow --auditallow --dontaudit --allowxperm --neverallowxperm
  --auditallowxperm --dontauditxperm -T/--type_trans --type_change --type_member
  --role_allow --role_trans --range_trans
  --constrain --mlsconstrain --validatetrans --mlsvalidatetrans
  --ibendportcon --ibpkeycon --initialsid --fs_use --genfscon --netifcon --nodecon --portcon
  --default --property --polcap --typebounds";

pub fn run(a: Args, out: &mut Out) -> Result<ExitCode, CliError> {
    let raw = crate::args::Args::new(a.args);
    if raw.strings.iter().any(|s| s == "-h" || s == "--help") {
        writeln!(out, "{USAGE}")?;
        return Ok(ExitCode::SUCCESS);
    }
    let args = match DiffArgs::parse(&raw.strings) {
        Ok(args) => args,
        Err(e) => {
            crate::diag!("{USAGE}\narbiter diff: error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    raw.check_only_paths(args.policies.iter().map(String::as_str))?;
    let bar = Bar::steps("arbiter diff");
    bar.step(format!("reading {}", args.policies[0]));
    let left = load::policy(raw.path(&args.policies[0]))?;
    bar.step(format!("reading {}", args.policies[1]));
    let right = load::policy(raw.path(&args.policies[1]))?;
    bar.step("comparing");
    let sections = diff::sections(&left, &right, &args);
    bar.step("writing the report");
    if args.json {
        writeln!(out, "{}", diff::render_json(&sections))?;
    } else {
        out.write_all(diff::render_text(&sections, args.stats).as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}

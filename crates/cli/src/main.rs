//! `arbiter`: SELinux policy statistics, access decisions, labeling and cache benchmarks from
//! the command line. A thin layer over the library crates: it parses arguments, loads the
//! policy, and prints; the work happens in `arbiter-policy`, `arbiter-decide` and
//! `arbiter-avc`.

mod cmd;
mod load;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// A userspace SELinux access-decision engine.
///
/// POLICY is a binary policy file (policy.NN), or `builtin` for the small policy embedded in
/// the binary (policies/src/default.conf in the source tree).
#[derive(Parser)]
#[command(name = "arbiter", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the policy's statistics with seinfo's names and numbers.
    Info(cmd::info::Args),
    /// May SCONTEXT do PERM... to TCONTEXT of class TCLASS? Exit 0 if allowed, 1 if denied.
    Check(cmd::check::Args),
    /// Batch access vectors: read `SCONTEXT TCONTEXT TCLASS` lines on stdin.
    Av(cmd::av::Args),
    /// Compute the label of a new (create), relabeled (relabel) or member object.
    Label(cmd::label::Args),
    /// List the policy's booleans and their default values.
    Bools(cmd::bools::Args),
    /// Explain AVC denials from logs, as audit2why (or audit2allow with --allow) does.
    Why(cmd::why::Args),
    /// Walk through arbiter's main job on the embedded default policy.
    Demo,
    /// sesearch: TE, RBAC and MLS rule queries with sesearch's options and output.
    Search(cmd::search::Args),
    /// sediff: differences between two policies, with sediff's sections and text.
    Diff(cmd::diff::Args),
    /// sedta: domain transitions and transition paths, with sedta's options and report.
    Dta(cmd::dta::Args),
    /// seinfoflow: information flows and flow paths, with seinfoflow's options and report.
    Infoflow(cmd::infoflow::Args),
    /// BSM audit trails and preselection (praudit/auditreduce compatible).
    #[command(subcommand)]
    Bsm(cmd::bsm::Command),
    /// Landlock: check operations against layered rulesets, or run a command sandboxed.
    #[command(subcommand)]
    Landlock(cmd::landlock::Which),
    /// Benchmarks (the access vector cache study).
    #[command(subcommand)]
    Bench(cmd::bench::Which),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info(a) => cmd::info::run(a),
        Command::Check(a) => cmd::check::run(a),
        Command::Av(a) => cmd::av::run(a),
        Command::Label(a) => cmd::label::run(a),
        Command::Bools(a) => cmd::bools::run(a),
        Command::Search(a) => cmd::search::run(a),
        Command::Diff(a) => cmd::diff::run(a),
        Command::Dta(a) => cmd::dta::run(a),
        Command::Infoflow(a) => cmd::infoflow::run(a),
        Command::Why(a) => cmd::why::run(a),
        Command::Demo => cmd::demo::run(),
        Command::Bsm(c) => cmd::bsm::run(c),
        Command::Landlock(w) => cmd::landlock::run(w),
        Command::Bench(w) => cmd::bench::run(w),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("arbiter: {e}");
            ExitCode::from(2)
        }
    }
}

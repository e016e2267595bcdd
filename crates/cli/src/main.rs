//! `arbiter`: SELinux access decisions and labels, setools-style policy queries, denial
//! explanations, BSM audit trails and Landlock checks from the command line. A thin layer
//! over the library crates: it parses arguments, loads the input, and prints; the work
//! happens in `arbiter-policy`, `arbiter-decide`, `arbiter-avc`, `arbiter-query`,
//! `arbiter-denials`, `arbiter-bsm` and `arbiter-landlock`.

// Three modules may use `unsafe`, each with a measured gain: `malloc_tuning` (one allocator
// call), `stack` (the stack limit, so that `build` compiles on the main thread) and `arena`
// (the global allocator, size classes for `build`'s compile).
#![deny(unsafe_code)]

mod arena;
mod args;
mod cmd;
mod load;
mod malloc_tuning;
mod manual;
mod out;
mod stack;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// arbiter: SELinux access decisions and labels as the kernel computes them, policy queries
/// as setools answers them, denials explained as audit2why does, BSM trails read as OpenBSM
/// does, and Landlock rulesets checked as the kernel checks them.
///
/// POLICY is a binary policy file (policy.NN), or `builtin` for the small policy embedded in
/// the binary (policies/src/default.conf in the source tree). `arbiter manpage COMMAND`
/// prints any subcommand's manual page.
///
/// `diff`, `why`, `bsm print`/`reduce`, `bench` and `build` draw a progress bar on stderr
/// when stderr is a terminal (never into a pipe or a file); `ARBITER_NO_PROGRESS=1` or
/// `CI` set turn it off there too.
#[derive(Parser)]
#[command(name = "arbiter", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// seinfo: the policy's statistics, or its components (types, classes, portcon, ...).
    Info(cmd::info::Args),
    /// May SCONTEXT do PERM... to TCONTEXT of class TCLASS? Exit 0 allowed, 1 denied; --explain.
    Check(cmd::check::Args),
    /// Batch access vectors: `SCONTEXT TCONTEXT TCLASS` lines on stdin, kernel bits out.
    Av(cmd::av::Args),
    /// Compute the label of a new (create), relabeled (relabel) or member object.
    Label(cmd::label::Args),
    /// List the policy's booleans and their default values.
    Bools(cmd::bools::Args),
    /// audit2why / audit2allow: explain AVC denials from logs, or generate the rules.
    Why(cmd::why::Args),
    /// A tour on the embedded policy: statistics, decisions, a boolean, a label, a reload.
    Demo,
    /// sesearch: TE, RBAC and MLS rule queries with sesearch's options and output.
    Search(cmd::search::Args),
    /// sediff: differences between two policies, with sediff's sections and text.
    Diff(cmd::diff::Args),
    /// sedta: domain transitions and transition paths, with sedta's options and report.
    Dta(cmd::dta::Args),
    /// seinfoflow: information flows and flow paths, with seinfoflow's options and report.
    Infoflow(cmd::infoflow::Args),
    /// neverallow / neverallowxperm statements (policy language or CIL) checked against a
    /// binary policy, with the rules that violate them; exit 1 when one is violated.
    Neverallow(cmd::neverallow::Args),
    /// sechecker: policy checks from an .ini file (assert_te, assert_rbac, empty_typeattr,
    /// ro_execs) with sechecker's report and exit status; exit 1 when a check fails.
    Sechecker(cmd::sechecker::Args),
    /// BSM audit: praudit, auditreduce, preselection and audit_* file checks.
    #[command(subcommand)]
    Bsm(cmd::bsm::Command),
    /// Landlock: check operations against layered rulesets, or run a command sandboxed.
    #[command(subcommand)]
    Landlock(cmd::landlock::Which),
    /// Build a binary policy from CIL (secilc's options), or rebuild a module store (--store).
    Build(cmd::build::Args),
    /// Benchmarks: the cache study, reload under load, BSM, Landlock.
    #[command(subcommand)]
    Bench(cmd::bench::Which),
    /// Print arbiter's manual page, or a subcommand's, as roff (`| man -l -`).
    Manpage(manual::ManpageArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(manual::CompletionsArgs),
}

fn main() -> ExitCode {
    let command = match build_words() {
        Some(words) => Command::Build(cmd::build::Args::from_words(words)),
        None => Cli::parse().command,
    };
    let mut out = out::Out::stdout();
    let result = run(command, &mut out);
    out::finish(out, result)
}

/// The words after `build` when it is the first argument: `arbiter build` takes every
/// later word as its own (secilc's getopt parses them, `build::run`), so clap's parse
/// would only hand them over; skipping it skips building the whole command tree (0.43 M
/// of the 41 M instructions a small `build` takes). Anything else goes through clap.
fn build_words() -> Option<Vec<std::ffi::OsString>> {
    let mut words = std::env::args_os().skip(1);
    if words.next()? != "build" {
        return None;
    }
    Some(words.collect())
}

fn run(command: Command, out: &mut out::Out) -> Result<ExitCode, out::CliError> {
    match command {
        Command::Info(a) => cmd::info::run(a, out),
        Command::Check(a) => cmd::check::run(a, out),
        Command::Av(a) => cmd::av::run(a, out),
        Command::Label(a) => cmd::label::run(a, out),
        Command::Bools(a) => cmd::bools::run(a, out),
        Command::Search(a) => cmd::search::run(a, out),
        Command::Diff(a) => cmd::diff::run(a, out),
        Command::Dta(a) => cmd::dta::run(a, out),
        Command::Infoflow(a) => cmd::infoflow::run(a, out),
        Command::Neverallow(a) => cmd::neverallow::run(a, out),
        Command::Sechecker(a) => cmd::sechecker::run(a, out),
        Command::Why(a) => cmd::why::run(a, out),
        Command::Demo => cmd::demo::run(out),
        Command::Bsm(c) => cmd::bsm::run(c, out),
        Command::Landlock(w) => cmd::landlock::run(w, out),
        Command::Build(a) => cmd::build::run(a, out),
        Command::Bench(w) => cmd::bench::run(w, out),
        Command::Manpage(a) => manual::manpage(a, out),
        Command::Completions(a) => manual::completions(a, out),
    }
}

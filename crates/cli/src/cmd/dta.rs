//! `arbiter dta`: sedta 4.4.1's options and report (domain transitions out of or into a
//! domain, shortest and all paths), plus `--json` and `--batch FILE` (one query per line,
//! all answered from one graph).

use crate::load;
use crate::out::{CliError, Out};
use arbiter_analysis::dta::DomainTransitionGraph;
use arbiter_analysis::sedta::{self, DtaArgs};
use arbiter_query::Index;
use std::io::Write;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(disable_help_flag = true)]
pub struct Args {
    /// sedta's options, e.g. `-p policy.33 -s sshd_t -t sysadm_t -S`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    args: Vec<String>,
}

pub fn run(a: Args, out: &mut Out) -> Result<ExitCode, CliError> {
    let (queries, parsed, batch) = match super::analysis_queries(
        &a.args,
        "dta",
        sedta::USAGE,
        "sedta",
        out,
        DtaArgs::parse,
    )? {
        super::Queries::Done(code) => return Ok(code),
        super::Queries::Run {
            queries,
            parsed,
            batch,
        } => (queries, parsed, batch),
    };
    let Some(first) = parsed.first() else {
        return Ok(ExitCode::SUCCESS);
    };
    let policy = match load::policy(&first.policy) {
        Ok(p) => std::mem::ManuallyDrop::new(p),
        Err(e) => {
            writeln!(out, "{e}")?;
            return Ok(ExitCode::from(1));
        }
    };
    let index = std::mem::ManuallyDrop::new(Index::new(&policy));
    let graph = std::mem::ManuallyDrop::new(DomainTransitionGraph::new(&index));
    let mut status = 0;
    for (q, p) in queries.iter().zip(&parsed) {
        if batch {
            super::batch_header(out, q)?;
        }
        match sedta::run(&graph, p, out) {
            Ok(code) => status = status.max(code),
            Err(_) => break, // stdout closed: stop quietly, as setools with SIGPIPE
        }
    }
    out.flush()?;
    Ok(ExitCode::from(status))
}

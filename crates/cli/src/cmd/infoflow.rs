//! `arbiter infoflow`: seinfoflow 4.4.1's options and report (flows out of a type, shortest
//! and all flow paths), plus `--json` and `--batch FILE` (one query per line, all answered
//! from one graph; queries sharing exclusions, weight and booleans share one view).

use crate::load;
use crate::out::{CliError, Out};
use arbiter_analysis::infoflow::InfoFlowGraph;
use arbiter_analysis::seinfoflow::{self, InfoFlowArgs, ViewCache};
use arbiter_query::Index;
use std::io::Write;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(disable_help_flag = true)]
pub struct Args {
    /// seinfoflow's options, e.g. `-p policy.33 -s user_t -t shadow_t -S`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    args: Vec<String>,
}

pub fn run(a: Args, out: &mut Out) -> Result<ExitCode, CliError> {
    let (queries, parsed, batch) = match super::analysis_queries(
        &a.args,
        "infoflow",
        seinfoflow::USAGE,
        "seinfoflow",
        out,
        InfoFlowArgs::parse,
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
    if parsed
        .iter()
        .any(|p| p.map != first.map || p.policy != first.policy)
    {
        return Err("every query of a batch must use the same policy and permission map".into());
    }
    let policy = match load::policy(&first.policy) {
        Ok(p) => std::mem::ManuallyDrop::new(p),
        Err(e) => {
            writeln!(out, "{e}")?;
            return Ok(ExitCode::from(1));
        }
    };
    let map = match first.load_map() {
        Ok(m) => m,
        Err(e) => {
            writeln!(out, "{e}")?;
            return Ok(ExitCode::from(1));
        }
    };
    let index = std::mem::ManuallyDrop::new(Index::new(&policy));
    let graph = std::mem::ManuallyDrop::new(InfoFlowGraph::new(&index, &map));
    let mut cache = ViewCache::default();
    let mut status = 0;
    for (q, p) in queries.iter().zip(&parsed) {
        if batch {
            super::batch_header(out, q)?;
        }
        match seinfoflow::run(&graph, &mut cache, p, out) {
            Ok(code) => status = status.max(code),
            Err(_) => break, // stdout closed
        }
    }
    let _ = out.flush();
    std::mem::forget(cache);
    Ok(ExitCode::from(status))
}

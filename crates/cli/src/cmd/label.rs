//! `arbiter label`: the context of a new, relabeled or member object.

use crate::load;
use crate::out::{CliError, Out};
use arbiter_decide::LabelKind;
use std::io::Write;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Policy file, or `builtin`.
    policy: std::ffi::OsString,
    /// Source (creating process) context.
    scontext: String,
    /// Target (parent directory / related object) context.
    tcontext: String,
    /// Class of the new object.
    tclass: String,
    /// Object name, for filename type transitions (create only).
    name: Option<String>,
    /// Which computation: create (type_transition), relabel (type_change), member (type_member).
    #[arg(long, value_enum, default_value = "create")]
    kind: Kind,
    /// Set a boolean before computing (NAME=VALUE, repeatable).
    #[arg(long = "bool", value_name = "NAME=VALUE")]
    bools: Vec<String>,
}

#[derive(Copy, Clone, clap::ValueEnum)]
enum Kind {
    Create,
    Relabel,
    Member,
}

pub fn run(a: Args, out: &mut Out) -> Result<ExitCode, CliError> {
    let server = load::server(&a.policy, &a.bools)?;
    let ssid = server
        .context_to_sid(&a.scontext)
        .map_err(|x| format!("source context: {x}"))?;
    let tsid = server
        .context_to_sid(&a.tcontext)
        .map_err(|x| format!("target context: {x}"))?;
    let class = server.known_class(&a.tclass)?;
    let kind = match a.kind {
        Kind::Create => LabelKind::Create,
        Kind::Relabel => LabelKind::Relabel,
        Kind::Member => LabelKind::Member,
    };
    let label = server.compute_label(ssid, tsid, class, kind, a.name.as_deref())?;
    writeln!(out, "{}", server.sid_to_context(label.sid)?)?;
    Ok(ExitCode::SUCCESS)
}

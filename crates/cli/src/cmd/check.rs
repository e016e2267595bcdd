//! `arbiter check`: one access decision, with reasons on request.

use crate::load;
use crate::out::{CliError, Out};
use arbiter_decide::ClassRef;
use std::io::Write;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Policy file, or `builtin`.
    policy: std::ffi::OsString,
    /// Source context, e.g. system_u:system_r:httpd_t:s0.
    scontext: String,
    /// Target context.
    tcontext: String,
    /// Object class, e.g. file.
    tclass: String,
    /// Permissions to check (all must be allowed).
    #[arg(required = true)]
    perms: Vec<String>,
    /// Explain the decision: granting rules, conditional rules and booleans, constraints
    /// term by term, role and bounds checks.
    #[arg(long)]
    explain: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Set a boolean before deciding (NAME=VALUE, repeatable).
    #[arg(long = "bool", value_name = "NAME=VALUE")]
    bools: Vec<String>,
}

pub fn run(a: Args, out: &mut Out) -> Result<ExitCode, CliError> {
    let server = load::server(&a.policy, &a.bools)?;
    let e = |x: arbiter_decide::DecideError| x.to_string();
    let ssid = server
        .context_to_sid(&a.scontext)
        .map_err(|x| format!("source context: {x}"))?;
    let tsid = server
        .context_to_sid(&a.tcontext)
        .map_err(|x| format!("target context: {x}"))?;
    let perms: Vec<&str> = a.perms.iter().map(String::as_str).collect();
    let req = server.perm_set(&a.tclass, &perms).map_err(e)?;
    let v = server.check(ssid, tsid, &req).map_err(e)?;
    let d = v.decision;
    let unknown: Vec<&str> = req.unknown().collect();
    // Defined permissions in the policy's bit order, then names the policy lacks.
    let mut denied_names: Vec<String> = match req.class() {
        ClassRef::Known(c) => server.perm_names(c, v.denied),
        ClassRef::Unknown => Vec::new(),
    };
    if v.unknown_denied {
        denied_names.extend(unknown.iter().map(|s| s.to_string()));
    }

    let explanation = match (a.explain, req.class()) {
        (true, ClassRef::Known(c)) => Some(server.explain(ssid, tsid, c, req.bits()).map_err(e)?),
        _ => None,
    };

    if a.json {
        let mut j = serde_json::json!({
            "allowed": v.allowed(),
            "denied": denied_names,
            "decision": {
                "allowed": format!("{:08x}", d.allowed),
                "auditallow": format!("{:08x}", d.auditallow),
                "auditdeny": format!("{:08x}", d.auditdeny),
                "seqno": d.seqno,
                "permissive": v.permissive(),
            },
            "unknown_permissions": unknown,
        });
        if let Some(x) = &explanation {
            j["explanation"] = x.to_json();
        }
        writeln!(out, "{j}")?;
    } else {
        if v.allowed() {
            writeln!(out, "allowed")?;
        } else {
            writeln!(
                out,
                "denied {{ {} }}{}",
                denied_names.join(" "),
                if v.permissive() {
                    " (permissive domain: the kernel would log, not enforce)"
                } else {
                    ""
                }
            )?;
        }
        let rule = if req.unknown_allowed() {
            "handle_unknown=allow grants"
        } else {
            "handle_unknown=deny denies"
        };
        match req.class() {
            ClassRef::Known(_) if !unknown.is_empty() => writeln!(
                out,
                "note: not defined by the policy ({rule} them): {}",
                unknown.join(" ")
            )?,
            ClassRef::Known(_) => {}
            ClassRef::Unknown => writeln!(
                out,
                "note: class {} is not defined by the policy; {rule} it",
                arbiter_io::quote(&a.tclass)
            )?,
        }
        if let Some(x) = &explanation {
            write!(out, "{x}")?;
        }
    }
    Ok(if v.allowed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

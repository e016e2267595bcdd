//! `arbiter check`: one access decision, with reasons on request.

use crate::load;
use arbiter_decide::explain;
use arbiter_decide::security::ClassRef;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Policy file, or `builtin`.
    policy: String,
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

pub fn run(a: Args) -> Result<ExitCode, String> {
    let server = load::server(&a.policy, &a.bools)?;
    let e = |x: arbiter_decide::DecideError| x.to_string();
    let ssid = server
        .context_to_sid(&a.scontext)
        .map_err(|x| format!("source context: {x}"))?;
    let tsid = server
        .context_to_sid(&a.tcontext)
        .map_err(|x| format!("target context: {x}"))?;
    let perms: Vec<&str> = a.perms.iter().map(String::as_str).collect();
    let req = server.perms(&a.tclass, &perms).map_err(e)?;
    let mut q = server.query();
    let d = q.compute_av_ref(ssid, tsid, req.class).map_err(e)?;
    let unknown_denied = !req.unknown.is_empty() && !req.unknown_allowed;
    let denied_bits = req.bits & !d.allowed;
    let allowed = denied_bits == 0 && !unknown_denied;

    let mut denied_names: Vec<String> = match req.class {
        ClassRef::Known(c) => server
            .names()
            .perms_to_names(c, denied_bits)
            .into_iter()
            .map(String::from)
            .collect(),
        ClassRef::UnknownDenied => perms.iter().map(|p| p.to_string()).collect(),
        ClassRef::UnknownAllowed => Vec::new(),
    };
    if unknown_denied && matches!(req.class, ClassRef::Known(_)) {
        denied_names.extend(req.unknown.iter().cloned());
    }
    let permissive = d.flags & arbiter_decide::av::AVD_FLAGS_PERMISSIVE != 0;

    let explanation = match (a.explain, req.class) {
        (true, ClassRef::Known(c)) => {
            Some(explain::explain(&server, &mut q, ssid, tsid, c, req.bits).map_err(e)?)
        }
        _ => None,
    };

    if a.json {
        let mut out = serde_json::json!({
            "allowed": allowed,
            "denied": denied_names,
            "decision": {
                "allowed": format!("{:08x}", d.allowed),
                "auditallow": format!("{:08x}", d.auditallow),
                "auditdeny": format!("{:08x}", d.auditdeny),
                "seqno": d.seqno,
                "permissive": permissive,
            },
            "unknown_permissions": req.unknown,
        });
        if let Some(x) = &explanation {
            out["explanation"] = x.to_json();
        }
        println!("{out}");
    } else {
        if allowed {
            println!("allowed");
        } else {
            println!(
                "denied {{ {} }}{}",
                denied_names.join(" "),
                if permissive {
                    " (permissive domain: the kernel would log, not enforce)"
                } else {
                    ""
                }
            );
        }
        if !req.unknown.is_empty() {
            println!(
                "note: not defined by the policy ({}): {}",
                if req.unknown_allowed {
                    "handle_unknown=allow grants them"
                } else {
                    "handle_unknown=deny denies them"
                },
                req.unknown.join(" ")
            );
        }
        match req.class {
            ClassRef::UnknownAllowed => println!(
                "note: class {:?} is not defined by the policy; handle_unknown=allow grants it",
                a.tclass
            ),
            ClassRef::UnknownDenied => println!(
                "note: class {:?} is not defined by the policy; handle_unknown=deny denies it",
                a.tclass
            ),
            ClassRef::Known(_) => {}
        }
        if let Some(x) = &explanation {
            print!("{x}");
        }
    }
    Ok(if allowed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

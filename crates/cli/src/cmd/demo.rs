//! `arbiter demo`: arbiter's main job on the embedded default policy, end to end — load,
//! statistics, decisions with reasons, a boolean flip, a label computation.

use crate::load;
use crate::out::{CliError, Out};
use arbiter_decide::{LabelKind, SecurityServer};
use std::io::Write;
use std::process::ExitCode;

fn check(
    out: &mut Out,
    server: &SecurityServer,
    s: &str,
    t: &str,
    class: &str,
    perms: &[&str],
    why: bool,
) -> Result<(), CliError> {
    let e = |x: arbiter_decide::DecideError| x.to_string();
    let ssid = server.context_to_sid(s).map_err(e)?;
    let tsid = server.context_to_sid(t).map_err(e)?;
    let c = server.known_class(class).map_err(e)?;
    let req = server.perm_set(class, perms).map_err(e)?;
    let v = server.check(ssid, tsid, &req).map_err(e)?;
    writeln!(
        out,
        "$ arbiter check builtin {s} {t} {class} {}",
        perms.join(" ")
    )?;
    if v.allowed() {
        writeln!(out, "allowed")?;
    } else {
        writeln!(
            out,
            "denied {{ {} }}",
            server.perm_names(c, v.denied).join(" ")
        )?;
    }
    if why {
        write!(
            out,
            "{}",
            server.explain(ssid, tsid, c, req.bits()).map_err(e)?
        )?;
    }
    writeln!(out)?;
    Ok(())
}

pub fn run(out: &mut Out) -> Result<ExitCode, CliError> {
    let t0 = std::time::Instant::now();
    let policy = load::policy(load::BUILTIN_NAME)?;
    let loaded = t0.elapsed();
    writeln!(
        out,
        "arbiter demo: the embedded policy (policies/src/default.conf), loaded in {loaded:?}\n"
    )?;
    write!(
        out,
        "{}",
        arbiter_policy::stats::render_text(&policy, load::BUILTIN_NAME)
    )?;
    writeln!(out)?;
    let server = SecurityServer::new(policy);

    check(
        out,
        &server,
        "system_u:system_r:httpd_t:s0",
        "system_u:object_r:httpd_content_t:s0",
        "file",
        &["read", "open"],
        false,
    )?;
    check(
        out,
        &server,
        "user_u:user_r:user_t:s0",
        "system_u:object_r:shadow_t:s0",
        "file",
        &["read"],
        true,
    )?;
    check(
        out,
        &server,
        "system_u:system_r:httpd_t:s0",
        "user_u:object_r:user_home_t:s0",
        "file",
        &["read"],
        true,
    )?;

    let seq = server.set_booleans(&[("httpd_enable_homedirs", true)])?;
    writeln!(
        out,
        "# setting httpd_enable_homedirs=on (policy sequence number now {seq})"
    )?;
    check(
        out,
        &server,
        "system_u:system_r:httpd_t:s0",
        "user_u:object_r:user_home_t:s0",
        "file",
        &["read"],
        false,
    )?;

    let e = |x: arbiter_decide::DecideError| x.to_string();
    let s = server
        .context_to_sid("user_u:user_r:passwd_t:s0")
        .map_err(e)?;
    let t = server
        .context_to_sid("system_u:object_r:etc_t:s0")
        .map_err(e)?;
    let file = server.known_class("file").map_err(e)?;
    let label = server
        .compute_label(s, t, file, LabelKind::Create, Some("shadow"))
        .map_err(e)?;
    writeln!(
        out,
        "$ arbiter label builtin user_u:user_r:passwd_t:s0 system_u:object_r:etc_t:s0 file shadow"
    )?;
    writeln!(out, "{}", server.sid_to_context(label.sid).map_err(e)?)?;

    // A policy reload under the same server: SIDs keep their meaning, booleans their
    // values, and the sequence number moves on.
    let reload = server
        .load_policy(load::policy(load::BUILTIN_NAME)?)
        .map_err(e)?;
    writeln!(
        out,
        "\n# policy reloaded: sequence number {}, {} SIDs carried over ({} invalidated) in {} µs",
        reload.seqno, reload.sids.converted, reload.sids.invalidated, reload.build_us
    )?;
    check(
        out,
        &server,
        "system_u:system_r:httpd_t:s0",
        "user_u:object_r:user_home_t:s0",
        "file",
        &["read"],
        false,
    )?;
    Ok(ExitCode::SUCCESS)
}

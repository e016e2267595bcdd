//! `arbiter av`: batch access vectors for tools and benchmarks.
//!
//! Input: lines `SCONTEXT TCONTEXT TCLASS` (blank lines and `#` comments are skipped).
//! Output: for each query line, `ALLOWED AUDITALLOW AUDITDENY` as 8-digit lowercase hex,
//! bit i = the class's permission with value i+1; a line that cannot be answered prints
//! `error` (so output lines stay aligned with queries) and the reason goes to stderr with
//! the line number. Exit status 0 when every line was answered, 1 otherwise.

use crate::load;
use std::io::{BufRead, Write};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Policy file, or `builtin`.
    policy: String,
    /// Compute every query in the security server, bypassing the access vector cache.
    #[arg(long)]
    no_cache: bool,
    /// Set a boolean before deciding (NAME=VALUE, repeatable).
    #[arg(long = "bool", value_name = "NAME=VALUE")]
    bools: Vec<String>,
}

pub fn run(a: Args) -> Result<ExitCode, String> {
    let server = load::server(&a.policy, &a.bools)?;
    let mut q = server.query();
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut failed = 0usize;
    for (n, line) in stdin.lock().lines().enumerate() {
        let line = line.map_err(|e| format!("reading stdin: {e}"))?;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let mut it = t.split_ascii_whitespace();
        let answer = match (it.next(), it.next(), it.next(), it.next()) {
            (Some(s), Some(tc), Some(c), None) => (|| {
                let ssid = server
                    .context_to_sid(s)
                    .map_err(|e| format!("source context: {e}"))?;
                let tsid = server
                    .context_to_sid(tc)
                    .map_err(|e| format!("target context: {e}"))?;
                let class = server.class(c).map_err(|e| e.to_string())?;
                q.compute_av_ref(ssid, tsid, class)
                    .map_err(|e| e.to_string())
            })(),
            _ => Err(format!(
                "expected 3 fields `SCONTEXT TCONTEXT TCLASS`, got {}",
                t.split_ascii_whitespace().count()
            )),
        };
        let w = match answer {
            Ok(d) => writeln!(
                out,
                "{:08x} {:08x} {:08x}",
                d.allowed, d.auditallow, d.auditdeny
            ),
            Err(e) => {
                failed += 1;
                eprintln!("arbiter av: line {}: {e}", n + 1);
                writeln!(out, "error")
            }
        };
        w.map_err(|e| format!("writing stdout: {e}"))?;
    }
    out.flush().map_err(|e| format!("writing stdout: {e}"))?;
    let _ = a.no_cache; // the cache is wired in by the AVC front end
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

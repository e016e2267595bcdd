//! `arbiter av`: batch access vectors for tools and benchmarks.
//!
//! Input: lines `SCONTEXT TCONTEXT TCLASS` (blank lines and `#` comments are skipped).
//! Output: for each query line, `ALLOWED AUDITALLOW AUDITDENY` as 8-digit lowercase hex,
//! bit i = the class's permission with value i+1; a line that cannot be answered prints
//! `error` (so output lines stay aligned with queries) and the reason goes to stderr with
//! the line number. Exit status 0 when every line was answered, 1 otherwise.
//!
//! Every line is answered: a line that is not UTF-8, or longer than
//! [`BATCH_LINE_MAX`] bytes (read to its end but never held, so a hostile input cannot
//! exhaust memory), is an `error` line for that line only. A `\r` before the `\n` is
//! dropped; a last line without a newline is answered.
//!
//! Decisions go through the access vector cache unless `--no-cache` is given; `--stats`
//! prints the cache's statistics (the kernel's `cache_stats` and `hash_stats`) to stderr
//! after the run.

use super::BATCH_LINE_MAX;
use crate::load;
use crate::out::{CliError, Out};
use arbiter_avc::{Avc, AvcConfig, HashKind};
use arbiter_io::{Crlf, Lines};
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct Args {
    /// Policy file, or `builtin`.
    policy: std::ffi::OsString,
    /// Compute every query in the security server, bypassing the access vector cache.
    #[arg(long)]
    no_cache: bool,
    /// Print the cache statistics to stderr after the run.
    #[arg(long)]
    stats: bool,
    /// Cache slots (power of two).
    #[arg(long, default_value_t = 8192)]
    slots: usize,
    /// Most cached entries.
    #[arg(long, default_value_t = 8192)]
    threshold: usize,
    /// Cache hash: original, muladd, murmur3 or arbiter.
    #[arg(long, default_value = "arbiter")]
    hash: String,
    /// Set a boolean before deciding (NAME=VALUE, repeatable).
    #[arg(long = "bool", value_name = "NAME=VALUE")]
    bools: Vec<String>,
}

pub fn parse_hash(name: &str) -> Result<HashKind, CliError> {
    Ok(match name {
        "original" => HashKind::Original,
        "muladd" => HashKind::MulAdd,
        "murmur3" => HashKind::Murmur3,
        "arbiter" => HashKind::Arbiter,
        other => return Err(CliError::UnknownHash(other.to_string())),
    })
}

pub fn run(a: Args, out: &mut Out) -> Result<ExitCode, CliError> {
    let server = load::server(&a.policy, &a.bools)?;
    let config = AvcConfig {
        slots: a.slots,
        threshold: a.threshold,
        hash: parse_hash(&a.hash)?,
        ..AvcConfig::default()
    };
    let server = Arc::new(server);
    let avc = Avc::new(server.clone(), config).map_err(|e| format!("cache configuration: {e}"))?;
    let mut q = server.query();
    let mut failed = 0usize;
    let mut lines = Lines::new(std::io::stdin().lock(), BATCH_LINE_MAX, Crlf::Strip);
    while let Some(line) = lines
        .next_line()
        .map_err(|e| format!("reading stdin: {e}"))?
    {
        let n = line.number;
        let line = match line.text(BATCH_LINE_MAX) {
            Ok(t) => t,
            Err(e) => {
                failed += 1;
                crate::diag!("arbiter av: {e}");
                writeln!(out, "error")?;
                continue;
            }
        };
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
                let d = if a.no_cache {
                    q.compute_av(ssid, tsid, class)
                } else {
                    avc.compute_av(ssid, tsid, class)
                };
                d.map(|d| (d.allowed.0, d.auditallow.0, d.auditdeny.0))
                    .map_err(|e| e.to_string())
            })(),
            _ => Err(format!(
                "expected 3 fields `SCONTEXT TCONTEXT TCLASS`, got {}",
                t.split_ascii_whitespace().count()
            )),
        };
        let w = match answer {
            Ok((allowed, auditallow, auditdeny)) => {
                writeln!(out, "{allowed:08x} {auditallow:08x} {auditdeny:08x}")
            }
            Err(e) => {
                failed += 1;
                crate::diag!("arbiter av: line {n}: {e}");
                writeln!(out, "error")
            }
        };
        w?;
    }
    out.flush()?;
    if a.stats {
        if a.no_cache {
            crate::diag!("arbiter av: --stats: no cache was used (--no-cache)");
        } else {
            let s = avc.stats();
            let h = avc.hash_stats();
            crate::diag!("{s}");
            crate::diag!("{h}");
        }
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

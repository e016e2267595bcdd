//! `arbiter av`: batch access vectors for tools and benchmarks.
//!
//! Input: lines `SCONTEXT TCONTEXT TCLASS` (blank lines and `#` comments are skipped).
//! Output: for each query line, `ALLOWED AUDITALLOW AUDITDENY` as 8-digit lowercase hex,
//! bit i = the class's permission with value i+1; a line that cannot be answered prints
//! `error` (so output lines stay aligned with queries) and the reason goes to stderr with
//! the line number. Exit status 0 when every line was answered, 1 otherwise.
//!
//! Every line is answered: a line that is not UTF-8, or longer than [`MAX_LINE`] bytes (read
//! no further than that, so a hostile input cannot exhaust memory), is an `error` line for
//! that line only.
//!
//! Decisions go through the access vector cache unless `--no-cache` is given; `--stats`
//! prints the cache's statistics (the kernel's `cache_stats` and `hash_stats`) to stderr
//! after the run.

use crate::load;
use arbiter_avc::{Avc, AvcConfig, HashKind};
use std::io::{BufRead, Write};
use std::sync::Arc;

/// Longest query line accepted, in bytes (three contexts fit many times over).
pub const MAX_LINE: usize = 64 * 1024;

/// One input line, read without ever buffering more than [`MAX_LINE`] bytes of it.
enum Line {
    Text(String),
    NotUtf8,
    TooLong,
}

/// Reads the next line (without its newline); `None` at end of input.
fn next_line(input: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<Option<Line>> {
    buf.clear();
    let mut too_long = false;
    let mut any = false;
    loop {
        let chunk = input.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        any = true;
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            if buf.len() + take > MAX_LINE {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        input.consume(if done { take + 1 } else { take });
        if done {
            break;
        }
    }
    if !any {
        return Ok(None);
    }
    if too_long {
        return Ok(Some(Line::TooLong));
    }
    Ok(Some(match String::from_utf8(std::mem::take(buf)) {
        Ok(s) => Line::Text(s),
        Err(_) => Line::NotUtf8,
    }))
}
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Policy file, or `builtin`.
    policy: String,
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

pub fn parse_hash(name: &str) -> Result<HashKind, String> {
    Ok(match name {
        "original" => HashKind::Original,
        "muladd" => HashKind::MulAdd,
        "murmur3" => HashKind::Murmur3,
        "arbiter" => HashKind::Arbiter,
        other => {
            return Err(format!(
                "unknown hash {other:?} (original, muladd, murmur3, arbiter)"
            ))
        }
    })
}

pub fn run(a: Args) -> Result<ExitCode, String> {
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
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut failed = 0usize;
    let mut buf = Vec::new();
    let mut n = 0usize;
    while let Some(line) =
        next_line(&mut input, &mut buf).map_err(|e| format!("reading stdin: {e}"))?
    {
        n += 1;
        let line = match line {
            Line::Text(t) => t,
            bad => {
                failed += 1;
                let why = match bad {
                    Line::NotUtf8 => "not valid UTF-8".to_string(),
                    _ => format!("longer than {MAX_LINE} bytes"),
                };
                eprintln!("arbiter av: line {n}: {why}");
                writeln!(out, "error").map_err(|e| format!("writing stdout: {e}"))?;
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
                eprintln!("arbiter av: line {n}: {e}");
                writeln!(out, "error")
            }
        };
        w.map_err(|e| format!("writing stdout: {e}"))?;
    }
    out.flush().map_err(|e| format!("writing stdout: {e}"))?;
    if a.stats {
        if a.no_cache {
            eprintln!("arbiter av: --stats: no cache was used (--no-cache)");
        } else {
            let s = avc.stats();
            let h = avc.hash_stats();
            eprintln!("{s}");
            eprintln!("{h}");
        }
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

//! `arbiter why`: audit2why / audit2allow over AVC denial logs (the work is in
//! `arbiter-denials`).

use crate::load;
use arbiter_denials::{BoolDescriptions, Engine, Mode, Options, Session};
use std::io::{self, BufReader, Write};
use std::process::ExitCode;

/// Problems printed on stderr before the rest are only counted.
const SHOWN_PROBLEMS: usize = 50;

#[derive(clap::Args)]
pub struct Args {
    /// Binary policy file (policy.NN), or `builtin`.
    policy: String,
    /// Logs to read: audit.log, `ausearch -i` output, journal / dmesg text, Android logcat.
    /// Standard input when none is given (or for `-`).
    files: Vec<String>,
    /// Add arbiter's full explanation: granting and would-be-granting rules, every boolean
    /// that would grant it, constraints term by term, role and bounds checks.
    #[arg(long)]
    explain: bool,
    /// Print the rules `audit2allow -p POLICY` would generate instead of explanations.
    #[arg(long)]
    allow: bool,
    /// JSON Lines: one object per record (with --allow: one object holding the rules).
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Result<ExitCode, String> {
    let engine = Engine::new(load::policy(&a.policy)?);
    let opts = Options {
        mode: if a.allow { Mode::Allow } else { Mode::Why },
        explain: a.explain,
        json: a.json,
    };
    let mut session = Session::new(&engine, opts).with_descriptions(BoolDescriptions::system());
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let files = if a.files.is_empty() {
        vec!["-".to_string()]
    } else {
        a.files
    };
    for f in &files {
        let r = if f == "-" {
            session.feed("-", io::stdin().lock(), &mut out)
        } else {
            let file = std::fs::File::open(f).map_err(|e| format!("{f}: {e}"))?;
            session.feed(f, BufReader::new(file), &mut out)
        };
        if let Err(e) = r {
            if e.kind() == io::ErrorKind::BrokenPipe {
                return Ok(ExitCode::SUCCESS);
            }
            return Err(format!("{f}: {e}"));
        }
    }
    let summary = match session.finish(&mut out) {
        Ok(s) => s,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(ExitCode::SUCCESS),
        Err(e) => return Err(e.to_string()),
    };
    drop(out);
    let mut err = io::stderr().lock();
    if !summary.selinux_seen {
        let _ = writeln!(err, "Nothing to do");
        return Ok(ExitCode::SUCCESS);
    }
    for p in summary.problems.iter().take(SHOWN_PROBLEMS) {
        let _ = writeln!(err, "arbiter why: {p}");
    }
    let total = summary.malformed + summary.unknown;
    if total > 0 {
        let _ = writeln!(
            err,
            "arbiter why: {} record(s) read, {} line(s) unreadable, {} denial(s) not explained (names unknown to the policy){}",
            summary.records,
            summary.malformed,
            summary.unknown,
            if total as usize > SHOWN_PROBLEMS {
                format!("; first {SHOWN_PROBLEMS} shown")
            } else {
                String::new()
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}

//! sechecker's report: a header, one block per check, a result summary and a footer, in
//! its exact text; and the same results as JSON.

use super::CheckOutput;
use std::io::{self, Write};

/// Separator between report sections: 57 hyphens and an empty line.
const SEP: &str = "---------------------------------------------------------\n\n";

/// How one check ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckStatus {
    /// Not run: `disable` gave this reason.
    Disabled(String),
    /// Ran; failed when it has failures.
    Ran(CheckOutput),
    /// Raised while running (setools prints `Unexpected error`, one failure).
    Error(String),
}

/// One check's result, with what the report prints about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckResult {
    /// The section name.
    pub name: String,
    /// The check type.
    pub check_type: &'static str,
    /// `desc`, when set and non-empty.
    pub desc: Option<String>,
    /// The outcome.
    pub status: CheckStatus,
}

impl CheckResult {
    /// The number of failures the check counts.
    pub fn failures(&self) -> usize {
        match &self.status {
            CheckStatus::Disabled(_) => 0,
            CheckStatus::Ran(o) => o.failures.len(),
            CheckStatus::Error(_) => 1,
        }
    }

    /// The summary word(s) after the name.
    fn summary(&self) -> String {
        match (&self.status, self.failures()) {
            (CheckStatus::Disabled(r), _) => format!("DISABLED ({r})"),
            (_, 0) => "PASSED".to_string(),
            (_, n) => format!("FAILED ({n} failures)"),
        }
    }
}

/// A finished run, ready to print.
#[derive(Debug, Clone)]
pub struct Report<'a> {
    /// The configuration path as given.
    pub config: &'a str,
    /// The policy path as given.
    pub policy: &'a str,
    /// The check results, in file order.
    pub results: &'a [CheckResult],
}

impl Report<'_> {
    /// Total failures (sechecker exits 1 when non-zero).
    pub fn failures(&self) -> usize {
        self.results.iter().map(CheckResult::failures).sum()
    }

    /// Writes sechecker's text report; `start` and `end` are the timestamps printed.
    pub fn write_text(&self, out: &mut dyn Write, start: &str, end: &str) -> io::Result<()> {
        self.write_header(out, start)?;
        self.write_checks(out)?;
        self.write_footer(out, end)
    }

    /// The report's head: separator, configuration, policy, start time.
    pub fn write_header(&self, out: &mut dyn Write, start: &str) -> io::Result<()> {
        out.write_all(SEP.as_bytes())?;
        writeln!(out, "Policy check configuration: {}", self.config)?;
        writeln!(out, "Policy being checked: {}", self.policy)?;
        write!(out, "Start time: {start}\n\n")
    }

    /// Each check's block, the result summary and the failure count (what lies between
    /// [`Report::write_header`] and [`Report::write_footer`]).
    pub fn write_checks(&self, out: &mut dyn Write) -> io::Result<()> {
        for r in self.results {
            out.write_all(SEP.as_bytes())?;
            write!(out, "Check name: {}\n\n", r.name)?;
            if let Some(d) = &r.desc {
                write!(out, "Description: {d}\n\n")?;
            }
            match &r.status {
                CheckStatus::Disabled(reason) => {
                    write!(out, "Check DISABLED.  Reason: {reason}\n\n")?;
                    continue;
                }
                CheckStatus::Ran(o) => {
                    out.write_all(o.text.as_bytes())?;
                    out.write_all(b"\n")?;
                }
                CheckStatus::Error(e) => write!(out, "Unexpected error: {e}.  Failing check.\n\n")?,
            }
            if r.failures() > 0 {
                out.write_all(b"Check FAILED\n\n")?;
            } else {
                out.write_all(b"Check PASSED\n\n")?;
            }
        }
        out.write_all(SEP.as_bytes())?;
        out.write_all(b"Result Summary:\n\n")?;
        for r in self.results {
            writeln!(out, "{:<39} {}", r.name, r.summary())?;
        }
        write!(out, "\n{} failure(s) found.\n\n", self.failures())
    }

    /// The report's tail: configuration, policy, end time.
    pub fn write_footer(&self, out: &mut dyn Write, end: &str) -> io::Result<()> {
        writeln!(out, "Policy check configuration: {}", self.config)?;
        writeln!(out, "Policy being checked: {}", self.policy)?;
        writeln!(out, "End time: {end}")
    }

    /// The results as one JSON document.
    pub fn json(&self) -> serde_json::Value {
        let checks: Vec<serde_json::Value> = self
            .results
            .iter()
            .map(|r| {
                let (status, items, error, reason) = match &r.status {
                    CheckStatus::Disabled(reason) => {
                        ("disabled", Vec::new(), None, Some(reason.clone()))
                    }
                    CheckStatus::Ran(o) if o.failures.is_empty() => {
                        ("passed", Vec::new(), None, None)
                    }
                    CheckStatus::Ran(o) => ("failed", o.failures.clone(), None, None),
                    CheckStatus::Error(e) => ("failed", Vec::new(), Some(e.clone()), None),
                };
                serde_json::json!({
                    "name": r.name,
                    "check_type": r.check_type,
                    "desc": r.desc,
                    "status": status,
                    "failures": r.failures(),
                    "items": items,
                    "error": error,
                    "disabled_reason": reason,
                })
            })
            .collect();
        serde_json::json!({
            "config": self.config,
            "policy": self.policy,
            "failures": self.failures(),
            "checks": checks,
        })
    }
}

/// The current UTC time as Python's `str(datetime.now(timezone.utc))` prints it
/// (`2026-11-27 12:44:40.266751+00:00`; no fraction when the microseconds are zero).
pub fn utc_now() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    python_utc(now.as_secs() as i64, now.subsec_micros())
}

/// Formats a Unix time (seconds, microseconds) as Python's UTC `datetime` `str()`.
pub fn python_utc(secs: i64, micros: u32) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let base = format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    );
    if micros == 0 {
        format!("{base}+00:00")
    } else {
        format!("{base}.{micros:06}+00:00")
    }
}

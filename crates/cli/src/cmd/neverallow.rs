//! `arbiter neverallow POLICY [FILE...] [-n RULES]`: neverallow / neverallowxperm
//! statements (policy language or CIL) checked against a binary policy. Failures are
//! reported in libsepol's words, as checkpolicy prints them when it compiles a policy whose
//! neverallow fails (one `violated by allow S T:C { perms };` line per covered type pair,
//! then the count), so the report can be compared with the compiler's byte for byte;
//! `--by-statement` groups them instead (each violated statement once, under it the
//! policy's rules that grant it, secilc's layout without its source locations, which a
//! binary policy does not keep); `--json` gives the grouped form as one document.
//! Exit status 0: none violated; 1: some; 2: error.

use crate::load;
use crate::out::{CliError, Out};
use arbiter_analysis::neverallow::{self, Grant};
use arbiter_query::terules;
use arbiter_query::Index;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The binary policy (policy.33).
    policy: PathBuf,
    /// Files of neverallow statements: policy language (`neverallow a b:c p;`) or CIL
    /// (`(neverallow a b (c (p)))`, with `typeattribute`/`typeattributeset` allowed).
    files: Vec<PathBuf>,
    /// Statements given on the command line (repeatable), named `-n#1`, `-n#2`, … in reports.
    #[arg(short = 'n', long = "rules", value_name = "RULES")]
    rules: Vec<String>,
    /// One JSON document: each violated statement with the rules that grant it.
    #[arg(long, conflicts_with = "by_statement")]
    json: bool,
    /// Each violated statement once, with the policy's rules that grant it (secilc's
    /// layout), instead of libsepol's line per violating type pair.
    #[arg(long)]
    by_statement: bool,
}

pub fn run(a: Args, out: &mut Out) -> Result<ExitCode, CliError> {
    let mut inputs: Vec<(String, String)> = Vec::new();
    for f in &a.files {
        match std::fs::read_to_string(f) {
            Ok(text) => inputs.push((f.display().to_string(), text)),
            Err(e) => {
                crate::diag!("arbiter neverallow: {}: {e}", f.display());
                return Ok(ExitCode::from(2));
            }
        }
    }
    for (i, r) in a.rules.iter().enumerate() {
        inputs.push((format!("-n#{}", i + 1), r.clone()));
    }
    if inputs.is_empty() {
        crate::diag!("arbiter neverallow: no statements: give FILE... or -n RULES");
        return Ok(ExitCode::from(2));
    }
    let policy = match load::policy(&a.policy) {
        Ok(p) => std::mem::ManuallyDrop::new(p),
        Err(e) => {
            crate::diag!("arbiter neverallow: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let index = std::mem::ManuallyDrop::new(Index::new(&policy));
    let mut assertions = Vec::new();
    for (name, text) in &inputs {
        let resolved = neverallow::parse(name, text).and_then(|s| neverallow::resolve(&index, &s));
        match resolved {
            Ok(mut v) => assertions.append(&mut v),
            Err(e) => {
                crate::diag!("arbiter neverallow: {e}");
                return Ok(ExitCode::from(2));
            }
        }
    }
    let violations = neverallow::check(&index, &assertions);
    if a.json {
        let items: Vec<serde_json::Value> = violations
            .iter()
            .map(|v| {
                let s = &assertions[v.assertion];
                let rules: Vec<serde_json::Value> = v
                    .grants
                    .iter()
                    .map(|&g| {
                        serde_json::json!({
                            "kind": grant_kind(g),
                            "rule": terules::statement(&index, g.rule()),
                        })
                    })
                    .collect();
                serde_json::json!({
                    "file": s.file, "line": s.line, "statement": s.text, "rules": rules,
                })
            })
            .collect();
        let doc = serde_json::json!({
            "checked": assertions.len(),
            "violated": items,
        });
        writeln!(out, "{doc}")?;
    } else if !a.by_statement {
        neverallow::libsepol_report(&index, &assertions, &violations, |line| {
            writeln!(out, "{line}")
        })?;
    } else {
        for (k, v) in violations.iter().enumerate() {
            let s = &assertions[v.assertion];
            if k > 0 {
                writeln!(out)?;
            }
            let kind = match (s.is_xperm(), s.text.starts_with('(')) {
                (false, _) => "neverallow",
                (true, true) => "neverallowx",
                (true, false) => "neverallowxperm",
            };
            writeln!(out, "{kind} check failed at {}:{}", s.file, s.line)?;
            writeln!(out, "  {}", s.text)?;
            for &g in &v.grants {
                writeln!(out, "    {}", terules::statement(&index, g.rule()))?;
            }
        }
    }
    out.flush()?;
    Ok(ExitCode::from(if violations.is_empty() { 0 } else { 1 }))
}

fn grant_kind(g: Grant) -> &'static str {
    match g {
        Grant::Allow(_) => "allow",
        Grant::AllowXperm(_) => "allowxperm",
    }
}

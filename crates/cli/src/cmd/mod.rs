//! One module per subcommand.

pub mod av;
pub mod bench;
pub mod bools;
pub mod bsm;
pub mod check;
pub mod demo;
pub mod diff;
pub mod dta;
pub mod info;
pub mod infoflow;
pub mod label;
pub mod landlock;
pub mod search;
pub mod why;

/// Prints to stdout, ignoring a closed pipe (`| head`), as setools does with SIGPIPE.
pub(crate) fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Takes `--batch FILE` out of an analysis command line.
pub(crate) fn split_batch(args: &[String]) -> (Vec<String>, Option<String>) {
    let mut rest = Vec::with_capacity(args.len());
    let mut batch = None;
    let mut i = 0;
    while i < args.len() {
        if args[i] == "--batch" && i + 1 < args.len() {
            batch = Some(args[i + 1].clone());
            i += 2;
        } else if let Some(f) = args[i].strip_prefix("--batch=") {
            batch = Some(f.to_string());
            i += 1;
        } else {
            rest.push(args[i].clone());
            i += 1;
        }
    }
    (rest, batch)
}

/// The queries of a batch file (`-` = stdin): each non-empty line not starting with `#`,
/// split on whitespace, after the options common to all (`base`, e.g. `-p POLICY`).
pub(crate) fn batch_lines(file: &str, base: &[String]) -> Result<Vec<Vec<String>>, String> {
    let text = if file == "-" {
        std::io::read_to_string(std::io::stdin()).map_err(|e| format!("stdin: {e}"))?
    } else {
        std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?
    };
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut q = base.to_vec();
            q.extend(l.split_whitespace().map(str::to_string));
            q
        })
        .collect())
}

/// The line that opens each report of a batch: `### ` and the query's options.
pub(crate) fn batch_header(out: &mut dyn std::io::Write, query: &[String]) {
    let _ = writeln!(out, "### {}", query.join(" "));
}

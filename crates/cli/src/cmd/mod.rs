//! One module per subcommand.

pub mod av;
pub mod bench;
pub mod bools;
pub mod bsm;
pub mod build;
pub mod check;
pub mod demo;
pub mod diff;
pub mod dta;
pub mod info;
pub mod infoflow;
pub mod label;
pub mod landlock;
pub mod neverallow;
pub mod search;
pub mod sechecker;
pub mod why;

/// The longest line a query batch (`av`, `landlock check --batch`) reads: 64 KiB, many
/// times three contexts or two `PATH_MAX` paths. A longer line is that line's error; it is
/// read to its end without being kept.
pub(crate) const BATCH_LINE_MAX: usize = 64 * 1024;

use std::process::ExitCode;

/// What an analysis command (`dta`, `infoflow`) is to answer.
pub(crate) enum Queries<P> {
    /// Nothing to run: help was printed, or a query's options were refused (usage printed).
    Done(ExitCode),
    /// The queries as given (one, or one per line of `--batch FILE`), each parsed.
    Run {
        queries: Vec<Vec<String>>,
        parsed: Vec<P>,
        batch: bool,
    },
}

/// The shared front of the analysis commands: `-h` prints `usage` plus the batch line,
/// `--batch FILE` turns each line into a query after the common options, and each query is
/// parsed by `parse`; the first refused query prints the usage and its error (status 2).
pub(crate) fn analysis_queries<P, E: std::fmt::Display>(
    args: &[String],
    command: &str,
    usage: &str,
    tool: &str,
    out: &mut crate::out::Out,
    parse: impl Fn(&[String]) -> Result<P, E>,
) -> Result<Queries<P>, crate::out::CliError> {
    use std::io::Write;
    if args.iter().any(|s| s == "-h" || s == "--help") {
        writeln!(
            out,
            "{usage}\n\nBatch: --batch FILE runs one query ({tool} options without -p) per line of FILE."
        )?;
        return Ok(Queries::Done(ExitCode::SUCCESS));
    }
    let (common, batch) = split_batch(args);
    let queries = match &batch {
        None => vec![common],
        Some(file) => batch_lines(file, &common)?,
    };
    let mut parsed = Vec::with_capacity(queries.len());
    for q in &queries {
        match parse(q) {
            Ok(p) => parsed.push(p),
            Err(e) => {
                crate::diag!("{usage}\narbiter {command}: error: {e}");
                return Ok(Queries::Done(ExitCode::from(2)));
            }
        }
    }
    Ok(Queries::Run {
        queries,
        parsed,
        batch: batch.is_some(),
    })
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
/// split on whitespace, after the options common to all (`base`, e.g. `-p POLICY`). Read
/// through the bounded line reader: a line over [`BATCH_LINE_MAX`] bytes or not UTF-8 is
/// reported with its number and skipped, and the batch goes on.
pub(crate) fn batch_lines(
    file: &str,
    base: &[String],
) -> Result<Vec<Vec<String>>, crate::out::CliError> {
    use crate::out::CliError;
    use arbiter_io::{Crlf, Lines};
    let input: Box<dyn std::io::Read> = if file == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(file).map_err(|e| CliError::file(file, e))?)
    };
    let mut lines = Lines::new(std::io::BufReader::new(input), BATCH_LINE_MAX, Crlf::Strip);
    let mut queries = Vec::new();
    while let Some(line) = lines.next_line().map_err(|e| CliError::file(file, e))? {
        let text = match line.text(BATCH_LINE_MAX) {
            Ok(t) => t.trim(),
            Err(e) => {
                crate::diag!("arbiter: {file}: {e}");
                continue;
            }
        };
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let mut q = base.to_vec();
        q.extend(text.split_whitespace().map(str::to_string));
        queries.push(q);
    }
    Ok(queries)
}

/// The line that opens each report of a batch: `### ` and the query's options.
pub(crate) fn batch_header(out: &mut dyn std::io::Write, query: &[String]) -> std::io::Result<()> {
    writeln!(out, "### {}", query.join(" "))
}

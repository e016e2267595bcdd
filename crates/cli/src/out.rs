//! The one writer for everything arbiter prints on standard output, and what a failed
//! write means for the exit status.
//!
//! Output that cannot be written must never be claimed as success: on a full disk
//! (`> /dev/full`) the command exits with status 2 and `arbiter: cannot write output:
//! <why>` on stderr, including when only the final flush fails. A closed pipe (`arbiter
//! search ... | head -1`) is a normal way to stop reading: the command stops at the first
//! write that fails with `EPIPE` and exits quietly with status 0, as sesearch does. (Rust
//! ignores SIGPIPE, so the write returns the error instead of killing the process.)
//!
//! How a command adopts it:
//!
//! ```text
//! pub fn run(a: Args, out: &mut Out) -> Result<ExitCode, CliError> {
//!     writeln!(out, "{}", answer)?;            // io::Error -> CliError, `?` stops the command
//!     library::render(&model, &mut *out)?;    // Out is an io::Write: pass it to libraries
//!     Ok(ExitCode::SUCCESS)
//! }
//! ```
//!
//! `main` creates the one [`Out`], hands it to the command and calls [`finish`], which
//! flushes and turns a failed write — whatever error the command returned because of it —
//! into the status above. Never `println!`/`print!` (they panic on a closed pipe) and never
//! a second handle on stdout (its buffer would escape the flush check); diagnostics go to
//! stderr through [`diag!`](crate::diag), which cannot panic. Progress bars
//! ([`progress`]) are drawn on stderr through this writer too: it clears them around
//! whatever it prints on the same terminal.

pub mod progress;

use std::fmt;
use std::io::{self, BufWriter, IsTerminal, Stdout, Write};
use std::process::ExitCode;

/// Buffered standard output that remembers its first failure.
pub struct Out {
    w: BufWriter<Stdout>,
    failure: Option<(io::ErrorKind, String)>,
    /// Standard output and the progress bars share a terminal: what reaches it must
    /// clear the bars first.
    shares_bars: bool,
}

impl Out {
    /// The process's standard output (one per process: `main` makes it), and the
    /// process's progress bars, on when [`progress::bars_on_here`] says so.
    pub fn stdout() -> Out {
        progress::init(progress::bars_on_here());
        Out {
            w: BufWriter::with_capacity(1 << 16, io::stdout()),
            failure: None,
            shares_bars: progress::shown() && io::stdout().is_terminal(),
        }
    }

    /// Whether writing `len` more bytes sends the buffer to a terminal with bars on it.
    fn reaches_bars(&self, len: usize) -> bool {
        self.shares_bars && self.w.buffer().len() + len > self.w.capacity()
    }

    fn record(&mut self, e: io::Error) -> io::Error {
        if self.failure.is_none() {
            self.failure = Some((e.kind(), e.to_string()));
        }
        e
    }

    fn failed(&self) -> Option<io::Error> {
        self.failure
            .as_ref()
            .map(|(kind, text)| io::Error::new(*kind, text.clone()))
    }
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(e) = self.failed() {
            return Err(e);
        }
        let r = if self.reaches_bars(buf.len()) {
            progress::suspend(|| self.w.write(buf))
        } else {
            self.w.write(buf)
        };
        r.map_err(|e| self.record(e))
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        if let Some(e) = self.failed() {
            return Err(e);
        }
        let r = if self.reaches_bars(buf.len()) {
            progress::suspend(|| self.w.write_all(buf))
        } else {
            self.w.write_all(buf)
        };
        r.map_err(|e| self.record(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        if let Some(e) = self.failed() {
            return Err(e);
        }
        let r = if self.shares_bars {
            progress::suspend(|| self.w.flush())
        } else {
            self.w.flush()
        };
        r.map_err(|e| self.record(e))
    }
}

/// Why a command stopped (printed as `arbiter: <error>`, status 2).
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The policy or its boolean settings.
    #[error(transparent)]
    Load(Box<crate::load::LoadError>),
    /// A non-UTF-8 argument where only a policy path may be one (1-based position, the
    /// argument with invalid bytes replaced).
    #[error("argument {position} ({shown}) is not UTF-8: only a policy path may be")]
    NotUtf8Argument {
        /// The argument's position.
        position: usize,
        /// The argument, lossily decoded.
        shown: String,
    },
    /// A file the command reads or writes (a batch file, a trace, a manual page).
    #[error("{path}: {source}")]
    File {
        /// The file as named.
        path: String,
        /// What failed.
        source: io::Error,
    },
    /// `bench avc --trace`: the workload.
    #[error(transparent)]
    Trace(Box<crate::cmd::bench::TraceError>),
    /// `why`: an option arbiter refuses or a conflicting combination.
    #[error(transparent)]
    WhyOptions(#[from] crate::cmd::why::OptionError),
    /// `landlock`: a ruleset file that cannot be loaded.
    #[error(transparent)]
    Landlock(Box<arbiter_landlock::config::ConfigError>),
    /// `bsm`: the audit_* configuration files.
    #[error(transparent)]
    BsmConfig(Box<arbiter_bsm::IoError>),
    /// The security server refuses a request (an unknown class, an invalid SID, ...).
    #[error(transparent)]
    Decide(Box<arbiter_decide::DecideError>),
    /// `av --hash`: not one of the cache's hash functions.
    #[error("unknown hash {0:?} (original, muladd, murmur3, arbiter)")]
    UnknownHash(String),
    /// A message for the user, from a library error or a check with no variant here.
    #[error("{0}")]
    Message(String),
    /// An I/O error; when [`Out`] has failed it is taken as that failure.
    #[error("{0}")]
    Io(io::Error),
}

/// The library errors a command passes on, each boxed (they are large and rare: a
/// command's `Result` stays small).
macro_rules! boxed_from {
    ($($variant:ident($ty:ty)),* $(,)?) => {$(
        impl From<$ty> for CliError {
            fn from(e: $ty) -> CliError {
                CliError::$variant(Box::new(e))
            }
        }
    )*};
}

boxed_from!(
    Load(crate::load::LoadError),
    Trace(crate::cmd::bench::TraceError),
    Landlock(arbiter_landlock::config::ConfigError),
    BsmConfig(arbiter_bsm::IoError),
    Decide(arbiter_decide::DecideError),
);

impl CliError {
    /// A failure on the file named `path`.
    pub fn file(path: impl fmt::Display, source: io::Error) -> CliError {
        CliError::File {
            path: path.to_string(),
            source,
        }
    }
}

impl From<String> for CliError {
    fn from(m: String) -> CliError {
        CliError::Message(m)
    }
}

impl From<&str> for CliError {
    fn from(m: &str) -> CliError {
        CliError::Message(m.to_string())
    }
}

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> CliError {
        CliError::Io(e)
    }
}

/// Flushes the output and turns the command's result into the process's exit status.
///
/// A failed write decides, whatever the command returned (a command that stops because
/// its output failed may report that failure in any form): `EPIPE` exits 0 quietly, any
/// other failure prints `arbiter: cannot write output: <why>` and exits 2. Otherwise an
/// error prints `arbiter: <error>` and exits 2, and success exits with the command's own
/// status.
pub fn finish(mut out: Out, result: Result<ExitCode, CliError>) -> ExitCode {
    let _ = out.flush();
    if let Some((kind, text)) = &out.failure {
        if *kind == io::ErrorKind::BrokenPipe {
            return ExitCode::SUCCESS;
        }
        crate::diag!("arbiter: cannot write output: {text}");
        return ExitCode::from(2);
    }
    match result {
        Ok(code) => code,
        Err(e) => {
            crate::diag!("arbiter: {e}");
            ExitCode::from(2)
        }
    }
}

/// `eprintln!` that cannot panic: a diagnostic that cannot be written to stderr (closed,
/// full) is dropped, the command's status still says what happened. Progress bars are
/// cleared while it writes.
#[macro_export]
macro_rules! diag {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        $crate::out::progress::suspend(|| {
            let _ = writeln!(std::io::stderr(), $($arg)*);
        });
    }};
}

//! Progress bars on stderr for the commands that can run for seconds (`diff`, `why`, `bsm
//! print`/`reduce`, `bench`, `build`), drawn by `indicatif`.
//!
//! A bar is drawn only when stderr is a terminal someone watches: never into a pipe, a
//! file, CI or a test harness, so a captured stderr holds diagnostics and nothing else
//! (see [`bars_on`]). Every bar hangs off one process-wide set that [`Out`](super::Out)
//! and [`diag!`](crate::diag) know about: a diagnostic, and a write of standard output
//! that reaches the same terminal, first clears the bars and redraws them after, so a bar
//! never shares a line with output. When bars are off, a bar is `indicatif`'s hidden bar:
//! the commands update it all the same and nothing is drawn.

use indicatif::{MultiProgress, ProgressBar, ProgressBarIter, ProgressDrawTarget, ProgressStyle};
use std::borrow::Cow;
use std::ffi::OsStr;
use std::io::Read;
use std::sync::OnceLock;
use std::time::Duration;

/// The environment variable that turns the bars off on a terminal too (any value).
pub const NO_PROGRESS: &str = "ARBITER_NO_PROGRESS";

/// A bar over an input of known length.
const BYTES_TEMPLATE: &str = "{msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})";
/// A bar over an input without a length (a pipe).
const STREAM_TEMPLATE: &str = "{spinner} {msg} {bytes} ({bytes_per_sec})";
/// A bar over named steps.
const STEPS_TEMPLATE: &str = "{spinner} {prefix}: {msg}";

/// The bars of this process; set once by [`init`] (an unset set draws nothing).
static BARS: OnceLock<MultiProgress> = OnceLock::new();

/// Whether to draw bars: only when stderr is a terminal, the terminal can redraw a line
/// (`TERM` is not `dumb`), and neither `CI` nor [`NO_PROGRESS`] is set. Anything else
/// (a pipe, a file, a CI runner that fakes a terminal) gets no bar: a bar's carriage
/// returns and escapes would be noise in a log.
pub fn bars_on(
    stderr_is_terminal: bool,
    term: Option<&OsStr>,
    ci: Option<&OsStr>,
    no_progress: Option<&OsStr>,
) -> bool {
    stderr_is_terminal && term.is_some_and(|t| t != "dumb") && ci.is_none() && no_progress.is_none()
}

/// The decision of [`bars_on`] for this process's stderr and environment.
pub fn bars_on_here() -> bool {
    use std::io::IsTerminal;
    bars_on(
        std::io::stderr().is_terminal(),
        std::env::var_os("TERM").as_deref(),
        std::env::var_os("CI").as_deref(),
        std::env::var_os(NO_PROGRESS).as_deref(),
    )
}

/// Sets up the process's bars, drawn on stderr when `on`, hidden otherwise. The first
/// call decides; `Out::stdout` makes it.
pub(crate) fn init(on: bool) {
    BARS.get_or_init(|| {
        let target = if on {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        MultiProgress::with_draw_target(target)
    });
}

/// Whether bars are being drawn in this process.
pub(crate) fn shown() -> bool {
    BARS.get().is_some_and(|m| !m.is_hidden())
}

/// Runs `f` (a write to the terminal) with the bars cleared, and redraws them after.
pub fn suspend<R>(f: impl FnOnce() -> R) -> R {
    match BARS.get() {
        Some(m) if !m.is_hidden() => m.suspend(f),
        _ => f(),
    }
}

/// One bar: bytes of an input, or the named steps of a piece of work. Cleared from the
/// terminal when dropped, so a finished or failed command leaves only its output.
pub struct Bar(ProgressBar);

impl Bar {
    /// A bar over the bytes of an input called `what`, `len` bytes long when known (a
    /// file; a pipe has no length and gets a counter).
    pub fn bytes(what: &str, len: Option<u64>) -> Bar {
        let (bar, template) = match len {
            Some(n) => (ProgressBar::new(n), BYTES_TEMPLATE),
            None => (ProgressBar::no_length(), STREAM_TEMPLATE),
        };
        Bar::add(bar, template, what)
    }

    /// A bar that names the step a piece of work called `what` is at ([`Bar::step`]).
    pub fn steps(what: &str) -> Bar {
        Bar::add(ProgressBar::no_length(), STEPS_TEMPLATE, what)
    }

    fn add(bar: ProgressBar, template: &str, what: &str) -> Bar {
        let Some(bars) = BARS.get().filter(|m| !m.is_hidden()) else {
            return Bar(ProgressBar::hidden());
        };
        // The templates are constants, each parsed by a unit test.
        let style = ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        let bar = bars.add(bar.with_style(style));
        if template == STEPS_TEMPLATE {
            bar.set_prefix(what.to_string());
        } else {
            bar.set_message(what.to_string());
        }
        // A stalled input (a pipe, a slow disk) still shows that the command is alive.
        bar.enable_steady_tick(Duration::from_millis(120));
        Bar(bar)
    }

    /// `r`, counting what is read from it on this bar (buffered readers stay buffered).
    pub fn read<R: Read>(&self, r: R) -> ProgressBarIter<R> {
        self.0.wrap_read(r)
    }

    /// Names the step the work is at now.
    pub fn step(&self, step: impl Into<Cow<'static, str>>) {
        self.0.set_message(step);
    }

    /// Whether this bar is drawn (false when bars are off).
    #[cfg(test)]
    pub fn is_drawn(&self) -> bool {
        !self.0.is_hidden()
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

/// The length of a file that is a regular file (a FIFO or `/dev/stdin` has none).
pub fn file_len(f: &std::fs::File) -> Option<u64> {
    f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(s: &str) -> Option<&OsStr> {
        Some(OsStr::new(s))
    }

    #[test]
    fn bars_only_on_a_terminal_that_can_redraw() {
        assert!(bars_on(true, os("xterm-256color"), None, None));
        assert!(
            !bars_on(false, os("xterm-256color"), None, None),
            "a pipe or file"
        );
        assert!(!bars_on(true, os("dumb"), None, None), "a dumb terminal");
        assert!(!bars_on(true, None, None, None), "no TERM at all");
    }

    #[test]
    fn ci_and_the_opt_out_variable_turn_bars_off_on_a_terminal() {
        assert!(!bars_on(true, os("xterm"), os("true"), None));
        assert!(!bars_on(true, os("xterm"), None, os("1")));
        assert!(!bars_on(true, os("xterm"), None, os("")), "set, even empty");
    }

    #[test]
    fn bar_templates_parse() {
        for t in [BYTES_TEMPLATE, STREAM_TEMPLATE, STEPS_TEMPLATE] {
            assert!(ProgressStyle::with_template(t).is_ok(), "{t}");
        }
    }

    #[test]
    fn bars_are_hidden_when_off_and_still_count() {
        init(false);
        let bar = Bar::bytes("trail", Some(10));
        assert!(!bar.is_drawn());
        let mut read = Vec::new();
        bar.read(&b"0123456789"[..]).read_to_end(&mut read).unwrap();
        assert_eq!(read, b"0123456789", "the input passes through unchanged");
        assert!(!Bar::steps("build").is_drawn());
    }
}

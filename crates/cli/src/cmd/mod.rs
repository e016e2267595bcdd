//! One module per subcommand.

pub mod av;
pub mod bench;
pub mod bools;
pub mod bsm;
pub mod build;
pub mod check;
pub mod demo;
pub mod diff;
pub mod info;
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

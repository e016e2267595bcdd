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

/// The longest line a query batch (`av`, `landlock check --batch`) reads: 64 KiB, many
/// times three contexts or two `PATH_MAX` paths. A longer line is that line's error; it is
/// read to its end without being kept.
pub(crate) const BATCH_LINE_MAX: usize = 64 * 1024;

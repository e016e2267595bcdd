//! Bounded input for every arbiter command and engine crate.
//!
//! Users hand arbiter inputs of every shape: regular files, pipes, FIFOs, `/dev/stdin`,
//! process substitution, logs with CRLF line ends, lines of a gigabyte, bytes that are not
//! UTF-8. This crate is the one place where such input is read, so that every reader has
//! the same bounds and says the same thing when a bound is hit:
//!
//! - [`Lines`]: a line reader that never holds more than its limit of one line in memory;
//!   an over-long or non-UTF-8 line is an error for that line only, with its number.
//! - [`read_to_end_bounded`]: an input read to its end (pipes and FIFOs have no size to `stat`), refused
//!   beyond a documented maximum.
//! - [`quote()`]: the bounded prefix of an input that an error message may echo.
#![forbid(unsafe_code)]

mod lines;
mod quote;
mod whole;

pub use lines::{Body, Crlf, Line, LineError, Lines, DEFAULT_MAX_LINE};
pub use quote::{prefix, quote, Quoted, QUOTE_MAX};
pub use whole::{read_to_end_bounded, read_to_end_bounded_sized, TooLarge};

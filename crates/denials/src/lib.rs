//! AVC denials explained: `audit2why` and `audit2allow` over arbiter's security server.
//!
//! Data flows log bytes → [`LineReader`] (Python text-mode lines, bounded length) →
//! [`parse_line`] (sepolgen's token scan: audit.log, `ausearch -i`, journal, dmesg,
//! Android logcat, AVC and USER_AVC alike) → [`Engine::analyze`] (audit2why's verdict,
//! computed from arbiter's decision index) → [`write_report`] or
//! [`AllowGenerator`] (audit2allow's rules, in a module with [`Generation`]'s options:
//! `module.rs`, `xperm.rs`, explanations wrapped by `wrap.rs`; built into a package by
//! [`package::build`] as `audit2allow -M` does; `-t` is [`TypeFilter`]). [`Session`] runs the
//! pipeline over inputs, deciding each distinct denial once, and keeps the lines it could
//! not read or explain.
//!
//! For every line audit2why and audit2allow understand, the text is byte-identical to
//! theirs (policycoreutils 3.4); where they fail (a line that aborts their run, a record
//! whose context or class the policy does not know, which they drop silently) arbiter
//! goes on and says why.
//!
//! Items are re-exported here at the root, one path each; two modules stay namespaces:
//! [`package`] (building a `.pp` as `audit2allow -M` does) and [`corpus`] (synthetic
//! denials in each log format, for tests and benchmarks).

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod allow;
mod booldesc;
pub mod corpus;
mod engine;
mod error;
mod filter;
mod module;
pub mod package;
mod parse;
mod read;
mod session;
mod why;
mod wrap;
mod xperm;

pub use allow::AllowGenerator;
pub use booldesc::{BoolDescriptions, POLICY_XML};
pub use engine::{BoolFix, Engine, Verdict};
pub use error::{Malformed, Unknown, WhyError};
pub use filter::{BadTypeFilter, TypeFilter};
pub use module::{BadModuleName, Explanation, Generation, ModuleName};
pub use parse::{parse_line, starts_over, AvcRecord, AvcSource, ComputeSid, Line};
pub use read::{BlockLine, BlockLines, LineReader, Newlines, RawLine, MAX_LINE};
pub use session::{Mode, Options, Problem, ProblemKind, Session, Summary, MAX_KEPT};
pub use why::{constraint_causes, split_context, write_report};

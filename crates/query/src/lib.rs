//! Policy questions at interactive speed: one indexed query layer over an
//! [`arbiter_policy::Policy`] and the text of the setools commands built on it.
//!
//! [`Index`] resolves names as setools does and holds attribute membership both ways;
//! [`search`] answers `sesearch` queries with setools 4.4.1's matching semantics and
//! renders its statements byte for byte; [`info`] lists policy components as `seinfo`
//! does; [`diff`] compares two policies as `sediff` does. Criteria are resolved once into per-slot match tables, so a query is a single
//! scan of the rule arrays with one table lookup per key field.
//!
//! The root holds the index, the errors and [`Chunked`] (a query's large transients in
//! pieces under glibc's mmap threshold); each command's arguments and entry points
//! live in its namespace only ([`search`], [`info`], [`diff`], [`terules`], [`json`]),
//! beside [`argv`] (setools' option parsing and its [`argv::UsageError`]), [`render`]
//! (setools' text for rules, levels and expressions) and [`python_re`].
//!
//! ```no_run
//! use arbiter_query::{search::SearchArgs, Index};
//! let policy = arbiter_policy::Policy::open("/etc/selinux/default/policy/policy.33")?;
//! let index = Index::new(&policy);
//! let args = SearchArgs::parse(&["-A".into(), "-s".into(), "httpd_t".into()])?;
//! arbiter_query::search::run(&index, &args, &mut |line| println!("{line}"))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Bad input
//!
//! Regex criteria (`-rs -rt -rc -rb -rd`, and every `*_regex` of the Python API) are
//! read as Python's `re` reads them, as sesearch does: [`python_re`] parses each pattern
//! to the end and translates it for the `regex` engine, so a pattern means what it means
//! to sesearch (`[[:alpha:]]` is a set of its letters followed by `]`; `\Z`, `{,3}` and
//! a lone `{` are valid). A pattern Python rejects is rejected with Python's message and
//! character position (exit status 1, as sesearch); one using what the engine lacks
//! (backreferences, lookaround, conditionals, atomic groups, possessive repeats, `\N{…}`)
//! is refused with a message naming the construct, never approximated. Matching is
//! linear in the name's length whatever the pattern (the engine has no backtracking);
//! a pattern that compiles past the engine's size limit is refused as such.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod argv;
mod chunked;
pub mod diff;
mod error;
mod expand;
mod index;
pub mod info;
pub mod json;
mod pattern;
pub mod python_re;
pub mod render;
pub mod search;
pub mod terules;

pub use chunked::Chunked;
pub use error::{LevelError, QueryError, QueryErrorKind, SymbolKind};
pub use index::Index;

//! BSM audit (the OpenBSM format of FreeBSD, macOS and illumos) in userspace: the
//! configuration files, preselection, a lock-free event → class map in three designs, a
//! zero-copy trail reader for every token type, and praudit/auditreduce-compatible
//! printing and selection.
//!
//! Data flow: bytes → [`trail::records`] → [`Record::tokens`] → [`Printer`] or
//! [`Reducer`]; configuration → [`Config`] → [`Preselector`].

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod classmap;
pub mod config;
mod errno_text;
pub mod error;
pub mod fmt;
pub mod lines;
pub mod mask;
pub mod preselect;
pub mod print;
pub mod reduce;
mod sync;
pub mod token;
pub mod trail;
pub mod writer;

pub use classmap::{ClassMap, FlatMap, LockFreeMap, RwLockMap};
pub use config::{ClassDb, Config, Control, EventDb, UserDb};
pub use error::{ConfigError, DecodeError, DecodeErrorKind, FramingError, IoError, MaskError};
pub use mask::Mask;
pub use preselect::{user_mask, Outcome, Preselector, Selection};
pub use print::{PrintOptions, PrintSummary, Printer};
pub use reduce::{ReduceError, ReduceOptions, Reducer};
pub use token::{decode, Addr, Header, Subject, SubjectForm, Token};
pub use trail::{records, Record, Records};
pub use writer::{encode, RecordWriter};

/// Reads a trail file into memory. The reader is zero-copy over the returned bytes: tokens
/// borrow their strings and addresses from it. (A memory map would avoid the copy but needs
/// `unsafe`; reading is a single sequential pass and measured at disk/page-cache speed.)
pub fn read_file(path: &std::path::Path) -> Result<Vec<u8>, IoError> {
    std::fs::read(path).map_err(|source| IoError::File {
        path: path.into(),
        source,
    })
}

//! BSM audit (the OpenBSM format of FreeBSD, macOS and illumos) in userspace: the
//! configuration files, preselection, a lock-free event → class map in three designs, a
//! zero-copy trail reader for every token type, and praudit/auditreduce-compatible
//! printing and selection.
//!
//! Data flow: bytes → [`records`] (a trail in memory) or [`RecordStream`] (a trail
//! read as it arrives) → [`Record::tokens`] → [`Printer`] or [`Reducer`]; configuration →
//! [`Config`] → [`Preselector`].
//!
//! # Bad input
//!
//! A trail is read as a stream: [`Printer::print_stream`] and [`Reducer::reduce_stream`]
//! hold one record at a time (at most [`MAX_RECORD_SIZE`] bytes, plus a 64 KiB read
//! chunk), so a trail of any length from a file, pipe or standard input prints in bounded
//! memory; the in-memory entry points are thin wrappers over the same loop and answer
//! byte for byte alike. Where the framing breaks (a byte that starts no record, a size
//! below 5 or above [`MAX_RECORD_SIZE`], a record running past the end of the input)
//! printing stops there, as praudit does, and the [`FramingError`] names the byte
//! offset; `resync` resumes at the next plausible record instead. A token that cannot be
//! decoded ends its record (libbsm cannot delimit the rest) and is reported with its
//! offset. Read and write failures end the run as a [`StreamError`].

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod classmap;
mod config;
mod errno_text;
mod error;
mod fmt;
mod lines;
mod mask;
mod preselect;
mod print;
mod reduce;
mod stream;
mod sync;
mod token;
mod trail;
mod writer;

pub use config::{
    defaults, ClassDb, ClassEntry, Config, Control, Diagnostic, EventDb, EventEntry, UserDb,
    UserEntry, CLASS_DESC_MAX, CLASS_NAME_MAX, EVENT_DESC_MAX, EVENT_NAME_MAX, USER_NAME_MAX,
};
pub use error::{
    ConfigError, DecodeError, DecodeErrorKind, FramingError, IoError, MaskError, StreamError,
};
pub use mask::Mask;
pub use preselect::{effective_mask, user_mask, Outcome, Preselector, Selection};
pub use print::{PrintOptions, PrintSummary, Printer};
pub use reduce::{fnmatch_pathname, ReduceError, ReduceOptions, ReduceSummary, Reducer};
pub use stream::{RecordStream, MAX_RECORD_SIZE};
pub use token::{
    decode, id, Addr, Attr, ExecStrings, Header, IpcPerm, Subject, SubjectForm, Token,
    MAX_EXEC_STRINGS, MAX_GROUPS, TRAILER_SIZE, UNIX_PATH_MAX,
};
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

//! Typed errors: every one names the file, line or byte offset it is about.

use std::path::PathBuf;

/// Why a token could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeErrorKind {
    /// A field runs past the end of the record.
    #[error("{need} byte(s) needed at token byte {at} run past the end of the record")]
    Truncated {
        /// Position within the token.
        at: usize,
        /// Bytes the field needs.
        need: usize,
    },
    /// An address type other than 4 (IPv4) or 16 (IPv6).
    #[error("address type {0} is neither 4 (IPv4) nor 16 (IPv6)")]
    AddressType(u32),
    /// An arbitrary-data unit code other than 0..=3.
    #[error("arbitrary data unit {0} is not 0..=3")]
    ArbitraryUnit(u8),
    /// Exec arguments/environment whose strings run past the record.
    #[error("{count} exec string(s) run past the end of the record")]
    ExecStrings {
        /// The count word.
        count: u32,
    },
    /// An unknown token id with no room before the trailer.
    #[error("unknown token id with nothing before the trailer")]
    UnknownAtEnd,
}

/// A token that cannot be decoded, at a byte offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("byte offset {offset}: token 0x{token:02x}: {kind}")]
pub struct DecodeError {
    /// Offset of the token (in the trail once rebased by the reader).
    pub offset: usize,
    /// Token id.
    pub token: u8,
    /// What is wrong.
    pub kind: DecodeErrorKind,
}

/// Why the record framing stops (praudit and auditreduce stop reading there silently).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FramingError {
    /// A record does not start with a header or file token id.
    #[error("byte offset {offset}: 0x{id:02x} does not start a record")]
    NotARecord {
        /// Trail offset.
        offset: usize,
        /// The byte found.
        id: u8,
    },
    /// A record size below 5.
    #[error("byte offset {offset}: record size {size} is below 5")]
    SizeTooSmall {
        /// Trail offset.
        offset: usize,
        /// Size field.
        size: u32,
    },
    /// A record (or its size field) runs past the end of the input.
    #[error("byte offset {offset}: record of {size} bytes runs past the end ({available} left)")]
    Truncated {
        /// Trail offset.
        offset: usize,
        /// Declared size (0 if the size field itself is cut).
        size: u64,
        /// Bytes left in the input.
        available: usize,
    },
    /// A complete record larger than the readers accept (see
    /// [`crate::stream::MAX_RECORD_SIZE`]).
    #[error("byte offset {offset}: record of {size} bytes is larger than the {limit}-byte limit")]
    TooLarge {
        /// Trail offset.
        offset: usize,
        /// Declared size.
        size: u64,
        /// The limit.
        limit: usize,
    },
    /// Provisional, from a [`crate::stream::RecordStream`]: a size field above the limit
    /// whose record may or may not run past the end of the input;
    /// [`crate::stream::RecordStream::resolve`] turns it into `Truncated` or `TooLarge`.
    #[error("byte offset {offset}: record of {size} bytes is larger than the limit")]
    Oversized {
        /// Trail offset.
        offset: usize,
        /// Declared size.
        size: u64,
    },
}

impl FramingError {
    /// The trail offset where framing failed.
    pub fn offset(&self) -> usize {
        match self {
            FramingError::NotARecord { offset, .. }
            | FramingError::SizeTooSmall { offset, .. }
            | FramingError::Truncated { offset, .. }
            | FramingError::TooLarge { offset, .. }
            | FramingError::Oversized { offset, .. } => *offset,
        }
    }

    /// The same error with its offset moved by `base` (for an error found in a window
    /// that starts at trail offset `base`).
    pub fn at(mut self, base: usize) -> FramingError {
        match &mut self {
            FramingError::NotARecord { offset, .. }
            | FramingError::SizeTooSmall { offset, .. }
            | FramingError::Truncated { offset, .. }
            | FramingError::TooLarge { offset, .. }
            | FramingError::Oversized { offset, .. } => *offset += base,
        }
        self
    }
}

/// A configuration line libbsm would reject (or, in strict mode, silently accept).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct ConfigError {
    /// File name (as given).
    pub file: String,
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// A mask string that `getauditflagsbin` rejects.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MaskError {
    /// A class name not in `audit_class`.
    #[error("unknown audit class {}", arbiter_io::quote(.0))]
    UnknownClass(String),
}

/// Errors opening or reading files.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// An I/O failure on a named file.
    #[error("{path}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
}

/// Why a streaming print or reduce stopped before the end of its input: the input could
/// not be read or the output could not be written. (Framing and decoding errors do not
/// stop it; they are in the summary.)
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// Reading the trail failed.
    #[error("reading the trail: {0}")]
    Read(std::io::Error),
    /// Writing the output failed.
    #[error("writing the output: {0}")]
    Write(std::io::Error),
}

//! Errors from reading a binary policy.
//!
//! Every error names what was being read and, where the bytes are to blame, the byte offset
//! at which the reader stood, so that a user can find the fault with a hex dump.

use std::path::PathBuf;

/// Why a policy could not be read or validated.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The file could not be opened or mapped.
    #[error("cannot read policy file {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The input ended before a field could be read.
    #[error("truncated policy: needed {needed} bytes for {what} at offset {offset}, only {available} left")]
    Truncated {
        what: &'static str,
        offset: usize,
        needed: usize,
        available: usize,
    },

    /// The first word is not the SELinux policy magic number.
    #[error("not a binary SELinux policy: magic {found:#010x} at offset 0 (expected 0xf97cff8c)")]
    BadMagic { found: u32 },

    /// The policy is for a platform other than SELinux on Linux or Xen (or is a module).
    #[error(
        "unsupported policy target {target:?} (only \"SE Linux\" and \"XenFlask\" kernel policies are supported)"
    )]
    UnsupportedTarget { target: String },

    /// The format version is outside what this reader understands.
    #[error("unsupported policy version {version} (supported: {min} to {max})")]
    UnsupportedVersion { version: u32, min: u32, max: u32 },

    /// A count is larger than the rest of the input could possibly hold; reading it would
    /// mean allocating memory the file does not justify.
    #[error("{what} at offset {offset} claims {count} entries, but only {available} bytes remain (each needs at least {min_size})")]
    CountTooLarge {
        what: &'static str,
        offset: usize,
        count: u64,
        available: usize,
        min_size: usize,
    },

    /// A field holds a value the format does not allow here.
    #[error("invalid {what} at offset {offset}: {detail}")]
    Invalid {
        what: &'static str,
        offset: usize,
        detail: String,
    },

    /// The bytes parse, but the policy they describe is inconsistent (a rule names a type
    /// that does not exist, a bound points at an attribute, ...). `what` names the record.
    #[error("invalid policy: {what}: {detail}")]
    Inconsistent { what: String, detail: String },

    /// Bytes remain after the last section.
    #[error("{count} unexpected trailing bytes at offset {offset}")]
    TrailingBytes { offset: usize, count: usize },
}

/// Shorthand used throughout the reader.
pub type Result<T, E = PolicyError> = std::result::Result<T, E>;

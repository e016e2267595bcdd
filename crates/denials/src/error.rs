//! What can go wrong: a line that cannot be read, a denial the policy cannot place, a file
//! that cannot be opened.

use thiserror::Error;

/// Why an SELinux record could not be read (the line is counted and skipped).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum Malformed {
    /// `{` without a matching `}` (or, as in `sepolgen`, `{` as the second-to-last token).
    #[error("permission list not closed with `}}`")]
    UnclosedBrace,
    /// A required field is absent.
    #[error("no {0}")]
    Missing(&'static str),
    /// A context with fewer than three `:`-separated fields.
    #[error("{0} is not user:role:type[:level]")]
    Context(&'static str),
    /// `{ }`: a denial of nothing (audit2allow aborts the whole run on it).
    #[error("empty permission list")]
    NoPermissions,
    /// A `security_compute_sid` record without its context fields.
    #[error("security_compute_sid record without invalid context, scontext, tcontext, tclass")]
    ComputeSid,
    /// Longer than the reader's line limit: the line was not held in memory. When it had a
    /// record token, the record around it was still read (see [`LineReader`](crate::LineReader)).
    #[error("line of {len} bytes is longer than {max}: {}", if *.salvaged {
        "only the record found in it was read (its report quotes that record, not the line)"
    } else {
        "no record found in it, skipped"
    })]
    TooLong {
        /// The reader's limit.
        max: usize,
        /// The line's length.
        len: u64,
        /// Whether a record was found in it and read.
        salvaged: bool,
    },
}

/// Why a well-formed denial could not be explained by the policy. audit2why drops such
/// records silently; arbiter reports them.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum Unknown {
    /// The source context is not valid in the policy (unknown user/role/type/level, or
    /// a combination the policy does not authorise).
    #[error("source context {0} is not valid in this policy")]
    Scontext(String),
    /// The target context is not valid in the policy.
    #[error("target context {0} is not valid in this policy")]
    Tcontext(String),
    /// The policy has no such class.
    #[error("class {0} is not defined by this policy")]
    Tclass(String),
    /// The class has no such permission.
    #[error("class {class} has no permission {perm}")]
    Perm {
        /// The class.
        class: String,
        /// The name it lacks.
        perm: String,
    },
}

/// A failure of a whole run (not of one line).
#[derive(Debug, Error)]
pub enum WhyError {
    /// An input could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The input's name.
        path: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The policy could not be loaded.
    #[error("policy {path}: {reason}")]
    Policy {
        /// The policy file.
        path: String,
        /// What the reader found wrong.
        reason: String,
    },
}

//! Errors of the security server. Each names the offending part of the input, so a caller
//! can tell a typo in a type name from a context the policy forbids. No error is ever turned
//! into a grant: callers that cannot compute a decision must deny.

/// Why a query could not be answered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecideError {
    /// The context string does not have the `user:role:type[:range]` shape.
    #[error("malformed context {context:?}: {reason}")]
    MalformedContext { context: String, reason: String },
    #[error("unknown user {0:?}")]
    UnknownUser(String),
    #[error("unknown role {0:?}")]
    UnknownRole(String),
    #[error("unknown type {0:?}")]
    UnknownType(String),
    #[error("unknown sensitivity {0:?}")]
    UnknownSensitivity(String),
    #[error("unknown category {0:?}")]
    UnknownCategory(String),
    /// Every part names a symbol, but the policy does not allow the combination.
    #[error("invalid context {context:?}: {reason}")]
    InvalidContext { context: String, reason: String },
    #[error("unknown class {0:?}")]
    UnknownClass(String),
    #[error("unknown permission {perm:?} in class {class:?}")]
    UnknownPermission { class: String, perm: String },
    #[error("unknown boolean {0:?}")]
    UnknownBoolean(String),
    #[error("unknown SID {0}")]
    UnknownSid(u32),
    /// Every SID number is in use (the kernel's sidtab fails the same way past
    /// `SIDTAB_MAX`).
    #[error("the SID table is full")]
    SidTableFull,
    /// The policy was built with handle_unknown=reject and the query names a class or
    /// permission it does not define.
    #[error(
        "{0} is not defined by the policy and the policy rejects unknown classes and permissions"
    )]
    RejectedUnknown(String),
    /// A computed label is not a valid context in this policy (the kernel refuses the
    /// operation in enforcing mode).
    #[error("computed context {context} is invalid: {reason}")]
    InvalidComputedContext { context: String, reason: String },
}

pub type Result<T, E = DecideError> = std::result::Result<T, E>;

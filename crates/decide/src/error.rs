//! Errors of the security server. Each names the offending part of the input, so a caller
//! can tell a typo in a type name from a context the policy forbids. No error is ever turned
//! into a grant: callers that cannot compute a decision must deny. Names and contexts are
//! quoted with `arbiter_io::quote`, so a 100 KB context is not echoed back whole.

use arbiter_io::quote;

/// Why a query could not be answered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecideError {
    /// The context string does not have the `user:role:type[:range]` shape.
    #[error("malformed context {}: {reason}", quote(context))]
    MalformedContext {
        /// The context as given.
        context: String,
        /// What is wrong with its shape.
        reason: String,
    },
    /// No user has this name.
    #[error("unknown user {}", quote(.0))]
    UnknownUser(String),
    /// No role has this name.
    #[error("unknown role {}", quote(.0))]
    UnknownRole(String),
    /// No type or alias has this name.
    #[error("unknown type {}", quote(.0))]
    UnknownType(String),
    /// No sensitivity or alias has this name.
    #[error("unknown sensitivity {}", quote(.0))]
    UnknownSensitivity(String),
    /// No category or alias has this name.
    #[error("unknown category {}", quote(.0))]
    UnknownCategory(String),
    /// Every part names a symbol, but the policy does not allow the combination.
    #[error("invalid context {}: {reason}", quote(context))]
    InvalidContext {
        /// The context as given.
        context: String,
        /// The rule it breaks.
        reason: arbiter_policy::Invalid,
    },
    /// No class has this name (or value).
    #[error("unknown class {}", quote(.0))]
    UnknownClass(String),
    /// The class defines no permission of this name.
    #[error("unknown permission {} in class {}", quote(perm), quote(class))]
    UnknownPermission {
        /// The class.
        class: String,
        /// The permission name.
        perm: String,
    },
    /// No boolean has this name.
    #[error("unknown boolean {}", quote(.0))]
    UnknownBoolean(String),
    /// This server never issued the SID.
    #[error("unknown SID {0}")]
    UnknownSid(u32),
    /// The SID's context is not defined by the current policy (a reload invalidated it)
    /// and the policy has no `unlabeled` initial SID to answer in its place.
    #[error("SID {0} has no valid context under the current policy")]
    InvalidSid(u32),
    /// A policy reload was refused: the new policy numbers an initial SID where the server
    /// already issued a dynamic one (SID numbers never move).
    #[error("the new policy's initial SID {0} collides with a SID already issued")]
    InitialSidCollision(u32),
    /// The decision source does not implement this operation.
    #[error("{0} not supported by this decision source")]
    Unsupported(&'static str),
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
    /// A policy handed to the server as a plain [`arbiter_policy::Policy`] fails
    /// validation (it was changed after it was read): the validation error's message
    /// (errors of this type are `Clone` and comparable; a `PolicyError` is not).
    #[error("the policy fails validation: {0}")]
    InvalidPolicy(String),
    /// A computed label is not a valid context in this policy (the kernel refuses the
    /// operation in enforcing mode).
    #[error("computed context {context} is invalid: {reason}")]
    InvalidComputedContext {
        /// The computed context.
        context: String,
        /// Why it is invalid.
        reason: arbiter_policy::Invalid,
    },
}

/// The security server's result type.
pub type Result<T, E = DecideError> = std::result::Result<T, E>;

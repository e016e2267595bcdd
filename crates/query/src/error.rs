//! Why a query is refused: one variant per setools message, carrying the offending value.
//!
//! The texts are setools 4.4.1's (its exception messages, which sesearch and seinfo print
//! with exit status 1), so the CLI prints them unchanged and the oracle tests compare
//! them byte for byte.

use crate::python_re::PatternError;

/// A query setools would refuse: `.0` is the message setools prints (what the error
/// displays), [`QueryError::kind`] says why, with the offending value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct QueryError(pub String, QueryErrorKind);

impl QueryError {
    /// Why the query is refused.
    pub fn kind(&self) -> &QueryErrorKind {
        &self.1
    }
}

impl From<QueryErrorKind> for QueryError {
    fn from(kind: QueryErrorKind) -> QueryError {
        QueryError(kind.to_string(), kind)
    }
}

impl From<PatternError> for QueryError {
    fn from(e: PatternError) -> QueryError {
        QueryError::from(QueryErrorKind::Pattern(e))
    }
}

/// Why a query is refused, with the offending value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryErrorKind {
    /// A name that is no symbol of the kind the option takes.
    #[error("{name} is not a valid {kind}")]
    NotValid {
        /// What the option takes.
        kind: SymbolKind,
        /// The name as given.
        name: String,
    },
    /// A regex criterion Python rejects or the engine cannot run.
    #[error(transparent)]
    Pattern(PatternError),
    /// setools indexes the first permission of an empty set (a rule with no permission
    /// left, while sorting or writing its statement): Python's `IndexError`.
    #[error("list index out of range")]
    ListIndexOutOfRange,
    /// An extended-permission rule of a kind setools does not know.
    #[error("Unknown extended permission: {0}")]
    UnknownXpermsKind(u8),
    /// `-p` names permissions no selected class has (`in_selected`: with `-c`).
    #[error(
        "Permission(s) do not exist {}: {}",
        if *.in_selected { "in the specified classes" } else { "any class" },
        .names.join(", ")
    )]
    NoSuchPermissions {
        /// Whether classes were selected (`-c`), which changes setools' wording.
        in_selected: bool,
        /// The unknown permissions, first occurrence order.
        names: Vec<String>,
    },
    /// An `--xperms` item that is not `N` or `N-M`.
    #[error("Unable to parse \"{0}\" for xperms.")]
    XpermsSyntax(String),
    /// An `--xperms` value outside 0..=0xffff.
    #[error("{} is not a valid ioctl.", crate::search::hex7(*.0))]
    NotIoctl(i64),
    /// Python's `int(text, 16)` refusing the text.
    #[error("invalid literal for int() with base 16: '{}'", python_quote_body(.0))]
    NotHex(String),
    /// A range criterion on a policy without MLS (setools raises with no message).
    #[error("")]
    RangeWithoutMls,
    /// A range whose level does not parse.
    #[error("{text} is not a valid range ({level}).")]
    InvalidRange {
        /// The range as given.
        text: String,
        /// Why its low or high level is invalid.
        level: LevelError,
    },
    /// A range whose high level does not dominate its low level.
    #[error("{text} is not a valid range ({low} is not dominated by {high})")]
    RangeNotDominated {
        /// The range as given.
        text: String,
        /// The low level, as the policy writes it.
        low: String,
        /// The high level, as the policy writes it.
        high: String,
    },
    /// A malformed seinfo number or range (port, pkey): seinfo's usage hint.
    #[error("{0}")]
    NumberRange(&'static str),
    /// Python's `ipaddress.ip_network` refusing the text.
    #[error("'{0}' does not appear to be an IPv4 or IPv6 network")]
    NotNetwork(String),
    /// A network with bits set past its prefix (`ip_network(..., strict=True)`).
    #[error("{0} has host bits set")]
    HostBitsSet(String),
}

/// The kinds of symbol a query option names, as setools' messages call them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolKind {
    /// `-s`/`-t` (a type or attribute).
    TypeAttribute,
    /// `-c`.
    Class,
    /// `-b`.
    Boolean,
    /// A role criterion.
    Role,
}

impl std::fmt::Display for SymbolKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SymbolKind::TypeAttribute => "type attribute",
            SymbolKind::Class => "class",
            SymbolKind::Boolean => "Boolean",
            SymbolKind::Role => "role",
        })
    }
}

/// Why a level of a range is invalid (setools' `Level.factory_from_string`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LevelError {
    /// The sensitivity is unknown.
    #[error("{level} is not a valid level ({sensitivity} is not a valid sensitivity)")]
    Sensitivity {
        /// The level as given.
        level: String,
        /// Its sensitivity.
        sensitivity: String,
    },
    /// A category range names an unknown category.
    #[error("{level} is not a valid level ({range} is not a valid category range)")]
    CategoryRange {
        /// The level as given.
        level: String,
        /// The `c0.c5` range.
        range: String,
    },
    /// A category is unknown.
    #[error("{level} is not a valid level ({category} is not a valid category)")]
    Category {
        /// The level as given.
        level: String,
        /// The category.
        category: String,
    },
    /// A category group with more than one `.`.
    #[error("{0} is not a valid level (level parsing error)")]
    Syntax(String),
    /// Categories the sensitivity's declaration does not allow.
    #[error(
        "{0} is not a valid level (one or more categories are not associated with the sensitivity)"
    )]
    NotAssociated(String),
}

/// The body of Python's `repr` of a str in single quotes: `\` and `'` escaped.
fn python_quote_body(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\'', "\\'")
}

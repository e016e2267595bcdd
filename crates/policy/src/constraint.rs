//! Constraint and validatetrans expressions, stored in postfix order as in the file.

use crate::ebitmap::Ebitmap;

/// One constraint: the permissions it restricts and its postfix expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constraint {
    /// Access vector bits the constraint applies to (0 for validatetrans).
    pub perms: u32,
    pub expr: Box<[ConstraintExpr]>,
}

/// Operators of `CEXPR_ATTR`/`CEXPR_NAMES` terms.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ConstraintOp {
    Eq,
    Neq,
    /// MLS: dominates.
    Dom,
    /// MLS: is dominated by.
    Domby,
    /// MLS: incomparable.
    Incomp,
}

/// Which operands a term compares (the file's `attr` word). The low bits name the
/// attribute (user/role/type/MLS pair); `TARGET` and `XTARGET` select the second or third
/// context for `CEXPR_NAMES` terms.
pub mod attr {
    pub const USER: u32 = 1;
    pub const ROLE: u32 = 2;
    pub const TYPE: u32 = 4;
    pub const TARGET: u32 = 8;
    pub const XTARGET: u32 = 16;
    pub const L1L2: u32 = 32;
    pub const L1H2: u32 = 64;
    pub const H1L2: u32 = 128;
    pub const H1H2: u32 = 256;
    pub const L1H1: u32 = 512;
    pub const L2H2: u32 = 1024;
    /// Terms whose attribute is any of these are MLS terms.
    pub const MLS_MASK: u32 = L1L2 | L1H2 | H1L2 | H1H2 | L1H1 | L2H2;
}

/// The source-level type set a `CEXPR_NAMES` term was written with (format >= 29). Kept
/// for explanations and statistics; decisions use the expanded `names`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TypeSet {
    pub types: Ebitmap,
    pub negset: Ebitmap,
    pub flags: u32,
}

/// One node of a postfix constraint expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConstraintExpr {
    Not,
    And,
    Or,
    /// Compare an attribute of two contexts: `attr` (see [`attr`]) with `op`.
    Attr {
        attr: u32,
        op: ConstraintOp,
    },
    /// Compare one context's user/role/type with a set of values (bit i = value i+1).
    Names {
        attr: u32,
        op: ConstraintOp,
        names: Ebitmap,
        /// Present from format version 29 on.
        type_names: Option<Box<TypeSet>>,
    },
}

impl Constraint {
    /// Whether any term compares MLS levels (what `seinfo` counts as an MLS constraint).
    pub fn is_mls(&self) -> bool {
        self.expr.iter().any(|e| match e {
            ConstraintExpr::Attr { attr: a, .. } | ConstraintExpr::Names { attr: a, .. } => {
                a & attr::MLS_MASK != 0
            }
            _ => false,
        })
    }
}

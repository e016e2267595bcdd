//! Conditional policy: boolean expressions guarding lists of access vector table entries.

use crate::ids::BoolId;
use std::ops::Range;

/// A node of a postfix boolean expression.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CondExpr {
    Bool(BoolId),
    Not,
    Or,
    And,
    Xor,
    Eq,
    Neq,
}

/// One `if` statement: its expression and the ranges of [`crate::Policy::cond_avtab`]
/// entries that apply when it is true or false.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CondNode {
    /// The state the compiler computed from the booleans' defaults.
    pub cur_state: bool,
    pub expr: Box<[CondExpr]>,
    pub true_list: Range<u32>,
    pub false_list: Range<u32>,
}

use crate::avtab::Avtab;
use crate::cursor::Cursor;
use crate::error::{PolicyError, Result};
use crate::read::Counts;

pub(crate) fn read(c: &mut Cursor<'_>, counts: &Counts) -> Result<(Vec<CondNode>, Avtab)> {
    let _ = (c, counts);
    Err(PolicyError::Inconsistent {
        what: "conditionals".into(),
        detail: "reader not written yet".into(),
    })
}

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

use crate::cursor::Cursor;
use crate::error::Result;
use crate::policy::version;

/// The file's `expr_type` words (`CEXPR_*`).
mod expr_type {
    pub const NOT: u32 = 1;
    pub const AND: u32 = 2;
    pub const OR: u32 = 3;
    pub const ATTR: u32 = 4;
    pub const NAMES: u32 = 5;
}

/// `CEXPR_MAXDEPTH`: the evaluator's operand stack holds at most this many values.
const MAX_DEPTH: usize = 5;
/// Smallest encoding of one term: expr_type, attr, op.
const TERM_MIN_BYTES: usize = 12;
/// Smallest encoding of one constraint: permissions, term count, one term (an empty
/// expression is refused, so every constraint has at least one).
const CONSTRAINT_MIN_BYTES: usize = 8 + TERM_MIN_BYTES;

impl ConstraintOp {
    /// From the file's `op` word (`CEXPR_EQ` = 1 ... `CEXPR_INCOMP` = 5).
    pub fn from_raw(op: u32) -> Option<Self> {
        Some(match op {
            1 => ConstraintOp::Eq,
            2 => ConstraintOp::Neq,
            3 => ConstraintOp::Dom,
            4 => ConstraintOp::Domby,
            5 => ConstraintOp::Incomp,
            _ => return None,
        })
    }

    /// The file's `op` word: the inverse of [`ConstraintOp::from_raw`].
    pub fn raw(self) -> u32 {
        match self {
            ConstraintOp::Eq => 1,
            ConstraintOp::Neq => 2,
            ConstraintOp::Dom => 3,
            ConstraintOp::Domby => 4,
            ConstraintOp::Incomp => 5,
        }
    }
}

/// Which kind of list is being read: `constrain` rules compare two contexts; `validatetrans`
/// rules may also name the third (`XTARGET`, the old context of a relabel).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum ConstraintKind {
    Constrain,
    ValidateTrans,
}

impl ConstraintKind {
    fn what(self) -> &'static str {
        match self {
            ConstraintKind::Constrain => "constraint",
            ConstraintKind::ValidateTrans => "validatetrans",
        }
    }
}

/// Reads `ncons` constraints of class `class` (the kernel's `read_cons_helper`), checking
/// each postfix expression as the evaluator will use it: known term types, operators and
/// attributes; `NOT` needs an operand, `AND`/`OR` two; the stack never exceeds
/// [`MAX_DEPTH`]; and exactly one value remains at the end.
///
/// Bits of `names` are checked against the user/role/type tables later, once those are read
/// (the class table comes first in the file).
pub(crate) fn read_constraints(
    c: &mut Cursor<'_>,
    policy_version: u32,
    ncons: u32,
    kind: ConstraintKind,
    class: &str,
) -> Result<Box<[Constraint]>> {
    let what = kind.what();
    let ncons = c.check_count(ncons, CONSTRAINT_MIN_BYTES, what)?;
    let mut out = Vec::with_capacity(ncons);
    for i in 0..ncons {
        let [perms, nexpr] = c.u32s::<2>(what)?;
        let nexpr = c.check_count(nexpr, TERM_MIN_BYTES, what)?;
        let mut expr = Vec::with_capacity(nexpr);
        let mut depth = 0usize;
        for j in 0..nexpr {
            let at = c.offset();
            let [ty, attr, op] = c.u32s::<3>(what)?;
            let bad = |detail: String| {
                c.invalid_at(
                    at,
                    what,
                    format!("class `{class}` {what} {i} term {j}: {detail}"),
                )
            };
            let term = match ty {
                expr_type::NOT | expr_type::AND | expr_type::OR => {
                    let (needed, node) = match ty {
                        expr_type::NOT => (1, ConstraintExpr::Not),
                        expr_type::AND => (2, ConstraintExpr::And),
                        _ => (2, ConstraintExpr::Or),
                    };
                    if depth < needed {
                        return Err(bad(format!(
                            "operator needs {needed} operand(s), stack holds {depth}"
                        )));
                    }
                    if attr != 0 || op != 0 {
                        return Err(bad(format!(
                            "operator has attribute {attr:#x} and op {op} (both must be 0)"
                        )));
                    }
                    depth -= needed - 1;
                    node
                }
                expr_type::ATTR => {
                    let op = check_attr_term(attr, op).map_err(bad)?;
                    depth = push(depth).map_err(bad)?;
                    ConstraintExpr::Attr { attr, op }
                }
                expr_type::NAMES => {
                    let op = check_names_term(attr, op, kind).map_err(bad)?;
                    depth = push(depth).map_err(bad)?;
                    let names = Ebitmap::read(c, "constraint names")?;
                    let type_names = if policy_version >= version::CONSTRAINT_NAMES {
                        Some(Box::new(read_type_set(c)?))
                    } else {
                        None
                    };
                    ConstraintExpr::Names {
                        attr,
                        op,
                        names,
                        type_names,
                    }
                }
                other => return Err(bad(format!("unknown expression type {other}"))),
            };
            expr.push(term);
        }
        if depth != 1 {
            return Err(c.invalid(
                what,
                format!("class `{class}` {what} {i} expression leaves {depth} values (expected 1)"),
            ));
        }
        out.push(Constraint {
            perms,
            expr: expr.into_boxed_slice(),
        });
    }
    Ok(out.into_boxed_slice())
}

/// One more operand on the evaluator's stack, refusing to go past [`MAX_DEPTH`].
fn push(depth: usize) -> std::result::Result<usize, String> {
    if depth >= MAX_DEPTH {
        return Err(format!("expression nests deeper than {MAX_DEPTH}"));
    }
    Ok(depth + 1)
}

/// An `ATTR` term compares one attribute of the two contexts: user, role or type (no
/// context selector bits), or a pair of MLS levels. Only roles and levels have an order,
/// so `dom`/`domby`/`incomp` are refused for users and types (the kernel's evaluator has
/// no case for them).
fn check_attr_term(attr: u32, op: u32) -> std::result::Result<ConstraintOp, String> {
    let op = ConstraintOp::from_raw(op).ok_or_else(|| format!("unknown operator {op}"))?;
    let ordered = match attr {
        attr::USER | attr::TYPE => false,
        attr::ROLE
        | attr::L1L2
        | attr::L1H2
        | attr::H1L2
        | attr::H1H2
        | attr::L1H1
        | attr::L2H2 => true,
        other => return Err(format!("unknown attribute {other:#x} in comparison")),
    };
    if !ordered && !matches!(op, ConstraintOp::Eq | ConstraintOp::Neq) {
        return Err(format!("operator {op:?} on attribute {attr:#x}"));
    }
    Ok(op)
}

/// A `NAMES` term tests one context's user, role or type for membership in a set: `==` or
/// `!=` only, and the third context (`XTARGET`) only in validatetrans rules.
fn check_names_term(
    attr: u32,
    op: u32,
    kind: ConstraintKind,
) -> std::result::Result<ConstraintOp, String> {
    let op = match ConstraintOp::from_raw(op) {
        Some(op @ (ConstraintOp::Eq | ConstraintOp::Neq)) => op,
        _ => return Err(format!("operator {op} in a name set test (only == and !=)")),
    };
    let base = attr & !(attr::TARGET | attr::XTARGET);
    let selector = attr & (attr::TARGET | attr::XTARGET);
    if !matches!(base, attr::USER | attr::ROLE | attr::TYPE) {
        return Err(format!("unknown attribute {attr:#x} in a name set test"));
    }
    if selector == attr::TARGET | attr::XTARGET {
        return Err(format!("attribute {attr:#x} selects both target contexts"));
    }
    if selector == attr::XTARGET && kind != ConstraintKind::ValidateTrans {
        return Err("the third context (u3/r3/t3) outside validatetrans".into());
    }
    Ok(op)
}

/// A `type_set` (format >= 29): the source-level types, negated types and flags of a
/// `CEXPR_NAMES` term on types.
fn read_type_set(c: &mut Cursor<'_>) -> Result<TypeSet> {
    let types = Ebitmap::read(c, "constraint type set")?;
    let negset = Ebitmap::read(c, "constraint type set")?;
    let at = c.offset();
    let flags = c.u32("constraint type set flags")?;
    // TYPE_STAR (1) and TYPE_COMP (2) are the only flags a compiler writes.
    if flags & !3 != 0 {
        return Err(c.invalid_at(
            at,
            "constraint type set flags",
            format!("unknown flags {flags:#x}"),
        ));
    }
    Ok(TypeSet {
        types,
        negset,
        flags,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::PolicyError;
    use crate::testbytes::W;

    fn read(w: &W, ncons: u32, kind: ConstraintKind, v: u32) -> Result<Box<[Constraint]>> {
        let mut c = Cursor::new(&w.0);
        let r = read_constraints(&mut c, v, ncons, kind, "file")?;
        assert_eq!(c.remaining(), 0, "constraint list not consumed");
        Ok(r)
    }

    fn detail(r: Result<Box<[Constraint]>>) -> String {
        match r {
            Err(PolicyError::Invalid { detail, .. }) => detail,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn reads_names_and_attr_terms_with_type_sets() {
        let mut w = W::default();
        // (t1 == {2}) and (u1 == u2)
        w.u32s(&[0b11, 3]);
        w.u32s(&[expr_type::NAMES, attr::TYPE, 1]).ebitmap(&[1]);
        w.ebitmap(&[1]).ebitmap(&[]).u32(0);
        w.u32s(&[expr_type::ATTR, attr::USER, 1]);
        w.u32s(&[expr_type::AND, 0, 0]);
        let cons = read(&w, 1, ConstraintKind::Constrain, 29).unwrap();
        assert_eq!(cons[0].perms, 0b11);
        assert_eq!(cons[0].expr.len(), 3);
        match &cons[0].expr[0] {
            ConstraintExpr::Names {
                names, type_names, ..
            } => {
                assert!(names.contains(1));
                assert!(type_names.as_ref().unwrap().types.contains(1));
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(!cons[0].is_mls());
    }

    #[test]
    fn type_sets_only_from_version_29() {
        let mut w = W::default();
        w.u32s(&[1, 1]);
        w.u32s(&[expr_type::NAMES, attr::ROLE | attr::TARGET, 2])
            .ebitmap(&[0]);
        let cons = read(&w, 1, ConstraintKind::Constrain, 28).unwrap();
        assert!(matches!(
            &cons[0].expr[0],
            ConstraintExpr::Names {
                type_names: None,
                op: ConstraintOp::Neq,
                ..
            }
        ));
    }

    #[test]
    fn empty_expression_is_refused() {
        let mut w = W::default();
        w.u32s(&[1, 0]);
        // Padding so the count check passes and the expression check is what fails.
        w.u32s(&[0, 0, 0]);
        let mut c = Cursor::new(&w.0);
        let r = read_constraints(&mut c, 33, 1, ConstraintKind::Constrain, "file");
        assert!(detail(r).contains("leaves 0 values"));
    }

    #[test]
    fn operators_need_operands() {
        let mut w = W::default();
        w.u32s(&[1, 2]);
        w.u32s(&[expr_type::ATTR, attr::USER, 1]);
        w.u32s(&[expr_type::AND, 0, 0]);
        let d = detail(read(&w, 1, ConstraintKind::Constrain, 33));
        assert!(d.contains("class `file` constraint 0 term 1"), "{d}");
        assert!(d.contains("needs 2 operand"), "{d}");

        let mut w = W::default();
        w.u32s(&[1, 1]);
        w.u32s(&[expr_type::NOT, 0, 0]);
        assert!(detail(read(&w, 1, ConstraintKind::Constrain, 33)).contains("needs 1"));
    }

    #[test]
    fn two_values_left_is_refused() {
        let mut w = W::default();
        w.u32s(&[1, 2]);
        w.u32s(&[expr_type::ATTR, attr::USER, 1]);
        w.u32s(&[expr_type::ATTR, attr::ROLE, 1]);
        assert!(detail(read(&w, 1, ConstraintKind::Constrain, 33)).contains("leaves 2 values"));
    }

    #[test]
    fn depth_beyond_five_is_refused() {
        let mut w = W::default();
        w.u32s(&[1, 6]);
        for _ in 0..6 {
            w.u32s(&[expr_type::ATTR, attr::USER, 1]);
        }
        assert!(detail(read(&w, 1, ConstraintKind::Constrain, 33)).contains("deeper than 5"));

        // Five deep, folded back to one, is fine.
        let mut w = W::default();
        w.u32s(&[1, 9]);
        for _ in 0..5 {
            w.u32s(&[expr_type::ATTR, attr::USER, 1]);
        }
        for _ in 0..4 {
            w.u32s(&[expr_type::OR, 0, 0]);
        }
        read(&w, 1, ConstraintKind::Constrain, 33).unwrap();
    }

    #[test]
    fn xtarget_only_in_validatetrans() {
        let mut w = W::default();
        w.u32s(&[0, 1]);
        w.u32s(&[expr_type::NAMES, attr::TYPE | attr::XTARGET, 1])
            .ebitmap(&[0]);
        w.ebitmap(&[]).ebitmap(&[]).u32(0);
        assert!(detail(read(&w, 1, ConstraintKind::Constrain, 33)).contains("third context"));
        read(&w, 1, ConstraintKind::ValidateTrans, 33).unwrap();
    }

    #[test]
    fn unknown_terms_ops_and_attrs_are_refused() {
        for (ty, attr_, op, needle) in [
            (6, 0, 0, "unknown expression type 6"),
            (expr_type::ATTR, attr::USER, 6, "unknown operator 6"),
            (expr_type::ATTR, attr::USER, 3, "operator Dom"),
            (expr_type::ATTR, 3, 1, "unknown attribute"),
            (
                expr_type::ATTR,
                attr::USER | attr::TARGET,
                1,
                "unknown attribute",
            ),
            (expr_type::NAMES, attr::USER, 3, "only == and !="),
            (expr_type::NAMES, attr::L1L2, 1, "unknown attribute"),
            (expr_type::NAMES, attr::USER | 24, 1, "both target"),
        ] {
            let mut w = W::default();
            w.u32s(&[1, 1]).u32s(&[ty, attr_, op]).ebitmap(&[]);
            let d = detail(read(&w, 1, ConstraintKind::ValidateTrans, 28));
            assert!(d.contains(needle), "{d} lacks {needle}");
        }
        // Role dominance is an ordered comparison the evaluator supports.
        let mut w = W::default();
        w.u32s(&[1, 1]).u32s(&[expr_type::ATTR, attr::ROLE, 3]);
        read(&w, 1, ConstraintKind::Constrain, 33).unwrap();
    }

    #[test]
    fn hostile_counts_are_refused_before_allocation() {
        let mut w = W::default();
        w.u32s(&[1, u32::MAX]);
        assert!(matches!(
            read(&w, 1, ConstraintKind::Constrain, 33),
            Err(PolicyError::CountTooLarge { .. })
        ));
        let w = W::default();
        assert!(matches!(
            read(&w, u32::MAX, ConstraintKind::Constrain, 33),
            Err(PolicyError::CountTooLarge { .. })
        ));
    }
}

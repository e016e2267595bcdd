//! Constraints and default_* rules for `arbiter.setools`: per class (by value), the
//! constrain/mlsconstrain and validatetrans/mlsvalidatetrans expressions as setools'
//! postfix nodes, and the class's default_* settings. The Python half
//! (`_constraint.py`) writes setools' infix text and builds the name sets.

use super::PolicyDb;
use arbiter_policy::constraint::ConstraintExpr;
use pyo3::prelude::*;

/// One postfix node: `(kind, attr, op, names)`: kind `not`/`and`/`or`, or `attr` (two
/// contexts compared) or `names` (one context against `names`: role, user or type values;
/// for types from format 29 on, the source-level type set, as setools reads it).
type NodeRow = (&'static str, u32, &'static str, Vec<u32>);

fn nodes(version: u32, expr: &[ConstraintExpr]) -> Vec<NodeRow> {
    expr.iter()
        .map(|e| match e {
            ConstraintExpr::Not => ("not", 0, "", Vec::new()),
            ConstraintExpr::And => ("and", 0, "", Vec::new()),
            ConstraintExpr::Or => ("or", 0, "", Vec::new()),
            ConstraintExpr::Attr { attr, op } => ("attr", *attr, op.keyword(), Vec::new()),
            ConstraintExpr::Names { attr, op, .. } => {
                let bits = e.written_names(version).into_iter().flat_map(|b| b.iter());
                ("names", *attr, op.keyword(), bits.map(|b| b + 1).collect())
            }
        })
        .collect()
}

/// The names of the permissions set in `bits` (own and common permissions of `class`), in
/// bit order.
fn perm_names(
    p: &arbiter_policy::Policy,
    class: &arbiter_policy::symbols::Class,
    bits: u32,
) -> Vec<String> {
    let common = class
        .common
        .and_then(|id| p.commons.get(id.index()))
        .map(|c| &c.perms[..])
        .unwrap_or(&[]);
    let mut v: Vec<(u32, &str)> = class
        .perms
        .iter()
        .chain(common.iter())
        .filter(|q| (1..=32).contains(&q.value) && bits & (1 << (q.value - 1)) != 0)
        .map(|q| (q.value, &*q.name))
        .collect();
    v.sort_unstable();
    v.into_iter().map(|(_, n)| n.to_string()).collect()
}

/// Per class value: `(permission names and postfix nodes of each constraint, postfix nodes
/// of each validatetrans)`, in the policy's order. With `class_value`, that class's row
/// alone (none for a value no class has): the Python side reads a class's rows when its
/// constraints are first asked for, so that every class's rows are never alive at once
/// (their peak stayed as free blocks in Python's allocator to the end of a script).
#[pyfunction]
#[pyo3(signature = (db, class_value=None))]
#[allow(clippy::type_complexity)]
pub fn constraint_table(
    db: &PolicyDb,
    class_value: Option<u32>,
) -> Vec<(u32, Vec<(Vec<String>, Vec<NodeRow>)>, Vec<Vec<NodeRow>>)> {
    let p = &*db.model;
    p.classes
        .iter()
        .enumerate()
        .filter(|(i, _)| class_value.map_or(true, |v| v as usize == i + 1))
        .map(|(i, c)| {
            (
                i as u32 + 1,
                c.constraints
                    .iter()
                    .map(|k| (perm_names(p, c, k.perms), nodes(p.version, &k.expr)))
                    .collect(),
                c.validatetrans
                    .iter()
                    .map(|k| nodes(p.version, &k.expr))
                    .collect(),
            )
        })
        .collect()
}

/// Per class value: `(default_user, default_role, default_type, default_range)` as
/// libsepol numbers them (0: no rule).
#[pyfunction]
pub fn default_table(db: &PolicyDb) -> Vec<(u32, u32, u32, u32, u32)> {
    db.model
        .classes
        .iter()
        .enumerate()
        .map(|(i, c)| {
            (
                i as u32 + 1,
                c.default_user.raw(),
                c.default_role.raw(),
                c.default_type.raw(),
                c.default_range.raw(),
            )
        })
        .collect()
}

//! A constraint evaluated with the text libsepol's `constraint_expr_eval_reason` writes for
//! a failing one (what audit2why prints after `#Constraint rule:`).
//!
//! Each term renders as `(u1 == u2) `, `(t1 == name -Fail-) ` or, for a name set,
//! `(t1 == { a b } -Fail-) `; the postfix expression is turned infix with `and` / `or` /
//! `not` and no parentheses of its own, exactly as libsepol does, so the text keeps its
//! double spaces (`-Fail-)  or (`). Type sets print as written in the policy source (the
//! file keeps them from version 29 on), users and roles from the expanded set.

use arbiter_decide::Names;
use arbiter_policy::constraint::{attr, Constraint, ConstraintExpr, ConstraintOp};
use arbiter_policy::mls::{Context, MlsLevel};
use arbiter_policy::{ClassId, Ebitmap, Policy, RoleId, TypeId, UserId};
use std::fmt::Write as _;

/// libsepol's `CEXPR_MAXDEPTH`: a deeper expression evaluates to "deny" with no text.
const MAX_DEPTH: usize = 5;

/// Evaluates `c` for (`s`, `t`) without writing its reason: the common case (most
/// constraints pass) must not pay for rendering name lists. Same stack discipline and
/// leaves as [`eval_with_reason`], which is only called when this returns false.
pub(super) fn eval(policy: &Policy, c: &Constraint, s: &Context, t: &Context) -> bool {
    let mut vals = [false; MAX_DEPTH];
    let mut n = 0usize;
    for e in c.expr.iter() {
        match e {
            ConstraintExpr::Not => {
                let Some(v) = n.checked_sub(1).map(|i| &mut vals[i]) else {
                    return false;
                };
                *v = !*v;
            }
            ConstraintExpr::And | ConstraintExpr::Or => {
                if n < 2 {
                    return false;
                }
                let (va, vb) = (vals[n - 2], vals[n - 1]);
                n -= 1;
                vals[n - 1] = if matches!(e, ConstraintExpr::And) {
                    va && vb
                } else {
                    va || vb
                };
            }
            ConstraintExpr::Attr { attr: a, op } => {
                if n == MAX_DEPTH {
                    return false;
                }
                vals[n] = attr_term(policy, *a, *op, s, t).0;
                n += 1;
            }
            ConstraintExpr::Names {
                attr: a,
                op,
                names: set,
                ..
            } => {
                if n == MAX_DEPTH {
                    return false;
                }
                vals[n] = names_term(*a, *op, set, s, t);
                n += 1;
            }
        }
    }
    n == 1 && vals[0]
}

/// A name-set leaf's value: the context's user, role or type is (`==`) or is not (`!=`)
/// in `set`.
fn names_term(a: u32, op: ConstraintOp, set: &Ebitmap, s: &Context, t: &Context) -> bool {
    let ctx = if a & attr::TARGET != 0 { t } else { s };
    let val = if a & attr::USER != 0 {
        ctx.user.value()
    } else if a & attr::ROLE != 0 {
        ctx.role.value()
    } else {
        u32::from(ctx.ty.value())
    };
    let member = set.contains(val - 1);
    if op == ConstraintOp::Neq {
        !member
    } else {
        member
    }
}

/// Evaluates `c` for (`s`, `t`); when it fails, appends libsepol's reason entry to `buf`.
pub(super) fn eval_with_reason(
    policy: &Policy,
    names: &Names,
    class: ClassId,
    c: &Constraint,
    s: &Context,
    t: &Context,
    buf: &mut String,
) -> bool {
    let mut vals: Vec<bool> = Vec::with_capacity(MAX_DEPTH);
    let mut text: Vec<String> = Vec::with_capacity(MAX_DEPTH);
    for e in c.expr.iter() {
        match e {
            ConstraintExpr::Not => {
                let (Some(v), Some(b)) = (vals.pop(), text.pop()) else {
                    return false;
                };
                vals.push(!v);
                text.push(if b.starts_with("not") {
                    format!("not ({b})")
                } else {
                    format!("not{b}")
                });
            }
            ConstraintExpr::And | ConstraintExpr::Or => {
                let (Some(vb), Some(va)) = (vals.pop(), vals.pop()) else {
                    return false;
                };
                let (Some(b), Some(a)) = (text.pop(), text.pop()) else {
                    return false;
                };
                let and = matches!(e, ConstraintExpr::And);
                vals.push(if and { va && vb } else { va || vb });
                text.push(format!("{a} {} {b}", if and { "and" } else { "or" }));
            }
            ConstraintExpr::Attr { attr: a, op } => {
                if vals.len() == MAX_DEPTH {
                    return false;
                }
                let (v, src, tgt, word) = attr_term(policy, *a, *op, s, t);
                vals.push(v);
                text.push(term(&format!("{src} {word} {tgt}"), !v));
            }
            ConstraintExpr::Names {
                attr: a,
                op,
                names: set,
                ..
            } => {
                if vals.len() == MAX_DEPTH {
                    return false;
                }
                let side = if a & attr::TARGET != 0 { 2 } else { 1 };
                let (letter, shown): (char, &Ebitmap) = if a & attr::USER != 0 {
                    ('u', set)
                } else if a & attr::ROLE != 0 {
                    ('r', set)
                } else {
                    ('t', e.written_names(policy.version).unwrap_or(set))
                };
                let v = names_term(*a, *op, set, s, t);
                vals.push(v);
                let opword = if *op == ConstraintOp::Neq { "!=" } else { "==" };
                text.push(name_list(names, letter, side, opword, shown, !v));
            }
        }
    }
    let result = vals.len() == 1 && vals[0];
    if !result {
        let kw = if c.is_mls() {
            "mlsconstrain"
        } else {
            "constrain"
        };
        let _ = write!(buf, "{kw} {} {{", names.class_name(class).unwrap_or(""));
        for p in names.perms_to_names(class, c.perms) {
            let _ = write!(buf, " {p}");
        }
        let _ = writeln!(
            buf,
            " }} ({}); Constraint DENIED",
            text.pop().unwrap_or_default()
        );
    }
    result
}

/// `l1 dom l2`: higher or equal sensitivity and a superset of the categories.
fn level_dom(l1: &MlsLevel, l2: &MlsLevel) -> bool {
    l1.sens >= l2.sens && l1.cats.contains_all(&l2.cats)
}

fn level_eq(l1: &MlsLevel, l2: &MlsLevel) -> bool {
    l1.sens == l2.sens && l1.cats == l2.cats
}

fn level_incomp(l1: &MlsLevel, l2: &MlsLevel) -> bool {
    !level_dom(l1, l2) && !level_dom(l2, l1)
}

/// A leaf's text: `(TEXT) ` or `(TEXT -Fail-) `.
fn term(inner: &str, failed: bool) -> String {
    if failed {
        format!("({inner} -Fail-) ")
    } else {
        format!("({inner}) ")
    }
}

/// Evaluates a two-context comparison: (value, left operand, right operand, operator word).
fn attr_term(
    policy: &Policy,
    a: u32,
    op: ConstraintOp,
    s: &Context,
    t: &Context,
) -> (bool, &'static str, &'static str, &'static str) {
    let levels = match a {
        attr::L1L2 => Some((&s.range.low, &t.range.low, "l1", "l2")),
        attr::L1H2 => Some((&s.range.low, &t.range.high, "l1", "h2")),
        attr::H1L2 => Some((&s.range.high, &t.range.low, "h1", "l2")),
        attr::H1H2 => Some((&s.range.high, &t.range.high, "h1", "h2")),
        attr::L1H1 => Some((&s.range.low, &s.range.high, "l1", "h1")),
        attr::L2H2 => Some((&t.range.low, &t.range.high, "l2", "h2")),
        _ => None,
    };
    if let Some((l1, l2, src, tgt)) = levels {
        return match op {
            ConstraintOp::Eq => (level_eq(l1, l2), src, tgt, "eq"),
            ConstraintOp::Neq => (!level_eq(l1, l2), src, tgt, "!="),
            ConstraintOp::Dom => (level_dom(l1, l2), src, tgt, "dom"),
            ConstraintOp::Domby => (level_dom(l2, l1), src, tgt, "domby"),
            ConstraintOp::Incomp => (level_incomp(l2, l1), src, tgt, "incomp"),
        };
    }
    let (v1, v2, src, tgt) = match a {
        attr::USER => (s.user.value(), t.user.value(), "u1", "u2"),
        attr::ROLE => (s.role.value(), t.role.value(), "r1", "r2"),
        _ => (u32::from(s.ty.value()), u32::from(t.ty.value()), "t1", "t2"),
    };
    if a == attr::ROLE {
        let dominates = |r: u32, other: u32| {
            RoleId::new(r as _)
                .map(|id| policy.role(id).dominates.contains(other - 1))
                .unwrap_or(false)
        };
        match op {
            ConstraintOp::Dom => return (dominates(v1, v2), src, tgt, "dom"),
            ConstraintOp::Domby => return (dominates(v2, v1), src, tgt, "domby"),
            ConstraintOp::Incomp => {
                return (!dominates(v1, v2) && !dominates(v2, v1), src, tgt, "incomp")
            }
            _ => {}
        }
    }
    match op {
        ConstraintOp::Neq => (v1 != v2, src, tgt, "!="),
        _ => (v1 == v2, src, tgt, "=="),
    }
}

/// libsepol's `get_name_list`: `(t1 == name) `, `(t1 == { a b }) `, `(t1 ==<empty_set> ) `.
fn name_list(
    names: &Names,
    letter: char,
    side: u32,
    op: &str,
    set: &Ebitmap,
    failed: bool,
) -> String {
    let mut out = format!("({letter}{side} {op}");
    let bits: Vec<u32> = set.iter().collect();
    if bits.is_empty() {
        out.push_str("<empty_set> ");
    }
    if bits.len() > 1 {
        out.push_str(" {");
    }
    for b in &bits {
        let name = match letter {
            'u' => UserId::new((b + 1) as _).and_then(|id| names.user_name(id)),
            'r' => RoleId::new((b + 1) as _).and_then(|id| names.role_name(id)),
            _ => TypeId::new((b + 1) as _).and_then(|id| names.type_name(id)),
        };
        out.push(' ');
        out.push_str(name.unwrap_or(""));
    }
    if bits.len() > 1 {
        out.push_str(" }");
    }
    out.push_str(if failed { " -Fail-) " } else { ") " });
    out
}

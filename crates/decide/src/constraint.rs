//! Constraint evaluation (`constrain`, `mlsconstrain`, `validatetrans`), as the kernel's
//! `constraint_expr_eval`: a postfix program over the source, target and (for
//! validatetrans) task contexts.

use arbiter_policy::constraint::{attr, ConstraintExpr, ConstraintOp};
use arbiter_policy::mls::{Context, MlsLevel};
use arbiter_policy::Policy;

/// Expressions are checked for depth at load; this bounds the evaluation stack.
const MAX_DEPTH: usize = 32;

/// `l1` dominates `l2`: higher-or-equal sensitivity and a superset of categories.
#[inline]
pub fn level_dom(l1: &MlsLevel, l2: &MlsLevel) -> bool {
    l1.sens >= l2.sens && l1.cats.contains_all(&l2.cats)
}

#[inline]
pub fn level_eq(l1: &MlsLevel, l2: &MlsLevel) -> bool {
    l1.sens == l2.sens && l1.cats == l2.cats
}

#[inline]
pub fn level_incomp(l1: &MlsLevel, l2: &MlsLevel) -> bool {
    !level_dom(l1, l2) && !level_dom(l2, l1)
}

/// One evaluated term, for explanations: its index in the expression and its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TermResult {
    pub index: usize,
    pub value: bool,
}

/// Evaluates a constraint expression. `x` is the third context of validatetrans (the
/// task); terms that need it evaluate to false when it is absent, as a failed check must
/// never grant. `trace`, when given, receives every leaf term's value.
pub fn eval(
    policy: &Policy,
    expr: &[ConstraintExpr],
    s: &Context,
    t: &Context,
    x: Option<&Context>,
    mut trace: Option<&mut Vec<TermResult>>,
) -> bool {
    let mut stack = [false; MAX_DEPTH];
    let mut sp = 0usize;
    for (index, e) in expr.iter().enumerate() {
        match e {
            ConstraintExpr::Not => {
                if sp == 0 {
                    return false;
                }
                stack[sp - 1] = !stack[sp - 1];
            }
            ConstraintExpr::And | ConstraintExpr::Or => {
                if sp < 2 {
                    return false;
                }
                let b = stack[sp - 1];
                let a = stack[sp - 2];
                sp -= 1;
                stack[sp - 1] = if matches!(e, ConstraintExpr::And) {
                    a && b
                } else {
                    a || b
                };
            }
            ConstraintExpr::Attr { attr: a, op } => {
                let v = eval_attr(policy, *a, *op, s, t);
                if sp >= MAX_DEPTH {
                    return false;
                }
                stack[sp] = v;
                sp += 1;
                if let Some(tr) = trace.as_deref_mut() {
                    tr.push(TermResult { index, value: v });
                }
            }
            ConstraintExpr::Names {
                attr: a, op, names, ..
            } => {
                let c = if a & attr::TARGET != 0 {
                    Some(t)
                } else if a & attr::XTARGET != 0 {
                    x
                } else {
                    Some(s)
                };
                let v = match c {
                    None => false,
                    Some(c) => {
                        let val = if a & attr::USER != 0 {
                            c.user.value()
                        } else if a & attr::ROLE != 0 {
                            c.role.value()
                        } else if a & attr::TYPE != 0 {
                            c.ty.value() as u32
                        } else {
                            0
                        };
                        if val == 0 {
                            false
                        } else {
                            let has = names.contains(val - 1);
                            match op {
                                ConstraintOp::Eq => has,
                                ConstraintOp::Neq => !has,
                                _ => false,
                            }
                        }
                    }
                };
                if sp >= MAX_DEPTH {
                    return false;
                }
                stack[sp] = v;
                sp += 1;
                if let Some(tr) = trace.as_deref_mut() {
                    tr.push(TermResult { index, value: v });
                }
            }
        }
    }
    sp == 1 && stack[0]
}

fn eval_attr(policy: &Policy, a: u32, op: ConstraintOp, s: &Context, t: &Context) -> bool {
    let (l1, l2) = match a {
        attr::USER => return eq_op(op, s.user.value(), t.user.value()),
        attr::TYPE => return eq_op(op, s.ty.value() as u32, t.ty.value() as u32),
        attr::ROLE => {
            let r1 = policy.roles.get(s.role.index());
            let r2 = policy.roles.get(t.role.index());
            let (Some(r1), Some(r2)) = (r1, r2) else {
                return false;
            };
            let dom12 = r1.dominates.contains(t.role.value() - 1);
            let dom21 = r2.dominates.contains(s.role.value() - 1);
            return match op {
                ConstraintOp::Dom => dom12,
                ConstraintOp::Domby => dom21,
                ConstraintOp::Incomp => !dom12 && !dom21,
                _ => eq_op(op, s.role.value(), t.role.value()),
            };
        }
        attr::L1L2 => (&s.range.low, &t.range.low),
        attr::L1H2 => (&s.range.low, &t.range.high),
        attr::H1L2 => (&s.range.high, &t.range.low),
        attr::H1H2 => (&s.range.high, &t.range.high),
        attr::L1H1 => (&s.range.low, &s.range.high),
        attr::L2H2 => (&t.range.low, &t.range.high),
        _ => return false,
    };
    match op {
        ConstraintOp::Eq => level_eq(l1, l2),
        ConstraintOp::Neq => !level_eq(l1, l2),
        ConstraintOp::Dom => level_dom(l1, l2),
        ConstraintOp::Domby => level_dom(l2, l1),
        ConstraintOp::Incomp => level_incomp(l2, l1),
    }
}

#[inline]
fn eq_op(op: ConstraintOp, a: u32, b: u32) -> bool {
    match op {
        ConstraintOp::Eq => a == b,
        ConstraintOp::Neq => a != b,
        _ => false,
    }
}

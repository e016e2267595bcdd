//! Conditional (`booleanif`) nodes: expressions in reverse Polish form, their
//! evaluation and libsepol's list optimisation.

use super::*;

#[derive(Default)]
pub(super) struct CondBuild {
    pub(super) nbools: usize,
    pub(super) bools: Vec<u32>,
    pub(super) pre: u32,
    pub(super) expr: Vec<CondExpr>,
    /// Rules in insertion order (libsepol prepends, so its lists are these reversed; they
    /// are reversed once when the node is finished instead of inserting at the front).
    pub(super) true_list: Vec<AvtabEntry>,
    pub(super) false_list: Vec<AvtabEntry>,
}

pub(super) fn eval_cond(expr: &[CondExpr], val: &dyn Fn(u32) -> bool) -> Option<bool> {
    // The stack is never deeper than the expression is long: up to 64 entries it is one
    // word (a `Vec` per call grew 3,293 times on the Debian store).
    if expr.len() > 64 {
        return eval_cond_deep(expr, val);
    }
    let (mut st, mut depth) = (0u64, 0u32);
    let pop = |st: &mut u64, depth: &mut u32| -> Option<bool> {
        *depth = depth.checked_sub(1)?;
        let b = *st & 1 == 1;
        *st >>= 1;
        Some(b)
    };
    for e in expr {
        let r = match *e {
            CondExpr::Bool(b) => val(b.value()),
            CondExpr::Not => !pop(&mut st, &mut depth)?,
            op => {
                let b = pop(&mut st, &mut depth)?;
                let a = pop(&mut st, &mut depth)?;
                match op {
                    CondExpr::Or => a | b,
                    CondExpr::And => a & b,
                    CondExpr::Xor => a ^ b,
                    CondExpr::Eq => a == b,
                    _ => a != b,
                }
            }
        };
        st = st << 1 | u64::from(r);
        depth += 1;
    }
    (depth == 1).then_some(st & 1 == 1)
}

/// [`eval_cond`] for expressions longer than 64 entries.
fn eval_cond_deep(expr: &[CondExpr], val: &dyn Fn(u32) -> bool) -> Option<bool> {
    let mut st: Vec<bool> = Vec::new();
    for e in expr {
        match *e {
            CondExpr::Bool(b) => st.push(val(b.value())),
            CondExpr::Not => {
                let a = st.pop()?;
                st.push(!a)
            }
            op => {
                let b = st.pop()?;
                let a = st.pop()?;
                st.push(match op {
                    CondExpr::Or => a | b,
                    CondExpr::And => a & b,
                    CondExpr::Xor => a ^ b,
                    CondExpr::Eq => a == b,
                    _ => a != b,
                })
            }
        }
    }
    if st.len() == 1 {
        st.pop()
    } else {
        None
    }
}

/// libsepol's `cond_optimize`: the list is stored newest first; type rules after the head
/// move to the front (each in turn, so they end up reversed).
///
/// Appended to `out` in place (no vectors of its own).
pub(super) fn cond_optimize_into(list: &[AvtabEntry], out: &mut Vec<AvtabEntry>) {
    let Some((head, rest)) = list.split_first() else {
        return;
    };
    out.reserve(list.len());
    out.extend(rest.iter().rev().filter(|e| e.key.kind.is_type_rule()));
    out.push(*head);
    out.extend(rest.iter().filter(|e| !e.key.kind.is_type_rule()));
}

pub(super) fn cond_rpn(
    l: &L<'_>,
    n: u32,
    out: &mut Vec<CondExpr>,
    bv: &dyn Fn(&L<'_>, u32) -> Result<u32, Fail>,
) -> Result<(), Fail> {
    let t = l.t;
    let bool_id = |v: u32| arbiter_policy::BoolId::new(v as _).expect("bool");
    if !t.is_list(n) {
        out.push(CondExpr::Bool(bool_id(bv(l, n)?)));
        return Ok(());
    }
    let k = t.kids(n);
    if k.is_empty() {
        return Err(err("Invalid conditional expression".into()));
    }
    let op = t.sym(k[0]).and_then(Kw::of);
    let opx = match op {
        Some(Kw::Not) => Some(CondExpr::Not),
        Some(Kw::And) => Some(CondExpr::And),
        Some(Kw::Or) => Some(CondExpr::Or),
        Some(Kw::Xor) => Some(CondExpr::Xor),
        Some(Kw::Eq) => Some(CondExpr::Eq),
        Some(Kw::Neq) => Some(CondExpr::Neq),
        _ => None,
    };
    match opx {
        Some(CondExpr::Not) => {
            if k.len() != 2 {
                return Err(err("Invalid conditional expression".into()));
            }
            cond_rpn(l, k[1], out, bv)?;
            out.push(CondExpr::Not);
        }
        Some(o) => {
            if k.len() != 3 {
                return Err(err("Invalid conditional expression".into()));
            }
            cond_rpn(l, k[1], out, bv)?;
            cond_rpn(l, k[2], out, bv)?;
            out.push(o);
        }
        None => {
            cond_rpn(l, k[0], out, bv)?;
            for &x in &k[1..] {
                cond_rpn(l, x, out, bv)?;
                out.push(CondExpr::Or);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_stack_agrees_with_the_vector_one() {
        let b = |v: u16| CondExpr::Bool(arbiter_policy::BoolId::new(v as _).unwrap());
        let val = |v: u32| v % 2 == 1;
        let exprs: Vec<Vec<CondExpr>> = vec![
            vec![b(1)],
            vec![b(2), CondExpr::Not],
            vec![b(1), b(2), CondExpr::And],
            vec![b(1), b(2), CondExpr::Or, b(3), CondExpr::Xor],
            vec![b(1), b(3), CondExpr::Eq, b(2), CondExpr::Neq],
            vec![b(1), b(2)],
            vec![CondExpr::Not],
            vec![b(1), CondExpr::And],
            vec![],
        ];
        for e in &exprs {
            assert_eq!(eval_cond(e, &val), eval_cond_deep(e, &val), "{e:?}");
        }
        // 65 entries: the deep path, the same answer.
        let mut long = vec![b(1)];
        for _ in 0..32 {
            long.extend([b(1), CondExpr::And]);
        }
        assert_eq!(eval_cond(&long, &val), Some(true));
    }
}

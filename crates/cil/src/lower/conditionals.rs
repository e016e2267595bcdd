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

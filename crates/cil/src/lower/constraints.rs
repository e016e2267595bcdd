//! Constraint expressions (`constrain`, `validatetrans`, `mls*`) to the policy's
//! postfix form.

use super::*;

pub(super) fn constraint_expr(l: &mut L<'_>, n: u32) -> Result<Vec<ConstraintExpr>, Fail> {
    let t = l.t;
    let k = t.kids(n);
    let op = k.first().and_then(|&x| t.sym(x)).and_then(Kw::of);
    let mut out = vec![];
    match op {
        Some(Kw::Not) => {
            out = constraint_expr(l, k[1])?;
            out.push(ConstraintExpr::Not);
        }
        Some(o @ (Kw::And | Kw::Or)) => {
            out = constraint_expr(l, k[1])?;
            out.extend(constraint_expr(l, k[2])?);
            out.push(if o == Kw::And {
                ConstraintExpr::And
            } else {
                ConstraintExpr::Or
            });
        }
        Some(o) => {
            let cop = match o {
                Kw::Eq => ConstraintOp::Eq,
                Kw::Neq => ConstraintOp::Neq,
                Kw::Dom => ConstraintOp::Dom,
                Kw::Domby => ConstraintOp::Domby,
                _ => ConstraintOp::Incomp,
            };
            let left = t.sym(k[1]).and_then(Kw::of);
            let right = t.sym(k[2]).and_then(Kw::of);
            let a = match left {
                Some(Kw::U1) => attr::USER,
                Some(Kw::U2) => attr::USER | attr::TARGET,
                Some(Kw::U3) => attr::USER | attr::XTARGET,
                Some(Kw::R1) => attr::ROLE,
                Some(Kw::R2) => attr::ROLE | attr::TARGET,
                Some(Kw::R3) => attr::ROLE | attr::XTARGET,
                Some(Kw::T1) => attr::TYPE,
                Some(Kw::T2) => attr::TYPE | attr::TARGET,
                Some(Kw::T3) => attr::TYPE | attr::XTARGET,
                Some(Kw::L1) => match right {
                    Some(Kw::L2) => attr::L1L2,
                    Some(Kw::H1) => attr::L1H1,
                    _ => attr::L1H2,
                },
                Some(Kw::L2) => attr::L2H2,
                Some(Kw::H1) => match right {
                    Some(Kw::L2) => attr::H1L2,
                    _ => attr::H1H2,
                },
                _ => return Err(err("Invalid constraint expression".into())),
            };
            let operand = matches!(
                right,
                Some(
                    Kw::U1
                        | Kw::U2
                        | Kw::U3
                        | Kw::R1
                        | Kw::R2
                        | Kw::R3
                        | Kw::T1
                        | Kw::T2
                        | Kw::T3
                        | Kw::L1
                        | Kw::L2
                        | Kw::H1
                        | Kw::H2
                )
            );
            if operand {
                out.push(ConstraintExpr::Attr { attr: a, op: cop });
            } else {
                let single = [k[2]];
                let items: &[u32] = if t.is_list(k[2]) {
                    t.kids(k[2])
                } else {
                    &single
                };
                let mut names: Vec<u32> = vec![];
                let mut tnames: Vec<u32> = vec![];
                for &x in items {
                    match left {
                        Some(Kw::U1 | Kw::U2 | Kw::U3) => {
                            for ui in l.user_set(x)?.iter() {
                                names.push(ui as u32);
                            }
                        }
                        Some(Kw::R1 | Kw::R2 | Kw::R3) => {
                            names.extend(l.role_vals(x)?.into_iter().map(|v| v - 1));
                        }
                        _ => {
                            let r = l.tref(x)?;
                            match r {
                                TRef::Type(i) => tnames.push(l.type_val[i as usize] - 1),
                                TRef::Attr(a) if l.attr_val[a as usize] != 0 => {
                                    tnames.push(l.attr_val[a as usize] - 1)
                                }
                                _ => {}
                            }
                            names.extend(l.expand_all(r)?.into_iter().map(|v| v - 1));
                        }
                    }
                }
                // The source-level type set exists in the format from version 29.
                let type_names = (l.opts.policy_version >= 29).then(|| {
                    Box::new(TypeSet {
                        types: Ebitmap::from_bits(tnames),
                        negset: Ebitmap::default(),
                        flags: 0,
                    })
                });
                out.push(ConstraintExpr::Names {
                    attr: a,
                    op: cop,
                    names: Ebitmap::from_bits(names),
                    type_names,
                });
            }
        }
        None => return Err(err("Invalid constraint expression".into())),
    }
    Ok(out)
}

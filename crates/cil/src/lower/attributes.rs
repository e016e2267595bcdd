//! Type attributes: their expressions gathered, the usage marks libsepol sets
//! (`CIL_ATTR_*`), their members evaluated, and which attributes are kept in the policy
//! (`cil_typeattribute_used`).

use super::*;

/// Gathers attribute, role-attribute and user-attribute set expressions and marks each
/// type attribute with how rules, neverallows, constraints and `expandtypeattribute`
/// use it.
pub(super) fn mark_uses(l: &mut L<'_>) -> Result<(), Fail> {
    let (t, ast) = (l.t, l.ast);
    let na = l.attrs.len();
    l.attr_members = vec![None; na];
    l.attr_count = vec![u32::MAX; na];
    l.attr_busy = vec![false; na];
    l.attr_exprs = vec![vec![]; na];
    l.attr_used = vec![0; na];
    l.rattr_members = vec![None; l.rattrs.len()];
    l.rattr_exprs = vec![vec![]; l.rattrs.len()];
    l.uattr_members = vec![None; l.uattrs.len()];
    l.uattr_exprs = vec![vec![]; l.uattrs.len()];
    // The unconditional av rules on their own: their marks are ORed, so their order
    // among the other statements does not matter, only for which message comes first.
    let mut av_failure = None;
    for s in l.live_av.clone().iter() {
        if let Err(e) = mark_rule(l, s as u32) {
            av_failure = Some((s as u32, e));
            break;
        }
    }
    let rest = l.live_rest.clone();
    first_failure(av_failure, |stop| {
        for s in rest.iter() {
            let s = s as u32;
            if s > stop {
                break;
            }
            let st = ast.stmts[s as usize];
            // Each arm reads its statement's arguments (most statements here are
            // declarations, which need none).
            match st.kw {
                Kw::TypeAttributeSet => {
                    let a = l.args(s);
                    let d = l.look(Ns::Types, a[1])?;
                    if l.kind(d) != DeclKind::TypeAttribute {
                        return Err(err(format!(
                            "Attribute type not an attribute at {}",
                            l.here(s)
                        )));
                    }
                    l.attr_exprs[l.dint[d as usize] as usize].push(a[2]);
                }
                Kw::UserAttributeSet => {
                    let a = l.args(s);
                    let d = l.look(Ns::Users, a[1])?;
                    if l.kind(d) != DeclKind::UserAttribute {
                        return Err(err(format!("Not a user attribute at {}", l.here(s))));
                    }
                    l.uattr_exprs[l.dint[d as usize] as usize].push(a[2]);
                }
                Kw::RoleAttributeSet => {
                    let a = l.args(s);
                    let d = l.look(Ns::Roles, a[1])?;
                    if l.kind(d) != DeclKind::RoleAttribute {
                        return Err(err(format!("Not a role attribute at {}", l.here(s))));
                    }
                    l.rattr_exprs[l.dint[d as usize] as usize].push(a[2]);
                }
                Kw::ExpandTypeAttribute => {
                    let a = l.args(s);
                    let flag = match t.sym(a[2]).and_then(Kw::of) {
                        Some(Kw::True) => USED_EXPAND_TRUE,
                        Some(Kw::False) => USED_EXPAND_FALSE,
                        _ => return Err(err(format!("Bad expandtypeattribute at {}", l.here(s)))),
                    };
                    let names: Vec<u32> = if t.is_list(a[1]) {
                        t.kids(a[1]).to_vec()
                    } else {
                        vec![a[1]]
                    };
                    for x in names {
                        match l.tref(x)? {
                            TRef::Attr(i) => {
                                let u = &mut l.attr_used[i as usize];
                                *u |= flag;
                                if *u & USED_EXPAND_TRUE != 0 && *u & USED_EXPAND_FALSE != 0 {
                                    *u &= !USED_EXPAND_TRUE;
                                }
                            }
                            _ => {
                                return Err(err(format!(
                                    "Attribute type not an attribute at {}",
                                    l.here(s)
                                )))
                            }
                        }
                    }
                }
                Kw::Allow
                | Kw::AuditAllow
                | Kw::DontAudit
                | Kw::NeverAllow
                | Kw::AllowX
                | Kw::AuditAllowX
                | Kw::DontAuditX
                | Kw::NeverAllowX => mark_rule(l, s)?,
                Kw::Constrain | Kw::MlsConstrain | Kw::ValidateTrans | Kw::MlsValidateTrans => {
                    let a = l.args(s);
                    let mut stack = vec![a[2]];
                    while let Some(n) = stack.pop() {
                        let k = t.kids(n);
                        match k.first().and_then(|&x| t.sym(x)).and_then(Kw::of) {
                            Some(Kw::And | Kw::Or | Kw::Not) => stack.extend_from_slice(&k[1..]),
                            _ if k.len() == 3
                                && matches!(
                                    t.sym(k[1]).and_then(Kw::of),
                                    Some(Kw::T1 | Kw::T2 | Kw::T3)
                                ) =>
                            {
                                let names: Vec<u32> = if t.is_list(k[2]) {
                                    t.kids(k[2]).to_vec()
                                } else if matches!(
                                    t.sym(k[2]).and_then(Kw::of),
                                    Some(Kw::T1 | Kw::T2 | Kw::T3)
                                ) {
                                    vec![]
                                } else {
                                    vec![k[2]]
                                };
                                for x in names {
                                    if let TRef::Attr(i) = l.tref(x)? {
                                        l.attr_used[i as usize] |= USED_CONSTRAINT;
                                    }
                                }
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    })
}

/// Marks the attributes an av rule names (`allow` ... `neverallowx`): the source is not
/// marked when the target is `self` (cil_resolve_avrule). Inlined: its result went
/// through memory for each of the 180,000 rules of a distribution policy.
#[inline(always)]
fn mark_rule(l: &mut L<'_>, s: u32) -> Result<(), Fail> {
    let kw = l.ast.stmts[s as usize].kw;
    let a = l.args(s);
    if l.t.sym(a[2]) == Some(Kw::SelfKw.sym()) {
        return Ok(());
    }
    let used = if matches!(kw, Kw::NeverAllow | Kw::NeverAllowX) {
        USED_NEVERALLOW
    } else {
        USED_AVRULE
    };
    for &x in &a[1..3] {
        if let TRef::Attr(i) = l.tref(x)? {
            l.attr_used[i as usize] |= used;
        }
    }
    Ok(())
}

/// Whether attribute `a` was generated for a neverallow (`*_typeattr_*`).
fn is_generated(l: &L<'_>, a: usize) -> bool {
    l.int
        .bytes(l.ast.decls[l.attrs[a] as usize].name)
        .windows(10)
        .any(|w| w == b"_typeattr_")
}

/// Attributes generated for neverallows pass their mark on to the attributes named in
/// their expressions (`__mark_neverallow_attrs`).
pub(super) fn mark_neverallow_sources(l: &mut L<'_>) {
    let t = l.t;
    let na = l.attrs.len();
    for i in 0..na {
        if l.attr_used[i] & USED_NEVERALLOW == 0 || !is_generated(l, i) {
            continue;
        }
        let mut seen = vec![false; na];
        seen[i] = true;
        let mut stack: Vec<u32> = l.attr_exprs[i].clone();
        while let Some(n) = stack.pop() {
            if t.is_list(n) {
                stack.extend_from_slice(t.kids(n));
                continue;
            }
            if let Ok(TRef::Attr(a)) = l.tref(n) {
                let a = a as usize;
                if is_generated(l, a) {
                    if !seen[a] {
                        seen[a] = true;
                        stack.extend(l.attr_exprs[a].iter().copied());
                    }
                } else {
                    l.attr_used[a] |= USED_NEVERALLOW;
                }
            }
        }
    }
}

/// Evaluates every attribute's members (errors in expressions surface here, in
/// declaration order).
pub(super) fn expand(l: &mut L<'_>) -> Result<(), Fail> {
    for i in 0..l.attrs.len() {
        l.ensure_members(i as u32)?;
    }
    Ok(())
}

/// Per attribute: whether it is kept as a type of the policy (`cil_typeattribute_used`)
/// rather than expanded into its members.
pub(super) fn kept(l: &L<'_>) -> Vec<bool> {
    let (int, ast, opts) = (l.int, l.ast, l.opts);
    (0..l.attrs.len())
        .map(|i| {
            let used = l.attr_used[i];
            let name = int.bytes(ast.decls[l.attrs[i] as usize].name);
            if used == 0 {
                return false;
            }
            if used & USED_EXPAND_FALSE != 0 {
                return true;
            }
            if used & USED_EXPAND_TRUE != 0 {
                return false;
            }
            if used & USED_CONSTRAINT != 0 {
                return true;
            }
            if opts.expand_generated || used == USED_NEVERALLOW {
                if name == b"cil_gen_require" || name.windows(10).any(|w| w == b"_typeattr_") {
                    return false;
                }
                if used == USED_NEVERALLOW {
                    return true;
                }
            }
            if used == USED_AVRULE {
                let n = l.attr_members[i].as_ref().map_or(0, |b| b.count());
                if (n as u32) < opts.expand_size {
                    return false;
                }
            }
            true
        })
        .collect()
}

//! The third walk of lowering: booleanifs (and preserved tunableifs) with the rules of
//! their branches, the unconditional av rules and extended av rules, `roleallow`.

use super::*;

/// Rule statements per (booleanif, branch as written), in walk order: a macro call's
/// body sits at the call's place in the branch (tunableif bodies are moved, so
/// statements are not in node order). Each branch's rules are one range of a shared
/// list (a vector per branch was an allocation per booleanif).
pub(super) struct BranchRules {
    ranges: FxHashMap<(u32, u32), (u32, u32)>,
    rules: Vec<u32>,
}

impl BranchRules {
    /// The rule statements of branch `b` of booleanif `s` (none when it has none).
    pub(super) fn get(&self, s: u32, b: u32) -> &[u32] {
        self.ranges
            .get(&(s, b))
            .map_or(&[][..], |&(a, e)| &self.rules[a as usize..e as usize])
    }
}

/// [`BranchRules`] of the live conditional statements. Built just before the rules are
/// entered, so its tables are not allocated under the other statements' tables.
pub(super) fn cond_rules_by_branch(l: &L<'_>) -> BranchRules {
    // A branch's rules come in runs (mostly one): each run is gathered in a reused buffer
    // and stored once, with one map look-up per run instead of per rule. A branch's
    // later run moves its earlier ones to the end of the list, so that its rules stay
    // one range.
    fn flush(br: &mut BranchRules, key: (u32, u32), run: &mut Vec<u32>) {
        let start = br.rules.len() as u32;
        if let Some(&(a, e)) = br.ranges.get(&key) {
            br.rules.extend_from_within(a as usize..e as usize);
        }
        br.rules.extend_from_slice(run);
        br.ranges.insert(key, (start, br.rules.len() as u32));
        run.clear();
    }
    let mut br = BranchRules {
        ranges: FxHashMap::default(),
        rules: Vec::with_capacity(l.in_cond.count()),
    };
    let mut run: Vec<u32> = Vec::new();
    let mut key = None;
    for i in l.in_cond.iter() {
        let st = &l.ast.stmts[i];
        let k = (st.cond, st.branch);
        if key != Some(k) {
            if let Some(prev) = key {
                flush(&mut br, prev, &mut run);
            }
            key = Some(k);
        }
        run.push(i as u32);
    }
    if let Some(prev) = key {
        flush(&mut br, prev, &mut run);
    }
    br
}

/// Lowers booleanifs, av rules and `roleallow` in walk order.
pub(super) fn lower_all(
    l: &mut L<'_>,
    p: &mut Parts,
    cond_rules: &BranchRules,
) -> Result<(), Fail> {
    let (ast, opts) = (l.ast, l.opts);
    // The unconditional av rules first, on their own (nothing else here reads the
    // unconditional table, and they read nothing the others write).
    let mut av_failure = None;
    for s in l.live_av.clone().iter() {
        let s = s as u32;
        if ast.stmts[s as usize].kw == Kw::DontAudit && opts.disable_dontaudit {
            continue;
        }
        if av_rule_fast(l, s, &mut p.avtab, &mut p.avindex) {
            continue;
        }
        if let Err(e) = av_rule(l, s, Some((&mut p.avtab, &mut p.avindex)), None) {
            av_failure = Some((s, e));
            break;
        }
    }
    // Over a copy of the live set (38 KB), as the pass mutates `l`.
    let rest = l.live_rest.clone();
    first_failure(av_failure, |stop| {
        for s in rest.iter() {
            let s = s as u32;
            if s > stop {
                break;
            }
            let st = ast.stmts[s as usize];
            match st.kw {
                Kw::TunableIf if !opts.preserve_tunables => {}
                Kw::BooleanIf | Kw::TunableIf => booleanif(l, p, s, cond_rules)?,
                Kw::AllowX | Kw::AuditAllowX | Kw::DontAuditX if st.cond == NONE => {
                    if st.kw == Kw::DontAuditX && opts.disable_dontaudit {
                        continue;
                    }
                    av_rulex(l, s, &mut p.xside, &mut p.xindex)?;
                }
                Kw::RoleAllow => {
                    let a = l.args(s);
                    let ra = l.role_vals(a[1])?;
                    let rb = l.role_vals(a[2])?;
                    for &x in &ra {
                        for &y in &rb {
                            p.role_allow.push(RoleAllow {
                                role: RoleId::new(x).expect("role"),
                                new_role: RoleId::new(y).expect("role"),
                            });
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    })?;
    // Freed before assembly, where the build's memory peaks (the checks after the rules
    // resolve their lists themselves).
    drop(std::mem::take(&mut l.handed));
    Ok(())
}

/// The conditional node of a booleanif's expression: an existing one when libsepol
/// would find it equal (same booleans and truth table, or the same expression past five
/// booleans), else a new one. Returns its index and whether the expression was negated
/// at the top (its branches then swap).
fn cond_node(l: &L<'_>, p: &mut Parts, e: u32) -> Result<(usize, bool), Fail> {
    let bool_value = |l: &L<'_>, n: u32| -> Result<u32, Fail> {
        let d = l.look(Ns::Bools, n)?;
        Ok(l.dint[d as usize] + 1)
    };
    // Expression to RPN.
    let mut expr = vec![];
    cond_rpn(l, e, &mut expr, &bool_value)?;
    let mut depth: i32 = -1;
    for e in &expr {
        match e {
            CondExpr::Bool(_) => {
                if depth == 9 {
                    return Err(err(
                        "Conditional expression exceeded max allowable depth".into()
                    ));
                }
                depth += 1
            }
            CondExpr::Not if depth < 0 => return Err(err("Invalid conditional expression".into())),
            CondExpr::Not => {}
            _ if depth < 1 => return Err(err("Invalid conditional expression".into())),
            _ => depth -= 1,
        }
    }
    if depth != 0 {
        return Err(err("Invalid conditional expression".into()));
    }
    let mut swapped = false;
    if expr.last() == Some(&CondExpr::Not) {
        expr.pop();
        swapped = true;
    }
    let mut bools: Vec<u32> = vec![];
    let mut nbools = 0;
    for e in &expr {
        if let CondExpr::Bool(b) = e {
            let v = b.value();
            if nbools > 5 || !bools.contains(&v) {
                if nbools < 5 {
                    bools.push(v);
                }
                nbools += 1;
            }
        }
    }
    let mut pre = 0u32;
    if nbools <= 5 {
        for test in 0..(1u32 << nbools) {
            let val = |b: u32| {
                let j = bools.iter().position(|&x| x == b).unwrap_or(0);
                test & (1 << j) != 0
            };
            if eval_cond(&expr, &val) == Some(true) {
                pre |= 1 << test;
            }
        }
    }
    let found = p.conds.iter().position(|c| {
        c.nbools == nbools
            && if nbools <= 5 {
                c.bools.iter().all(|b| bools.contains(b)) && c.pre == pre
            } else {
                c.expr == expr
            }
    });
    let idx = match found {
        Some(i) => i,
        None => {
            p.conds.push(CondBuild {
                nbools,
                bools,
                pre,
                expr,
                true_list: vec![],
                false_list: vec![],
            });
            p.conds.len() - 1
        }
    };
    Ok((idx, swapped))
}

/// A booleanif: its node, then the rules of the last `true` and last `false` branch
/// into the node's lists.
fn booleanif(l: &mut L<'_>, p: &mut Parts, s: u32, cond_rules: &BranchRules) -> Result<(), Fail> {
    let (t, ast) = (l.t, l.ast);
    let st = ast.stmts[s as usize];
    let (idx, swapped) = cond_node(l, p, l.args(s)[1])?;
    // libsepol keeps only the last (true ...) and (false ...) block.
    let mut last_true = None;
    let mut last_false = None;
    for &b in &t.kids(st.src)[2..] {
        if t.sym(t.kids(b)[0]) == Some(Kw::True.sym()) {
            last_true = Some(b)
        } else {
            last_false = Some(b)
        }
    }
    let mut branches = vec![];
    let (tb, fb) = if swapped {
        (last_false, last_true)
    } else {
        (last_true, last_false)
    };
    if let Some(b) = tb {
        branches.push((b, true));
    }
    if let Some(b) = fb {
        branches.push((b, false));
    }
    for (b, br) in branches {
        let rules = cond_rules.get(s, b);
        // The node out of `p` for the branch (its rules write `p` as well).
        let mut cb = std::mem::take(&mut p.conds[idx]);
        let mut r = Ok(());
        for &rs in rules {
            let kw = ast.stmts[rs as usize].kw;
            if kw == Kw::TypeTransition && l.args(rs).len() == 6 {
                // libsepol's __cil_cond_to_policydb refuses named transitions.
                r = Err(Fail::bad(messages::cond_named_transition(l, rs, s, br)));
                break;
            }
            r = match kw {
                Kw::TypeTransition | Kw::TypeChange | Kw::TypeMember => {
                    type_rule(l, p, rs, Some((&mut cb, br)))
                }
                Kw::DontAudit if l.opts.disable_dontaudit => Ok(()),
                _ => {
                    let list = if br {
                        &mut cb.true_list
                    } else {
                        &mut cb.false_list
                    };
                    if av_rule_fast_cond(l, rs, list) {
                        Ok(())
                    } else {
                        av_rule(l, rs, None, Some((&mut cb, br)))
                    }
                }
            };
            if r.is_err() {
                break;
            }
        }
        p.conds[idx] = cb;
        r?;
    }
    Ok(())
}

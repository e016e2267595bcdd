//! The first walks of lowering: declarations into their kind's list, the `*order`
//! statements merged into class, SID, sensitivity and category orders, and the dense
//! (class, permission name) bit table the rule loops read.

use super::*;

/// The order statements as written, merged by [`order_symbols`].
pub(super) struct Orders {
    class: Vec<(u32, Vec<u32>)>,
    sid: Vec<(u32, Vec<u32>)>,
    sens: Vec<(u32, Vec<u32>)>,
    cat: Vec<(u32, Vec<u32>)>,
    /// Classes of `(classorder (unordered ...))`, appended after the ordered ones.
    unordered: Vec<u32>,
}

/// One walk over the live statements: each declaration's internal index, the `mls` and
/// `handleunknown` statements, the order statements, class permission set bodies and
/// alias bindings.
pub(super) fn collect(l: &mut L<'_>, p: &mut Parts) -> Result<Orders, Fail> {
    let (t, ast) = (l.t, l.ast);
    // Declarations by statement, walked alongside the live statements (both ascending),
    // where a map probed for each of the 300,000 statements cost 40 instructions each. A
    // statement declaring more than once keeps its last declaration.
    let mut by_stmt: Vec<(u32, u32)> = (ast.decls.iter().enumerate())
        .map(|(d, decl)| (decl.stmt, d as u32))
        .collect();
    by_stmt.sort_unstable();
    let mut next = 0;
    p.live_decls.reserve(ast.decls.len());
    let mut class_orders = vec![];
    let mut sid_orders = vec![];
    let mut sens_orders = vec![];
    let mut cat_orders = vec![];
    let mut unordered: Vec<u32> = vec![];
    // Over a copy of the live set (38 KB), as the pass mutates `l`; the unconditional
    // av rules declare nothing and are none of the statements handled here.
    for s in l.live_rest.clone().iter() {
        let s = s as u32;
        let st = ast.stmts[s as usize];
        // Read only by the statements handled here (a few in a hundred).
        let a = || t.kids(st.node);
        while by_stmt.get(next).is_some_and(|&(st, _)| st < s) {
            next += 1;
        }
        let mut declared = None;
        while let Some(&(_, d)) = by_stmt.get(next).filter(|&&(st, _)| st == s) {
            declared = Some(d);
            next += 1;
        }
        if let Some(d) = declared {
            p.live_decls.push((s, d));
            let list = match ast.decls[d as usize].kind {
                DeclKind::Type => Some(&mut l.types),
                DeclKind::TypeAttribute => Some(&mut l.attrs),
                DeclKind::Role => Some(&mut l.roles),
                DeclKind::RoleAttribute => Some(&mut l.rattrs),
                DeclKind::User => Some(&mut l.users),
                DeclKind::UserAttribute => Some(&mut l.uattrs),
                DeclKind::Bool => Some(&mut l.bools),
                DeclKind::Common => Some(&mut l.commons),
                _ => None,
            };
            if let Some(list) = list {
                l.dint[d as usize] = list.len() as u32;
                list.push(d);
            }
        }
        match st.kw {
            Kw::Mls => {
                if p.mls_stmt.is_some() {
                    return Err(err(format!(
                        "Mls statement already defined at {}",
                        l.here(s)
                    )));
                }
                p.mls_stmt = Some(t.sym(a()[1]) == Some(Kw::True.sym()));
            }
            Kw::HandleUnknown => {
                p.handle_unknown = Some(match t.sym(a()[1]).and_then(Kw::of) {
                    Some(Kw::Allow) => HandleUnknown::Allow,
                    Some(Kw::Reject) => HandleUnknown::Reject,
                    _ => HandleUnknown::Deny,
                });
            }
            Kw::ClassOrder | Kw::SidOrder | Kw::SensitivityOrder | Kw::CategoryOrder => {
                let ns = Ns::of_order(st.kw).unwrap_or(Ns::Cats);
                let mut v = vec![];
                let mut un = false;
                for &x in t.kids(a()[1]) {
                    if ns == Ns::Classes && t.sym(x) == Some(Kw::Unordered.sym()) {
                        un = true;
                        continue;
                    }
                    v.push(l.look(ns, x)?);
                }
                match st.kw {
                    Kw::ClassOrder if un => {
                        for d in v {
                            if !unordered.contains(&d) {
                                unordered.push(d)
                            }
                        }
                    }
                    Kw::ClassOrder => class_orders.push((s, v)),
                    Kw::SidOrder => sid_orders.push((s, v)),
                    Kw::SensitivityOrder => sens_orders.push((s, v)),
                    _ => cat_orders.push((s, v)),
                }
            }
            Kw::ClassPermissionSet => {
                let d = l.look(Ns::ClassPermissions, a()[1])?;
                l.cp_sets.entry(d).or_default().push(a()[2]);
            }
            Kw::ClassMapping => {
                let d = l.look(Ns::Classes, a()[1])?;
                let p = l.sym(a()[2]);
                l.map_sets.entry((d, p)).or_default().push(a()[3]);
            }
            Kw::TypeAliasActual | Kw::SensitivityAliasActual | Kw::CategoryAliasActual => {
                let ns = match st.kw {
                    Kw::TypeAliasActual => Ns::Types,
                    Kw::SensitivityAliasActual => Ns::Sens,
                    _ => Ns::Cats,
                };
                let al = l.look(ns, a()[1])?;
                let ac = l.look(ns, a()[2])?;
                l.alias_actual.insert(al, ac);
            }
            _ => {}
        }
    }
    Ok(Orders {
        class: class_orders,
        sid: sid_orders,
        sens: sens_orders,
        cat: cat_orders,
        unordered,
    })
}

/// Merges the order statements and numbers classes, SIDs, sensitivities and categories
/// by their position; every declared one must be ordered (`__cil_verify_ordered`).
pub(super) fn order_symbols(l: &mut L<'_>, p: &mut Parts, o: Orders) -> Result<(), Fail> {
    let (ast, r) = (l.ast, l.r);
    l.mls = l.opts.mls.or(p.mls_stmt).unwrap_or(false);
    let mut classes = merge_orders(l, &o.class, "Class")?;
    for d in o.unordered {
        if !classes.contains(&d) {
            classes.push(d);
        }
    }
    l.classes = classes;
    for (i, &d) in l.classes.clone().iter().enumerate() {
        l.dint[d as usize] = i as u32;
    }
    p.sids = merge_orders(l, &o.sid, "SID")?;
    l.sens = merge_orders(l, &o.sens, "Sensitivity")?;
    l.cats = merge_orders(l, &o.cat, "Category")?;
    for (i, &d) in l.sens.clone().iter().enumerate() {
        l.dint[d as usize] = i as u32;
    }
    for (i, &d) in l.cats.clone().iter().enumerate() {
        l.dint[d as usize] = i as u32;
    }
    for (i, &d) in p.sids.iter().enumerate() {
        l.dint[d as usize] = i as u32;
    }
    // Every declared class, SID, sensitivity and category must be ordered
    // (`__cil_verify_ordered`).
    for (d, decl) in ast.decls.iter().enumerate() {
        let what = match decl.kind {
            DeclKind::Class => "Class %s not in classorder statement",
            DeclKind::Sid => "SID %s not in sidorder statement",
            DeclKind::Cat => "Category %s not in categoryorder statement",
            DeclKind::Sens => "Sensitivity %s not in sensitivityorder statement",
            _ => continue,
        };
        if r.stmt_live(decl.stmt) && l.dint[d] == NONE {
            return Err(Fail::bad(vec![
                format!(
                    "{} at {}",
                    what.replace("%s", &l.name(d as u32)),
                    l.here(decl.stmt)
                ),
                "Failed to verify cil database".into(),
                "Post process failed".into(),
                "Failed to compile cildb: -1".into(),
            ]));
        }
    }
    l.class_common = l.classes.iter().map(|&c| r.class_common(c)).collect();
    Ok(())
}

/// Fills [`L::perm_bits`]: per (class position, permission name), the permission's bit.
pub(super) fn permission_table(l: &mut L<'_>) {
    let (int, ast) = (l.int, l.ast);
    // Type values and aliases are all known from here on.
    l.tref_memo = vec![std::cell::Cell::new(0); int.len()];
    let mut class_bits: Vec<Vec<(Sym, u32)>> = Vec::with_capacity(l.classes.len());
    l.perm_id = vec![u32::MAX; int.len()];
    for (ci, &cd) in l.classes.iter().enumerate() {
        let own = ast.perm_lists.get(&cd).map_or(&[][..], |v| v.as_slice());
        let common = l.class_common[ci].and_then(|c| ast.perm_lists.get(&c));
        let ncommon = common.map_or(0, |c| c.len());
        let mut bits = vec![];
        // Over 32: refused below ("Too many permissions"); the slow path meanwhile.
        if ncommon + own.len() <= 32 {
            let own_bits = own.iter().enumerate().map(|(i, &p)| (p, ncommon + i));
            let common_bits = common
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(i, &p)| (p, i));
            for (p, bit) in own_bits.chain(common_bits) {
                if l.perm_id[p as usize] == u32::MAX {
                    l.perm_id[p as usize] = l.perm_names;
                    l.perm_names += 1;
                }
                bits.push((p, 1u32 << bit));
            }
        }
        class_bits.push(bits);
    }
    l.perm_bits = vec![0; l.classes.len() * l.perm_names as usize];
    for (ci, bits) in class_bits.iter().enumerate() {
        // Reversed: the first entry of a name (the class's own before the common's)
        // is the one that stays.
        for &(p, bit) in bits.iter().rev() {
            let at = ci * l.perm_names as usize + l.perm_id[p as usize] as usize;
            l.perm_bits[at] = bit;
        }
    }
}

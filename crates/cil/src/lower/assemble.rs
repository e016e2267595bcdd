//! The last steps of lowering: the tables put in libsepol's order, the symbols' bitmaps
//! filled, the conditional list built, the policy assembled and checked (neverallows and
//! bounds, without `-N`), and the text outputs.

use super::*;

/// Assembles the policy from the lowered parts, checks it and renders the text outputs.
pub(super) fn finish(mut l: L<'_>, mut p: Parts) -> Result<Lowered, Fail> {
    let opts = l.opts;
    let xperms_vec = flush_xperms(&mut p)?;
    p.role_trans.reverse();
    p.role_allow.reverse();
    fill_bitmaps(&l, &mut p);
    let (cond_nodes, cond_avtab) = cond_list(&mut p);
    let initial_sids = initial_sids(&l, &p)?;
    // Context rules, sorted as libsepol does.
    contexts::sort_and_dedup(&l, &mut p.cr)?;
    let xencons = std::mem::take(&mut p.xencons);
    crate::xencon::check_duplicates(&xencons, opts.verbose, opts.multiple_decls)?;
    let xen = if opts.target == crate::Target::Xen {
        Some(crate::xencon::lower(xencons, opts.multiple_decls, |c| {
            l.sepol_context(c)
        })?)
    } else {
        None
    };
    let co = contexts::to_policy(&l, &p.cr, &p.classes)?;
    let mls = l.mls;
    let mut policy = Policy {
        version: opts.policy_version,
        mls,
        handle_unknown: opts
            .handle_unknown
            .or(p.handle_unknown)
            .unwrap_or(HandleUnknown::Deny),
        policycaps: Ebitmap::from_bits(std::mem::take(&mut p.policycaps)),
        permissive: Ebitmap::from_bits(std::mem::take(&mut p.permissive)),
        neveraudit: Ebitmap::default(),
        commons: std::mem::take(&mut p.commons),
        classes: std::mem::take(&mut p.classes),
        roles: std::mem::take(&mut p.rdatums),
        types: std::mem::take(&mut p.tdatums),
        type_aliases: std::mem::take(&mut p.type_aliases),
        users: std::mem::take(&mut p.udatums),
        bools: std::mem::take(&mut p.bdatums),
        sensitivities: if mls {
            std::mem::take(&mut p.sdatums)
        } else {
            vec![]
        },
        sensitivity_aliases: if mls {
            std::mem::take(&mut p.sens_aliases)
        } else {
            vec![]
        },
        categories: if mls {
            std::mem::take(&mut p.cdatums)
        } else {
            vec![]
        },
        category_aliases: if mls {
            std::mem::take(&mut p.cat_aliases)
        } else {
            vec![]
        },
        avtab: Avtab {
            entries: std::mem::take(&mut p.avtab),
            xperms: xperms_vec,
        },
        cond_nodes,
        cond_avtab,
        role_trans: std::mem::take(&mut p.role_trans),
        role_allow: std::mem::take(&mut p.role_allow),
        filename_trans: std::mem::take(&mut p.ftrans),
        ocontexts: OContexts {
            initial_sids,
            ports: co.ports,
            fs_use: co.fs_use,
            netifs: co.netifs,
            nodes: co.nodes,
            nodes6: co.nodes6,
            ibpkeys: co.ibpkeys,
            ibendports: co.ibendports,
            ..Default::default()
        },
        genfs: co.genfs,
        range_trans: std::mem::take(&mut p.range_trans),
        type_attr_map: vec![],
    };
    if let Some(xen) = xen {
        crate::xencon::make_xen(&mut policy, xen);
    }
    policy.filename_trans.sort_by(|a, b| {
        (a.target, a.class, a.name.as_bytes()).cmp(&(b.target, b.class, b.name.as_bytes()))
    });
    policy.type_attr_map = type_attr_map(&l, policy.types.len());
    // secilc's neverallow and bounds checks (without -N) on the finished policy.
    if !opts.disable_neverallow {
        check_neverallows(&mut l, &p, &policy)?;
    }
    let (fc, seusers, users_extra) = text::outputs(
        &l,
        &p.cr.filecons,
        &p.selinuxusers,
        p.seuser_default.as_ref(),
        &p.userprefixes,
    );
    Ok(Lowered {
        policy,
        file_contexts: fc,
        seusers,
        users_extra,
    })
}

/// Frees the rule indexes, flushes extended permissions from their side table into the
/// avtab, sorts it in libsepol's order and numbers the extended permissions in table
/// order, as a reader of the file would.
fn flush_xperms(p: &mut Parts) -> Result<Vec<arbiter_policy::avtab::Xperms>, Fail> {
    // The rule indexes are done with: freed before the tables are ordered and copied.
    drop(std::mem::take(&mut p.avindex));
    drop(std::mem::take(&mut p.xindex));
    // Extended permissions: flushed from their side table (libsepol's avrulex table: 1024
    // buckets by a key hash that includes the kind, insertion order within a bucket).
    let mut xorder: Vec<usize> = (0..p.xside.len()).collect();
    xorder.sort_by_key(|&i| (avrulex_bucket(&p.xside[i].0), i));
    let mut xperms_vec: Vec<arbiter_policy::avtab::Xperms> = vec![];
    for i in xorder {
        let (key, bits) = &p.xside[i];
        let list = xperms_list(bits);
        // Each insert for the same key lands before the previous one.
        for x in list.into_iter().rev() {
            let idx = xperms_vec.len() as u32;
            xperms_vec.push(x);
            p.avtab
                .push(AvtabEntry::new(*key, AvtabDatum::Xperms(idx)).map_err(mismatch)?);
        }
    }
    if !p.avtab.iter().any(|e| !e.key.kind.is_type_rule()) {
        return Err(err("Policy must include at least one avrule".into()));
    }
    avtab_order(&mut p.avtab);
    // Number extended permissions in table order, as a reader of the file would.
    let mut renumbered = Vec::with_capacity(xperms_vec.len());
    for e in p.avtab.iter_mut() {
        if let Some(mut i) = e.xperms_index_mut() {
            let old = std::mem::replace(&mut *i, renumbered.len() as u32);
            renumbered.push(xperms_vec[old as usize]);
        }
    }
    Ok(renumbered)
}

/// Role types, user roles, sensitivity categories, constraints and bounds into the
/// datums.
fn fill_bitmaps(l: &L<'_>, p: &mut Parts) {
    for (ri, b) in p.role_types.iter().enumerate() {
        let v = l.role_val[ri];
        if v == 1 {
            continue;
        }
        p.rdatums[v as usize - 1].types = Ebitmap::from_bits(b.iter().map(|i| l.type_val[i] - 1));
    }
    for (ui, rs) in p.user_roles.iter().enumerate() {
        p.udatums[ui].roles = Ebitmap::from_bits(rs.iter().filter(|&&v| v != 1).map(|v| v - 1));
    }
    for (i, c) in p.sens_cats.iter().enumerate() {
        p.sdatums[i].level.cats = Ebitmap::from_bits(c.iter().map(|x| x as u32));
    }
    for (i, c) in p.classes.iter_mut().enumerate() {
        c.constraints = std::mem::take(&mut p.constraints[i]).into_boxed_slice();
        c.validatetrans = std::mem::take(&mut p.validatetrans[i]).into_boxed_slice();
    }
    for (child, parent) in std::mem::take(&mut p.role_bounds) {
        let cv = l.role_val[child as usize];
        p.rdatums[cv as usize - 1].bounds = RoleId::new(l.role_val[parent as usize]);
    }
    for (child, parent) in std::mem::take(&mut p.user_bounds) {
        p.udatums[child as usize].bounds = UserId::new(parent + 1);
    }
    for (a, b) in std::mem::take(&mut p.type_bounds) {
        if let (TRef::Type(x), TRef::Type(y)) = (a, b) {
            p.tdatums[l.type_val[x as usize] as usize - 1].bounds =
                Some(tid(l.type_val[y as usize]));
        }
    }
}

/// The conditional list: newest node first, each list reversed and optimised as
/// libsepol leaves it.
fn cond_list(p: &mut Parts) -> (Vec<CondNode>, Avtab) {
    let conds = std::mem::take(&mut p.conds);
    let mut cond_nodes = Vec::with_capacity(conds.len());
    let mut cond_avtab = Avtab::default();
    let entries: usize = conds
        .iter()
        .map(|c| c.true_list.len() + c.false_list.len())
        .sum();
    cond_avtab.entries.reserve_exact(entries);
    let bool_state = |v: u32| p.bdatums[v as usize - 1].state;
    for cb in conds.into_iter().rev() {
        let state = eval_cond(&cb.expr, &bool_state).unwrap_or(false);
        let mut push = |mut list: Vec<AvtabEntry>| -> std::ops::Range<u32> {
            list.reverse();
            let start = cond_avtab.entries.len() as u32;
            cond_optimize_into(&list, &mut cond_avtab.entries);
            start..cond_avtab.entries.len() as u32
        };
        let true_list = push(cb.true_list);
        let false_list = push(cb.false_list);
        cond_nodes.push(CondNode {
            cur_state: state,
            expr: cb.expr.into_boxed_slice(),
            true_list,
            false_list,
        });
    }
    (cond_nodes, cond_avtab)
}

/// Initial SIDs with a context, in sidorder.
fn initial_sids(l: &L<'_>, p: &Parts) -> Result<Vec<InitialSid>, Fail> {
    let mut initial_sids = vec![];
    for (i, &sd) in p.sids.iter().enumerate() {
        if let Some(c) = p.sidctx.get(&sd) {
            initial_sids.push(InitialSid {
                sid: i as u32 + 1,
                context: l.sepol_context(c)?,
            });
        }
    }
    Ok(initial_sids)
}

/// type_attr_map: each type maps to itself and its kept attributes.
fn type_attr_map(l: &L<'_>, ntypes: usize) -> Vec<Ebitmap> {
    // Counted, then placed in one flat array: a vector per type grew ~6,700 times on the
    // Debian store (2.3 M instructions).
    let kept = || {
        l.attr_val
            .iter()
            .zip(l.attr_members.iter())
            .filter(|(&v, _)| v != 0)
            .filter_map(|(&v, m)| m.as_ref().map(|m| (v, m)))
    };
    let mut count = vec![1usize; ntypes];
    for (_, m) in kept() {
        for ti in m.iter() {
            count[l.type_val[ti] as usize - 1] += 1;
        }
    }
    let mut start = Vec::with_capacity(ntypes + 1);
    start.push(0usize);
    for &c in &count {
        start.push(start[start.len() - 1] + c);
    }
    let mut flat = vec![0u32; start[ntypes]];
    let mut next: Vec<usize> = start[..ntypes].to_vec();
    for (t, slot) in next.iter_mut().enumerate() {
        flat[*slot] = t as u32;
        *slot += 1;
    }
    for (v, m) in kept() {
        for ti in m.iter() {
            let slot = &mut next[l.type_val[ti] as usize - 1];
            flat[*slot] = v - 1;
            *slot += 1;
        }
    }
    start
        .windows(2)
        .map(|w| Ebitmap::from_bits(flat[w[0]..w[1]].iter().copied()))
        .collect()
}

/// secilc's neverallow and bounds checks on the finished policy.
fn check_neverallows(l: &mut L<'_>, p: &Parts, policy: &Policy) -> Result<(), Fail> {
    let (t, ast, names, opts) = (l.t, l.ast, l.names, l.opts);
    let object_r = l.role_val.iter().position(|&v| v == 1);
    let object_r_types = object_r.map_or_else(Ebitmap::default, |ri| {
        Ebitmap::from_bits(p.role_types[ri].iter().map(|i| l.type_val[i] - 1))
    });
    let mut nevers = Vec::with_capacity(p.neverallows.len());
    for &s in p.neverallows.iter().rev() {
        nevers.push(ast_rule(l, s)?);
    }
    let input = crate::check::Input {
        policy,
        tree: t,
        ast,
        names,
        type_val: &l.type_val.clone(),
        object_r_types,
        verbose: opts.verbose > 0,
    };
    let mut rules = |extended: bool| -> Result<Vec<crate::check::AstRule>, Fail> {
        let want = if extended { Kw::AllowX } else { Kw::Allow };
        let stmts: Vec<u32> = (l.live.iter())
            .map(|s| s as u32)
            .filter(|&s| ast.stmts[s as usize].kw == want)
            .collect();
        stmts.into_iter().map(|s| ast_rule(l, s)).collect()
    };
    crate::check::run(&input, &nevers, &mut rules)?;
    Ok(())
}

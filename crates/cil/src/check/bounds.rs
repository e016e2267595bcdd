//! Bounds checks (libsepol `hierarchy.c`, `cil_binary.c` `cil_check_type_bounds`): a
//! bounded user may not have a role its parent lacks, a bounded role a type its parent
//! lacks, and a bounded type may not be allowed anything its parent is not (with the
//! target replaced by its own parent when it has one).

use super::neverallow::attr_type_map;
use super::{rule_lines, rule_matches, AstRule, Input, RuleCache, RuleSource, TypeRef};
use crate::Fail;
use arbiter_policy::avtab::{AvtabDatum, AvtabEntry, AvtabKind};
use arbiter_policy::write::{symtab_order, ROLE_TABLE_BUCKETS, USER_TABLE_BUCKETS};
use arbiter_policy::Ebitmap;
use std::collections::HashMap;

/// `bounds_check_users`, in the users table's hash order.
pub(super) fn check_users(input: &Input<'_>, out: &mut Vec<String>) -> bool {
    let users = &input.policy.users;
    let names: Vec<&str> = users.iter().map(|u| &*u.name).collect();
    let mut bad = 0;
    for i in symtab_order(USER_TABLE_BUCKETS, &names) {
        let u = &users[i];
        let Some(b) = u.bounds else { continue };
        let parent = &users[b.value() as usize - 1];
        if !contains(&parent.roles, &u.roles) {
            out.push(format!(
                "libsepol.bounds_check_user_callback: User bounds violation, {} exceeds {}",
                u.name, parent.name
            ));
            bad += 1;
        }
    }
    if bad > 0 {
        out.push(format!(
            "libsepol.bounds_check_users: {bad} errors found during user bounds check"
        ));
    }
    bad > 0
}

/// `bounds_check_roles`, in the roles table's hash order.
pub(super) fn check_roles(input: &Input<'_>, out: &mut Vec<String>) -> bool {
    let roles = &input.policy.roles;
    let names: Vec<&str> = roles.iter().map(|r| &*r.name).collect();
    // object_r (value 1) is written without types but has them while libsepol checks.
    let types = |i: usize| {
        if i == 0 {
            &input.object_r_types
        } else {
            &roles[i].types
        }
    };
    let mut bad = 0;
    for i in symtab_order(ROLE_TABLE_BUCKETS, &names) {
        let r = &roles[i];
        let Some(b) = r.bounds else { continue };
        let pi = b.value() as usize - 1;
        if !contains(types(pi), types(i)) {
            out.push(format!(
                "libsepol.bounds_check_role_callback: Role bounds violation, {} exceeds {}",
                r.name, roles[pi].name
            ));
            bad += 1;
        }
    }
    if bad > 0 {
        out.push(format!(
            "libsepol.bounds_check_roles: {bad} errors found during role bounds check"
        ));
    }
    bad > 0
}

/// `ebitmap_contains(a, b)`: every bit of `b` is in `a`.
fn contains(a: &Ebitmap, b: &Ebitmap) -> bool {
    b.iter().all(|x| a.contains(x))
}

/// (source, target, class) values.
type Key = (u32, u32, u32);

/// The allowed permissions of one avtab, as `bounds_insert_rule` accumulates them.
type Table = HashMap<Key, u32>;

/// One violation: the child's rule (child, target, class values) and the bits not
/// covered by the parent.
struct Bad {
    key: Key,
    perms: u32,
}

/// `cil_check_type_bounds`: every bounded type in CIL order; for each, the rules exceeding
/// its parent (latest found first, as libsepol prepends them), each with the statement
/// rules that grant it.
pub(super) fn check_types(
    input: &Input<'_>,
    rules: &mut RuleSource<'_>,
    cache: &mut RuleCache,
    out: &mut Vec<String>,
) -> Result<bool, Fail> {
    let p = input.policy;
    let bounded: Vec<(u32, u32)> = input
        .type_val
        .iter()
        .filter_map(|&v| {
            let b = p.types[v as usize - 1].bounds?;
            Some((v, u32::from(b.value())))
        })
        .collect();
    if bounded.is_empty() {
        return Ok(false);
    }
    let atm = attr_type_map(p);
    let mut index_of_value = vec![u32::MAX; p.types.len() + 1];
    for (ti, &v) in input.type_val.iter().enumerate() {
        index_of_value[v as usize] = ti as u32;
    }
    let cond_lists: Vec<(&[AvtabEntry], &[AvtabEntry])> = p
        .cond_nodes
        .iter()
        .rev()
        .map(|n| {
            let e = &p.cond_avtab.entries;
            (
                &e[n.true_list.start as usize..n.true_list.end as usize],
                &e[n.false_list.start as usize..n.false_list.end as usize],
            )
        })
        .collect();
    let mut violation = false;
    for (child, parent) in bounded {
        let (global, branches) = expand_parent(p, &atm, &cond_lists, parent);
        let mut bad: Vec<Bad> = Vec::new();
        let check = |e: &AvtabEntry, global: Option<&Table>, cur: &Table, bad: &mut Vec<Bad>| {
            if e.key.kind != AvtabKind::Allowed {
                return;
            }
            let AvtabDatum::Perms(data) = e.datum() else {
                return;
            };
            let src = u32::from(e.key.source.value());
            if atm[src as usize - 1].binary_search(&child).is_err() {
                return;
            }
            let class = u32::from(e.key.class.value());
            for &t in &atm[u32::from(e.key.target.value()) as usize - 1] {
                let tk = p.types[t as usize - 1]
                    .bounds
                    .map_or(t, |b| u32::from(b.value()));
                let key = (parent, tk, class);
                let mut d = data & !cur.get(&key).copied().unwrap_or(0);
                if let (Some(g), true) = (global, d != 0) {
                    d &= !g.get(&key).copied().unwrap_or(0);
                }
                if d != 0 {
                    bad.push(Bad {
                        key: (child, t, class),
                        perms: d,
                    });
                }
            }
        };
        for e in &p.avtab.entries {
            check(e, None, &global, &mut bad);
        }
        for ((t_list, f_list), (t_tab, f_tab)) in cond_lists.iter().zip(&branches) {
            for e in t_list.iter() {
                check(e, Some(&global), t_tab, &mut bad);
            }
            for e in f_list.iter() {
                check(e, Some(&global), f_tab, &mut bad);
            }
        }
        if bad.is_empty() {
            continue;
        }
        violation = true;
        report(
            input,
            rules,
            cache,
            &index_of_value,
            child,
            parent,
            &bad,
            out,
        )?;
    }
    Ok(violation)
}

/// `bounds_expand_parent_rules`: the parent's allowed permissions, unconditional (plus
/// what both branches of a conditional allow), and per conditional node its true and false
/// branches. libsepol takes every entry of a conditional list here, whatever its kind,
/// with its raw datum bits; so do we.
fn expand_parent(
    p: &arbiter_policy::Policy,
    atm: &[Vec<u32>],
    cond_lists: &[(&[AvtabEntry], &[AvtabEntry])],
    parent: u32,
) -> (Table, Vec<(Table, Table)>) {
    let expand = |e: &AvtabEntry, data: u32, each: &mut dyn FnMut(Key, u32)| {
        let src = u32::from(e.key.source.value());
        if atm[src as usize - 1].binary_search(&parent).is_err() {
            return;
        }
        let class = u32::from(e.key.class.value());
        for &t in &atm[u32::from(e.key.target.value()) as usize - 1] {
            each((parent, t, class), data);
        }
    };
    let raw = |e: &AvtabEntry| match e.datum() {
        AvtabDatum::Perms(d) => d,
        AvtabDatum::Type(t) => u32::from(t.value()),
        AvtabDatum::Xperms(_) => 0,
    };
    let mut global = Table::new();
    for e in &p.avtab.entries {
        if e.key.kind != AvtabKind::Allowed {
            continue;
        }
        expand(e, raw(e), &mut |k, d| *global.entry(k).or_default() |= d);
    }
    let mut branches = Vec::with_capacity(cond_lists.len());
    for (t_list, f_list) in cond_lists {
        let mut t_tab = Table::new();
        for e in t_list.iter() {
            expand(e, raw(e), &mut |k, d| *t_tab.entry(k).or_default() |= d);
        }
        let mut f_tab = Table::new();
        for e in f_list.iter() {
            expand(e, raw(e), &mut |k, d| {
                *f_tab.entry(k).or_default() |= d;
                // Permissions both branches allow count as unconditional.
                let both = t_tab.get(&k).copied().unwrap_or(0) & d;
                if both != 0 {
                    *global.entry(k).or_default() |= both;
                }
            });
        }
        branches.push((t_tab, f_tab));
    }
    (global, branches)
}

/// The report of one bounded type: its exceeding rules, latest first, each with the
/// statement rules granting it (`<See previous>` for the one just shown).
#[allow(clippy::too_many_arguments)]
fn report(
    input: &Input<'_>,
    rules: &mut RuleSource<'_>,
    cache: &mut RuleCache,
    index_of_value: &[u32],
    child: u32,
    parent: u32,
    bad: &[Bad],
    out: &mut Vec<String>,
) -> Result<(), Fail> {
    let p = input.policy;
    let tname = |v: u32| &*p.types[v as usize - 1].name;
    out.push(format!(
        "Child type {} exceeds bounds of parent {}",
        tname(child),
        tname(parent)
    ));
    let candidates = cache.get(false, rules)?;
    let mut last_shown: Option<u32> = None;
    for (n, b) in bad.iter().rev().enumerate() {
        let (s, t, c) = b.key;
        let class = &p.classes[c as usize - 1];
        let perm_names: Vec<&str> = (0..class.nprim.min(32))
            .filter(|i| b.perms & (1 << i) != 0)
            .filter_map(|i| perm_name(p, class, i + 1))
            .collect();
        out.push(format!(
            "  (allow {} {} ({} ({})))",
            tname(s),
            tname(t),
            class.name,
            perm_names.join(" ")
        ));
        let target = AstRule {
            stmt: 0,
            src: TypeRef::Type(index_of_value[s as usize]),
            tgt: Some(TypeRef::Type(index_of_value[t as usize])),
            perms: vec![(c - 1, b.perms)],
            ioctls: None,
            text: String::new(),
        };
        let matching: Vec<&AstRule> = candidates
            .iter()
            .filter(|r| rule_matches(r, &target))
            .collect();
        for (m, r) in matching.iter().enumerate() {
            if last_shown == Some(r.stmt) {
                out.push("    <See previous>".into());
            } else {
                last_shown = Some(r.stmt);
                rule_lines(input, r, out);
            }
            if m + 1 >= 2 && matching.len() > 2 && !input.verbose {
                out.push(format!(
                    "    Only first 2 of {} matching rules shown (use \"-v\" to show all)",
                    matching.len()
                ));
                break;
            }
        }
        if n + 1 >= 4 && bad.len() > 4 && !input.verbose {
            out.push(format!(
                "  Only first 4 of {} bad rules shown (use \"-v\" to show all)",
                bad.len()
            ));
            break;
        }
    }
    Ok(())
}

/// The name of permission `value` of a class (its own or its common's).
fn perm_name<'p>(
    p: &'p arbiter_policy::Policy,
    class: &'p arbiter_policy::symbols::Class,
    value: u32,
) -> Option<&'p str> {
    if let Some(x) = class.perms.iter().find(|x| x.value == value) {
        return Some(&x.name);
    }
    let c = p.common(class.common?);
    c.perms.iter().find(|x| x.value == value).map(|x| &*x.name)
}

//! `neverallow` and `neverallowx` checks (`cil_binary.c` `cil_check_neverallow`, libsepol
//! `assertion.c` `check_assertion`): a rule fails when an allow entry of either table, for
//! a source and target it covers, grants one of its permissions; a neverallowx fails when
//! such an entry grants `ioctl` and the extended permissions of the matching types either
//! allow a forbidden number or are absent (then every number is allowed).

use super::{rule_lines, rule_matches, AstRule, Input, RuleCache, RuleSource};
use crate::bits::Bits;
use crate::Fail;
use arbiter_policy::avtab::{AvtabDatum, AvtabEntry, AvtabKind, Xperms, XpermsKind};
use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::Policy;
use std::collections::HashMap;

/// Checks `nevers` in order, appending secilc's report of each failure to `out`.
pub(super) fn check(
    input: &Input<'_>,
    nevers: &[AstRule],
    rules: &mut RuleSource<'_>,
    cache: &mut RuleCache,
    out: &mut Vec<String>,
) -> Result<bool, Fail> {
    if nevers.is_empty() {
        return Ok(false);
    }
    let p = input.policy;
    // Built at the first allow entry that grants a forbidden permission: a policy none
    // of whose entries does (`bench.cil`) never needs it (0.36 M instructions there).
    let attr_types = std::cell::OnceCell::new();
    let mut violation = false;
    let mut xidx: Option<[XIndex<'_>; 2]> = None;
    for never in nevers {
        let n = p.types.len() + 1;
        let src = sepol_set(input, &never.src, n);
        let tgt = never.tgt.as_ref().map(|t| sepol_set(input, t, n));
        let rule = Assertion {
            src: &src,
            tgt: tgt.as_ref(),
            perms: &never.perms,
        };
        match &never.ioctls {
            None => {
                if rule.violated(p, &attr_types, None) {
                    violation = true;
                    report(input, never, rules, cache, out)?;
                }
            }
            Some((_, nums)) => {
                // One check (and one report) per entry of the neverallowx's extended
                // permission list, as libsepol makes them.
                let idx = xidx.get_or_insert_with(|| {
                    [
                        xindex(&p.avtab.entries, &p.avtab),
                        xindex(&p.cond_avtab.entries, &p.cond_avtab),
                    ]
                });
                for x in crate::lower::xperms::xperms_list(nums) {
                    if rule.violated(p, &attr_types, Some((&x, idx))) {
                        violation = true;
                        report(input, never, rules, cache, out)?;
                    }
                }
            }
        }
    }
    Ok(violation)
}

/// The allowx entries of one table by (source, target, class) values, for the
/// neverallowx searches (`avtab_search_node` over every attribute pair).
type XIndex<'p> = HashMap<(u32, u32, u16), Vec<&'p Xperms>>;

fn xindex<'p>(entries: &[AvtabEntry], table: &'p arbiter_policy::avtab::Avtab) -> XIndex<'p> {
    let mut m: XIndex<'p> = HashMap::new();
    for a in entries {
        if a.key.kind != AvtabKind::XpermsAllowed {
            continue;
        }
        if let Some(x) = table.xperms_of(a.datum()) {
            let key = (
                u32::from(a.key.source.value()),
                u32::from(a.key.target.value()),
                a.key.class.value(),
            );
            m.entry(key).or_default().push(x);
        }
    }
    m
}

/// A neverallow in libsepol's terms: type values as sets, `self` as no target set.
struct Assertion<'a> {
    src: &'a Bits,
    tgt: Option<&'a Bits>,
    perms: &'a [(u32, u32)],
}

impl Assertion<'_> {
    /// `check_assertion`: the unconditional table, then the conditional one.
    fn violated(
        &self,
        p: &Policy,
        atm: &std::cell::OnceCell<Vec<Vec<u32>>>,
        x: Option<(&Xperms, &[XIndex<'_>; 2])>,
    ) -> bool {
        let none = [XIndex::new(), XIndex::new()];
        let (x, idx) = match x {
            Some((x, idx)) => (Some(x), idx),
            None => (None, &none),
        };
        p.avtab
            .entries
            .iter()
            .any(|e| self.entry_violates(p, atm, e, x, &idx[0]))
            || p.cond_avtab
                .entries
                .iter()
                .any(|e| self.entry_violates(p, atm, e, x, &idx[1]))
    }

    /// `check_assertion_avtab_match` for entry `e` of `table`.
    fn entry_violates(
        &self,
        p: &Policy,
        atm: &std::cell::OnceCell<Vec<Vec<u32>>>,
        e: &AvtabEntry,
        x: Option<&Xperms>,
        table: &XIndex<'_>,
    ) -> bool {
        if e.key.kind != AvtabKind::Allowed {
            return false;
        }
        let AvtabDatum::Perms(data) = e.datum() else {
            return false;
        };
        let class = u32::from(e.key.class.value()) - 1;
        if !self.perms.iter().any(|&(c, b)| c == class && b & data != 0) {
            return false;
        }
        let atm = atm.get_or_init(|| attr_type_map(p));
        let ks = &atm[e.key.source.value() as usize - 1];
        let kt = &atm[e.key.target.value() as usize - 1];
        let src_matches: Vec<u32> = ks
            .iter()
            .copied()
            .filter(|&v| self.src.get(v as usize))
            .collect();
        if src_matches.is_empty() {
            return false;
        }
        let tgt_matches: Vec<u32> = match self.tgt {
            Some(t) => kt.iter().copied().filter(|&v| t.get(v as usize)).collect(),
            // `self`: the key's target must be one of the matching sources.
            None => intersect(&src_matches, kt),
        };
        if tgt_matches.is_empty() {
            return false;
        }
        let Some(x) = x else {
            return true;
        };
        // `check_assertion_extended_permissions`: some matching (source, target) pair
        // whose extended permissions allow a forbidden number, or have none at all.
        for &i in &src_matches {
            for &j in &tgt_matches {
                if self.tgt.is_none() && i != j {
                    continue;
                }
                if xperms_violate(p, e, i, j, x, table) {
                    return true;
                }
            }
        }
        false
    }
}

/// `check_assertion_extended_permissions_avtab`: the allowx entries of every attribute
/// pair of types `i` and `j` in the table searched; the result starts true (nothing
/// found: all numbers allowed) and keeps that of the last entry seen.
fn xperms_violate(
    p: &Policy,
    e: &AvtabEntry,
    i: u32,
    j: u32,
    never: &Xperms,
    table: &XIndex<'_>,
) -> bool {
    let sattr = &p.type_attr_map[i as usize - 1];
    let tattr = &p.type_attr_map[j as usize - 1];
    let mut rc = true;
    for s in sattr.iter() {
        for t in tattr.iter() {
            let key = (s + 1, t + 1, e.key.class.value());
            for allow in table.get(&key).into_iter().flatten() {
                rc = extended_permissions_overlap(never, allow);
                if rc {
                    return true;
                }
            }
        }
    }
    rc
}

/// `check_extended_permissions`.
fn extended_permissions_overlap(never: &Xperms, allow: &Xperms) -> bool {
    let and = |a: &[u32; 8], b: &[u32; 8]| a.iter().zip(b).any(|(x, y)| x & y != 0);
    let test = |bit: u8, perms: &[u32; 8]| perms[usize::from(bit) / 32] & (1 << (bit % 32)) != 0;
    use XpermsKind::{IoctlDriver, IoctlFunction};
    match (never.kind, allow.kind) {
        (IoctlFunction, IoctlFunction) => {
            never.driver == allow.driver && and(&never.perms, &allow.perms)
        }
        (IoctlFunction, IoctlDriver) => test(never.driver, &allow.perms),
        (IoctlDriver, IoctlFunction) => test(allow.driver, &never.perms),
        (IoctlDriver, IoctlDriver) => and(&never.perms, &allow.perms),
        // 3.4 knows only ioctl lists (and CIL makes no other kind).
        _ => false,
    }
}

/// `__cil_print_neverallow_failure`: the rule, then the allow rules of the statement list
/// that match it (the first four at default verbosity), then a blank line.
fn report(
    input: &Input<'_>,
    never: &AstRule,
    rules: &mut RuleSource<'_>,
    cache: &mut RuleCache,
    out: &mut Vec<String>,
) -> Result<(), Fail> {
    let st = input.ast.stmts[never.stmt as usize];
    out.push(format!(
        "{} check failed at {}",
        st.kw.text(),
        crate::ast::loc(input.tree, input.names, st.file, st.node)
    ));
    out.push(format!("  {}", never.text));
    let candidates = cache.get(never.ioctls.is_some(), rules)?;
    let matching: Vec<&AstRule> = candidates
        .iter()
        .filter(|r| rule_matches(r, never))
        .collect();
    for (n, r) in matching.iter().enumerate() {
        rule_lines(input, r, out);
        if n + 1 >= 4 && matching.len() > 4 && !input.verbose {
            out.push(format!(
                "    Only first 4 of {} matching rules shown (use \"-v\" to show all)",
                matching.len()
            ));
            break;
        }
    }
    out.push(String::new());
    Ok(())
}

/// libsepol's `attr_type_map`: per type value - 1, the type values it stands for (a type
/// itself, an attribute its members), ascending.
pub(super) fn attr_type_map(p: &Policy) -> Vec<Vec<u32>> {
    // `Policy::members`, with values in place of ids: built once, not converted.
    let mut out = vec![Vec::new(); p.types.len()];
    for (i, map) in p.type_attr_map.iter().enumerate() {
        if p.types.get(i).map(|t| t.flavor) != Some(TypeFlavor::Type) {
            continue;
        }
        let value = i as u32 + 1;
        for b in map.iter() {
            if let Some(m) = out.get_mut(b as usize) {
                m.push(value);
            }
        }
    }
    out
}

/// The type values of an operand (an attribute's members), as a set over values.
fn sepol_set(input: &Input<'_>, r: &super::TypeRef, n: usize) -> Bits {
    let mut b = Bits::new(n);
    match r {
        super::TypeRef::Type(t) => b.set(input.type_val[*t as usize] as usize),
        super::TypeRef::Attr(_, m) => m.iter().for_each(|t| b.set(input.type_val[t] as usize)),
    }
    b
}

fn intersect(a: &[u32], b: &[u32]) -> Vec<u32> {
    a.iter()
        .copied()
        .filter(|x| b.binary_search(x).is_ok())
        .collect()
}

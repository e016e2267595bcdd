//! libsepol's report of violated neverallow rules, the text checkpolicy prints when an
//! assertion fails (`libsepol.report_failure: neverallow on line N of F (or line N of F)
//! violated by allow S T:C { perms };`, one line per covered (source type, target type)
//! pair of each granting allow entry, then `libsepol.check_assertions: K neverallow
//! failures occurred`).
//!
//! The order is libsepol 3.4's, reproduced rather than sorted so the text can be compared
//! byte for byte: checkpolicy keeps its rules in a list it prepends to, so statements are
//! reported last first; a neverallowxperm is split into one rule for its whole ioctl
//! drivers and one per partly named driver (ascending), reported likewise in reverse; each
//! rule walks the expanded unconditional table and then the conditional one in hash-bucket
//! order of a table of 2^20 buckets (the tables `expand_module` fills), and
//! each entry's pairs by ascending source then target value. For a neverallowxperm, each
//! pair's allowxperm entries (searched under every attribute of the source and target, as
//! libsepol's `report_assertion_extended_permissions` does) are reported with the ioctl
//! numbers they share with the rule; a pair without any is reported with the allow entry.

use super::check::covered_pairs;
use super::resolve::Assertion;
use super::Violation;
use arbiter_policy::avtab::{AvtabDatum, AvtabEntry, AvtabKind, Xperms, XpermsKind};
use arbiter_policy::{ClassId, TypeId};
use arbiter_query::terules::{self, TeRuleRef};
use arbiter_query::Index;
use std::collections::HashMap;

/// The buckets of the tables `expand_module` fills: libsepol's `MAX_AVTAB_HASH_BUCKETS`
/// (checkpolicy's report order on our policies matches this size and no smaller one).
const EXPANDED_TABLE_BUCKETS: u32 = 1 << 20;

/// One rule libsepol checks: a whole statement, or for a neverallowxperm one of its parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// A plain neverallow.
    Plain,
    /// Whole ioctl drivers (a 256-bit set of drivers).
    Drivers([u32; 8]),
    /// Some function codes of one driver.
    Functions(u8, [u32; 8]),
}

/// Writes libsepol's report of `violations` (from [`super::check()`] over `assertions`)
/// line by line to `emit`, streaming (a statement can be violated by millions of pairs),
/// and returns the number of failures it counted (the number in its last line). Nothing is
/// written when there are no violations.
pub fn libsepol_report<E>(
    index: &Index<'_>,
    assertions: &[Assertion],
    violations: &[Violation],
    mut emit: impl FnMut(&str) -> Result<(), E>,
) -> Result<u64, E> {
    if violations.is_empty() {
        return Ok(0);
    }
    let tables = Tables::new(index);
    let mut errors = 0u64;
    for v in violations.iter().rev() {
        let Some(a) = assertions.get(v.assertion) else {
            continue;
        };
        for part in parts(a).into_iter().rev() {
            for (cond, order) in [(false, &tables.uncond), (true, &tables.cond)] {
                for &r in order.iter() {
                    errors += report_entry(index, &tables, a, part, cond, r, &mut emit)?;
                }
            }
        }
    }
    emit(&format!(
        "libsepol.check_assertions: {errors} neverallow failures occurred"
    ))?;
    Ok(errors)
}

/// The allow and allowxperm entries of both tables, in the expanded tables' order.
struct Tables {
    uncond: Vec<TeRuleRef>,
    cond: Vec<TeRuleRef>,
    /// ioctl allowxperm entries by (conditional?, source, target, class), in table order.
    xperms: HashMap<(bool, TypeId, TypeId, ClassId), Vec<TeRuleRef>>,
}

impl Tables {
    fn new(index: &Index<'_>) -> Self {
        let policy = index.policy();
        let kinds = AvtabKind::Allowed.bits() | AvtabKind::XpermsAllowed.bits();
        let mask = EXPANDED_TABLE_BUCKETS - 1;
        let rank = |e: &AvtabEntry, i: usize| {
            let k = &e.key;
            (
                k.libsepol_hash() & mask,
                k.source.value(),
                k.target.value(),
                k.class.value(),
                k.kind.bits(),
                i,
            )
        };
        let (mut uncond, mut cond): (Vec<_>, Vec<_>) = terules::raw_order(policy, kinds)
            .into_iter()
            .partition(|r| matches!(r, TeRuleRef::Avtab(_)));
        let key = |r: &TeRuleRef| match *r {
            TeRuleRef::Avtab(i) => policy
                .avtab
                .entries
                .get(i as usize)
                .map(|e| rank(e, i as usize)),
            TeRuleRef::Cond { entry, .. } => policy
                .cond_avtab
                .entries
                .get(entry as usize)
                .map(|e| rank(e, entry as usize)),
            TeRuleRef::Filename { .. } => None,
        };
        uncond.sort_by_key(key);
        cond.sort_by_key(key);
        let mut xperms: HashMap<_, Vec<TeRuleRef>> = HashMap::new();
        for (is_cond, list) in [(false, &uncond), (true, &cond)] {
            for &r in list {
                let Some(e) = terules::entry(policy, r) else {
                    continue;
                };
                if e.key.kind == AvtabKind::XpermsAllowed
                    && xperms_of(index, r).is_some_and(|x| {
                        matches!(x.kind, XpermsKind::IoctlFunction | XpermsKind::IoctlDriver)
                    })
                {
                    xperms
                        .entry((is_cond, e.key.source, e.key.target, e.key.class))
                        .or_default()
                        .push(r);
                }
            }
        }
        Tables {
            uncond,
            cond,
            xperms,
        }
    }
}

/// The rules checkpolicy makes of a statement, in the order it makes them.
fn parts(a: &Assertion) -> Vec<Part> {
    let Some(ioctls) = &a.ioctls else {
        return vec![Part::Plain];
    };
    let word = |d: usize, k: usize| -> u32 {
        ioctls
            .get(d * 4 + k / 2)
            .map_or(0, |w| (w >> ((k % 2) * 32)) as u32)
    };
    let mut drivers = [0u32; 8];
    let mut partial = Vec::new();
    for d in 0..256usize {
        let f: [u32; 8] = std::array::from_fn(|k| word(d, k));
        if f.iter().all(|&w| w == u32::MAX) {
            drivers[d / 32] |= 1 << (d % 32);
        } else if f.iter().any(|&w| w != 0) {
            partial.push(Part::Functions(d as u8, f));
        }
    }
    let mut out = Vec::new();
    if drivers.iter().any(|&w| w != 0) {
        out.push(Part::Drivers(drivers));
    }
    out.extend(partial);
    out
}

/// Reports what one allow entry `r` violates of one rule; returns the failures counted.
fn report_entry<E>(
    index: &Index<'_>,
    tables: &Tables,
    a: &Assertion,
    part: Part,
    cond: bool,
    r: TeRuleRef,
    emit: &mut impl FnMut(&str) -> Result<(), E>,
) -> Result<u64, E> {
    let policy = index.policy();
    let Some(e) = terules::entry(policy, r) else {
        return Ok(0);
    };
    let AvtabDatum::Perms(bits) = e.datum() else {
        return Ok(0);
    };
    if e.key.kind != AvtabKind::Allowed {
        return Ok(0);
    }
    let class = e.key.class;
    let mut errors = 0;
    for &(c, forbidden) in &a.perms {
        let perms = forbidden & bits;
        if c != class || perms == 0 {
            continue;
        }
        for (s, t) in covered_pairs(index, a, r) {
            let heading = |label: &str| {
                format!(
                    "neverallow{label} on line {line} of {file} (or line {line} of {file}) violated by",
                    line = a.line,
                    file = a.file
                )
            };
            let allow = |src: TypeId, tgt: TypeId| {
                format!(
                    "allow {} {}:{} {{{} }};",
                    index.type_name(src),
                    index.type_name(tgt),
                    index.class_name(class),
                    perm_names(index, class, perms)
                )
            };
            if part == Part::Plain {
                errors += 1;
                emit(&format!(
                    "libsepol.report_failure: {} {}",
                    heading(""),
                    allow(s, t)
                ))?;
                continue;
            }
            let mut found = false;
            for sa in with_attributes(index, s) {
                for ta in with_attributes(index, t) {
                    let Some(list) = tables.xperms.get(&(cond, sa, ta, class)) else {
                        continue;
                    };
                    for &x in list {
                        let Some(xp) = xperms_of(index, x) else {
                            continue;
                        };
                        found = true;
                        if let Some(shared) = violated(part, xp) {
                            errors += 1;
                            emit(&format!(
                                "libsepol.report_assertion_extended_permissions: {}\n\
                                 allowxperm {} {}:{} {};",
                                heading("xperm"),
                                index.type_name(sa),
                                index.type_name(ta),
                                index.class_name(class),
                                xperms_text(&shared)
                            ))?;
                        }
                    }
                }
            }
            if !found {
                errors += 1;
                emit(&format!(
                    "libsepol.report_assertion_extended_permissions: {}\n{}",
                    heading("xperm"),
                    allow(s, t)
                ))?;
            }
        }
    }
    Ok(errors)
}

/// A type and its attributes, ascending by value (libsepol's `type_attr_map`).
fn with_attributes(index: &Index<'_>, t: TypeId) -> Vec<TypeId> {
    let mut v: Vec<TypeId> = index.attributes_of(t).collect();
    v.push(t);
    v.sort();
    v
}

/// The forbidden numbers an allowxperm entry grants (libsepol's
/// `extended_permissions_violated`), or `None` when it grants none.
fn violated(part: Part, x: &Xperms) -> Option<Xperms> {
    let test = |bit: u8, perms: &[u32; 8]| perms[usize::from(bit) / 32] & (1 << (bit % 32)) != 0;
    let and = |p: &[u32; 8], q: &[u32; 8]| -> [u32; 8] { std::array::from_fn(|i| p[i] & q[i]) };
    let result = |kind, driver, perms: [u32; 8]| Xperms {
        kind,
        driver,
        perms,
    };
    match (part, x.kind) {
        (Part::Functions(d, f), XpermsKind::IoctlFunction) => {
            let p = and(&f, &x.perms);
            (d == x.driver && p.iter().any(|&w| w != 0))
                .then(|| result(XpermsKind::IoctlFunction, d, p))
        }
        (Part::Functions(d, f), XpermsKind::IoctlDriver) => {
            test(d, &x.perms).then(|| result(XpermsKind::IoctlFunction, d, f))
        }
        (Part::Drivers(ds), XpermsKind::IoctlFunction) => {
            test(x.driver, &ds).then(|| result(XpermsKind::IoctlFunction, x.driver, x.perms))
        }
        (Part::Drivers(ds), XpermsKind::IoctlDriver) => {
            let p = and(&ds, &x.perms);
            p.iter()
                .any(|&w| w != 0)
                .then(|| result(XpermsKind::IoctlDriver, 0, p))
        }
        _ => None,
    }
}

/// libsepol's `sepol_extended_perms_to_string`: `ioctl { 0x8a00-0x8a0f 0x5401 }`, runs of
/// consecutive codes (or drivers) as ranges.
fn xperms_text(x: &Xperms) -> String {
    let set = |bit: usize| bit < 256 && x.perms[bit / 32] & (1 << (bit % 32)) != 0;
    let mut out = String::from("ioctl { ");
    let mut low: Option<usize> = None;
    for bit in 0..256usize {
        if !set(bit) {
            continue;
        }
        if set(bit + 1) {
            low.get_or_insert(bit);
            continue;
        }
        let (lo, hi) = (low.take().unwrap_or(bit), bit);
        let driver = usize::from(x.driver) << 8;
        let item = match x.kind {
            XpermsKind::IoctlDriver => format!("{:#x}-{:#x} ", lo << 8, (hi << 8) | 0xff),
            _ if lo != hi => format!("{:#x}-{:#x} ", driver | lo, driver | hi),
            _ => format!("{:#x} ", driver | hi),
        };
        out.push_str(&item);
    }
    out.push('}');
    out
}

/// libsepol's `sepol_av_to_string`: ` name` for each set bit, ascending.
fn perm_names(index: &Index<'_>, class: ClassId, perms: u32) -> String {
    let mut names: Vec<(u32, &str)> = index
        .class_perms(class)
        .filter(|&(_, bit)| bit < 32 && perms & (1 << bit) != 0)
        .map(|(n, bit)| (bit, n))
        .collect();
    names.sort();
    names.iter().map(|(_, n)| format!(" {n}")).collect()
}

fn xperms_of<'p>(index: &Index<'p>, r: TeRuleRef) -> Option<&'p Xperms> {
    let policy = index.policy();
    let e = terules::entry(policy, r)?;
    let table = match r {
        TeRuleRef::Cond { .. } => &policy.cond_avtab,
        _ => &policy.avtab,
    };
    table.xperms_of(e.datum())
}

//! Role transitions, role allow rules, filename type transitions and range transitions.

use crate::ebitmap::Ebitmap;
use crate::ids::{ClassId, RoleId, TypeId};
use crate::mls::MlsRange;

/// `role_transition ROLE TYPE:CLASS NEW_ROLE` (class is `process` before version 26).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RoleTrans {
    pub role: RoleId,
    pub ty: TypeId,
    pub class: ClassId,
    pub new_role: RoleId,
}

/// `allow ROLE NEW_ROLE`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RoleAllow {
    pub role: RoleId,
    pub new_role: RoleId,
}

/// Filename type transitions sharing (target type, class, name): each `(sources, new type)`
/// pair says which source types get which new type. Both the per-rule format (before
/// version 33) and the compact format are read into this shape.
///
/// `Policy::filename_trans` is sorted by (target, class, name), each key occurring once, so
/// it can be searched. `outcomes` keep the kernel's order, which matters: the kernel takes
/// the first outcome whose sources contain the source type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilenameTrans {
    pub target: TypeId,
    pub class: ClassId,
    pub name: Box<str>,
    /// (source types, bit i = type value i+1; new type)
    pub outcomes: Box<[(Ebitmap, TypeId)]>,
}

/// `range_transition SOURCE TARGET:CLASS RANGE` (class is `process` before version 21).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RangeTrans {
    pub source: TypeId,
    pub target: TypeId,
    pub class: ClassId,
    pub range: MlsRange,
}

use std::collections::{HashMap, HashSet};

use crate::avtab::annotate;
use crate::cursor::Cursor;
use crate::error::Result;
use crate::policy::version;
use crate::read::Counts;

/// The smallest MLS range: a level count, one sensitivity and an empty category bitmap.
const MIN_RANGE_SIZE: usize = 4 + 4 + 12;

/// Reads a class value stored in a 32-bit word: the kernel refuses values that do not fit
/// its 16-bit class field before checking the value against the class table.
fn class_word(c: &mut Cursor<'_>, counts: &Counts, what: &'static str) -> Result<ClassId> {
    let at = c.offset();
    let raw = c.u32(what)?;
    counts.class_id(c, at, raw, what)
}

/// The class of transition rule `i` (a `what`, at `at`) in a format before version
/// `since`, which has no class word: `process`, which the policy must define.
fn implied_process_class(
    c: &Cursor<'_>,
    counts: &Counts,
    process_class: Option<ClassId>,
    at: usize,
    what: &'static str,
    i: usize,
    since: u32,
) -> Result<ClassId> {
    process_class.ok_or_else(|| {
        c.invalid_at(
            at,
            what,
            format!(
                "{what} {i} implies class `process` (format version {} < {since}), \
                 which the policy does not define",
                counts.version
            ),
        )
    })
}

/// Reads role transitions (`role_trans` in the kernel's `policydb_read`): role, type, new
/// role and, from version 26, a class; before that the class is `process`, which the policy
/// must then define. A (role, type, class) key may occur once, as the kernel's hash table
/// insert refuses duplicates.
pub(crate) fn read_role_trans(
    c: &mut Cursor<'_>,
    counts: &Counts,
    process_class: Option<ClassId>,
) -> Result<Vec<RoleTrans>> {
    const WHAT: &str = "role transition";
    let has_class = counts.version >= version::ROLETRANS;
    let n = c.count(if has_class { 16 } else { 12 }, WHAT)?;
    let mut out = Vec::with_capacity(n);
    let mut seen = HashSet::with_capacity(n);
    for i in 0..n {
        let at = c.offset();
        let [role, ty, new_role] = c.u32s::<3>(WHAT)?;
        let class = if has_class {
            class_word(c, counts, WHAT)
                .map_err(|e| annotate(e, || format!("role transition {i}")))?
        } else {
            implied_process_class(c, counts, process_class, at, WHAT, i, version::ROLETRANS)?
        };
        let in_rule = |e| annotate(e, || format!("role transition {i}"));
        let role = counts.role_id(c, at, role, WHAT).map_err(in_rule)?;
        let ty = counts.type_id(c, at + 4, ty, WHAT).map_err(in_rule)?;
        let new_role = counts.role_id(c, at + 8, new_role, WHAT).map_err(in_rule)?;
        if !seen.insert((role, ty, class)) {
            return Err(c.invalid_at(
                at,
                WHAT,
                format!("duplicate role transition {i} (role {role}, type {ty}, class {class})"),
            ));
        }
        out.push(RoleTrans {
            role,
            ty,
            class,
            new_role,
        });
    }
    Ok(out)
}

/// Reads role allow rules: pairs of valid roles, in file order (the kernel keeps a list and
/// does not look for duplicates).
pub(crate) fn read_role_allow(c: &mut Cursor<'_>, counts: &Counts) -> Result<Vec<RoleAllow>> {
    const WHAT: &str = "role allow rule";
    let n = c.count(8, WHAT)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let at = c.offset();
        let [role, new_role] = c.u32s::<2>(WHAT)?;
        out.push(RoleAllow {
            role: counts.role_id(c, at, role, WHAT)?,
            new_role: counts.role_id(c, at + 4, new_role, WHAT)?,
        });
    }
    Ok(out)
}

/// Reads a name stored as a length word and the bytes. The kernel's `str_read` refuses an
/// empty name; the cursor refuses NUL bytes and non-UTF-8.
pub(crate) fn read_name(c: &mut Cursor<'_>, what: &'static str) -> Result<Box<str>> {
    let at = c.offset();
    let len = c.u32(what)?;
    if len == 0 {
        return Err(c.invalid_at(at, what, "empty name".into()));
    }
    c.string(len, what)
}

/// Reads filename type transitions (the kernel's `filename_trans_read`), from version 25.
///
/// Before version 33 each rule is stored on its own (name, source, target, class, new
/// type); rules are grouped as the kernel's `filename_trans_read_helper_compat` groups them.
/// It walks the group's outcomes in order: if one already holds the rule's source, the rule
/// is ignored (a duplicate or a conflict: the earlier rule wins); at the first outcome with
/// the rule's new type the source is added there; with none, a new outcome is appended.
/// The walk stops at that outcome, so a source may end up in two outcomes, and then the
/// first one applies, in the kernel and in this model alike. From version 33 groups are
/// stored whole; a repeated key is refused, as is a group without outcomes.
///
/// Beyond the kernel: the per-rule format's new type is checked to be a type (the kernel
/// checks it only in the compact format), and source bitmaps may only name types (as
/// libsepol's validation requires), since the model stores both as type ids.
///
/// Both formats yield the same model: groups sorted by (target, class, name).
pub(crate) fn read_filename_trans(
    c: &mut Cursor<'_>,
    counts: &Counts,
) -> Result<Vec<FilenameTrans>> {
    let mut out = if counts.version >= version::COMP_FTRANS {
        read_filename_trans_compact(c, counts)?
    } else {
        read_filename_trans_per_rule(c, counts)?
    };
    out.sort_unstable_by(|a, b| (a.target, a.class, &a.name).cmp(&(b.target, b.class, &b.name)));
    Ok(out)
}

fn read_filename_trans_per_rule(c: &mut Cursor<'_>, counts: &Counts) -> Result<Vec<FilenameTrans>> {
    const WHAT: &str = "filename transition";
    // Name length, source, target, class, new type. Counts are bounded by what the format
    // can encode, names and lists possibly empty, so that a bad record gets its own message.
    let n = c.count(4 + 16, WHAT)?;

    /// A group being built: outcomes as (new type, source type values).
    struct Group {
        target: TypeId,
        class: ClassId,
        name: Box<str>,
        outcomes: Vec<(TypeId, Vec<u32>)>,
    }
    let mut groups: Vec<Group> = Vec::new();
    let mut index: HashMap<(TypeId, ClassId, Box<str>), usize> = HashMap::new();
    // (group, outcome, source type value) for the membership tests of the kernel's loop.
    let mut member: HashSet<(usize, usize, u16)> = HashSet::new();

    for _ in 0..n {
        let name = read_name(c, WHAT)?;
        let at = c.offset();
        let [stype, ttype, class, otype] = c.u32s::<4>(WHAT)?;
        let in_rule = |e| annotate(e, || format!("filename transition `{name}`"));
        let stype = counts.type_id(c, at, stype, WHAT).map_err(in_rule)?;
        let target = counts.type_id(c, at + 4, ttype, WHAT).map_err(in_rule)?;
        let class = counts.class_id(c, at + 8, class, WHAT).map_err(in_rule)?;
        let otype = counts.type_id(c, at + 12, otype, WHAT).map_err(in_rule)?;

        let g = match index.get(&(target, class, name.clone())) {
            Some(&g) => g,
            None => {
                groups.push(Group {
                    target,
                    class,
                    name: name.clone(),
                    outcomes: Vec::new(),
                });
                index.insert((target, class, name), groups.len() - 1);
                groups.len() - 1
            }
        };
        let group = &mut groups[g];
        let mut found = None;
        let mut conflict = false;
        for (o, (new_type, _)) in group.outcomes.iter().enumerate() {
            if member.contains(&(g, o, stype.value())) {
                conflict = true;
                break;
            }
            if *new_type == otype {
                found = Some(o);
                break;
            }
        }
        if conflict {
            // The kernel ignores conflicting and duplicate rules: the first one wins.
            continue;
        }
        let o = found.unwrap_or_else(|| {
            group.outcomes.push((otype, Vec::new()));
            group.outcomes.len() - 1
        });
        if member.insert((g, o, stype.value())) {
            group.outcomes[o].1.push(u32::from(stype.value()) - 1);
        }
    }
    Ok(groups
        .into_iter()
        .map(|g| FilenameTrans {
            target: g.target,
            class: g.class,
            name: g.name,
            outcomes: g
                .outcomes
                .into_iter()
                .map(|(t, bits)| (Ebitmap::from_bits(bits), t))
                .collect(),
        })
        .collect())
}

fn read_filename_trans_compact(c: &mut Cursor<'_>, counts: &Counts) -> Result<Vec<FilenameTrans>> {
    const WHAT: &str = "filename transition";
    // Name length, target, class, outcome count.
    let n = c.count(4 + 12, WHAT)?;
    let mut out = Vec::with_capacity(n);
    let mut seen: HashSet<(TypeId, ClassId, Box<str>)> = HashSet::with_capacity(n);
    for _ in 0..n {
        let key_at = c.offset();
        let name = read_name(c, WHAT)?;
        let at = c.offset();
        let [ttype, class, ndatum] = c.u32s::<3>(WHAT)?;
        let in_rule = |e| annotate(e, || format!("filename transition `{name}`"));
        let target = counts.type_id(c, at, ttype, WHAT).map_err(in_rule)?;
        let class = counts.class_id(c, at + 4, class, WHAT).map_err(in_rule)?;
        if ndatum == 0 {
            return Err(c.invalid_at(
                at + 8,
                WHAT,
                format!("filename transition `{name}` has no outcomes"),
            ));
        }
        let ndatum = c.check_count(ndatum, 16, WHAT).map_err(in_rule)?;
        let mut outcomes = Vec::with_capacity(ndatum);
        for _ in 0..ndatum {
            let bits_at = c.offset();
            let stypes = Ebitmap::read(c, WHAT).map_err(in_rule)?;
            if stypes.end() > counts.types {
                return Err(c.invalid_at(
                    bits_at,
                    WHAT,
                    format!(
                        "filename transition `{name}` names source type {} of {}",
                        stypes.end(),
                        counts.types
                    ),
                ));
            }
            let otype_at = c.offset();
            let otype = c.u32(WHAT)?;
            let otype = counts.type_id(c, otype_at, otype, WHAT).map_err(in_rule)?;
            outcomes.push((stypes, otype));
        }
        if !seen.insert((target, class, name.clone())) {
            return Err(c.invalid_at(
                key_at,
                WHAT,
                format!(
                    "duplicate filename transition `{name}` (target type {target}, class {class})"
                ),
            ));
        }
        out.push(FilenameTrans {
            target,
            class,
            name,
            outcomes: outcomes.into_boxed_slice(),
        });
    }
    Ok(out)
}

/// Reads range transitions (the kernel's `range_read`), from version 19: source, target,
/// from version 21 a class (before, `process`, which the policy must then define), and a
/// range. A (source, target, class) key may occur once.
///
/// The range is checked as far as the counts allow, as the kernel's `mls_range_isvalid`:
/// sensitivities and categories in range, and the high level dominating the low one (a
/// higher or equal sensitivity value and a superset of categories). Whether each level's
/// categories are allowed for its sensitivity needs the sensitivity table and is checked
/// with the whole policy.
pub(crate) fn read_range_trans(
    c: &mut Cursor<'_>,
    counts: &Counts,
    process_class: Option<ClassId>,
) -> Result<Vec<RangeTrans>> {
    const WHAT: &str = "range transition";
    let has_class = counts.version >= version::RANGETRANS;
    let n = c.count(if has_class { 12 } else { 8 } + MIN_RANGE_SIZE, WHAT)?;
    let mut out = Vec::with_capacity(n);
    let mut seen = HashSet::with_capacity(n);
    for i in 0..n {
        let at = c.offset();
        let [source, target] = c.u32s::<2>(WHAT)?;
        let class = if has_class {
            class_word(c, counts, WHAT)
                .map_err(|e| annotate(e, || format!("range transition {i}")))?
        } else {
            implied_process_class(c, counts, process_class, at, WHAT, i, version::RANGETRANS)?
        };
        let in_rule = |e| annotate(e, || format!("range transition {i}"));
        let source = counts.type_id(c, at, source, WHAT).map_err(in_rule)?;
        let target = counts.type_id(c, at + 4, target, WHAT).map_err(in_rule)?;
        let range_at = c.offset();
        let range = MlsRange::read(c, WHAT).map_err(in_rule)?;
        check_range(c, counts, range_at, &range, WHAT).map_err(in_rule)?;
        if !seen.insert((source, target, class)) {
            return Err(c.invalid_at(
                at,
                WHAT,
                format!(
                    "duplicate range transition {i} (source type {source}, target type {target}, \
                     class {class})"
                ),
            ));
        }
        out.push(RangeTrans {
            source,
            target,
            class,
            range,
        });
    }
    Ok(out)
}

/// The parts of the kernel's `mls_range_isvalid` that need only the symbol counts.
fn check_range(
    c: &Cursor<'_>,
    counts: &Counts,
    at: usize,
    range: &MlsRange,
    what: &'static str,
) -> Result<()> {
    for (which, level) in [("low", &range.low), ("high", &range.high)] {
        if level.sens == 0 || level.sens > counts.sens {
            return Err(c.invalid_at(
                at,
                what,
                format!(
                    "{which} sensitivity value {} out of range 1..={}",
                    level.sens, counts.sens
                ),
            ));
        }
        if level.cats.end() > counts.cats {
            return Err(c.invalid_at(
                at,
                what,
                format!(
                    "{which} level names category value {} of {}",
                    level.cats.end(),
                    counts.cats
                ),
            ));
        }
    }
    if range.high.sens < range.low.sens || !range.high.cats.contains_all(&range.low.cats) {
        return Err(c.invalid_at(
            at,
            what,
            "high level does not dominate the low level".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::PolicyError;
    use crate::testbytes::{counts, detail, run, W};

    fn tid(v: u16) -> TypeId {
        TypeId::new(v).unwrap()
    }
    fn cid(v: u16) -> ClassId {
        ClassId::new(v).unwrap()
    }
    fn rid(v: u32) -> RoleId {
        RoleId::new(v).unwrap()
    }

    #[test]
    fn role_transitions_carry_their_class_from_version_26() {
        let mut w = W::new();
        w.u32(2).u32s(&[1, 5, 2, 3]).u32s(&[1, 5, 3, 4]);
        let rt = run(&w.0, |c| read_role_trans(c, &counts(26), None)).unwrap();
        assert_eq!(
            rt,
            vec![
                RoleTrans {
                    role: rid(1),
                    ty: tid(5),
                    class: cid(3),
                    new_role: rid(2)
                },
                RoleTrans {
                    role: rid(1),
                    ty: tid(5),
                    class: cid(4),
                    new_role: rid(3)
                },
            ]
        );
    }

    #[test]
    fn role_transitions_before_version_26_are_for_the_process_class() {
        let mut w = W::new();
        w.u32(1).u32s(&[1, 5, 2]);
        let rt = run(&w.0, |c| read_role_trans(c, &counts(25), Some(cid(2)))).unwrap();
        assert_eq!(rt[0].class, cid(2));
        let r = run(&w.0, |c| read_role_trans(c, &counts(25), None));
        assert!(detail(r).contains("does not define"));
        // Without rules the class is not needed.
        let none = run(&0u32.to_le_bytes(), |c| {
            read_role_trans(c, &counts(25), None)
        });
        assert!(none.unwrap().is_empty());
    }

    #[test]
    fn role_transition_values_are_checked() {
        for (rule, what) in [
            ([0, 5, 2, 3], "role value 0"),
            ([1, 21, 2, 3], "type value 21"),
            ([1, 5, 5, 3], "role value 5"),
            ([1, 5, 2, 0x1_0001], "class value 65537"),
        ] {
            let mut w = W::new();
            w.u32(1).u32s(&rule);
            let d = detail(run(&w.0, |c| read_role_trans(c, &counts(33), None)));
            assert!(d.contains(what), "{d}");
        }
    }

    #[test]
    fn duplicate_role_transition_is_rejected() {
        let mut w = W::new();
        w.u32(2).u32s(&[1, 5, 2, 3]).u32s(&[1, 5, 3, 3]);
        let d = detail(run(&w.0, |c| read_role_trans(c, &counts(33), None)));
        assert!(
            d.contains("duplicate role transition 1 (role 1, type 5, class 3)"),
            "{d}"
        );
    }

    #[test]
    fn role_allow_rules_keep_file_order_and_duplicates() {
        let mut w = W::new();
        w.u32(3).u32s(&[2, 1, 1, 2, 2, 1]);
        let ra = run(&w.0, |c| read_role_allow(c, &counts(33))).unwrap();
        let pairs: Vec<_> = ra
            .iter()
            .map(|r| (r.role.value(), r.new_role.value()))
            .collect();
        assert_eq!(pairs, [(2, 1), (1, 2), (2, 1)]);
        let mut w = W::new();
        w.u32(1).u32s(&[1, 9]);
        assert!(detail(run(&w.0, |c| read_role_allow(c, &counts(33)))).contains("role value 9"));
    }

    /// Per-rule format: (name, source, target, class, new type).
    fn per_rule(rules: &[(&str, u32, u32, u32, u32)]) -> Vec<u8> {
        let mut w = W::new();
        w.u32(rules.len() as u32);
        for &(name, s, t, c, o) in rules {
            w.name(name).u32s(&[s, t, c, o]);
        }
        w.into_bytes()
    }

    /// An outcome: (source type bits, new type).
    type Outcome<'a> = (&'a [u32], u32);

    /// Compact format: (name, target, class, outcomes).
    fn compact(groups: &[(&str, u32, u32, &[Outcome<'_>])]) -> Vec<u8> {
        let mut w = W::new();
        w.u32(groups.len() as u32);
        for &(name, t, c, outcomes) in groups {
            w.name(name).u32s(&[t, c, outcomes.len() as u32]);
            for &(bits, o) in outcomes {
                w.ebitmap(bits).u32(o);
            }
        }
        w.into_bytes()
    }

    #[test]
    fn compact_and_per_rule_filename_transitions_read_alike() {
        let old = per_rule(&[
            ("passwd", 3, 4, 1, 7),
            ("passwd", 1, 4, 1, 7),
            ("passwd", 2, 4, 1, 8),
            ("shadow", 1, 4, 1, 9),
            ("passwd", 5, 4, 2, 7),
            ("passwd", 6, 4, 1, 8),
        ]);
        let new = compact(&[
            ("shadow", 4, 1, &[(&[0], 9)]),
            ("passwd", 4, 2, &[(&[4], 7)]),
            ("passwd", 4, 1, &[(&[0, 2], 7), (&[1, 5], 8)]),
        ]);
        let a = run(&old, |c| read_filename_trans(c, &counts(32))).unwrap();
        let b = run(&new, |c| read_filename_trans(c, &counts(33))).unwrap();
        assert_eq!(a, b);
        let keys: Vec<_> = a
            .iter()
            .map(|f| (f.target.value(), f.class.value(), &*f.name))
            .collect();
        assert_eq!(keys, [(4, 1, "passwd"), (4, 1, "shadow"), (4, 2, "passwd")]);
        let outcomes: Vec<_> = a[0]
            .outcomes
            .iter()
            .map(|(s, o)| (s.iter().collect::<Vec<_>>(), o.value()))
            .collect();
        assert_eq!(outcomes, [(vec![0, 2], 7), (vec![1, 5], 8)]);
    }

    #[test]
    fn per_rule_format_keeps_the_first_rule_for_a_source() {
        let a = run(
            &per_rule(&[("f", 1, 4, 1, 7), ("f", 1, 4, 1, 8), ("f", 1, 4, 1, 7)]),
            |c| read_filename_trans(c, &counts(25)),
        )
        .unwrap();
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].outcomes.len(), 1);
        assert_eq!(a[0].outcomes[0].1, tid(7));
    }

    #[test]
    fn per_rule_grouping_follows_the_kernel_when_an_earlier_outcome_matches() {
        // s2 -> 8 first, then s2 -> 7: the kernel stops at the outcome for 7 (listed before
        // the one for 8) without seeing s2 under 8, so s2 joins 7 and, being first, wins.
        let a = run(
            &per_rule(&[("f", 1, 4, 1, 7), ("f", 2, 4, 1, 8), ("f", 2, 4, 1, 7)]),
            |c| read_filename_trans(c, &counts(25)),
        )
        .unwrap();
        let outcomes: Vec<_> = a[0]
            .outcomes
            .iter()
            .map(|(s, o)| (s.iter().collect::<Vec<_>>(), o.value()))
            .collect();
        assert_eq!(outcomes, [(vec![0, 1], 7), (vec![1], 8)]);
    }

    #[test]
    fn per_rule_values_are_checked() {
        for (rule, what) in [
            (("f", 0, 4, 1, 7), "type value 0"),
            (("f", 1, 21, 1, 7), "type value 21"),
            (("f", 1, 4, 7, 7), "class value 7"),
            (("f", 1, 4, 1, 0), "type value 0"),
        ] {
            let d = detail(run(&per_rule(&[rule]), |c| {
                read_filename_trans(c, &counts(30))
            }));
            assert!(d.starts_with("filename transition `f`: "), "{d}");
            assert!(d.contains(what), "{d}");
        }
        let d = detail(run(&per_rule(&[("", 1, 4, 1, 7)]), |c| {
            read_filename_trans(c, &counts(30))
        }));
        assert!(d.contains("empty name"));
    }

    #[test]
    fn compact_duplicate_key_is_rejected() {
        let b = compact(&[("f", 4, 1, &[(&[0], 7)]), ("f", 4, 1, &[(&[1], 8)])]);
        let d = detail(run(&b, |c| read_filename_trans(c, &counts(33))));
        assert!(
            d.contains("duplicate filename transition `f` (target type 4, class 1)"),
            "{d}"
        );
    }

    #[test]
    fn compact_group_needs_outcomes_with_valid_types() {
        let b = compact(&[("f", 4, 1, &[])]);
        assert!(detail(run(&b, |c| read_filename_trans(c, &counts(33)))).contains("no outcomes"));
        let b = compact(&[("f", 4, 1, &[(&[0], 21)])]);
        assert!(detail(run(&b, |c| read_filename_trans(c, &counts(33)))).contains("type value 21"));
        let b = compact(&[("f", 4, 1, &[(&[20], 7)])]);
        let d = detail(run(&b, |c| read_filename_trans(c, &counts(33))));
        assert!(d.contains("source type 21 of 20"), "{d}");
    }

    #[test]
    fn hostile_filename_transition_counts_are_refused() {
        let mut b = per_rule(&[("f", 1, 4, 1, 7)]);
        b[0..4].copy_from_slice(&0x1000_0000u32.to_le_bytes());
        assert!(matches!(
            run(&b, |c| read_filename_trans(c, &counts(30))),
            Err(PolicyError::CountTooLarge { .. })
        ));
        let mut b = compact(&[("f", 4, 1, &[(&[0], 7)])]);
        b[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            run(&b, |c| read_filename_trans(c, &counts(33))),
            Err(PolicyError::CountTooLarge { .. })
        ));
        let mut b = compact(&[("f", 4, 1, &[(&[0], 7)])]);
        // The outcome count sits after the count, the name and two words.
        b[4 + 5 + 8..4 + 5 + 12].copy_from_slice(&0x1000_0000u32.to_le_bytes());
        assert!(matches!(
            run(&b, |c| read_filename_trans(c, &counts(33))),
            Err(PolicyError::CountTooLarge { .. })
        ));
    }

    #[test]
    fn range_transitions_read_and_check_their_range() {
        let mut w = W::new();
        w.u32(2);
        w.u32s(&[1, 2, 3]).range((1, &[0]), (2, &[0, 7]));
        w.u32s(&[1, 2, 4]).level_range(2, &[]);
        let rt = run(&w.0, |c| read_range_trans(c, &counts(21), None)).unwrap();
        assert_eq!(rt.len(), 2);
        assert_eq!((rt[0].class, rt[0].range.high.sens), (cid(3), 2));
        assert_eq!(rt[0].range.high.cats.iter().collect::<Vec<_>>(), [0, 7]);
        assert_eq!(rt[1].range.low, rt[1].range.high);
    }

    #[test]
    fn range_transitions_before_version_21_are_for_the_process_class() {
        let mut w = W::new();
        w.u32(1).u32s(&[1, 2]).level_range(1, &[]);
        let rt = run(&w.0, |c| read_range_trans(c, &counts(19), Some(cid(2)))).unwrap();
        assert_eq!(rt[0].class, cid(2));
        assert!(
            detail(run(&w.0, |c| read_range_trans(c, &counts(19), None)))
                .contains("does not define")
        );
    }

    #[test]
    fn invalid_ranges_are_rejected() {
        type Body = fn(&mut W);
        let cases: [(Body, &str); 5] = [
            (
                |w| {
                    w.level_range(0, &[]);
                },
                "low sensitivity value 0",
            ),
            (
                |w| {
                    w.range((1, &[]), (3, &[]));
                },
                "high sensitivity value 3",
            ),
            (
                |w| {
                    w.level_range(1, &[8]);
                },
                "category value 9 of 8",
            ),
            (
                |w| {
                    w.range((2, &[]), (1, &[]));
                },
                "does not dominate",
            ),
            (
                |w| {
                    w.range((1, &[1]), (2, &[2]));
                },
                "does not dominate",
            ),
        ];
        for (range, what) in cases {
            let mut w = W::new();
            w.u32(1).u32s(&[1, 2, 3]);
            range(&mut w);
            let d = detail(run(&w.0, |c| read_range_trans(c, &counts(33), None)));
            assert!(d.contains(what), "{d}");
        }
    }

    #[test]
    fn duplicate_range_transition_is_rejected() {
        let mut w = W::new();
        w.u32(2);
        w.u32s(&[1, 2, 3]).level_range(1, &[]);
        w.u32s(&[1, 2, 3]).level_range(2, &[]);
        let d = detail(run(&w.0, |c| read_range_trans(c, &counts(33), None)));
        assert!(d.contains("duplicate range transition 1"), "{d}");
    }
}

//! The binary policy writer (`arbiter_policy::write`).
//!
//! * Round trip: every policy in `policies/bin` and the two Debian policies, read, written
//!   at their own version and read again, give the same model, field by field; writing
//!   that model again gives the same bytes.
//! * Conversion: each of those policies written at every version 15..=35. Where the strict
//!   writer succeeds the model read back is the same (up to the version number and the
//!   empty constraint type sets libsepol adds from version 29); where it refuses, the
//!   reason names a feature the target version really lacks, and the lenient writer
//!   (`drop_unsupported`) succeeds and reports what it dropped.
//! * Agreement with checkpolicy: our down-conversions of `tiny.33`, `default.33` and
//!   `features.33` give the same policies (up to rule order) as checkpolicy's own ones in
//!   `policies/bin`.
//! * Agreement with libsepol: libsepol 3.4 (`policydb_read`, which validates) loads every
//!   image written for versions up to 33.
//!
//! A Debian policy that is not installed is skipped with a note.

use arbiter_policy::avtab::{Avtab, AvtabDatum, AvtabKey, Xperms};
use arbiter_policy::constraint::{ConstraintExpr, TypeSet};
use arbiter_policy::write::WriteOptions;
use arbiter_policy::write::{write_policy, write_policy_with, Unsupported, WriteError};
use arbiter_policy::Policy;
use std::fmt::Debug;
use std::path::{Path, PathBuf};

const DEBIAN: [&str; 2] = [arbiter_testkit::DEBIAN_DEFAULT, arbiter_testkit::DEBIAN_MLS];

fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policies/bin")
}

/// Every test policy: `policies/bin/*` and the installed Debian policies.
fn policies() -> Vec<(String, Policy)> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(bin_dir())
        .expect("policies/bin")
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for d in DEBIAN {
        if Path::new(d).exists() {
            paths.push(d.into());
        } else {
            eprintln!("note: {d} is not installed; skipping it");
        }
    }
    paths
        .into_iter()
        .map(|p| {
            let policy = Policy::open(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p.display().to_string(), policy)
        })
        .collect()
}

fn bin(name: &str) -> Policy {
    let path = bin_dir().join(name);
    Policy::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn is_debian(label: &str) -> bool {
    label.starts_with("/etc/selinux")
}

// ------------------------------------------------------------------ comparison

/// The first difference between two sequences, described.
fn seq_diff<T: PartialEq + Debug>(field: &str, a: &[T], b: &[T]) -> Option<String> {
    if a == b {
        return None;
    }
    if let Some(i) = (0..a.len().min(b.len())).find(|&i| a[i] != b[i]) {
        return Some(format!(
            "{field}[{i}] differs:\n    left:  {:?}\n    right: {:?}",
            a[i], b[i]
        ));
    }
    Some(format!("{field}: {} vs {} elements", a.len(), b.len()))
}

fn value_diff<T: PartialEq + Debug>(field: &str, a: &T, b: &T) -> Option<String> {
    (a != b).then(|| format!("{field} differs:\n    left:  {a:?}\n    right: {b:?}"))
}

/// An avtab with extended permissions resolved into the entries, comparable as a list.
fn entries(t: &Avtab) -> Vec<(AvtabKey, AvtabDatum, Option<Xperms>)> {
    t.entries
        .iter()
        .map(|e| (e.key, e.datum(), t.xperms_of(e.datum()).copied()))
        .collect()
}

/// Every difference between two models, field by field. The destructuring names every
/// field, so a field added to `Policy` must be added here too.
fn differences(a: &Policy, b: &Policy) -> Vec<String> {
    let Policy {
        version,
        mls,
        handle_unknown,
        policycaps,
        permissive,
        neveraudit,
        commons,
        classes,
        roles,
        types,
        type_aliases,
        users,
        bools,
        sensitivities,
        sensitivity_aliases,
        categories,
        category_aliases,
        avtab,
        cond_nodes,
        cond_avtab,
        role_trans,
        role_allow,
        filename_trans,
        ocontexts,
        genfs,
        range_trans,
        type_attr_map,
    } = a;
    let o = &b.ocontexts;
    [
        value_diff("version", version, &b.version),
        value_diff("mls", mls, &b.mls),
        value_diff("handle_unknown", handle_unknown, &b.handle_unknown),
        value_diff("policycaps", policycaps, &b.policycaps),
        value_diff("permissive", permissive, &b.permissive),
        value_diff("neveraudit", neveraudit, &b.neveraudit),
        seq_diff("commons", &commons[..], &b.commons[..]),
        seq_diff("classes", &classes[..], &b.classes[..]),
        seq_diff("roles", &roles[..], &b.roles[..]),
        seq_diff("types", &types[..], &b.types[..]),
        seq_diff("type_aliases", &type_aliases[..], &b.type_aliases[..]),
        seq_diff("users", &users[..], &b.users[..]),
        seq_diff("bools", &bools[..], &b.bools[..]),
        seq_diff("sensitivities", &sensitivities[..], &b.sensitivities[..]),
        seq_diff(
            "sensitivity_aliases",
            &sensitivity_aliases[..],
            &b.sensitivity_aliases[..],
        ),
        seq_diff("categories", &categories[..], &b.categories[..]),
        seq_diff(
            "category_aliases",
            &category_aliases[..],
            &b.category_aliases[..],
        ),
        seq_diff("avtab", &entries(avtab), &entries(&b.avtab)),
        seq_diff("cond_nodes", &cond_nodes[..], &b.cond_nodes[..]),
        seq_diff("cond_avtab", &entries(cond_avtab), &entries(&b.cond_avtab)),
        seq_diff("role_trans", &role_trans[..], &b.role_trans[..]),
        seq_diff("role_allow", &role_allow[..], &b.role_allow[..]),
        seq_diff("filename_trans", &filename_trans[..], &b.filename_trans[..]),
        seq_diff("initial_sids", &ocontexts.initial_sids, &o.initial_sids),
        seq_diff("fs", &ocontexts.fs, &o.fs),
        seq_diff("ports", &ocontexts.ports, &o.ports),
        seq_diff("netifs", &ocontexts.netifs, &o.netifs),
        seq_diff("nodes", &ocontexts.nodes, &o.nodes),
        seq_diff("fs_use", &ocontexts.fs_use, &o.fs_use),
        seq_diff("nodes6", &ocontexts.nodes6, &o.nodes6),
        seq_diff("ibpkeys", &ocontexts.ibpkeys, &o.ibpkeys),
        seq_diff("ibendports", &ocontexts.ibendports, &o.ibendports),
        seq_diff("genfs", &genfs[..], &b.genfs[..]),
        seq_diff("range_trans", &range_trans[..], &b.range_trans[..]),
        seq_diff("type_attr_map", &type_attr_map[..], &b.type_attr_map[..]),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn assert_same(what: &str, a: &Policy, b: &Policy) {
    let d = differences(a, b);
    assert!(d.is_empty(), "{what}: models differ:\n  {}", d.join("\n  "));
}

/// What the format version alone changes in a model: the version number, and constraint
/// type sets, which exist from version 29 (libsepol writes empty ones for models read
/// from older files).
fn version_neutral(p: &Policy) -> Policy {
    let mut p = p.clone();
    p.version = 0;
    for class in &mut p.classes {
        for c in class
            .constraints
            .iter_mut()
            .chain(class.validatetrans.iter_mut())
        {
            for e in c.expr.iter_mut() {
                if let ConstraintExpr::Names { type_names, .. } = e {
                    if type_names.as_deref() == Some(&TypeSet::default()) {
                        *type_names = None;
                    }
                }
            }
        }
    }
    p
}

/// A model with every order the format leaves to the compiler's hash tables made
/// canonical, for comparing with checkpolicy's output: rule tables sorted (each
/// conditional list on its own), aliases by name, rule lists sorted.
fn canonical(p: &Policy) -> Policy {
    let mut p = version_neutral(p);
    fn sorted(t: &Avtab, ranges: &[std::ops::Range<u32>]) -> (Avtab, Vec<std::ops::Range<u32>>) {
        let mut out = Avtab::default();
        let mut new_ranges = Vec::new();
        for r in ranges {
            let mut list: Vec<_> = entries(t)[r.start as usize..r.end as usize].to_vec();
            list.sort_by_key(|(k, d, x)| (*k, format!("{d:?}{x:?}")));
            let start = out.entries.len() as u32;
            for (key, datum, x) in list {
                let datum = match x {
                    Some(x) => {
                        out.xperms.push(x);
                        AvtabDatum::Xperms(out.xperms.len() as u32 - 1)
                    }
                    None => datum,
                };
                out.entries
                    .push(arbiter_policy::avtab::AvtabEntry::new(key, datum).unwrap());
            }
            new_ranges.push(start..out.entries.len() as u32);
        }
        (out, new_ranges)
    }
    let whole = 0..p.avtab.entries.len() as u32;
    p.avtab = sorted(&p.avtab, std::slice::from_ref(&whole)).0;
    let lists: Vec<_> = p
        .cond_nodes
        .iter()
        .flat_map(|n| [n.true_list.clone(), n.false_list.clone()])
        .collect();
    let (cond, ranges) = sorted(&p.cond_avtab, &lists);
    p.cond_avtab = cond;
    for (n, r) in p.cond_nodes.iter_mut().zip(ranges.chunks(2)) {
        n.true_list = r[0].clone();
        n.false_list = r[1].clone();
    }
    p.type_aliases
        .sort_by(|a, b| (a.target, &a.name).cmp(&(b.target, &b.name)));
    p.sensitivity_aliases.sort_by(|a, b| a.name.cmp(&b.name));
    p.category_aliases.sort_by(|a, b| a.name.cmp(&b.name));
    p.role_trans
        .sort_by_key(|r| (r.role, r.ty, r.class, r.new_role));
    p.role_allow.sort_by_key(|r| (r.role, r.new_role));
    p.range_trans.sort_by_key(|r| (r.source, r.target, r.class));
    p
}

/// The model `p` is expected to read back as after a lenient write that reported
/// `dropped`: each loss applied to it. `None` for losses that are not a plain removal
/// (MLS, booleans, expansion of attribute rules, regrouped filename transitions), which
/// other tests cover (`down_conversions_agree_with_checkpolicy`).
fn after_drops(p: &Policy, dropped: &[Unsupported]) -> Option<Policy> {
    use arbiter_policy::symbols::{DefaultRange, DefaultSide, TypeFlavor};
    let mut p = p.clone();
    for d in dropped {
        match d {
            Unsupported::ConstraintTypeNames(_) => {
                for class in &mut p.classes {
                    for c in class
                        .constraints
                        .iter_mut()
                        .chain(class.validatetrans.iter_mut())
                    {
                        for e in c.expr.iter_mut() {
                            if let ConstraintExpr::Names { type_names, .. } = e {
                                *type_names = None;
                            }
                        }
                    }
                }
            }
            Unsupported::FilenameTransitions(_) => p.filename_trans.clear(),
            Unsupported::NeverAuditTypes(_) => p.neveraudit = Default::default(),
            Unsupported::PolicyCapabilities(_) => p.policycaps = Default::default(),
            Unsupported::PermissiveTypes(_) => p.permissive = Default::default(),
            Unsupported::Ipv6NodeContexts(_) => p.ocontexts.nodes6.clear(),
            Unsupported::InfinibandContexts(_) => {
                p.ocontexts.ibpkeys.clear();
                p.ocontexts.ibendports.clear();
            }
            Unsupported::Bounds(_) => {
                p.types.iter_mut().for_each(|t| t.bounds = None);
                p.roles.iter_mut().for_each(|r| r.bounds = None);
                p.users.iter_mut().for_each(|u| u.bounds = None);
            }
            Unsupported::ValidateTrans(_) => {
                p.classes
                    .iter_mut()
                    .for_each(|c| c.validatetrans = Box::new([]));
            }
            Unsupported::ClassDefaults(_) => {
                for c in &mut p.classes {
                    c.default_user = DefaultSide::None;
                    c.default_role = DefaultSide::None;
                    c.default_range = DefaultRange::None;
                }
            }
            Unsupported::DefaultType(_) => {
                p.classes
                    .iter_mut()
                    .for_each(|c| c.default_type = DefaultSide::None);
            }
            Unsupported::Glblub(_) => {
                for c in &mut p.classes {
                    if c.default_range == DefaultRange::Glblub {
                        c.default_range = DefaultRange::None;
                    }
                }
            }
            Unsupported::RoleTransitionClasses(_) | Unsupported::RangeTransitionClasses(_) => {
                let process = p.classes.iter().position(|c| &*c.name == "process");
                let is_process = |c: arbiter_policy::ClassId| Some(c.index()) == process;
                if matches!(d, Unsupported::RoleTransitionClasses(_)) {
                    p.role_trans.retain(|r| is_process(r.class));
                } else {
                    p.range_trans.retain(|r| is_process(r.class));
                }
            }
            Unsupported::Xperms(_) | Unsupported::ConditionalXperms(_) => {
                let conditional_only = matches!(d, Unsupported::ConditionalXperms(_));
                if !conditional_only {
                    p.avtab = without_xperms(&p.avtab, &mut []);
                }
                let mut ranges: Vec<_> = p
                    .cond_nodes
                    .iter()
                    .flat_map(|n| [n.true_list.clone(), n.false_list.clone()])
                    .collect();
                p.cond_avtab = without_xperms(&p.cond_avtab, &mut ranges);
                for (n, r) in p.cond_nodes.iter_mut().zip(ranges.chunks(2)) {
                    n.true_list = r[0].clone();
                    n.false_list = r[1].clone();
                }
            }
            Unsupported::AttributeNames(_) => {
                for t in &mut p.types {
                    if t.flavor == TypeFlavor::Attribute {
                        t.flavor = TypeFlavor::Unnamed;
                        t.name = "".into();
                    }
                }
            }
            Unsupported::UnnamedTypes(_) => {
                for (i, t) in p.types.iter_mut().enumerate() {
                    if t.flavor == TypeFlavor::Unnamed {
                        t.flavor = TypeFlavor::Attribute;
                        t.name = format!("attribute_{}", i + 1).into();
                    }
                }
            }
            _ => return None,
        }
    }
    Some(p)
}

/// A table without its extended-permission entries; `ranges` (lists into it) follow.
fn without_xperms(t: &Avtab, ranges: &mut [std::ops::Range<u32>]) -> Avtab {
    let mut out = Avtab::default();
    let mut new_index = Vec::with_capacity(t.entries.len() + 1);
    for (e, (_, _, x)) in t.entries.iter().zip(entries(t)) {
        new_index.push(out.entries.len() as u32);
        if x.is_none() {
            out.entries.push(*e);
        }
    }
    new_index.push(out.entries.len() as u32);
    for r in ranges.iter_mut() {
        *r = new_index[r.start as usize]..new_index[r.end as usize];
    }
    out
}

/// libsepol 3.4 must load an image we wrote (versions up to 33; it knows no newer ones).
fn libsepol_loads(what: &str, bytes: &[u8]) {
    if let Err(e) = sepol_oracle::policydb_read_only(bytes) {
        panic!("{what}: libsepol refuses the written policy: {e}");
    }
}

// ------------------------------------------------------------------ tests

#[test]
fn every_policy_round_trips_at_its_own_version() {
    for (label, p) in policies() {
        let bytes = write_policy(&p, p.version).unwrap_or_else(|e| panic!("{label}: {e}"));
        let back = Policy::from_bytes(&bytes)
            .unwrap_or_else(|e| panic!("{label}: written policy does not read back: {e}"));
        assert_same(&label, &p, &back);
        let again = write_policy(&back, back.version).unwrap();
        assert!(again == bytes, "{label}: writing is not deterministic");
        if p.version <= 33 {
            libsepol_loads(&label, &bytes);
        }
    }
}

/// Versions to convert a policy to: all of them for the small policies, a selection for
/// the large Debian ones. (Below 20 rules on attributes are expanded to types, which
/// makes Debian's policy 3.7 million rules and 100 MB: the small policies test that.)
fn targets(label: &str) -> Vec<u32> {
    if is_debian(label) {
        vec![35, 34, 32, 30, 29, 25, 24, 23, 20]
    } else {
        (15..=35).collect()
    }
}

#[test]
fn conversions_keep_the_model_or_name_what_the_version_lacks() {
    let mut converted = 0;
    let mut refused = 0;
    let mut dropped_checked = 0;
    for (label, p) in policies() {
        let neutral = version_neutral(&p);
        for v in targets(&label) {
            let what = format!("{label} as version {v}");
            match write_policy(&p, v) {
                Ok(bytes) => {
                    converted += 1;
                    let back = Policy::from_bytes(&bytes)
                        .unwrap_or_else(|e| panic!("{what}: does not read back: {e}"));
                    assert_eq!(back.version, v, "{what}");
                    assert_same(&what, &neutral, &version_neutral(&back));
                    if v <= 33 {
                        libsepol_loads(&what, &bytes);
                    }
                }
                Err(WriteError::Unsupported { version, what: u }) => {
                    refused += 1;
                    assert_eq!(version, v);
                    assert!(
                        !u.versions().contains(&v),
                        "{what}: refused for {u}, which version {v} has"
                    );
                    // The lenient writer drops it (and the rest the version lacks).
                    let w = write_policy_with(
                        &p,
                        v,
                        &WriteOptions {
                            drop_unsupported: true,
                            ..Default::default()
                        },
                    )
                    .unwrap_or_else(|e| panic!("{what} (dropping): {e}"));
                    assert!(w.dropped.contains(&u), "{what}: {u} not reported dropped");
                    assert!(
                        w.dropped.iter().all(|d| !d.versions().contains(&v)),
                        "{what}"
                    );
                    let back = Policy::from_bytes(&w.bytes)
                        .unwrap_or_else(|e| panic!("{what} (dropping): does not read back: {e}"));
                    assert_eq!(back.version, v);
                    if let Some(expected) = after_drops(&p, &w.dropped) {
                        dropped_checked += 1;
                        assert_same(
                            &format!("{what} (dropping {:?})", w.dropped),
                            &version_neutral(&expected),
                            &version_neutral(&back),
                        );
                    }
                    if v <= 33 {
                        libsepol_loads(&what, &w.bytes);
                    }
                }
                Err(e) => panic!("{what}: {e}"),
            }
        }
    }
    eprintln!(
        "{converted} conversions kept the model, {refused} were refused; of those, \
         {dropped_checked} dropping conversions gave exactly the model minus what they dropped"
    );
    assert!(converted > 300 && refused > 100, "{converted} / {refused}");
    assert!(dropped_checked > 100, "{dropped_checked}");
}

#[test]
fn versions_outside_15_to_35_are_refused() {
    let p = bin("tiny.33");
    for v in [0, 14, 36, u32::MAX] {
        assert!(matches!(
            write_policy(&p, v),
            Err(WriteError::UnsupportedVersion { version, min: 15, max: 35 }) if version == v
        ));
    }
}

#[test]
fn strict_refusals_name_the_feature() {
    let features = bin("features.33");
    let refusal = |v| match write_policy(&features, v) {
        Err(WriteError::Unsupported { what, .. }) => what,
        other => panic!(
            "version {v}: expected a refusal, got {:?}",
            other.map(|b| b.len())
        ),
    };
    assert!(write_policy(&features, 32).is_ok());
    assert!(matches!(refusal(31), Unsupported::Glblub(1)));
    // Below 30 the first refusal is whichever lacking feature comes first in the file.
    assert!(!refusal(29).versions().contains(&29));
    let default = bin("default.33");
    let e = write_policy(&default, 24).map(|_| ()).unwrap_err();
    assert!(e.to_string().contains("needs version"), "{e}");
}

#[test]
fn dropping_reports_each_loss_once() {
    let features = bin("features.33");
    let w = write_policy_with(
        &features,
        29,
        &WriteOptions {
            drop_unsupported: true,
            ..Default::default()
        },
    )
    .unwrap();
    let back = Policy::from_bytes(&w.bytes).unwrap();
    assert!(back.avtab.xperms.is_empty());
    assert!(w
        .dropped
        .iter()
        .any(|d| matches!(d, Unsupported::Xperms(n) if *n == features.avtab.xperms.len())));
    assert!(w
        .dropped
        .iter()
        .any(|d| matches!(d, Unsupported::InfinibandContexts(4))));
    let mut kinds: Vec<_> = w.dropped.iter().map(std::mem::discriminant).collect();
    let n = kinds.len();
    kinds.dedup();
    assert_eq!(kinds.len(), n, "{:?}", w.dropped);
}

/// checkpolicy's own conversions in `policies/bin` (see `regen.sh`) against ours of the
/// same v33 binaries, with what checkpolicy drops dropped: the same policies, up to the
/// order of rules.
#[test]
fn down_conversions_agree_with_checkpolicy() {
    let cases: Vec<(&str, Vec<u32>)> = vec![
        ("tiny", (15..=32).collect()),
        ("default", vec![19, 21, 24, 26, 29]),
        ("features", vec![30, 31, 32]),
    ];
    for (name, versions) in cases {
        let source = bin(&format!("{name}.33"));
        for v in versions {
            let what = format!("{name}.33 as version {v}");
            let w = write_policy_with(
                &source,
                v,
                &WriteOptions {
                    drop_unsupported: true,
                    ..Default::default()
                },
            )
            .unwrap_or_else(|e| panic!("{what}: {e}"));
            let ours = Policy::from_bytes(&w.bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
            let theirs = bin(&format!("{name}.{v}"));
            assert_same(&what, &canonical(&theirs), &canonical(&ours));
        }
    }
}

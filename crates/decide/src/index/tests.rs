//! The plans against the per-attribute walk they replace, on every policy at hand.

use super::*;
use crate::state::Snapshot;
use arbiter_policy::mls::Context;
use arbiter_policy::UserId;
use arbiter_testkit::Rng;
use std::path::PathBuf;
use std::sync::Arc;

fn policies() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../policies/bin");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.sort();
    let debian = PathBuf::from(arbiter_testkit::DEBIAN_DEFAULT);
    if debian.exists() {
        v.push(debian);
    }
    v
}

/// The per-attribute walk the plans replace: every bucket of every attribute of the
/// source, each rule tested against the target's full membership row.
fn walk(snap: &Snapshot, s: TypeId, t: TypeId, class: ClassId) -> (u32, u32, u32) {
    let idx = snap.index();
    let row = idx.member_row(t);
    let (mut a, mut aa, mut ad) = (0, 0, u32::MAX);
    for &sa in idx.attrs_of(s) {
        for r in idx.av_bucket(sa, class) {
            if row_has(row, r.target) && snap.cond_enabled(r.cond) {
                match r.kind {
                    AvKind::Allowed => a |= r.perms,
                    AvKind::AuditAllow => aa |= r.perms,
                    AvKind::AuditDeny => ad &= r.perms,
                }
            }
        }
    }
    (a, aa, ad)
}

fn ctx(ty: TypeId) -> Context {
    Context {
        user: UserId::new(1).unwrap(),
        role: RoleId::new(1).unwrap(),
        ty,
        range: MlsRange::default(),
    }
}

#[test]
fn plan_keys_round_trip() {
    let rules = [
        (
            7u16,
            false,
            1u16,
            AvKind::Allowed,
            UNCONDITIONAL,
            0xdead_beef_u32,
        ),
        (65535, true, 65535, AvKind::AuditDeny, 0, 0),
        (
            1,
            true,
            42,
            AvKind::AuditAllow,
            (NARROW_COND_LIMIT - 1) as u32,
            u32::MAX,
        ),
    ];
    for (class, solo, target, kind, cond, perms) in rules {
        let r = AvRule {
            target,
            kind,
            cond,
            perms,
        };
        assert_eq!(u64::pack(class, solo, &r).unpack(perms), (class, solo, r));
        assert_eq!(u128::pack(class, solo, &r).unpack(perms), (class, solo, r));
    }
    let wide = AvRule {
        target: 3,
        kind: AvKind::Allowed,
        cond: u32::MAX - 1,
        perms: 5,
    };
    assert_eq!(u128::pack(2, false, &wide).unpack(5), (2, false, wide));
}

#[test]
fn plans_match_the_per_attribute_walk() {
    let paths = policies();
    assert!(!paths.is_empty());
    for path in paths {
        let Ok(p) = Policy::open(&path) else {
            continue; // formats this build does not read are covered elsewhere
        };
        let p = Arc::new(p);
        let loaded = |index| {
            crate::sync::Arc::new(crate::state::Loaded::new(
                p.clone(),
                index,
                crate::sidtab::SidTable::new(&p),
                1,
            ))
        };
        let idx = loaded(PolicyIndex::build(&p));
        let wide = loaded(PolicyIndex::build_with(&p, true, None));
        // Half the plans the policy needs: some types planned, the rest walk buckets.
        let half = loaded(PolicyIndex::build_with(
            &p,
            false,
            Some(idx.index.plan_bound() / 2),
        ));
        let nt = p.types.len();
        let nc = p.classes.len();
        // Concrete members of each type or attribute.
        let mut members = vec![Vec::new(); nt];
        for (t, map) in p.type_attr_map.iter().enumerate() {
            for a in map.iter() {
                if let Some(m) = members.get_mut(a as usize) {
                    m.push(TypeId::from_index(t).unwrap());
                }
            }
        }
        let mut rng = Rng::new(0x2545_f491_4f6c_dd1d ^ nt as u64);
        let keys: Vec<_> = p
            .avtab
            .entries
            .iter()
            .chain(p.cond_avtab.entries.iter())
            .map(|e| e.key)
            .collect();
        // Fewer queries in debug builds, where the walk is slow.
        let per_round = if cfg!(debug_assertions) {
            4_000
        } else {
            20_000
        };
        let step = (keys.len() / per_round).max(1);
        for round in 0..3 {
            let bools: Box<[bool]> = p
                .bools
                .iter()
                .map(|b| {
                    if round == 0 {
                        b.state
                    } else {
                        rng.below(2) == 1
                    }
                })
                .collect();
            let snap = Snapshot::new(idx.clone(), bools.clone(), 1);
            let snap_wide = Snapshot::new(wide.clone(), bools.clone(), 1);
            let snap_half = Snapshot::new(half.clone(), bools, 1);
            let check = |s: TypeId, t: TypeId, c: ClassId| {
                let got = crate::av::te_av(&snap, &ctx(s), &ctx(t), c);
                let got_wide = crate::av::te_av(&snap_wide, &ctx(s), &ctx(t), c);
                let got_half = crate::av::te_av(&snap_half, &ctx(s), &ctx(t), c);
                assert_eq!(
                    got,
                    got_half,
                    "{}: plans cut short by the budget",
                    path.display()
                );
                assert_eq!(
                    got,
                    got_wide,
                    "{}: 64- and 128-bit plan keys",
                    path.display()
                );
                assert_eq!(
                    got,
                    walk(&snap, s, t, c),
                    "{}: source {} target {} class {}",
                    path.display(),
                    s.value(),
                    t.value(),
                    c.value()
                );
            };
            for k in keys.iter().step_by(step) {
                let (ms, mt) = (&members[k.source.index()], &members[k.target.index()]);
                if ms.is_empty() || mt.is_empty() {
                    continue;
                }
                check(ms[rng.below(ms.len())], mt[rng.below(mt.len())], k.class);
                check(ms[rng.below(ms.len())], k.target, k.class);
            }
            for _ in 0..per_round {
                let s = TypeId::from_index(rng.below(nt)).unwrap();
                let t = TypeId::from_index(rng.below(nt)).unwrap();
                let c = ClassId::from_index(rng.below(nc)).unwrap();
                check(s, t, c);
            }
        }
    }
}

/// Model checks of the plans built on first use (run with `RUSTFLAGS="--cfg loom"`).
#[cfg(loom)]
mod loom_models {
    use super::*;
    use arbiter_policy::BUILTIN_POLICY;

    /// Two readers whose first queries race on a type with no plans yet (each may find
    /// the slot empty, build, and store) both get the per-attribute walk's answer, and the
    /// slot ends up filled.
    #[test]
    fn loom_first_queries_racing_on_a_plan_agree_with_the_walk() {
        let p = Arc::new(Policy::from_bytes(BUILTIN_POLICY).unwrap());
        let is_type = |t: TypeId| p.types[t.index()].flavor == TypeFlavor::Type;
        let key = p
            .avtab
            .entries
            .iter()
            .map(|e| e.key)
            .find(|k| k.kind == AvtabKind::Allowed && is_type(k.source) && is_type(k.target))
            .expect("an allow rule between two types");
        let (s, t, c) = (key.source, key.target, key.class);
        loom::model(move || {
            let loaded = crate::sync::Arc::new(crate::state::Loaded::new(
                p.clone(),
                PolicyIndex::build(&p),
                crate::sidtab::SidTable::new(&p),
                1,
            ));
            let bools: Box<[bool]> = p.bools.iter().map(|b| b.state).collect();
            let snap = crate::sync::Arc::new(Snapshot::new(loaded, bools, 1));
            let other = snap.clone();
            let reader = loom::thread::spawn(move || crate::av::te_av(&other, &ctx(s), &ctx(t), c));
            let mine = crate::av::te_av(&snap, &ctx(s), &ctx(t), c);
            let theirs = reader.join().unwrap();
            let expected = walk(&snap, s, t, c);
            assert_ne!(expected.0, 0, "the rule allows something");
            assert_eq!(mine, expected);
            assert_eq!(theirs, expected);
            assert!(snap.index().plan_stats().0 > 0);
        });
    }
}

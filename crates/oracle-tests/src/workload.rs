//! Query workloads over a loaded policy, for comparing arbiter with libsepol: valid subject
//! and object contexts for every concrete type, the member types of every attribute, a
//! small deterministic random generator, and each context's SID in both engines.
//!
//! Used by the `av` benchmark and by the differential test (`tests/oracle_diff.rs`), so
//! both draw their queries the same way.

use arbiter_decide::{SecurityServer, Sid};
use arbiter_policy::avtab::{AvtabKey, AvtabKind};
use arbiter_policy::mls::{Context, MlsLevel, MlsRange};
use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::{ClassId, Policy, RoleId, TypeId, UserId};
use sepol_oracle::Oracle;
use std::collections::HashMap;

/// A xorshift64 generator: deterministic for a given seed, so runs are reproducible.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// A random element of `v`, which must not be empty.
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

/// Valid contexts to draw from, per type.
pub struct Universe {
    /// For each type index: contexts usable as a subject (a real role when one has the
    /// type) and as an object (object_r), as strings.
    pub subject: Vec<Vec<String>>,
    pub object: Vec<Vec<String>>,
    /// Types that some non-object_r role may have.
    pub domains: Vec<TypeId>,
    /// The concrete types (not attributes).
    pub concrete: Vec<TypeId>,
    /// For each type or attribute index: the concrete types that have it.
    pub members: Vec<Vec<TypeId>>,
}

/// The ranges tried for contexts of user `u`: its low and high levels, its whole range and,
/// under MLS, a middle sensitivity when there is one.
fn levels_for(p: &Policy, u: UserId) -> Vec<MlsRange> {
    let ur = &p.users[u.index()].range;
    if !p.mls {
        return vec![ur.clone()];
    }
    let lo = MlsRange {
        low: ur.low.clone(),
        high: ur.low.clone(),
    };
    let hi = MlsRange {
        low: ur.high.clone(),
        high: ur.high.clone(),
    };
    let mut v = vec![lo, hi, ur.clone()];
    // A middle sensitivity without categories, when there is one.
    if ur.high.sens > ur.low.sens + 1 {
        let mid = MlsLevel {
            sens: (ur.low.sens + ur.high.sens) / 2,
            cats: Default::default(),
        };
        v.push(MlsRange {
            low: mid.clone(),
            high: mid,
        });
    }
    v
}

/// Keeps an even spread of at most `per_type` (at least 2) of `v`'s elements.
fn spread(v: &mut Vec<String>, per_type: usize) {
    if v.len() > per_type {
        let n = v.len();
        *v = (0..per_type)
            .map(|i| v[i * (n - 1) / (per_type - 1)].clone())
            .collect();
    }
}

impl Universe {
    /// Every valid context of every concrete type of `server`'s policy — subjects: each
    /// (user, role) pair whose role has the type, at a few levels; objects: object_r
    /// with each user — thinned to a spread of at most `per_type` (at least 2) per type
    /// and kind. libsepol's context-to-SID is a linear scan of its SID table, so the
    /// number of distinct contexts bounds the setup time of a comparison.
    pub fn new(server: &SecurityServer, per_type: usize) -> Universe {
        let snap = server.snapshot();
        let p = &*snap.policy;
        let names = snap.names();
        let nt = p.types.len();
        let concrete: Vec<TypeId> = (0..nt)
            .filter(|&i| p.types[i].flavor == TypeFlavor::Type)
            .filter_map(TypeId::from_index)
            .collect();
        let members = p.members();
        let fmt = |c: &Context| arbiter_decide::format_context(names, c);
        let mut subject = vec![Vec::new(); nt];
        let mut object = vec![Vec::new(); nt];
        let object_r = RoleId::new(1).expect("role value 1");
        let mut domains = Vec::new();
        for &t in &concrete {
            // Subjects: each (user, role) pair where the role has the type, a few levels.
            for (ri, role) in p.roles.iter().enumerate() {
                let r = RoleId::from_index(ri).expect("role index");
                if r == object_r || !role.types.contains(t.value() as u32 - 1) {
                    continue;
                }
                for (ui, user) in p.users.iter().enumerate() {
                    if !user.roles.contains(ri as u32) {
                        continue;
                    }
                    let u = UserId::from_index(ui).expect("user index");
                    for range in levels_for(p, u) {
                        let c = Context {
                            user: u,
                            role: r,
                            ty: t,
                            range,
                        };
                        if p.context_is_valid(&c).is_ok() {
                            subject[t.index()].push(fmt(&c));
                        }
                    }
                }
            }
            if !subject[t.index()].is_empty() {
                domains.push(t);
            }
            for ui in 0..p.users.len() {
                let u = UserId::from_index(ui).expect("user index");
                for range in levels_for(p, u) {
                    let c = Context {
                        user: u,
                        role: object_r,
                        ty: t,
                        range,
                    };
                    if p.context_is_valid(&c).is_ok() {
                        object[t.index()].push(fmt(&c));
                    }
                }
            }
            if subject[t.index()].is_empty() {
                subject[t.index()] = object[t.index()].clone();
            }
            for v in [&mut subject[t.index()], &mut object[t.index()]] {
                spread(v, per_type);
            }
        }
        Universe {
            subject,
            object,
            domains,
            concrete,
            members,
        }
    }

    /// A random concrete type that has type or attribute `v`, if any.
    pub fn member(&self, rng: &mut Rng, v: TypeId) -> Option<TypeId> {
        let m = &self.members[v.index()];
        (!m.is_empty()).then(|| *rng.pick(m))
    }

    /// Concrete source and target types for a rule key (a random member of each side's
    /// attribute), or `None` when a side has no member. Draws the source first.
    pub fn rule_pair(&self, rng: &mut Rng, k: &AvtabKey) -> Option<(TypeId, TypeId)> {
        match (self.member(rng, k.source), self.member(rng, k.target)) {
            (Some(s), Some(t)) => Some((s, t)),
            _ => None,
        }
    }

    /// A uniform (source, target, class) of `nclasses` classes: the source a domain (any
    /// concrete type when there are none), the target any concrete type.
    pub fn uniform(&self, rng: &mut Rng, nclasses: usize) -> (TypeId, TypeId, ClassId) {
        let s = if self.domains.is_empty() {
            *rng.pick(&self.concrete)
        } else {
            *rng.pick(&self.domains)
        };
        let t = *rng.pick(&self.concrete);
        let class = ClassId::from_index(rng.below(nclasses)).expect("class index");
        (s, t, class)
    }
}

/// The keys of the access-vector rules (allow, auditallow, dontaudit), unconditional then
/// conditional, in table order.
pub fn av_rule_keys(p: &Policy) -> Vec<AvtabKey> {
    p.avtab
        .entries
        .iter()
        .chain(p.cond_avtab.entries.iter())
        .filter(|e| {
            matches!(
                e.key.kind,
                AvtabKind::Allowed | AvtabKind::AuditAllow | AvtabKind::AuditDeny
            )
        })
        .map(|e| e.key)
        .collect()
}

/// Context strings with their SIDs in both engines, each looked up once (libsepol's
/// context-to-SID is a linear scan of its SID table). Entry `i` is `strings[i]`, with SID
/// `a[i]` in arbiter and `o[i]` in libsepol.
#[derive(Default)]
pub struct Sids {
    pub strings: Vec<String>,
    pub by_str: HashMap<String, u32>,
    pub a: Vec<Sid>,
    pub o: Vec<u32>,
}

impl Sids {
    /// The entry of `ctx`, resolving it in both engines the first time. Panics when
    /// either engine rejects it (the workload's contexts are all valid).
    pub fn get(&mut self, server: &SecurityServer, oracle: &Oracle, ctx: &str) -> u32 {
        if let Some(&i) = self.by_str.get(ctx) {
            return i;
        }
        let a = server.context_to_sid(ctx);
        let o = oracle.context_to_sid(ctx);
        match (a, o) {
            (Ok(a), Ok(o)) => {
                let i = self.strings.len() as u32;
                self.strings.push(ctx.to_string());
                self.by_str.insert(ctx.to_string(), i);
                self.a.push(a);
                self.o.push(o);
                i
            }
            (a, o) => panic!("context {ctx}: arbiter {a:?} libsepol {o:?}"),
        }
    }

    /// `ctx`'s SIDs in arbiter and in libsepol, resolving it the first time.
    pub fn pair(&mut self, server: &SecurityServer, oracle: &Oracle, ctx: &str) -> (Sid, u32) {
        let i = self.get(server, oracle, ctx) as usize;
        (self.a[i], self.o[i])
    }
}

//! The adapter over arbiter's security server: every use of `arbiter-decide` in this crate
//! is in this module (and its `reason` child), so that a change of the server's API is
//! absorbed here.
//!
//! [`Engine::analyze`] answers what `audit2why`'s `selinux.audit2why.analyze` answers — the
//! stage of libsepol's `context_struct_compute_av` that removed a requested permission (TE,
//! constraint, role, bounds), the single boolean flips that would grant everything, whether
//! a TE denial is dontaudited — computed from arbiter's decision index: TE rules from the
//! bucketed index, constraints evaluated term by term with libsepol's reason text, the role
//! and bounds checks as libsepol orders them.

mod reason;

use crate::error::{Unknown, WhyError};
use arbiter_decide::internals::{compute_av, te_av};
use arbiter_decide::{AccessVector, KeyedState, SecurityServer, Snapshot};
use arbiter_policy::avtab::{AvtabDatum, AvtabKind};
use arbiter_policy::cond::CondExpr;
use arbiter_policy::mls::Context;
use arbiter_policy::{ClassId, Policy, TypeId, ValidPolicy};
use std::cell::OnceCell;
use std::collections::HashMap;
use std::sync::Arc;

/// audit2why's verdict on one denial (its result codes `ALLOW` ... `BOUNDS`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The policy grants every requested permission.
    Allow,
    /// A TE rule is missing and a `dontaudit` rule covers a requested permission.
    DontAudit,
    /// A TE allow rule is missing and no single boolean flip grants the access.
    TeRule,
    /// Each listed boolean, set to the given value alone, would grant the access.
    Boolean(Vec<BoolFix>),
    /// A constraint removed a requested permission: libsepol's reason text (one entry per
    /// failing constraint, each ending in a newline).
    Constraint(String),
    /// A process transition to another role lacks `allow ROLE1 ROLE2;`.
    Rbac,
    /// The source type's bound lacks a requested permission.
    Bounds,
}

impl Verdict {
    /// audit2why's numeric code (`ALLOW` = 0 ... `BOUNDS` = 6).
    pub fn code(&self) -> i32 {
        match self {
            Verdict::Allow => 0,
            Verdict::DontAudit => 1,
            Verdict::TeRule => 2,
            Verdict::Boolean(_) => 3,
            Verdict::Constraint(_) => 4,
            Verdict::Rbac => 5,
            Verdict::Bounds => 6,
        }
    }

    /// audit2why's name for the verdict.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Allow => "ALLOW",
            Verdict::DontAudit => "DONTAUDIT",
            Verdict::TeRule => "TERULE",
            Verdict::Boolean(_) => "BOOLEAN",
            Verdict::Constraint(_) => "CONSTRAINT",
            Verdict::Rbac => "RBAC",
            Verdict::Bounds => "BOUNDS",
        }
    }
}

/// A boolean and the value that would grant the access.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BoolFix {
    /// The boolean.
    pub name: String,
    /// The value to set it to (`setsebool -P NAME 0|1`).
    pub value: bool,
}

/// Conditional allow rules by class and source type or attribute's ebitmap bit (the two
/// in one word, [`cond_key`]): the target's bit, the permissions and the `if` block, per
/// rule.
type CondAllow = HashMap<u64, Vec<(u32, u32, usize)>, KeyedState>;

/// The key of [`CondAllow`]: the class's value in the high half, the source's bit in the
/// low one.
///
/// One integer rather than a `(ClassId, u32)` tuple: with `ClassId` byte-aligned, the
/// tuple's two padding bytes after the class let LLVM 22's x86 backend (rustc 1.95)
/// miscompile the key's construction. It loaded the class into the low 16 bits of a
/// register whose upper half still held a stale pointer and dropped the widening of the
/// class-and-padding word to 64 bits, so every key's source half came out wrong and no
/// boolean was ever found: `arbiter why` answered "should be dontaudit'd" where audit2why
/// names the boolean (llvm/llvm-project#205291, fixed upstream by #205600).
#[inline]
fn cond_key(class: ClassId, source_bit: u32) -> u64 {
    u64::from(class.value()) << 32 | u64::from(source_bit)
}

/// The policy, its security server, and per-boolean flipped snapshots built on demand.
pub struct Engine {
    server: SecurityServer,
    base: Arc<Snapshot>,
    /// `flipped[i]`: the base booleans with boolean `i` inverted (what audit2why tries).
    flipped: Vec<OnceCell<Snapshot>>,
    /// Conditional allow rules by class and source type or attribute (its ebitmap bit):
    /// (target's bit, permissions, `if` block). Only the booleans of a block whose rule
    /// could grant a TE-denied permission are tried, and only the rules whose source is
    /// among the denial's source type's attributes are looked at: a fleet worker decides
    /// every distinct denial it meets, and scanning the class's every conditional rule
    /// (1,738 for `file` in Debian's policy) was most of a decision.
    cond_allow: CondAllow,
    process: Option<(ClassId, u32)>,
}

impl Engine {
    /// Loads a binary policy file.
    pub fn open(path: &str) -> Result<Engine, WhyError> {
        let policy = ValidPolicy::open(path).map_err(|e| WhyError::Policy {
            path: path.to_string(),
            reason: e.to_string(),
        })?;
        Ok(Engine::new(policy))
    }

    /// Builds the engine for a validated policy (booleans at their default values); a plain
    /// [`arbiter_policy::Policy`] goes through [`ValidPolicy::check`] first.
    pub fn new(policy: ValidPolicy) -> Engine {
        let server = SecurityServer::new(policy);
        let base = server.snapshot();
        let n = base.policy.bools.len();
        let mut cond_allow = CondAllow::default();
        for (ni, node) in base.policy.cond_nodes.iter().enumerate() {
            for idx in node.true_list.clone().chain(node.false_list.clone()) {
                let Some(e) = base.policy.cond_avtab.entries.get(idx as usize) else {
                    continue;
                };
                if let (AvtabKind::Allowed, AvtabDatum::Perms(p)) = (e.key.kind, e.datum()) {
                    cond_allow
                        .entry(cond_key(e.key.class, e.key.source.index() as u32))
                        .or_default()
                        .push((e.key.target.index() as u32, p, ni));
                }
            }
        }
        let names = base.names();
        let process = names.class("process").map(|c| {
            let bits = ["transition", "dyntransition"]
                .iter()
                .filter_map(|p| names.perm(c, p))
                .fold(0, |a, b| a | b);
            (c, bits)
        });
        Engine {
            flipped: (0..n).map(|_| OnceCell::new()).collect(),
            cond_allow,
            base,
            server,
            process,
        }
    }

    /// Resolves the names of a denial as libsepol does, in its order: source context,
    /// target context, class, permissions.
    fn resolve(
        &self,
        scon: &str,
        tcon: &str,
        tclass: &str,
        perms: &[&str],
    ) -> Result<(&Context, &Context, ClassId, u32), Unknown> {
        let sids = self.base.sids();
        let s = self
            .server
            .context_to_sid(scon)
            .ok()
            .and_then(|sid| sids.context(sid))
            .ok_or_else(|| Unknown::Scontext(scon.to_string()))?;
        let t = self
            .server
            .context_to_sid(tcon)
            .ok()
            .and_then(|sid| sids.context(sid))
            .ok_or_else(|| Unknown::Tcontext(tcon.to_string()))?;
        let names = self.base.names();
        let class = names
            .class(tclass)
            .ok_or_else(|| Unknown::Tclass(tclass.to_string()))?;
        let mut av = 0u32;
        for p in perms {
            av |= names.perm(class, p).ok_or_else(|| Unknown::Perm {
                class: tclass.to_string(),
                perm: p.to_string(),
            })?;
        }
        Ok((s, t, class, av))
    }

    /// audit2why's verdict for one denial.
    ///
    /// The steps of the kernel's decision run in its order (TE rules, constraints, role
    /// transitions, type bounds); each takes away what it denies, and is a reason when it
    /// denies a requested permission that the steps before it left. The first reason found
    /// in that order names the verdict, as in libsepol's `sepol_compute_av_reason`.
    pub fn analyze(
        &self,
        scon: &str,
        tcon: &str,
        tclass: &str,
        perms: &[&str],
    ) -> Result<Verdict, Unknown> {
        let (s, t, class, requested) = self.resolve(scon, tcon, tclass, perms)?;
        let (te_allowed, _, auditdeny) = te_av(&self.base, s, t, class);
        let mut req = requested;
        let reason_te = req & !te_allowed != 0;
        req &= te_allowed;
        let mut constraint_text = String::new();
        let allowed = self.constraints_allow(s, t, class, te_allowed, &mut constraint_text);
        let reason_cons = req & !allowed != 0;
        req &= allowed;
        let allowed = self.role_transition_allows(s, t, class, allowed);
        let reason_rbac = req & !allowed != 0;
        req &= allowed;
        let reason_bounds = self.bounds_deny(s, t, class, req & allowed);

        if reason_te {
            let fixes = self.boolean_fixes(s, t, class, requested, requested & !te_allowed);
            if !fixes.is_empty() {
                return Ok(Verdict::Boolean(fixes));
            }
            return Ok(if requested & !auditdeny != 0 {
                Verdict::DontAudit
            } else {
                Verdict::TeRule
            });
        }
        Ok(if reason_cons {
            Verdict::Constraint(constraint_text)
        } else if reason_rbac {
            Verdict::Rbac
        } else if reason_bounds {
            Verdict::Bounds
        } else {
            Verdict::Allow
        })
    }

    /// `allowed` less the permissions of every constraint of `class` that fails for
    /// (`s`, `t`); the failing expressions are written to `text` (audit2why's report).
    fn constraints_allow(
        &self,
        s: &Context,
        t: &Context,
        class: ClassId,
        mut allowed: u32,
        text: &mut String,
    ) -> u32 {
        let snap = &*self.base;
        let policy = &*snap.policy;
        for c in policy.class(class).constraints.iter() {
            // The reason text is written only for a failing constraint (rare), so the
            // plain evaluation runs first.
            if c.perms & allowed != 0 && !reason::eval(policy, c, s, t) {
                reason::eval_with_reason(policy, snap.names(), class, c, s, t, text);
                allowed &= !c.perms;
            }
        }
        allowed
    }

    /// `allowed` less the process transition permission when the role changes without a
    /// `role_allow` rule for that change.
    fn role_transition_allows(
        &self,
        s: &Context,
        t: &Context,
        class: ClassId,
        allowed: u32,
    ) -> u32 {
        let Some((pc, trans)) = self.process else {
            return allowed;
        };
        let policy = &*self.base.policy;
        if pc == class
            && allowed & trans != 0
            && s.role != t.role
            && !policy
                .role_allow
                .iter()
                .any(|ra| ra.role == s.role && ra.new_role == t.role)
        {
            allowed & !trans
        } else {
            allowed
        }
    }

    /// Whether the source type's bound (with the target's bound, when it has one) is
    /// denied a permission of `wanted`: a typebounds violation.
    fn bounds_deny(&self, s: &Context, t: &Context, class: ClassId, wanted: u32) -> bool {
        let snap = &*self.base;
        let policy = &*snap.policy;
        let Some(bound) = policy.type_datum(s.ty).bounds else {
            return false;
        };
        let lo_s = Context {
            ty: bound,
            ..s.clone()
        };
        let lo_t = match policy.type_datum(t.ty).bounds {
            Some(tb) => Context {
                ty: tb,
                ..t.clone()
            },
            None => t.clone(),
        };
        let lo = compute_av(snap, &lo_s, &lo_t, class);
        wanted & !lo.allowed.0 != 0
    }

    /// Per boolean, whether flipping it could grant a permission of `te_denied` to `s` on
    /// `t`: a conditional allow rule for one of them, its source among `s`'s attributes and
    /// its target among `t`'s, sits in a block whose expression reads the boolean (the
    /// candidates are then checked exactly).
    fn boolean_candidates(
        &self,
        s: TypeId,
        t: TypeId,
        class: ClassId,
        te_denied: u32,
    ) -> Vec<bool> {
        let policy = &*self.base.policy;
        let mut candidate = vec![false; policy.bools.len()];
        let (sattr, tattr) = (
            &policy.type_attr_map[s.index()],
            &policy.type_attr_map[t.index()],
        );
        let rules = sattr
            .iter()
            .filter_map(|src| self.cond_allow.get(&cond_key(class, src)))
            .flatten();
        for &(tgt, perms, node) in rules {
            if perms & te_denied != 0 && tattr.contains(tgt) {
                for e in policy.cond_nodes[node].expr.iter() {
                    if let CondExpr::Bool(b) = e {
                        if let Some(c) = candidate.get_mut(b.index()) {
                            *c = true;
                        }
                    }
                }
            }
        }
        candidate
    }

    /// The booleans whose flip alone grants every requested permission, in boolean-value
    /// order (audit2why's `check_booleans`).
    fn boolean_fixes(
        &self,
        s: &Context,
        t: &Context,
        class: ClassId,
        requested: u32,
        te_denied: u32,
    ) -> Vec<BoolFix> {
        let policy = &*self.base.policy;
        let candidate = self.boolean_candidates(s.ty, t.ty, class, te_denied);
        let mut out = Vec::new();
        for (i, b) in policy.bools.iter().enumerate() {
            if !candidate[i] {
                continue;
            }
            let snap = self.flipped[i].get_or_init(|| {
                let mut bools = self.base.bools().to_vec();
                bools[i] = !bools[i];
                Snapshot::new(
                    self.base.loaded.clone(),
                    bools.into_boxed_slice(),
                    self.base.seqno,
                )
            });
            if compute_av(snap, s, t, class).allows(AccessVector(requested)) {
                out.push(BoolFix {
                    name: b.name.to_string(),
                    value: !self.base.bools()[i],
                });
            }
        }
        out
    }

    /// arbiter's full explanation of the decision: text and JSON.
    pub fn explain(
        &self,
        scon: &str,
        tcon: &str,
        tclass: &str,
        perms: &[&str],
    ) -> Result<(String, serde_json::Value), Unknown> {
        self.resolve(scon, tcon, tclass, perms)?;
        let names = self.base.names();
        let class = names
            .class(tclass)
            .ok_or_else(|| Unknown::Tclass(tclass.to_string()))?;
        let requested = perms
            .iter()
            .filter_map(|p| names.perm(class, p))
            .fold(0, |a, b| a | b);
        let unknown = || Unknown::Scontext(scon.to_string());
        let ssid = self.server.context_to_sid(scon).map_err(|_| unknown())?;
        let tsid = self
            .server
            .context_to_sid(tcon)
            .map_err(|_| Unknown::Tcontext(tcon.to_string()))?;
        let e = self
            .server
            .explain(ssid, tsid, class, AccessVector(requested))
            .map_err(|_| unknown())?;
        Ok((e.to_string(), e.to_json()))
    }

    /// The policy being explained against.
    pub fn policy(&self) -> &Policy {
        &self.base.policy
    }

    /// Whether a context string is valid in the policy.
    pub fn context_valid(&self, ctx: &str) -> bool {
        self.server.context_to_sid(ctx).is_ok()
    }

    /// The permissions of `class` granted to `scon` on `tcon` (names, bit order), or
    /// `None` when a name is unknown. Used to generate realistic denials.
    pub fn allowed_perms(&self, scon: &str, tcon: &str, tclass: &str) -> Option<Vec<String>> {
        let (s, t, class, _) = self.resolve(scon, tcon, tclass, &[]).ok()?;
        let d = compute_av(&self.base, s, t, class);
        Some(self.class_perm_names(class, d.allowed.0))
    }

    /// Every permission name of a class, bit order.
    pub fn class_perms(&self, tclass: &str) -> Vec<String> {
        let names = self.base.names();
        match names.class(tclass) {
            Some(c) => self.class_perm_names(c, names.defined_perms(c)),
            None => Vec::new(),
        }
    }

    fn class_perm_names(&self, class: ClassId, av: u32) -> Vec<String> {
        self.base
            .names()
            .perms_to_names(class, av)
            .into_iter()
            .map(String::from)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The conditional allow rules of `class`: (source, target, permissions, `if` block).
    fn class_rules(policy: &Policy, class: ClassId) -> Vec<(TypeId, TypeId, u32, usize)> {
        let mut out = Vec::new();
        for (ni, node) in policy.cond_nodes.iter().enumerate() {
            for idx in node.true_list.clone().chain(node.false_list.clone()) {
                let Some(r) = policy.cond_avtab.entries.get(idx as usize) else {
                    continue;
                };
                if let (AvtabKind::Allowed, AvtabDatum::Perms(p)) = (r.key.kind, r.datum()) {
                    if r.key.class == class {
                        out.push((r.key.source, r.key.target, p, ni));
                    }
                }
            }
        }
        out
    }

    /// The candidates as audit2why finds them: every conditional allow rule of the class,
    /// its source and target tested against the two types' attributes.
    fn candidates_by_scan(
        policy: &Policy,
        rules: &[(TypeId, TypeId, u32, usize)],
        s: TypeId,
        t: TypeId,
        te_denied: u32,
    ) -> Vec<bool> {
        let mut candidate = vec![false; policy.bools.len()];
        let (sattr, tattr) = (
            &policy.type_attr_map[s.index()],
            &policy.type_attr_map[t.index()],
        );
        for &(src, tgt, perms, node) in rules {
            if perms & te_denied != 0
                && sattr.contains(src.index() as u32)
                && tattr.contains(tgt.index() as u32)
            {
                for x in policy.cond_nodes[node].expr.iter() {
                    if let CondExpr::Bool(b) = x {
                        candidate[b.index()] = true;
                    }
                }
            }
        }
        candidate
    }

    /// The indexed search finds the same candidates as the scan over every type pair of a
    /// sample of the Debian policy's types and attributes (the six classes with the most
    /// conditional rules, every permission and one permission denied), some of them
    /// candidates.
    #[test]
    fn boolean_candidates_by_index_equal_the_scan() {
        let path = "/etc/selinux/default/policy/policy.33";
        if !std::path::Path::new(path).exists() {
            eprintln!("skipped: {path} missing");
            return;
        }
        let e = Engine::open(path).unwrap();
        let policy = &*e.base.policy;
        // The six classes with the most conditional allow rules.
        let mut per_class: HashMap<ClassId, usize> = HashMap::new();
        for (key, rules) in &e.cond_allow {
            let class = ClassId::new((key >> 32) as u16).unwrap();
            *per_class.entry(class).or_default() += rules.len();
        }
        let mut classes: Vec<(usize, ClassId)> =
            per_class.into_iter().map(|(c, n)| (n, c)).collect();
        classes.sort_by(|a, b| b.cmp(a));
        let classes: Vec<ClassId> = classes.iter().take(6).map(|&(_, c)| c).collect();
        let types = policy.type_attr_map.len();
        let sample: Vec<TypeId> = (0..types)
            .step_by(types / 60)
            .filter_map(TypeId::from_index)
            .collect();
        let (mut pairs, mut found) = (0, 0);
        for &class in &classes {
            let rules = class_rules(policy, class);
            for &s in &sample {
                for &t in &sample {
                    for denied in [u32::MAX, 1 << 2] {
                        let got = e.boolean_candidates(s, t, class, denied);
                        assert_eq!(got, candidates_by_scan(policy, &rules, s, t, denied));
                        pairs += 1;
                        found += usize::from(got.contains(&true));
                    }
                }
            }
        }
        assert!(
            found > 0 && found < pairs,
            "{found} of {pairs} with candidates"
        );
    }
}

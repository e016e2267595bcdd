//! The analysis: walks the policy's own tables (not the query index) for the rules,
//! booleans, constraints, role check and bounds behind each requested permission.

use super::*;
use crate::av;
use crate::constraint::{self, TermResult};
use crate::context::{format_context, format_range};
use crate::index::perm_bits;
use crate::names::Names;
use crate::state::{eval_cond, Snapshot};
use arbiter_policy::avtab::{AvtabDatum, AvtabEntry, AvtabKind};
use arbiter_policy::cond::CondExpr;
use arbiter_policy::constraint::{attr, Constraint, ConstraintExpr, TypeSet};
use arbiter_policy::mls::{Context, MlsLevel, MlsRange};
use arbiter_policy::{
    constraint_infix, BoolId, ClassId, Ebitmap, InfixStyle, Policy, RoleId, TypeId, UserId,
};
use std::collections::HashMap;

/// The state one explanation reads.
pub(super) struct Explainer<'a> {
    pub(super) snap: &'a Snapshot,
    pub(super) policy: &'a Policy,
    pub(super) names: &'a Names,
}

/// A matching rule found by the walk, before it is rendered.
struct Found {
    kind: RuleKind,
    source: TypeId,
    target: TypeId,
    perms: u32,
    cond: Option<(usize, bool)>,
    enabled: bool,
}

impl Explainer<'_> {
    /// Which type-table values `ty` matches in a rule: itself and its attributes, from the
    /// policy's type→attribute map (a type the map does not cover matches only itself, as
    /// in the index).
    fn matches_of(&self, ty: TypeId) -> Vec<bool> {
        let n = self.policy.types.len();
        let mut v = vec![false; n];
        match self.policy.type_attr_map.get(ty.index()) {
            Some(map) => {
                for b in map.iter() {
                    if let Some(x) = v.get_mut(b as usize) {
                        *x = true;
                    }
                }
            }
            None => {
                if let Some(x) = v.get_mut(ty.index()) {
                    *x = true;
                }
            }
        }
        v
    }

    /// Walks both access vector tables for the allow / auditallow / dontaudit entries of
    /// (s, t, class): enabled ones and disabled conditional ones.
    fn walk(&self, s: &Context, t: &Context, class: ClassId) -> Vec<Found> {
        let sm = self.matches_of(s.ty);
        let tm = self.matches_of(t.ty);
        let hit = |e: &AvtabEntry| -> Option<(RuleKind, u32)> {
            let k = &e.key;
            if k.class != class
                || !sm.get(k.source.index()).copied().unwrap_or(false)
                || !tm.get(k.target.index()).copied().unwrap_or(false)
            {
                return None;
            }
            let AvtabDatum::Perms(p) = e.datum() else {
                return None;
            };
            match k.kind {
                AvtabKind::Allowed => Some((RuleKind::Allow, p)),
                AvtabKind::AuditAllow => Some((RuleKind::AuditAllow, p)),
                AvtabKind::AuditDeny => Some((RuleKind::DontAudit, p)),
                _ => None,
            }
        };
        let mut out = Vec::new();
        for e in &self.policy.avtab.entries {
            if let Some((kind, perms)) = hit(e) {
                out.push(Found {
                    kind,
                    source: e.key.source,
                    target: e.key.target,
                    perms,
                    cond: None,
                    enabled: true,
                });
            }
        }
        for (n, node) in self.policy.cond_nodes.iter().enumerate() {
            let value = self.snap.cond_value(n);
            for (branch, list) in [
                (true, node.true_list.clone()),
                (false, node.false_list.clone()),
            ] {
                let entries = self
                    .policy
                    .cond_avtab
                    .entries
                    .get(list.start as usize..list.end as usize)
                    .unwrap_or(&[]);
                for e in entries {
                    if let Some((kind, perms)) = hit(e) {
                        out.push(Found {
                            kind,
                            source: e.key.source,
                            target: e.key.target,
                            perms,
                            cond: Some((n, branch)),
                            enabled: value == Some(branch),
                        });
                    }
                }
            }
        }
        out
    }

    pub(super) fn analyze(
        &self,
        s: &Context,
        t: &Context,
        class: ClassId,
        requested: u32,
        depth: u32,
    ) -> Explanation {
        let p = self.policy;
        let names = self.names;
        let class_name = names.class_name(class).unwrap_or("?").to_string();
        let defined = names.defined_perms(class);
        let found = self.walk(s, t, class);

        let (mut te_allowed, mut auditallow, mut auditdeny) = (0u32, 0u32, u32::MAX);
        for r in found.iter().filter(|r| r.enabled) {
            match r.kind {
                RuleKind::Allow => te_allowed |= r.perms,
                RuleKind::AuditAllow => auditallow |= r.perms,
                RuleKind::DontAudit => auditdeny &= r.perms,
            }
        }

        // Constraints, in file order, each evaluated only if it governs a permission still
        // allowed — exactly the kernel's loop.
        let mut allowed = te_allowed;
        let mut constraints = Vec::new();
        let cls = &p.classes[class.index()];
        for (i, c) in cls.constraints.iter().enumerate() {
            if c.perms & allowed == 0 {
                continue;
            }
            let before = allowed;
            let mut trace = Vec::new();
            let ok = constraint::eval(p, &c.expr, s, t, None, Some(&mut trace));
            let removes = if ok { 0 } else { c.perms & allowed };
            if !ok {
                allowed &= !c.perms;
            }
            if c.perms & requested != 0 {
                let mut ce = self.constraint_explanation(
                    i,
                    c,
                    &trace,
                    s,
                    t,
                    ok,
                    removes & requested,
                    class,
                    &class_name,
                );
                ce.decides = c.perms & before;
                ce.decides_names = self.perm_names(class, ce.decides);
                constraints.push(ce);
            }
        }

        // The role check of a process transition that changes role.
        let mut rbac = None;
        let process = p.process_class();
        if Some(class) == process {
            let trans = perm_bits(p, class, &["transition", "dyntransition"]);
            if allowed & trans != 0 && s.role != t.role {
                let exists = p
                    .role_allow
                    .iter()
                    .any(|r| r.role == s.role && r.new_role == t.role);
                let removes = if exists { 0 } else { allowed & trans };
                allowed &= !removes;
                if requested & trans != 0 {
                    rbac = Some(RoleCheck {
                        from: self.role_name(s.role),
                        to: self.role_name(t.role),
                        allowed: exists,
                        governs: trans,
                        removes: removes & requested,
                        removes_names: self.perm_names(class, removes & requested),
                    });
                }
            }
        }

        // Bounds: a bounded source keeps only what its bound is allowed (the target
        // replaced by its own bound when it has one).
        let mut bounds = None;
        if let Some(bound) = p.types.get(s.ty.index()).and_then(|d| d.bounds) {
            let before = allowed;
            let target_bound = p.types.get(t.ty.index()).and_then(|d| d.bounds);
            let mut check = BoundsCheck {
                source: self.type_name(s.ty),
                bound: self.type_name(bound),
                target_bound: target_bound.map(|tb| self.type_name(tb)),
                bound_allowed: 0,
                removes: 0,
                removes_names: Vec::new(),
                depth_exceeded: false,
                explanation: None,
            };
            if depth >= MAX_BOUNDS_DEPTH {
                allowed = 0;
                check.depth_exceeded = true;
                check.removes = before & requested;
            } else {
                let lo_s = Context {
                    ty: bound,
                    ..s.clone()
                };
                let lo_t = match target_bound {
                    Some(tb) => Context {
                        ty: tb,
                        ..t.clone()
                    },
                    None => t.clone(),
                };
                let mut nested = self.analyze(&lo_s, &lo_t, class, requested & before, depth + 1);
                allowed &= nested.allowed;
                check.bound_allowed = nested.allowed;
                check.removes = before & !nested.allowed & requested;
                nested.prune(check.removes);
                check.explanation = Some(Box::new(nested));
            }
            check.removes_names = self.perm_names(class, check.removes);
            bounds = Some(check);
        }

        let permissive = p.permissive.contains(s.ty.value() as u32);
        let neveraudit = p.neveraudit.contains(s.ty.value() as u32);

        // Per permission.
        let rule = |r: &Found| self.rule(r, s, t, class, &class_name, defined);
        let mut hypothetical: HashMap<BoolId, u32> = HashMap::new();
        let mut perms = Vec::new();
        for b in bits(requested) {
            let bit = 1u32 << b;
            let granted = allowed & bit != 0;
            let te = te_allowed & bit != 0;
            let allow: Vec<TeRule> = found
                .iter()
                .filter(|r| r.enabled && r.kind == RuleKind::Allow && r.perms & bit != 0)
                .map(rule)
                .collect();
            let aa: Vec<TeRule> = found
                .iter()
                .filter(|r| r.enabled && r.kind == RuleKind::AuditAllow && r.perms & bit != 0)
                .map(rule)
                .collect();
            let da: Vec<TeRule> = found
                .iter()
                .filter(|r| r.enabled && r.kind == RuleKind::DontAudit && r.perms & bit == 0)
                .map(rule)
                .collect();
            let mut would_allow = Vec::new();
            if !te {
                for r in found
                    .iter()
                    .filter(|r| !r.enabled && r.kind == RuleKind::Allow && r.perms & bit != 0)
                {
                    let Some((node, branch)) = r.cond else {
                        continue;
                    };
                    let flips = self.flips(node, branch, s, t, class, bit, &mut hypothetical);
                    would_allow.push(WouldAllow {
                        rule: rule(r),
                        flips,
                    });
                }
            }
            // A permission the bound lacks: the boolean changes that would give it to the
            // bound, re-checked against this query's full decision.
            if bounds.as_ref().is_some_and(|b| b.removes & bit != 0) {
                let nested = bounds.as_ref().and_then(|b| b.explanation.as_deref());
                for np in nested
                    .iter()
                    .flat_map(|e| e.perms.iter())
                    .filter(|np| np.bit == bit)
                {
                    for w in &np.would_allow {
                        let flips = w
                            .flips
                            .iter()
                            .map(|fl| {
                                let allowed =
                                    self.hypothetical(fl.boolean, s, t, class, &mut hypothetical);
                                BoolFlip {
                                    grants: allowed & bit != 0,
                                    ..fl.clone()
                                }
                            })
                            .collect();
                        would_allow.push(WouldAllow {
                            rule: w.rule.clone(),
                            flips,
                        });
                    }
                }
            }
            let mut removed_by = Vec::new();
            if te && !granted {
                for (i, c) in constraints.iter().enumerate() {
                    if !c.result && c.perms & bit != 0 {
                        removed_by.push(Removal::Constraint(i));
                    }
                }
                if rbac.as_ref().is_some_and(|r| r.removes & bit != 0) {
                    removed_by.push(Removal::RoleAllow);
                }
                if bounds.as_ref().is_some_and(|r| r.removes & bit != 0) {
                    removed_by.push(Removal::Bounds);
                }
            }
            let audited = !neveraudit
                && if granted {
                    auditallow & bit != 0
                } else {
                    auditdeny & bit != 0
                };
            perms.push(PermExplanation {
                name: self.perm_name(class, b),
                bit,
                granted,
                te_allowed: te,
                allow,
                would_allow,
                auditallow: aa,
                dontaudit: da,
                removed_by,
                audited,
            });
        }

        Explanation {
            scontext: format_context(names, s),
            tcontext: format_context(names, t),
            class,
            class_name,
            source_type: self.type_name(s.ty),
            target_type: self.type_name(t.ty),
            requested,
            te_allowed,
            allowed,
            auditallow,
            auditdeny,
            permissive,
            neveraudit,
            perms,
            constraints,
            rbac,
            bounds,
            decision: None,
        }
    }

    /// The single boolean changes that enable list `branch` of conditional node `node`,
    /// each with whether the full decision would then grant `bit`.
    #[allow(clippy::too_many_arguments)]
    fn flips(
        &self,
        node: usize,
        branch: bool,
        s: &Context,
        t: &Context,
        class: ClassId,
        bit: u32,
        hypothetical: &mut HashMap<BoolId, u32>,
    ) -> Vec<BoolFlip> {
        let Some(n) = self.policy.cond_nodes.get(node) else {
            return Vec::new();
        };
        let cur = self.snap.bools();
        let mut out = Vec::new();
        let mut seen = Vec::new();
        for e in n.expr.iter() {
            let CondExpr::Bool(id) = *e else { continue };
            if seen.contains(&id) {
                continue;
            }
            seen.push(id);
            let Some(&v) = cur.get(id.index()) else {
                continue;
            };
            let mut flipped = cur.to_vec();
            flipped[id.index()] = !v;
            if eval_cond(&n.expr, &flipped) != Some(branch) {
                continue;
            }
            let allowed = self.hypothetical(id, s, t, class, hypothetical);
            out.push(BoolFlip {
                boolean: id,
                name: self.names.bool_name(id).unwrap_or("?").to_string(),
                value: !v,
                grants: allowed & bit != 0,
            });
        }
        out
    }

    /// The allowed vector of (s, t, class) with boolean `id` flipped, from the fast path on
    /// a private snapshot (never published); memoized per boolean.
    fn hypothetical(
        &self,
        id: BoolId,
        s: &Context,
        t: &Context,
        class: ClassId,
        memo: &mut HashMap<BoolId, u32>,
    ) -> u32 {
        *memo.entry(id).or_insert_with(|| {
            let mut bools = self.snap.bools().to_vec();
            if let Some(b) = bools.get_mut(id.index()) {
                *b = !*b;
            }
            let snap = Snapshot::new(
                self.snap.loaded.clone(),
                bools.into_boxed_slice(),
                self.snap.seqno,
            );
            av::compute_av(&snap, s, t, class).allowed.0
        })
    }

    fn rule(
        &self,
        r: &Found,
        s: &Context,
        t: &Context,
        class: ClassId,
        class_name: &str,
        defined: u32,
    ) -> TeRule {
        // A dontaudit rule is stored as the bits still audited.
        let perms = match r.kind {
            RuleKind::DontAudit => !r.perms & defined,
            _ => r.perms,
        };
        let mut perm_names = self.perm_names(class, perms);
        perm_names.sort();
        TeRule {
            kind: r.kind,
            source: r.source,
            target: r.target,
            class,
            perms,
            source_name: self.type_name(r.source),
            target_name: self.type_name(r.target),
            class_name: class_name.to_string(),
            perm_names,
            source_attribute: r.source != s.ty,
            target_attribute: r.target != t.ty,
            via: {
                let mut parts = Vec::new();
                if r.source != s.ty {
                    parts.push(format!(
                        "{} has attribute {}",
                        self.type_name(s.ty),
                        self.type_name(r.source)
                    ));
                }
                if r.target != t.ty {
                    parts.push(format!(
                        "{} has attribute {}",
                        self.type_name(t.ty),
                        self.type_name(r.target)
                    ));
                }
                (!parts.is_empty()).then(|| parts.join("; "))
            },
            cond: r.cond.map(|(node, branch)| self.cond_ref(node, branch)),
        }
    }

    fn cond_ref(&self, node: usize, branch: bool) -> CondRef {
        let value = self.snap.cond_value(node);
        let n = &self.policy.cond_nodes[node];
        let cur = self.snap.bools();
        let mut bools: Vec<(String, bool)> = Vec::new();
        for e in n.expr.iter() {
            if let CondExpr::Bool(id) = *e {
                let name = self.bool_name(id);
                if !bools.iter().any(|(n, _)| *n == name) {
                    bools.push((name, cur.get(id.index()).copied().unwrap_or(false)));
                }
            }
        }
        CondRef {
            node,
            branch,
            expr: self.cond_text(&n.expr),
            value,
            enabled: value == Some(branch),
            bools,
        }
    }

    /// A postfix boolean expression, infix: `a && !b`, `(a || b) && c`.
    fn cond_text(&self, expr: &[CondExpr]) -> String {
        // (text, top-level operator) for each stack item; atoms have no operator.
        let mut stack: Vec<(String, Option<CondExpr>)> = Vec::new();
        for e in expr {
            match *e {
                CondExpr::Bool(id) => stack.push((self.bool_name(id), None)),
                CondExpr::Not => {
                    let Some((a, op)) = stack.pop() else {
                        return postfix_fallback(expr);
                    };
                    let a = if op.is_some() { format!("({a})") } else { a };
                    stack.push((format!("!{a}"), None));
                }
                op => {
                    let (Some((b, bop)), Some((a, aop))) = (stack.pop(), stack.pop()) else {
                        return postfix_fallback(expr);
                    };
                    let sym = match op {
                        CondExpr::Or => "||",
                        CondExpr::And => "&&",
                        CondExpr::Xor => "^",
                        CondExpr::Eq => "==",
                        _ => "!=",
                    };
                    let assoc = matches!(op, CondExpr::Or | CondExpr::And);
                    let wrap = |x: String, xop: Option<CondExpr>| match xop {
                        Some(o) if !(assoc && o == op) => format!("({x})"),
                        _ => x,
                    };
                    stack.push((format!("{} {sym} {}", wrap(a, aop), wrap(b, bop)), Some(op)));
                }
            }
        }
        match stack.len() {
            1 => stack.pop().map(|(s, _)| s).unwrap_or_default(),
            _ => postfix_fallback(expr),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn constraint_explanation(
        &self,
        index: usize,
        c: &Constraint,
        trace: &[TermResult],
        s: &Context,
        t: &Context,
        result: bool,
        removes: u32,
        class: ClassId,
        class_name: &str,
    ) -> ConstraintExplanation {
        let values: HashMap<usize, bool> = trace.iter().map(|r| (r.index, r.value)).collect();
        let mut terms = Vec::new();
        let mut used: Vec<&'static str> = Vec::new();
        let mut leaf = |i: usize| -> String {
            let text = self.term_text(&c.expr[i], &mut used);
            let v = values.get(&i).copied();
            if let Some(v) = v {
                terms.push(TermValue {
                    term: text.clone(),
                    value: v,
                });
            }
            match v {
                Some(true) => format!("{text} [pass]"),
                Some(false) => format!("{text} [fail]"),
                None => text,
            }
        };
        let expr = constraint_infix(&c.expr, InfixStyle::Policy, &mut leaf);
        let order = ["u1", "u2", "r1", "r2", "t1", "t2", "l1", "h1", "l2", "h2"];
        let operands = order
            .iter()
            .filter(|k| used.contains(k))
            .map(|k| (k.to_string(), self.operand(k, s, t)))
            .collect();
        let mut perm_names = self.perm_names(class, c.perms);
        perm_names.sort();
        let removes_names = self.perm_names(class, removes);
        ConstraintExplanation {
            index,
            mls: c.is_mls(),
            perms: c.perms,
            perm_names,
            expr,
            terms,
            operands,
            result,
            removes,
            removes_names,
            decides: 0,
            decides_names: Vec::new(),
            class_name: class_name.to_string(),
        }
    }

    /// One leaf term as written in the policy language; records the operands of the two
    /// contexts it reads (not `u3`/`r3`/`t3`, the old context of a validatetrans).
    fn term_text(&self, e: &ConstraintExpr, used: &mut Vec<&'static str>) -> String {
        let mut use_ = |k: &'static str| {
            if !k.ends_with('3') && !used.contains(&k) {
                used.push(k);
            }
            k
        };
        let Some((left, right)) = e.operands() else {
            return String::new();
        };
        match e {
            ConstraintExpr::Attr { op, .. } => {
                format!("{} {op} {}", use_(left), use_(right.unwrap_or("?")))
            }
            ConstraintExpr::Names {
                attr: a,
                op,
                names,
                type_names,
            } => {
                use_(left);
                let set = match a & !(attr::TARGET | attr::XTARGET) {
                    attr::USER => self.id_set(names, |i| {
                        UserId::from_index(i).and_then(|u| self.names.user_name(u))
                    }),
                    attr::ROLE => self.id_set(names, |i| {
                        RoleId::from_index(i).and_then(|r| self.names.role_name(r))
                    }),
                    _ => match type_names.as_deref() {
                        Some(ts)
                            if !ts.types.is_empty() || !ts.negset.is_empty() || ts.flags != 0 =>
                        {
                            self.type_set_text(ts)
                        }
                        _ => self.id_set(names, |i| {
                            TypeId::from_index(i).and_then(|t| self.names.type_name(t))
                        }),
                    },
                };
                format!("{left} {op} {set}")
            }
            ConstraintExpr::Not | ConstraintExpr::And | ConstraintExpr::Or => String::new(),
        }
    }

    /// A name set from a bitmap (bit i = value i+1): `name` or `{ a b }`.
    fn id_set<'n>(&self, bits: &Ebitmap, name: impl Fn(usize) -> Option<&'n str>) -> String {
        let v: Vec<String> = bits
            .iter()
            .map(|b| {
                name(b as usize)
                    .map(String::from)
                    .unwrap_or_else(|| format!("?{}", b + 1))
            })
            .collect();
        set_text(&v)
    }

    /// The source-level type set of a constraint term: attributes unexpanded, `-negated`
    /// members, `*` and `~` flags.
    fn type_set_text(&self, ts: &TypeSet) -> String {
        let name = |b: u32| {
            TypeId::from_index(b as usize)
                .and_then(|t| self.names.type_name(t))
                .map(String::from)
                .unwrap_or_else(|| format!("?{}", b + 1))
        };
        let mut v: Vec<String> = Vec::new();
        if ts.flags & 1 != 0 {
            v.push("*".into());
        }
        v.extend(ts.types.iter().map(name));
        v.extend(ts.negset.iter().map(|b| format!("-{}", name(b))));
        let set = if v.len() == 1 {
            v.pop().unwrap_or_default()
        } else {
            format!("{{ {} }}", v.join(" "))
        };
        if ts.flags & 2 != 0 {
            format!("~{set}")
        } else {
            set
        }
    }

    /// The value of a constraint operand in the query.
    fn operand(&self, k: &str, s: &Context, t: &Context) -> String {
        let level = |l: &MlsLevel| {
            format_range(
                self.names,
                &MlsRange {
                    low: l.clone(),
                    high: l.clone(),
                },
            )
        };
        match k {
            "u1" => self.user_name(s.user),
            "u2" => self.user_name(t.user),
            "r1" => self.role_name(s.role),
            "r2" => self.role_name(t.role),
            "t1" => self.type_name(s.ty),
            "t2" => self.type_name(t.ty),
            "l1" => level(&s.range.low),
            "h1" => level(&s.range.high),
            "l2" => level(&t.range.low),
            _ => level(&t.range.high),
        }
    }

    fn type_name(&self, id: TypeId) -> String {
        self.names
            .type_name(id)
            .map(String::from)
            .unwrap_or_else(|| format!("?{}", id.value()))
    }
    fn role_name(&self, id: RoleId) -> String {
        self.names
            .role_name(id)
            .map(String::from)
            .unwrap_or_else(|| format!("?{}", id.value()))
    }
    fn user_name(&self, id: UserId) -> String {
        self.names
            .user_name(id)
            .map(String::from)
            .unwrap_or_else(|| format!("?{}", id.value()))
    }
    fn bool_name(&self, id: BoolId) -> String {
        self.names
            .bool_name(id)
            .map(String::from)
            .unwrap_or_else(|| format!("?{}", id.value()))
    }
    /// The name of bit `b` (0..32) of `class`; bits no permission defines as `0x…`.
    fn perm_name(&self, class: ClassId, b: u32) -> String {
        self.names
            .perm_name(class, b)
            .map(String::from)
            .unwrap_or_else(|| format!("0x{:08x}", 1u32 << b))
    }
    /// The names of the bits of `av`, in permission-value order.
    fn perm_names(&self, class: ClassId, av: u32) -> Vec<String> {
        bits(av).map(|b| self.perm_name(class, b)).collect()
    }
}

/// The set bit positions of `m`, ascending.
pub(super) fn bits(mut m: u32) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        if m == 0 {
            return None;
        }
        let b = m.trailing_zeros();
        m &= m - 1;
        Some(b)
    })
}

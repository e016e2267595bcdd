//! Why a decision came out as it did: the rules, booleans, constraints, role check and
//! bounds behind each requested permission.
//!
//! This is a superset of libsepol's `sepol_compute_av_reason_buffer` (what `audit2why`
//! prints). For one (source context, target context, class) and a set of requested
//! permissions it reports, per permission, whether it is granted and why:
//!
//! * the TE rules (unconditional or conditional) that grant it, as policy-language text with
//!   the source and target as written in the rule (attributes included);
//! * when nothing grants it: the conditional rules that would, and which single boolean
//!   flips would enable them (checked against a full hypothetical decision, so a flip that
//!   enables the rule but still leaves the permission denied by a constraint is said so);
//! * the auditallow rules that make a grant audited and the dontaudit rules that silence
//!   a denial;
//! * the constraints evaluated for the class, term by term, with each term's value;
//! * the role check of process transitions, and the typebounds check (with a nested
//!   explanation of why the bounding type lacks what it removed).
//!
//! Everything here is recomputed from the policy's own tables — the access vector tables
//! are walked entry by entry, the type→attribute map read from the policy, conditional
//! lists evaluated from their expressions — rather than from the query index the fast path
//! uses. It is slower (a linear walk of the rules: fine for one interactive question) but
//! it makes the explanation an independent second computation of the decision: the tests
//! check that it grants exactly what [`crate::av::compute_av`] grants.

use crate::av;
use crate::constraint::{self, TermResult};
use crate::context::{format_context, format_range};
use crate::decision::AvDecision;
use crate::index::perm_bits;
use crate::names::Names;
use crate::state::{eval_cond, Snapshot};
use arbiter_policy::avtab::{AvtabDatum, AvtabEntry, AvtabKind};
use arbiter_policy::cond::CondExpr;
use arbiter_policy::constraint::{attr, Constraint, ConstraintExpr, ConstraintOp, TypeSet};
use arbiter_policy::mls::{Context, MlsLevel, MlsRange};
use arbiter_policy::{BoolId, ClassId, Ebitmap, Policy, RoleId, TypeId, UserId};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::fmt::{self, Write as _};

/// The kernel gives up on bounds chains this deep (they are checked acyclic at load); the
/// explanation mirrors [`crate::av`]'s limit so both agree even on a hostile policy.
const MAX_BOUNDS_DEPTH: u32 = 32;

/// The kind of a TE access-vector rule.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum RuleKind {
    /// An `allow` rule.
    Allow,
    /// An `auditallow` rule.
    AuditAllow,
    /// A `dontaudit` rule.
    DontAudit,
}

impl RuleKind {
    /// The policy-language keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            RuleKind::Allow => "allow",
            RuleKind::AuditAllow => "auditallow",
            RuleKind::DontAudit => "dontaudit",
        }
    }
}

/// The `if` block a conditional rule sits in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CondRef {
    /// Index into [`Policy::cond_nodes`].
    pub node: usize,
    /// Whether the rule is in the true list (else the false / `else` list).
    pub branch: bool,
    /// The expression, infix, with boolean names.
    pub expr: String,
    /// The expression's value under the current booleans (`None`: it cannot be evaluated,
    /// and the kernel then enables neither list).
    pub value: Option<bool>,
    /// Whether the rule's list is enabled, i.e. the rule is in force.
    pub enabled: bool,
    /// The current value of each boolean the expression reads, in expression order.
    pub bools: Vec<(String, bool)>,
}

/// One access vector table entry that applies to the query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TeRule {
    /// The rule kind.
    pub kind: RuleKind,
    /// The rule's source and target as stored: a type, or an attribute of the query's type.
    pub source: TypeId,
    /// The rule's target as stored.
    pub target: TypeId,
    /// The class.
    pub class: ClassId,
    /// For allow / auditallow the bits the rule grants / audits; for dontaudit the bits it
    /// silences (the complement of the stored audit-deny mask, within the class).
    pub perms: u32,
    /// The source's name.
    pub source_name: String,
    /// The target's name.
    pub target_name: String,
    /// The class's name.
    pub class_name: String,
    /// [`TeRule::perms`] by name, alphabetical.
    pub perm_names: Vec<String>,
    /// Whether the source / target is not the query's type itself (then it is one of its
    /// attributes).
    pub source_attribute: bool,
    /// Whether the target is an attribute of the query's type.
    pub target_attribute: bool,
    /// Through which attributes the rule matched, e.g. `user_t has attribute userdomain`.
    pub via: Option<String>,
    /// The `if` block, for a conditional rule.
    pub cond: Option<CondRef>,
}

impl TeRule {
    /// The rule in policy language, e.g. `allow httpd_t httpd_content_t:file { open read };`.
    pub fn text(&self) -> String {
        format!(
            "{} {} {}:{} {};",
            self.kind.keyword(),
            self.source_name,
            self.target_name,
            self.class_name,
            set_text(&self.perm_names)
        )
    }

    /// The rule with its `if` block when conditional, e.g.
    /// `if (b) [true list; now false: b=false] allow a t:file read;`.
    pub fn text_with_cond(&self) -> String {
        match &self.cond {
            None => self.text(),
            Some(c) => {
                let now = match c.value {
                    Some(v) => format!("now {v}"),
                    None => "cannot be evaluated".to_string(),
                };
                let vals: Vec<String> = c.bools.iter().map(|(n, v)| format!("{n}={v}")).collect();
                format!(
                    "if ({}) [{} list; {}: {}] {}",
                    c.expr,
                    if c.branch { "true" } else { "false" },
                    now,
                    vals.join(" "),
                    self.text()
                )
            }
        }
    }

    /// [`TeRule::text_with_cond`] followed by the attributes it matched through.
    pub fn text_full(&self) -> String {
        match &self.via {
            Some(v) => format!("{}  ({v})", self.text_with_cond()),
            None => self.text_with_cond(),
        }
    }

    fn to_json(&self) -> Value {
        json!({
            "text": self.text(),
            "kind": self.kind.keyword(),
            "source": self.source_name,
            "target": self.target_name,
            "class": self.class_name,
            "perms": self.perm_names,
            "source_attribute": self.source_attribute,
            "target_attribute": self.target_attribute,
            "via": self.via,
            "conditional": self.cond.as_ref().map(|c| json!({
                "expr": c.expr,
                "branch": c.branch,
                "value": c.value,
                "enabled": c.enabled,
                "booleans": c.bools.iter().map(|(n, v)| json!({"name": n, "value": v})).collect::<Vec<_>>(),
            })),
        })
    }
}

/// Setting one boolean to `value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoolFlip {
    /// The boolean.
    pub boolean: BoolId,
    /// Its name.
    pub name: String,
    /// The value.
    pub value: bool,
    /// Whether the whole decision (constraints, role check and bounds included) would then
    /// grant the permission, not only the TE rule.
    pub grants: bool,
}

/// A conditional allow rule that would grant a denied permission if its list were enabled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WouldAllow {
    /// The rule that would apply.
    pub rule: TeRule,
    /// The single boolean changes that enable the rule's list (empty: none does alone).
    pub flips: Vec<BoolFlip>,
}

/// Why a TE-granted permission was taken away again.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Removal {
    /// A failing constraint (index into [`Explanation::constraints`]).
    Constraint(usize),
    /// A process transition to another role without `allow ROLE1 ROLE2;`.
    RoleAllow,
    /// The source type's bound lacks the permission.
    Bounds,
}

/// Everything known about one requested permission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PermExplanation {
    /// Its name.
    pub name: String,
    /// The permission's access-vector bit (`1 << (value - 1)`).
    pub bit: u32,
    /// The final decision.
    pub granted: bool,
    /// Whether an enabled TE allow rule grants it.
    pub te_allowed: bool,
    /// The enabled allow rules granting it.
    pub allow: Vec<TeRule>,
    /// When no enabled rule grants it: disabled conditional rules that would.
    pub would_allow: Vec<WouldAllow>,
    /// Enabled auditallow rules covering it (they matter when it is granted).
    pub auditallow: Vec<TeRule>,
    /// Enabled dontaudit rules covering it (they matter when it is denied).
    pub dontaudit: Vec<TeRule>,
    /// What removed it after the TE rules granted it.
    pub removed_by: Vec<Removal>,
    /// Whether the kernel logs this outcome (auditallow for a grant, no dontaudit for a
    /// denial, and the source type not `neveraudit`).
    pub audited: bool,
}

/// One value of a constraint term.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TermValue {
    /// The term, e.g. `u1 == u2` or `t1 == ubac_exempt`.
    pub term: String,
    /// The value.
    pub value: bool,
}

/// One evaluated `constrain` / `mlsconstrain` rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConstraintExplanation {
    /// Position among the class's constraints.
    pub index: usize,
    /// Whether it compares MLS levels (an `mlsconstrain`).
    pub mls: bool,
    /// The permissions the constraint governs.
    pub perms: u32,
    /// The permissions by name.
    pub perm_names: Vec<String>,
    /// The expression, infix, each term followed by `[pass]` or `[fail]`.
    pub expr: String,
    /// Leaf terms in expression order.
    pub terms: Vec<TermValue>,
    /// The operand values the terms read, e.g. `("u1", "user_u")`.
    pub operands: Vec<(String, String)>,
    /// Whether the expression holds.
    pub result: bool,
    /// Requested permissions this constraint removed.
    pub removes: u32,
    /// The requested permissions it removes, by name.
    pub removes_names: Vec<String>,
    /// The permissions still allowed when it was evaluated that it governs: what it
    /// decided. When none of them was requested, the kernel evaluated it for others.
    pub decides: u32,
    /// The requested permissions it decides, by name.
    pub decides_names: Vec<String>,
    class_name: String,
}

impl ConstraintExplanation {
    /// `constrain file { read } (u1 == u2 [fail] or t1 == privileged [pass]) -> pass`.
    pub fn text(&self) -> String {
        format!(
            "{} {} {} ({}) -> {}",
            if self.mls {
                "mlsconstrain"
            } else {
                "constrain"
            },
            self.class_name,
            set_text(&self.perm_names),
            self.expr,
            if self.result { "pass" } else { "fail" }
        )
    }
}

/// The role check of a process transition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoleCheck {
    /// The old role.
    pub from: String,
    /// The new role.
    pub to: String,
    /// Whether `allow FROM TO;` exists.
    pub allowed: bool,
    /// The permissions the check governs (`transition`, `dyntransition`).
    pub governs: u32,
    /// Requested permissions it removed.
    pub removes: u32,
    /// The requested permissions it removes, by name.
    pub removes_names: Vec<String>,
}

/// The typebounds check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundsCheck {
    /// The bounded source type and its bound.
    pub source: String,
    /// The bounding type.
    pub bound: String,
    /// The target's bound, when the target type is bounded too (the kernel then checks the
    /// bound against the target's bound).
    pub target_bound: Option<String>,
    /// What the bound is allowed (full access vector).
    pub bound_allowed: u32,
    /// Requested permissions the check removed.
    pub removes: u32,
    /// The requested permissions it removes, by name.
    pub removes_names: Vec<String>,
    /// The bounds chain was too deep: everything denied.
    pub depth_exceeded: bool,
    /// Why the bound lacks the removed permissions (restricted to them).
    pub explanation: Option<Box<Explanation>>,
}

/// The explanation of one access decision. See the module documentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explanation {
    /// The source context.
    pub scontext: String,
    /// The target context.
    pub tcontext: String,
    /// The class.
    pub class: ClassId,
    /// The class's name.
    pub class_name: String,
    /// The source and target type names.
    pub source_type: String,
    /// The target type's name.
    pub target_type: String,
    /// The requested permissions.
    pub requested: u32,
    /// What the TE rules alone allow (full access vector).
    pub te_allowed: u32,
    /// The final allowed access vector, as recomputed here.
    pub allowed: u32,
    /// Granted permissions to audit.
    pub auditallow: u32,
    /// Denied permissions to audit.
    pub auditdeny: u32,
    /// The source type is permissive.
    pub permissive: bool,
    /// The source type is never audited.
    pub neveraudit: bool,
    /// One entry per requested permission, in permission-value order.
    pub perms: Vec<PermExplanation>,
    /// The evaluated constraints that govern a requested permission.
    pub constraints: Vec<ConstraintExplanation>,
    /// The role-transition check of a process transition, if one applies.
    pub rbac: Option<RoleCheck>,
    /// The typebounds check, if the source type is bounded.
    pub bounds: Option<BoundsCheck>,
    /// The fast path's decision for the same query (top level only): the explanation
    /// reports a mismatch rather than hiding one.
    pub decision: Option<AvDecision>,
}

impl Explanation {
    /// The requested permissions that are granted.
    pub fn granted(&self) -> u32 {
        self.allowed & self.requested
    }

    /// The requested permissions that are denied.
    pub fn denied(&self) -> u32 {
        self.requested & !self.allowed
    }

    /// Whether this explanation agrees with the fast path's decision.
    pub fn agrees(&self) -> bool {
        match self.decision {
            None => true,
            Some(d) => {
                d.allowed.0 == self.allowed
                    && d.auditallow.0 == self.auditallow
                    && d.auditdeny.0 == self.auditdeny
            }
        }
    }

    /// The explanation as JSON (stable keys; rule texts as printed).
    pub fn to_json(&self) -> Value {
        let names = |bits: u32| -> Vec<&str> {
            self.perms
                .iter()
                .filter(|p| p.bit & bits != 0)
                .map(|p| p.name.as_str())
                .collect()
        };
        json!({
            "scontext": self.scontext,
            "tcontext": self.tcontext,
            "class": self.class_name,
            "source_type": self.source_type,
            "target_type": self.target_type,
            "requested": names(self.requested),
            "granted": names(self.granted()),
            "denied": names(self.denied()),
            "allowed": format!("{:08x}", self.allowed),
            "te_allowed": format!("{:08x}", self.te_allowed),
            "auditallow": format!("{:08x}", self.auditallow),
            "auditdeny": format!("{:08x}", self.auditdeny),
            "permissive": self.permissive,
            "neveraudit": self.neveraudit,
            "agrees_with_decision": self.agrees(),
            "permissions": self.perms.iter().map(|p| json!({
                "name": p.name,
                "granted": p.granted,
                "te_allowed": p.te_allowed,
                "audited": p.audited,
                "allow_rules": p.allow.iter().map(TeRule::to_json).collect::<Vec<_>>(),
                "would_allow": p.would_allow.iter().map(|w| json!({
                    "rule": w.rule.to_json(),
                    "flips": w.flips.iter().map(|f| json!({
                        "boolean": f.name, "value": f.value, "grants": f.grants,
                    })).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
                "auditallow_rules": p.auditallow.iter().map(TeRule::to_json).collect::<Vec<_>>(),
                "dontaudit_rules": p.dontaudit.iter().map(TeRule::to_json).collect::<Vec<_>>(),
                "removed_by": p.removed_by.iter().map(|r| match r {
                    Removal::Constraint(i) => json!({"constraint": i}),
                    Removal::RoleAllow => json!("role_allow"),
                    Removal::Bounds => json!("bounds"),
                }).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "constraints": self.constraints.iter().map(|c| json!({
                "index": c.index,
                "mls": c.mls,
                "text": c.text(),
                "perms": c.perm_names,
                "expr": c.expr,
                "terms": c.terms.iter().map(|t| json!({"term": t.term, "value": t.value})).collect::<Vec<_>>(),
                "operands": c.operands.iter().map(|(k, v)| (k.clone(), Value::from(v.clone()))).collect::<serde_json::Map<_, _>>(),
                "result": c.result,
                "removes": c.removes_names,
                "decides": c.decides_names,
            })).collect::<Vec<_>>(),
            "rbac": self.rbac.as_ref().map(|r| json!({
                "from": r.from, "to": r.to, "allowed": r.allowed, "removes": r.removes_names,
            })),
            "bounds": self.bounds.as_ref().map(|b| json!({
                "source": b.source,
                "bound": b.bound,
                "target_bound": b.target_bound,
                "bound_allowed": format!("{:08x}", b.bound_allowed),
                "removes": b.removes_names,
                "depth_exceeded": b.depth_exceeded,
                "explanation": b.explanation.as_ref().map(|e| e.to_json()),
            })),
        })
    }

    /// Keeps only what concerns the permissions in `keep` (used for the nested explanation
    /// of a bound, which only needs to say why the bound lacks what it removed).
    fn prune(&mut self, keep: u32) {
        self.requested &= keep;
        self.perms.retain(|p| p.bit & keep != 0);
        // Constraint indices in `removed_by` refer to positions: renumber.
        let old: Vec<usize> = self.constraints.iter().map(|c| c.index).collect();
        self.constraints.retain(|c| c.perms & keep != 0);
        let pos: HashMap<usize, usize> = self
            .constraints
            .iter()
            .enumerate()
            .map(|(i, c)| (c.index, i))
            .collect();
        for p in &mut self.perms {
            p.removed_by = p
                .removed_by
                .iter()
                .filter_map(|r| match *r {
                    Removal::Constraint(i) => pos.get(&old[i]).map(|&j| Removal::Constraint(j)),
                    other => Some(other),
                })
                .collect();
        }
        let kept_names: Vec<String> = self.perms.iter().map(|p| p.name.clone()).collect();
        if let Some(r) = &mut self.rbac {
            r.removes &= keep;
            r.removes_names.retain(|n| kept_names.contains(n));
        }
        // The role check only bears on the transition permissions.
        if self.rbac.as_ref().is_some_and(|r| r.governs & keep == 0) {
            self.rbac = None;
        }
        if let Some(b) = &mut self.bounds {
            b.removes &= keep;
            b.removes_names.retain(|n| kept_names.contains(n));
            if let Some(e) = &mut b.explanation {
                e.prune(b.removes);
            }
        }
    }

    fn write_to(&self, f: &mut fmt::Formatter<'_>, indent: usize) -> fmt::Result {
        let pad = " ".repeat(indent);
        if !self.agrees() {
            if let Some(d) = self.decision {
                writeln!(
                    f,
                    "{pad}warning: this explanation (allowed {:08x}) disagrees with the decision (allowed {:08x}); please report it",
                    self.allowed, d.allowed
                )?;
            }
        }
        for p in &self.perms {
            let status = match (p.granted, self.permissive) {
                (true, _) => "allowed",
                (false, false) => "denied",
                (false, true) => "denied (permissive domain: logged, not enforced)",
            };
            writeln!(f, "{pad}{}: {status}", p.name)?;
            for r in &p.allow {
                writeln!(f, "{pad}  allowed by: {}", r.text_full())?;
            }
            if p.allow.is_empty() {
                writeln!(f, "{pad}  no TE rule grants it")?;
            }
            for r in &p.removed_by {
                match *r {
                    Removal::Constraint(i) => {
                        if let Some(c) = self.constraints.get(i) {
                            let kw = if c.mls { "mlsconstrain" } else { "constrain" };
                            writeln!(
                                f,
                                "{pad}  removed by constraint: {kw} {} {} (#{}, see constraints)",
                                c.class_name,
                                set_text(&c.perm_names),
                                c.index
                            )?;
                        }
                    }
                    Removal::RoleAllow => {
                        if let Some(rb) = &self.rbac {
                            writeln!(f, "{pad}  removed by the role check: no `allow {} {};` for a transition that changes role", rb.from, rb.to)?;
                        }
                    }
                    Removal::Bounds => {
                        if let Some(b) = &self.bounds {
                            writeln!(f, "{pad}  removed by bounds: {} is bounded by {}, which is not allowed it (see bounds)", b.source, b.bound)?;
                        }
                    }
                }
            }
            for w in &p.would_allow {
                let rule = w.rule.text_full();
                if w.flips.is_empty() {
                    writeln!(f, "{pad}  a conditional rule would grant it, but no single boolean change enables it: {rule}")?;
                }
                for fl in &w.flips {
                    if fl.grants {
                        writeln!(
                            f,
                            "{pad}  would be allowed if: {}={}  ({rule})",
                            fl.name, fl.value
                        )?;
                    } else {
                        writeln!(
                            f,
                            "{pad}  {}={} would enable a granting rule, but the permission would still be denied (constraints, role or bounds)  ({rule})",
                            fl.name, fl.value
                        )?;
                    }
                }
            }
            if p.granted {
                for r in &p.auditallow {
                    writeln!(
                        f,
                        "{pad}  auditallow: {}  (the grant is audited)",
                        r.text_full()
                    )?;
                }
            } else {
                for r in &p.dontaudit {
                    writeln!(
                        f,
                        "{pad}  dontaudit: {}  (the denial is not audited)",
                        r.text_full()
                    )?;
                }
            }
        }
        if !self.constraints.is_empty() {
            writeln!(f, "{pad}constraints:")?;
            for c in &self.constraints {
                writeln!(f, "{pad}  {}", c.text())?;
                if !c.operands.is_empty() {
                    let ops: Vec<String> =
                        c.operands.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    writeln!(f, "{pad}    where {}", ops.join(" "))?;
                }
                if c.removes != 0 {
                    writeln!(f, "{pad}    removes {}", set_text(&c.removes_names))?;
                }
                if c.decides & self.requested == 0 {
                    writeln!(
                        f,
                        "{pad}    (evaluated for {}; it decides none of the requested permissions, which the TE rules or an earlier constraint already denied)",
                        set_text(&c.decides_names)
                    )?;
                }
            }
        }
        if let Some(r) = &self.rbac {
            if r.allowed {
                writeln!(
                    f,
                    "{pad}role check: the transition changes role {} -> {}; `allow {} {};` exists",
                    r.from, r.to, r.from, r.to
                )?;
            } else {
                writeln!(
                    f,
                    "{pad}role check: the transition changes role {} -> {} and there is no `allow {} {};`: removes {}",
                    r.from,
                    r.to,
                    r.from,
                    r.to,
                    set_text(&r.removes_names)
                )?;
            }
        }
        if let Some(b) = &self.bounds {
            let checked = match &b.target_bound {
                Some(tb) => format!(
                    "{} -> {tb}:{} (the target type {} is bounded by {tb} too)",
                    b.bound, self.class_name, self.target_type
                ),
                None => format!("{} -> {}:{}", b.bound, self.target_type, self.class_name),
            };
            writeln!(
                f,
                "{pad}bounds: {} is bounded by {}; checked as {checked}",
                b.source, b.bound
            )?;
            if b.depth_exceeded {
                writeln!(
                    f,
                    "{pad}  the bounds chain is too deep: everything is denied"
                )?;
            } else if b.removes == 0 {
                writeln!(f, "{pad}  removes none of the requested permissions")?;
            } else {
                writeln!(
                    f,
                    "{pad}  removes {}, which {} lacks:",
                    set_text(&b.removes_names),
                    b.bound
                )?;
                if let Some(e) = &b.explanation {
                    e.write_to(f, indent + 4)?;
                }
            }
        }
        if self.permissive {
            writeln!(
                f,
                "{pad}flags: {} is a permissive domain: denials are logged but not enforced",
                self.source_type
            )?;
        }
        if self.neveraudit {
            writeln!(
                f,
                "{pad}flags: {} is a neveraudit domain: its accesses are not audited",
                self.source_type
            )?;
        }
        Ok(())
    }
}

impl fmt::Display for Explanation {
    /// Human-readable text, indented by two spaces, one line per fact, ending with a
    /// newline.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_to(f, 2)
    }
}

/// Explains the decision for contexts `s`, `t`, a class the policy defines, and the
/// `requested` permissions, under one snapshot (so a concurrent commit cannot make the
/// explanation and the decision it carries differ).
pub fn explain(
    snap: &Snapshot,
    s: &Context,
    t: &Context,
    class: ClassId,
    requested: u32,
) -> Explanation {
    let decision = av::compute_av(snap, s, t, class);
    let ex = Explainer {
        snap,
        policy: &snap.policy,
        names: snap.names(),
    };
    let mut e = ex.analyze(s, t, class, requested, 0);
    e.decision = Some(decision);
    e
}

/// The state one explanation reads.
struct Explainer<'a> {
    snap: &'a Snapshot,
    policy: &'a Policy,
    names: &'a Names,
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
            let AvtabDatum::Perms(p) = e.datum else {
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

    fn analyze(
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
        let process = p
            .classes
            .iter()
            .position(|c| &*c.name == "process")
            .and_then(ClassId::from_index);
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
        let expr = match build_tree(&c.expr) {
            Some(tree) => render_tree(&tree, &mut leaf),
            None => (0..c.expr.len())
                .map(&mut leaf)
                .collect::<Vec<_>>()
                .join(" "),
        };
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

    /// One leaf term as written in the policy language; records the operands it reads.
    fn term_text(&self, e: &ConstraintExpr, used: &mut Vec<&'static str>) -> String {
        let mut use_ = |k: &'static str| {
            if !used.contains(&k) {
                used.push(k);
            }
            k
        };
        match e {
            ConstraintExpr::Attr { attr: a, op } => {
                let (l, r) = match *a {
                    attr::USER => ("u1", "u2"),
                    attr::ROLE => ("r1", "r2"),
                    attr::TYPE => ("t1", "t2"),
                    attr::L1L2 => ("l1", "l2"),
                    attr::L1H2 => ("l1", "h2"),
                    attr::H1L2 => ("h1", "l2"),
                    attr::H1H2 => ("h1", "h2"),
                    attr::L1H1 => ("l1", "h1"),
                    attr::L2H2 => ("l2", "h2"),
                    _ => ("?", "?"),
                };
                format!("{} {} {}", use_(l), op_text(*op), use_(r))
            }
            ConstraintExpr::Names {
                attr: a,
                op,
                names,
                type_names,
            } => {
                let side = if a & attr::TARGET != 0 {
                    2
                } else if a & attr::XTARGET != 0 {
                    3
                } else {
                    1
                };
                let base = a & !(attr::TARGET | attr::XTARGET);
                let (letter, key) = match (base, side) {
                    (attr::USER, 1) => ("u1", Some("u1")),
                    (attr::USER, 2) => ("u2", Some("u2")),
                    (attr::USER, _) => ("u3", None),
                    (attr::ROLE, 1) => ("r1", Some("r1")),
                    (attr::ROLE, 2) => ("r2", Some("r2")),
                    (attr::ROLE, _) => ("r3", None),
                    (_, 1) => ("t1", Some("t1")),
                    (_, 2) => ("t2", Some("t2")),
                    _ => ("t3", None),
                };
                if let Some(k) = key {
                    use_(k);
                }
                let set = match base {
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
                format!("{letter} {} {set}", op_text(*op))
            }
            ConstraintExpr::Not => "not".into(),
            ConstraintExpr::And => "and".into(),
            ConstraintExpr::Or => "or".into(),
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
fn bits(mut m: u32) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        if m == 0 {
            return None;
        }
        let b = m.trailing_zeros();
        m &= m - 1;
        Some(b)
    })
}

/// A policy-language set: a single item bare, several in braces.
fn set_text(items: &[String]) -> String {
    match items {
        [one] => one.clone(),
        _ => format!("{{ {} }}", items.join(" ")),
    }
}

fn op_text(op: ConstraintOp) -> &'static str {
    match op {
        ConstraintOp::Eq => "==",
        ConstraintOp::Neq => "!=",
        ConstraintOp::Dom => "dom",
        ConstraintOp::Domby => "domby",
        ConstraintOp::Incomp => "incomp",
    }
}

/// A malformed conditional expression (never loaded, but never panic either): postfix.
fn postfix_fallback(expr: &[CondExpr]) -> String {
    let mut s = String::new();
    for e in expr {
        let _ = write!(s, "{e:?} ");
    }
    s.trim_end().to_string()
}

/// A constraint expression as a tree, for infix rendering.
enum Tree {
    /// Index of a leaf term in the expression.
    Leaf(usize),
    Not(Box<Tree>),
    And(Box<Tree>, Box<Tree>),
    Or(Box<Tree>, Box<Tree>),
}

/// Builds the tree of a postfix constraint expression (`None` if malformed).
fn build_tree(expr: &[ConstraintExpr]) -> Option<Tree> {
    let mut stack = Vec::new();
    for (i, e) in expr.iter().enumerate() {
        match e {
            ConstraintExpr::Not => {
                let a = stack.pop()?;
                stack.push(Tree::Not(Box::new(a)));
            }
            ConstraintExpr::And | ConstraintExpr::Or => {
                let b = stack.pop()?;
                let a = stack.pop()?;
                stack.push(if matches!(e, ConstraintExpr::And) {
                    Tree::And(Box::new(a), Box::new(b))
                } else {
                    Tree::Or(Box::new(a), Box::new(b))
                });
            }
            _ => stack.push(Tree::Leaf(i)),
        }
    }
    if stack.len() == 1 {
        stack.pop()
    } else {
        None
    }
}

/// Renders a tree infix: chains of the same operator flattened (`a or b or c`), a nested
/// different operator parenthesized, `not (...)`.
fn render_tree(tree: &Tree, leaf: &mut impl FnMut(usize) -> String) -> String {
    fn operands<'t>(t: &'t Tree, and: bool, out: &mut Vec<&'t Tree>) {
        match t {
            Tree::And(a, b) if and => {
                operands(a, and, out);
                operands(b, and, out);
            }
            Tree::Or(a, b) if !and => {
                operands(a, and, out);
                operands(b, and, out);
            }
            other => out.push(other),
        }
    }
    match tree {
        Tree::Leaf(i) => leaf(*i),
        Tree::Not(a) => format!("not ({})", render_tree(a, leaf)),
        Tree::And(..) | Tree::Or(..) => {
            let and = matches!(tree, Tree::And(..));
            let mut ops = Vec::new();
            operands(tree, and, &mut ops);
            let parts: Vec<String> = ops
                .into_iter()
                .map(|o| match o {
                    Tree::And(..) | Tree::Or(..) => format!("({})", render_tree(o, leaf)),
                    other => render_tree(other, leaf),
                })
                .collect();
            parts.join(if and { " and " } else { " or " })
        }
    }
}

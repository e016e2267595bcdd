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

mod analysis;
mod text;

use crate::av;
use crate::decision::AvDecision;
use crate::state::Snapshot;
use analysis::Explainer;
use arbiter_policy::mls::Context;
use arbiter_policy::{BoolId, ClassId, TypeId};
use serde_json::{json, Value};
use text::*;

/// The kernel gives up on bounds chains this deep (they are checked acyclic at load); the
/// explanation mirrors the fast path's limit so both agree even on a hostile policy.
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
    /// Index into [`Policy::cond_nodes`](arbiter_policy::Policy::cond_nodes).
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

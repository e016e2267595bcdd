//! Rendering explanations: the human-readable text (`Display`) and JSON.

use super::*;
use arbiter_policy::cond::CondExpr;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::fmt::{self, Write as _};

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
    pub(super) fn prune(&mut self, keep: u32) {
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

/// A policy-language set: a single item bare, several in braces.
pub(super) fn set_text(items: &[String]) -> String {
    match items {
        [one] => one.clone(),
        _ => format!("{{ {} }}", items.join(" ")),
    }
}

/// A malformed conditional expression (never loaded, but never panic either): postfix.
pub(super) fn postfix_fallback(expr: &[CondExpr]) -> String {
    let mut s = String::new();
    for e in expr {
        let _ = write!(s, "{e:?} ");
    }
    s.trim_end().to_string()
}

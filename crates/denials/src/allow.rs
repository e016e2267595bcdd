//! The rules `audit2allow -p POLICY` generates (policycoreutils 3.4, no refpolicy
//! interfaces), with its grouping, order, annotations and spacing.
//!
//! sepolgen keys access vectors by (source type, target type, class, verdict) in first-seen
//! order and merges permissions; each becomes one `allow` rule (target `self` when it equals
//! the source), annotated with the verdict. Rules are stably sorted by source, target and
//! class and grouped under `#============= SOURCE ==============` headers; roles from
//! invalid-context records follow under `#============= ROLES ==============`.

use crate::engine::Verdict;
use crate::why::{constraint_causes, split_context};
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

/// sepolgen's `BADTCLASS` verdict: the rule is generated, without annotation.
const UNKNOWN_CLASS: i32 = -4;

struct Access {
    src: String,
    tgt: String,
    class: String,
    perms: BTreeSet<String>,
    /// The verdict of the first record of the group (sepolgen keeps the first's data).
    verdict: Option<Verdict>,
    /// Whether a merged record carried a non-zero `ioctlcmd`.
    xperms: bool,
}

/// Accumulates denials and renders audit2allow's output.
#[derive(Default)]
pub struct AllowGenerator {
    index: HashMap<(String, String, String, i32), usize>,
    access: Vec<Access>,
    /// role → types, first-seen order of roles.
    roles: Vec<(String, BTreeSet<String>)>,
    /// Contexts of the first record of each group, for constraint causes.
    contexts: Vec<(String, String)>,
}

impl AllowGenerator {
    /// An empty generator.
    pub fn new() -> AllowGenerator {
        AllowGenerator::default()
    }

    /// Adds one denial. `verdict` is `None` for a class the policy does not define (which
    /// audit2allow still turns into a rule).
    pub fn add(
        &mut self,
        scontext: &str,
        tcontext: &str,
        tclass: &str,
        perms: &[&str],
        verdict: Option<&Verdict>,
        ioctlcmd: Option<i64>,
    ) {
        let src = split_context(scontext).2;
        let tgt = split_context(tcontext).2;
        let code = verdict.map_or(UNKNOWN_CLASS, Verdict::code);
        let key = (src.to_string(), tgt.to_string(), tclass.to_string(), code);
        let i = match self.index.get(&key) {
            Some(&i) => i,
            None => {
                self.access.push(Access {
                    src: key.0.clone(),
                    tgt: key.1.clone(),
                    class: key.2.clone(),
                    perms: BTreeSet::new(),
                    verdict: verdict.cloned(),
                    xperms: false,
                });
                self.contexts
                    .push((scontext.to_string(), tcontext.to_string()));
                self.index.insert(key, self.access.len() - 1);
                self.access.len() - 1
            }
        };
        let a = &mut self.access[i];
        a.perms.extend(perms.iter().map(|p| p.to_string()));
        a.xperms |= ioctlcmd.is_some_and(|c| c != 0);
    }

    /// Adds a `role R types T;` requirement from an invalid-context record.
    pub fn add_role(&mut self, role: &str, ty: &str) {
        match self.roles.iter_mut().find(|(r, _)| r == role) {
            Some((_, types)) => {
                types.insert(ty.to_string());
            }
            None => self
                .roles
                .push((role.to_string(), BTreeSet::from([ty.to_string()]))),
        }
    }

    /// Number of distinct access vectors so far.
    pub fn len(&self) -> usize {
        self.access.len()
    }

    /// Whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.access.is_empty() && self.roles.is_empty()
    }

    /// The generated rules as JSON, in audit2allow's order: source, target (`self` when
    /// equal), class, permissions, verdict name (`null` for an unknown class), booleans.
    pub fn to_json(&self) -> serde_json::Value {
        let rules: Vec<serde_json::Value> = self
            .ordered()
            .into_iter()
            .map(|(i, tgt)| {
                let a = &self.access[i];
                let booleans: Vec<serde_json::Value> = match &a.verdict {
                    Some(Verdict::Boolean(f)) => f
                        .iter()
                        .map(|b| serde_json::json!({"name": b.name, "value": b.value}))
                        .collect(),
                    _ => Vec::new(),
                };
                serde_json::json!({
                    "source": a.src,
                    "target": tgt,
                    "class": a.class,
                    "perms": a.perms,
                    "verdict": a.verdict.as_ref().map(Verdict::name),
                    "booleans": booleans,
                })
            })
            .collect();
        let roles: Vec<serde_json::Value> = self
            .roles
            .iter()
            .map(|(r, t)| serde_json::json!({"role": r, "types": t}))
            .collect();
        serde_json::json!({ "rules": rules, "roles": roles })
    }

    /// audit2allow's output.
    pub fn render(&self) -> String {
        let rules = self.ordered();
        let mut out = String::from("\n\n");
        let mut cur: Option<&str> = None;
        for (i, tgt) in &rules {
            let a = &self.access[*i];
            if cur != Some(a.src.as_str()) {
                if cur.is_some() {
                    out.push('\n');
                }
                cur = Some(&a.src);
                let _ = writeln!(out, "#============= {} ==============", a.src);
            }
            let comment = self.comment(*i);
            if !comment.is_empty() {
                out.push_str(&comment);
                out.push('\n');
            }
            let perms: Vec<&str> = a.perms.iter().map(String::as_str).collect();
            let _ = writeln!(
                out,
                "allow {} {}:{} {};",
                a.src,
                tgt,
                a.class,
                space_set(&perms)
            );
        }
        if !self.roles.is_empty() {
            out.push_str("#============= ROLES ==============\n");
            let mut roles: Vec<&(String, BTreeSet<String>)> = self.roles.iter().collect();
            roles.sort_by(|a, b| a.0.cmp(&b.0));
            for (role, types) in roles {
                for t in types {
                    let _ = writeln!(out, "role {role} types {t};");
                }
                out.push('\n');
            }
        }
        out
    }

    /// Rule order: sepolgen's dict iteration (source, target, (class, verdict), each in
    /// first-seen order) stably sorted by source, target as written, class.
    fn ordered(&self) -> Vec<(usize, String)> {
        // sepolgen iterates its nested dicts: source, then target, then (class, verdict),
        // each in first-seen order.
        let mut src_order: Vec<&str> = Vec::new();
        let mut by_src: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, a) in self.access.iter().enumerate() {
            by_src
                .entry(&a.src)
                .or_insert_with(|| {
                    src_order.push(&a.src);
                    Vec::new()
                })
                .push(i);
        }
        let mut order: Vec<usize> = Vec::with_capacity(self.access.len());
        for s in &src_order {
            let idx = &by_src[s];
            let mut tgt_order: Vec<&str> = Vec::new();
            for &i in idx {
                if !tgt_order.contains(&self.access[i].tgt.as_str()) {
                    tgt_order.push(&self.access[i].tgt);
                }
            }
            for t in tgt_order {
                order.extend(idx.iter().copied().filter(|&i| self.access[i].tgt == t));
            }
        }
        let rule_tgt = |a: &Access| -> String {
            if a.src == a.tgt {
                "self".to_string()
            } else {
                a.tgt.clone()
            }
        };
        let mut rules: Vec<(usize, String)> = order
            .iter()
            .map(|&i| (i, rule_tgt(&self.access[i])))
            .collect();
        rules.sort_by(|(a, at), (b, bt)| {
            let (a, b) = (&self.access[*a], &self.access[*b]);
            (&a.src, at, &a.class).cmp(&(&b.src, bt, &b.class))
        });

        rules
    }

    fn comment(&self, i: usize) -> String {
        let a = &self.access[i];
        let mut c = String::new();
        match &a.verdict {
            Some(Verdict::Allow) => {
                c.push_str("\n#!!!! This avc is allowed in the current policy");
                if a.xperms {
                    c.push_str(
                        "\n#!!!! This av rule may have been overridden by an extended permission av rule",
                    );
                }
            }
            Some(Verdict::DontAudit) => {
                c.push_str("\n#!!!! This avc has a dontaudit rule in the current policy")
            }
            Some(Verdict::Boolean(fixes)) => {
                if fixes.len() > 1 {
                    let names: Vec<&str> = fixes.iter().map(|f| f.name.as_str()).collect();
                    let _ = write!(
                        c,
                        "\n#!!!! This avc can be allowed using one of the these booleans:\n#     {}",
                        names.join(", ")
                    );
                } else if let Some(f) = fixes.first() {
                    let _ = write!(
                        c,
                        "\n#!!!! This avc can be allowed using the boolean '{}'",
                        f.name
                    );
                }
            }
            Some(Verdict::Constraint(buf)) => {
                c.push_str("\n#!!!! This avc is a constraint violation.  You would need to modify the attributes of either the source or target types to allow this access.");
                c.push_str("\n#Constraint rule: ");
                let _ = write!(c, "\n#\t{buf}");
                let (s, t) = &self.contexts[i];
                for (x, y) in constraint_causes(s, t) {
                    let _ = write!(
                        c,
                        "\n#\tPossible cause is the source {x} and target {y} are different."
                    );
                }
            }
            _ => {}
        }
        c
    }
}

/// sepolgen's `list_to_space_str`: `a`, or `{ a b }`.
fn space_set(items: &[&str]) -> String {
    if items.len() == 1 {
        items[0].to_string()
    } else {
        format!("{{ {} }}", items.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_source_and_target_is_written_self_and_permissions_merge() {
        let mut g = AllowGenerator::new();
        g.add(
            "u:r:a_t:s0",
            "u:r:a_t:s0",
            "file",
            &["write"],
            Some(&Verdict::TeRule),
            None,
        );
        g.add(
            "u:r:a_t:s0",
            "u:r:a_t:s0",
            "file",
            &["read"],
            Some(&Verdict::TeRule),
            None,
        );
        assert_eq!(
            g.render(),
            "\n\n#============= a_t ==============\nallow a_t self:file { read write };\n"
        );
    }

    #[test]
    fn groups_sort_by_source_and_verdicts_stay_apart() {
        let mut g = AllowGenerator::new();
        g.add(
            "u:r:z_t",
            "u:r:x_t",
            "file",
            &["read"],
            Some(&Verdict::Allow),
            Some(0x5401),
        );
        g.add(
            "u:r:b_t",
            "u:r:x_t",
            "dir",
            &["search"],
            Some(&Verdict::TeRule),
            None,
        );
        g.add("u:r:z_t", "u:r:x_t", "file", &["read"], None, None);
        assert_eq!(
            g.render(),
            "\n\n#============= b_t ==============\nallow b_t x_t:dir search;\n\n#============= z_t ==============\n\n#!!!! This avc is allowed in the current policy\n#!!!! This av rule may have been overridden by an extended permission av rule\nallow z_t x_t:file read;\nallow z_t x_t:file read;\n"
        );
    }
}

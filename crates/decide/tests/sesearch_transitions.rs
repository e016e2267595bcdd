//! Type transitions checked against what `sesearch -T` (setools) lists for the Debian
//! policies: for every filename transition `type_transition S T:C NEW NAME;` creating NAME
//! in a T directory from S gives type NEW; for every unconditional `type_transition S T:C
//! NEW;` creating an object of class C gives NEW; a conditional one gives NEW when its
//! branch is the one the default booleans select (setools prints the expression and the
//! branch).

use arbiter_decide::{LabelKind, SecurityServer};
use arbiter_policy::ValidPolicy;
use std::process::Command;

struct Rule {
    source: String,
    target: String,
    class: String,
    new: String,
    name: Option<String>,
    /// `[ expr ]:True|False`, when conditional.
    cond: Option<(String, bool)>,
}

fn parse(line: &str) -> Option<Rule> {
    let (rule, cond) = match line.split_once("; [") {
        Some((r, c)) => {
            let (expr, branch) = c.rsplit_once("]:")?;
            (
                r.to_string(),
                Some((expr.trim().to_string(), branch.trim() == "True")),
            )
        }
        None => (line.trim_end_matches(';').to_string(), None),
    };
    let f: Vec<&str> = rule.split_whitespace().collect();
    if f.first() != Some(&"type_transition") || f.len() < 4 {
        return None;
    }
    let (target, class) = f[2].split_once(':')?;
    Some(Rule {
        source: f[1].to_string(),
        target: target.to_string(),
        class: class.to_string(),
        new: f[3].trim_end_matches(';').to_string(),
        name: f
            .get(4)
            .map(|n| n.trim_end_matches(';').trim_matches('"').to_string()),
        cond,
    })
}

fn check(path: &str) {
    if !std::path::Path::new(path).exists() {
        eprintln!("note: {path} not present; skipped (CI installs it)");
        return;
    }
    let out = match Command::new("sesearch").args(["-T", path]).output() {
        Ok(o) if o.status.success() => o,
        other => {
            eprintln!("note: sesearch unavailable ({other:?}); skipped (CI installs setools)");
            return;
        }
    };
    let text = String::from_utf8(out.stdout).unwrap();
    let server = SecurityServer::new(ValidPolicy::open(path).unwrap());
    let snap = server.snapshot();
    let mls = snap.policy.mls;
    let mut q = server.query();
    let (mut named, mut plain, mut conditional, mut bad) = (0, 0, 0, Vec::new());
    for line in text.lines() {
        let Some(r) = parse(line) else { continue };
        let range = if mls { ":s0" } else { "" };
        let s = server
            .context_to_sid(&format!("system_u:object_r:{}{range}", r.source))
            .unwrap();
        let t = server
            .context_to_sid(&format!("system_u:object_r:{}{range}", r.target))
            .unwrap();
        let class = server.known_class(&r.class).unwrap();
        let got = q
            .compute_label_context(s, t, class, LabelKind::Create, r.name.as_deref())
            .map(|c| snap.names().type_name(c.ty).unwrap_or("?").to_string());
        let expect_new = match &r.cond {
            None => true,
            Some((expr, branch)) => {
                conditional += 1;
                // Evaluate setools' infix expression under the default booleans by asking
                // the policy: find the conditional node whose list holds this rule.
                let holds = cond_holds(&server, expr);
                holds == *branch
            }
        };
        match (&r.name, expect_new) {
            (Some(_), _) => named += 1,
            (None, _) => plain += 1,
        }
        // A rule in a disabled list says nothing on its own: the same key may have a rule
        // in the other branch, or the default may give the same type.
        let ok = !expect_new || matches!(&got, Ok(ty) if ty == &r.new);
        if !ok {
            bad.push(format!("{line} -> {got:?}"));
        }
    }
    eprintln!("{path}: {named} filename and {plain} other type transitions ({conditional} conditional) checked, {} wrong", bad.len());
    for b in bad.iter().take(20) {
        eprintln!("WRONG {b}");
    }
    assert!(named > 0 && plain > 0, "sesearch listed no rules");
    assert!(bad.is_empty());
}

/// Evaluates setools' rendering of a conditional expression (`a && !b || c`, with
/// parentheses) under the policy's default boolean values.
fn cond_holds(server: &SecurityServer, expr: &str) -> bool {
    let p = server.policy();
    let value = |name: &str| {
        p.bools
            .iter()
            .find(|b| &*b.name == name)
            .map(|b| b.state)
            .unwrap_or_else(|| panic!("boolean {name}"))
    };
    let toks: Vec<String> = expr
        .replace('(', " ( ")
        .replace(')', " ) ")
        .replace('!', " ! ")
        .split_whitespace()
        .map(String::from)
        .collect();
    fn or(t: &[String], i: &mut usize, v: &dyn Fn(&str) -> bool) -> bool {
        let mut x = and(t, i, v);
        while *i < t.len() && (t[*i] == "||" || t[*i] == "^" || t[*i] == "==" || t[*i] == "!=") {
            let op = t[*i].clone();
            *i += 1;
            let y = and(t, i, v);
            x = match op.as_str() {
                "||" => x || y,
                "^" | "!=" => x != y,
                _ => x == y,
            };
        }
        x
    }
    fn and(t: &[String], i: &mut usize, v: &dyn Fn(&str) -> bool) -> bool {
        let mut x = unary(t, i, v);
        while *i < t.len() && t[*i] == "&&" {
            *i += 1;
            let y = unary(t, i, v);
            x = x && y;
        }
        x
    }
    fn unary(t: &[String], i: &mut usize, v: &dyn Fn(&str) -> bool) -> bool {
        let tok = t[*i].clone();
        *i += 1;
        match tok.as_str() {
            "!" => !unary(t, i, v),
            "(" => {
                let x = or(t, i, v);
                *i += 1; // ')'
                x
            }
            name => v(name),
        }
    }
    let mut i = 0;
    or(&toks, &mut i, &value)
}

#[test]
fn debian_default_type_transitions_match_sesearch() {
    check(arbiter_testkit::DEBIAN_DEFAULT);
}

#[test]
fn debian_mls_type_transitions_match_sesearch() {
    check(arbiter_testkit::DEBIAN_MLS);
}

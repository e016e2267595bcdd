//! Text as setools 4.4.1 renders it: conditional expressions, MLS levels and ranges,
//! permission sets and extended-permission ranges.

use arbiter_policy::cond::CondExpr;
use arbiter_policy::mls::{MlsLevel, MlsRange};
use arbiter_policy::Policy;

/// A conditional expression in setools' infix form (`Conditional.__str__`).
///
/// setools walks the postfix expression with one "previous precedence" shared by the whole
/// walk, pops the right operand first (so operands print in reverse), and parenthesises a
/// binary operation unless the previous operator bound tighter. That odd rule is the
/// output users see, so it is reproduced exactly.
pub fn cond_expr(policy: &Policy, expr: &[CondExpr]) -> String {
    enum Node {
        Leaf(String),
        List(Vec<Node>),
    }
    fn flatten(n: &Node, out: &mut Vec<String>) {
        match n {
            Node::Leaf(s) => out.push(s.clone()),
            Node::List(v) => v.iter().for_each(|c| flatten(c, out)),
        }
    }
    let leaf = |s: &str| Node::Leaf(s.to_string());
    let mut stack: Vec<Node> = Vec::new();
    let mut prev = 5;
    for node in expr {
        let (op, prec) = match node {
            CondExpr::Bool(b) => {
                let name = policy.bools.get(b.index()).map_or("", |b| &b.name);
                stack.push(leaf(name));
                continue;
            }
            CondExpr::Not => {
                let Some(operand) = stack.pop() else {
                    break;
                };
                let sub = match operand {
                    Node::List(_) => vec![leaf("!"), leaf("("), operand, leaf(")")],
                    Node::Leaf(_) => vec![leaf("!"), operand],
                };
                stack.push(Node::List(sub));
                prev = 5;
                continue;
            }
            CondExpr::Or => ("||", 1),
            CondExpr::Xor => ("^", 2),
            CondExpr::And => ("&&", 3),
            CondExpr::Eq => ("==", 4),
            CondExpr::Neq => ("!=", 4),
        };
        let (Some(a), Some(b)) = (stack.pop(), stack.pop()) else {
            break;
        };
        let sub = if prev > prec {
            vec![a, leaf(op), b]
        } else {
            vec![leaf("("), a, leaf(op), b, leaf(")")]
        };
        stack.push(Node::List(sub));
        prev = prec;
    }
    let mut words = Vec::new();
    stack.iter().for_each(|n| flatten(n, &mut words));
    words.join(" ")
}

/// The booleans an expression names, by index, ascending and deduplicated.
pub fn cond_bools(expr: &[CondExpr]) -> Vec<u32> {
    let mut v: Vec<u32> = expr
        .iter()
        .filter_map(|e| match e {
            CondExpr::Bool(b) => Some(b.index() as u32),
            _ => None,
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Evaluates a postfix expression with the given boolean values (by boolean index).
pub fn cond_eval(expr: &[CondExpr], value: impl Fn(usize) -> bool) -> bool {
    let mut stack: Vec<bool> = Vec::with_capacity(expr.len());
    for e in expr {
        let v = match e {
            CondExpr::Bool(b) => value(b.index()),
            CondExpr::Not => match stack.pop() {
                Some(x) => !x,
                None => return false,
            },
            op => {
                let (Some(a), Some(b)) = (stack.pop(), stack.pop()) else {
                    return false;
                };
                match op {
                    CondExpr::Or => a || b,
                    CondExpr::And => a && b,
                    CondExpr::Xor => a ^ b,
                    CondExpr::Eq => a == b,
                    _ => a != b,
                }
            }
        };
        stack.push(v);
    }
    stack.first().copied().unwrap_or(false)
}

/// A level: `s0:c0.c3,c5`, categories in value order, runs of consecutive values joined.
pub fn level(policy: &Policy, l: &MlsLevel) -> String {
    let sens = policy
        .sensitivities
        .get((l.sens as usize).wrapping_sub(1))
        .map_or("", |s| &s.name);
    let mut out = sens.to_string();
    let cats: Vec<u32> = l.cats.iter().collect();
    if cats.is_empty() {
        return out;
    }
    let name = |bit: u32| policy.categories.get(bit as usize).map_or("", |c| &*c.name);
    out.push(':');
    let mut i = 0;
    let mut first = true;
    while i < cats.len() {
        let mut j = i;
        while j + 1 < cats.len() && cats[j + 1] == cats[j] + 1 {
            j += 1;
        }
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(name(cats[i]));
        if j > i {
            out.push('.');
            out.push_str(name(cats[j]));
        }
        i = j + 1;
    }
    out
}

/// A range: `low - high`, or one level when both ends are equal.
pub fn range(policy: &Policy, r: &MlsRange) -> String {
    if r.low == r.high {
        level(policy, &r.low)
    } else {
        format!("{} - {}", level(policy, &r.low), level(policy, &r.high))
    }
}

/// Extended permissions as setools' `IoctlSet` prints them: `{:#06x}` values, runs as
/// `lo-hi`, space separated; returns the text and the number of runs.
pub fn xperm_ranges(values: &[u16]) -> (String, usize) {
    let mut out = String::new();
    let mut runs = 0;
    let mut i = 0;
    while i < values.len() {
        let mut j = i;
        while j + 1 < values.len() && values[j + 1] == values[j] + 1 {
            j += 1;
        }
        if runs > 0 {
            out.push(' ');
        }
        runs += 1;
        if j > i {
            out.push_str(&format!("{:#06x}-{:#06x}", values[i], values[j]));
        } else {
            out.push_str(&format!("{:#06x}", values[i]));
        }
        i = j + 1;
    }
    (out, runs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_policy::BoolId;

    fn b(v: u32) -> CondExpr {
        CondExpr::Bool(BoolId::new(v).expect("bool value"))
    }

    fn policy_with_bools(names: &[&str]) -> Policy {
        let mut p = Policy::from_bytes(include_bytes!("../../../policies/bin/tiny.33"))
            .expect("tiny policy");
        p.bools = names
            .iter()
            .map(|n| arbiter_policy::symbols::Bool {
                name: (*n).into(),
                state: false,
            })
            .collect();
        p
    }

    #[test]
    fn cond_expr_prints_binary_operands_in_reverse() {
        let p = policy_with_bools(&["a_bool", "b_bool"]);
        // a_bool && !b_bool, in postfix
        let e = [b(1), b(2), CondExpr::Not, CondExpr::And];
        assert_eq!(cond_expr(&p, &e), "! b_bool && a_bool");
    }

    #[test]
    fn cond_expr_parenthesises_a_chain_of_the_same_operator() {
        let p = policy_with_bools(&["x", "y", "z"]);
        let e = [b(1), b(2), CondExpr::And, b(3), CondExpr::And];
        assert_eq!(cond_expr(&p, &e), "( z && y && x )");
    }

    #[test]
    fn cond_eval_follows_the_postfix_expression() {
        let e = [b(1), b(2), CondExpr::Not, CondExpr::And];
        assert!(cond_eval(&e, |i| i == 0));
        assert!(!cond_eval(&e, |_| true));
    }

    #[test]
    fn xperm_ranges_collapse_consecutive_values() {
        assert_eq!(
            xperm_ranges(&[0x8900, 0x8901, 0x8902, 0x8910]),
            ("0x8900-0x8902 0x8910".to_string(), 2)
        );
        assert_eq!(xperm_ranges(&[0xff]), ("0x00ff".to_string(), 1));
    }
}

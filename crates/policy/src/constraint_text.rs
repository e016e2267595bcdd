//! Constraint expressions as text: the operator and operand words of the policy language,
//! and the one postfix-to-infix printer behind `seinfo --constrain`, `sediff`, `explain`
//! and `arbiter.setools`. Callers differ only in how they write a term (names, pass/fail
//! marks) and in the layout ([`InfixStyle`]), so both are parameters rather than copies.

use crate::constraint::{attr, ConstraintExpr, ConstraintOp};
use crate::ebitmap::Ebitmap;
use crate::policy::version;

impl ConstraintOp {
    /// The operator as the policy language writes it: `==`, `!=`, `dom`, `domby`, `incomp`.
    pub fn keyword(self) -> &'static str {
        match self {
            ConstraintOp::Eq => "==",
            ConstraintOp::Neq => "!=",
            ConstraintOp::Dom => "dom",
            ConstraintOp::Domby => "domby",
            ConstraintOp::Incomp => "incomp",
        }
    }
}

impl std::fmt::Display for ConstraintOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.keyword())
    }
}

impl ConstraintExpr {
    /// The operand words a term compares, as the policy language names them: both sides of
    /// an attribute term (`("l1", Some("h2"))`), or the context side of a names term
    /// (`("t2", None)`: its right side is a name set). `None` for `not`/`and`/`or`.
    /// An attribute word outside libsepol's (never in a validated policy) reads `?`.
    pub fn operands(&self) -> Option<(&'static str, Option<&'static str>)> {
        match self {
            ConstraintExpr::Attr { attr: a, .. } => Some(match a & !attr::TARGET {
                attr::USER => ("u1", Some("u2")),
                attr::ROLE => ("r1", Some("r2")),
                attr::TYPE => ("t1", Some("t2")),
                attr::L1L2 => ("l1", Some("l2")),
                attr::L1H2 => ("l1", Some("h2")),
                attr::H1L2 => ("h1", Some("l2")),
                attr::H1H2 => ("h1", Some("h2")),
                attr::L1H1 => ("l1", Some("h1")),
                attr::L2H2 => ("l2", Some("h2")),
                _ => ("?", Some("?")),
            }),
            ConstraintExpr::Names { attr: a, .. } => {
                let side = if a & attr::XTARGET != 0 {
                    2
                } else if a & attr::TARGET != 0 {
                    1
                } else {
                    0
                };
                let words = match a & !(attr::TARGET | attr::XTARGET) {
                    attr::USER => ["u1", "u2", "u3"],
                    attr::ROLE => ["r1", "r2", "r3"],
                    attr::TYPE => ["t1", "t2", "t3"],
                    _ => ["?"; 3],
                };
                Some((words[side], None))
            }
            _ => None,
        }
    }

    /// The value set a names term is written with (bit i = value i+1): for types from
    /// format 29 on, the source-level set (attributes unexpanded), as setools and
    /// libsepol's reason text print it; otherwise the expanded `names`. `None` for other
    /// nodes.
    pub fn written_names(&self, policy_version: u32) -> Option<&Ebitmap> {
        match self {
            ConstraintExpr::Names {
                attr: a,
                names,
                type_names,
                ..
            } => Some(match type_names {
                Some(ts)
                    if a & !(attr::TARGET | attr::XTARGET) == attr::TYPE
                        && policy_version >= version::CONSTRAINT_NAMES =>
                {
                    &ts.types
                }
                _ => names,
            }),
            _ => None,
        }
    }
}

/// How [`constraint_infix`] lays an expression out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum InfixStyle {
    /// The policy language, as `explain` writes it: a chain of one operator flattened
    /// (`a or b or c`), a nested other operator parenthesised, `not (...)`.
    Policy,
    /// setools' `ConstraintExpression.__str__` (what `seinfo`, `sesearch` and `sediff`
    /// print): its precedence walk, which parenthesises every term that follows another
    /// term or an operator of lower precedence, words joined by single spaces.
    Setools,
}

/// Writes a postfix constraint expression infix. `term(i)` writes the term at `expr[i]`
/// (`u1 == u2`, `t1 == { a b }`, with whatever marks the caller adds); operators are
/// written here. A malformed expression (never in a validated policy) is written rather
/// than refused: in [`InfixStyle::Policy`] as its postfix words, in
/// [`InfixStyle::Setools`] as far as setools' walk gets before it runs out of operands.
pub fn constraint_infix(
    expr: &[ConstraintExpr],
    style: InfixStyle,
    mut term: impl FnMut(usize) -> String,
) -> String {
    match style {
        InfixStyle::Policy => match Tree::build(expr) {
            Some(tree) => tree.render(&mut term),
            None => expr
                .iter()
                .enumerate()
                .map(|(i, e)| operator_word(e).map_or_else(|| term(i), str::to_string))
                .collect::<Vec<_>>()
                .join(" "),
        },
        InfixStyle::Setools => setools_infix(expr, &mut term),
    }
}

fn operator_word(e: &ConstraintExpr) -> Option<&'static str> {
    match e {
        ConstraintExpr::Not => Some("not"),
        ConstraintExpr::And => Some("and"),
        ConstraintExpr::Or => Some("or"),
        _ => None,
    }
}

/// setools' walk: each operator (a term counts as one, of precedence 3) is parenthesised
/// unless its precedence is below the one before it.
fn setools_infix(expr: &[ConstraintExpr], term: &mut impl FnMut(usize) -> String) -> String {
    fn precedence(e: &ConstraintExpr) -> u8 {
        match e {
            ConstraintExpr::Not => 4,
            ConstraintExpr::And => 2,
            ConstraintExpr::Or => 1,
            _ => 3,
        }
    }
    let mut stack: Vec<String> = Vec::new();
    let mut prev = 4;
    for (i, e) in expr.iter().enumerate() {
        let text = match e {
            ConstraintExpr::Not => {
                let Some(operand) = stack.pop() else { break };
                format!("not ( {operand} )")
            }
            ConstraintExpr::And | ConstraintExpr::Or => {
                if stack.len() < 2 {
                    break;
                }
                let (Some(b), Some(a)) = (stack.pop(), stack.pop()) else {
                    break;
                };
                let op = operator_word(e).unwrap_or_default();
                if precedence(e) < prev {
                    format!("{a} {op} {b}")
                } else {
                    format!("( {a} {op} {b} )")
                }
            }
            _ if precedence(e) < prev => term(i),
            _ => format!("( {} )", term(i)),
        };
        stack.push(text);
        prev = precedence(e);
    }
    stack.join(" ")
}

/// A constraint expression as a tree, for [`InfixStyle::Policy`].
enum Tree {
    /// Index of a term in the expression.
    Term(usize),
    Not(Box<Tree>),
    And(Box<Tree>, Box<Tree>),
    Or(Box<Tree>, Box<Tree>),
}

impl Tree {
    /// The tree of a postfix expression (`None` if malformed).
    fn build(expr: &[ConstraintExpr]) -> Option<Tree> {
        let mut stack = Vec::new();
        for (i, e) in expr.iter().enumerate() {
            match e {
                ConstraintExpr::Not => {
                    let a = stack.pop()?;
                    stack.push(Tree::Not(Box::new(a)));
                }
                ConstraintExpr::And | ConstraintExpr::Or => {
                    let b = Box::new(stack.pop()?);
                    let a = Box::new(stack.pop()?);
                    stack.push(if matches!(e, ConstraintExpr::And) {
                        Tree::And(a, b)
                    } else {
                        Tree::Or(a, b)
                    });
                }
                _ => stack.push(Tree::Term(i)),
            }
        }
        match stack.len() {
            1 => stack.pop(),
            _ => None,
        }
    }

    /// Collects the operands of a chain of one operator (`and` or not).
    fn chain<'t>(&'t self, and: bool, out: &mut Vec<&'t Tree>) {
        match self {
            Tree::And(a, b) if and => {
                a.chain(and, out);
                b.chain(and, out);
            }
            Tree::Or(a, b) if !and => {
                a.chain(and, out);
                b.chain(and, out);
            }
            other => out.push(other),
        }
    }

    fn render(&self, term: &mut impl FnMut(usize) -> String) -> String {
        match self {
            Tree::Term(i) => term(*i),
            Tree::Not(a) => format!("not ({})", a.render(term)),
            Tree::And(..) | Tree::Or(..) => {
                let and = matches!(self, Tree::And(..));
                let mut ops = Vec::new();
                self.chain(and, &mut ops);
                let parts: Vec<String> = ops
                    .into_iter()
                    .map(|o| match o {
                        Tree::And(..) | Tree::Or(..) => format!("({})", o.render(term)),
                        other => other.render(term),
                    })
                    .collect();
                parts.join(if and { " and " } else { " or " })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user_eq() -> ConstraintExpr {
        ConstraintExpr::Attr {
            attr: attr::USER,
            op: ConstraintOp::Eq,
        }
    }

    fn role_neq() -> ConstraintExpr {
        ConstraintExpr::Attr {
            attr: attr::ROLE,
            op: ConstraintOp::Neq,
        }
    }

    fn words(e: &ConstraintExpr) -> String {
        let (l, r) = e.operands().unwrap();
        let op = match e {
            ConstraintExpr::Attr { op, .. } | ConstraintExpr::Names { op, .. } => *op,
            _ => unreachable!(),
        };
        format!("{l} {op} {}", r.unwrap_or("x"))
    }

    #[test]
    fn policy_style_flattens_a_chain_and_parenthesises_a_nested_operator() {
        use ConstraintExpr::{And, Not, Or};
        let expr = [
            user_eq(),
            role_neq(),
            Or,
            user_eq(),
            And,
            role_neq(),
            Not,
            And,
        ];
        let text = constraint_infix(&expr, InfixStyle::Policy, |i| words(&expr[i]));
        assert_eq!(
            text,
            "(u1 == u2 or r1 != r2) and u1 == u2 and not (r1 != r2)"
        );
    }

    #[test]
    fn setools_style_parenthesises_a_term_after_a_term() {
        use ConstraintExpr::Or;
        let expr = [user_eq(), role_neq(), Or];
        let text = constraint_infix(&expr, InfixStyle::Setools, |i| words(&expr[i]));
        assert_eq!(text, "u1 == u2 or ( r1 != r2 )");
    }

    #[test]
    fn malformed_expression_is_written_not_refused() {
        use ConstraintExpr::And;
        let expr = [user_eq(), And];
        let policy = constraint_infix(&expr, InfixStyle::Policy, |i| words(&expr[i]));
        assert_eq!(policy, "u1 == u2 and");
        let setools = constraint_infix(&expr, InfixStyle::Setools, |i| words(&expr[i]));
        assert_eq!(setools, "u1 == u2");
    }

    #[test]
    fn names_operand_follows_the_context_bits() {
        let term = |a| ConstraintExpr::Names {
            attr: a,
            op: ConstraintOp::Eq,
            names: Ebitmap::default(),
            type_names: None,
        };
        assert_eq!(term(attr::TYPE).operands(), Some(("t1", None)));
        assert_eq!(
            term(attr::ROLE | attr::TARGET).operands(),
            Some(("r2", None))
        );
        assert_eq!(
            term(attr::USER | attr::XTARGET).operands(),
            Some(("u3", None))
        );
    }
}

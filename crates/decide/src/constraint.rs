//! Constraint evaluation (`constrain`, `mlsconstrain`, `validatetrans`), as the kernel's
//! `constraint_expr_eval`: a postfix program over the source, target and (for
//! validatetrans) task contexts.

use arbiter_policy::constraint::{attr, ConstraintExpr, ConstraintOp};
use arbiter_policy::mls::{Context, MlsLevel};
use arbiter_policy::{Ebitmap, Policy};

/// Expressions are checked for depth at load; this bounds the evaluation stack.
const MAX_DEPTH: usize = 32;

/// `l1` dominates `l2`: higher-or-equal sensitivity and a superset of categories.
#[inline]
pub fn level_dom(l1: &MlsLevel, l2: &MlsLevel) -> bool {
    l1.dominates(l2)
}

#[inline]
pub fn level_eq(l1: &MlsLevel, l2: &MlsLevel) -> bool {
    l1.sens == l2.sens && l1.cats == l2.cats
}

#[inline]
pub fn level_incomp(l1: &MlsLevel, l2: &MlsLevel) -> bool {
    !level_dom(l1, l2) && !level_dom(l2, l1)
}

/// One evaluated term, for explanations: its index in the expression and its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TermResult {
    pub index: usize,
    pub value: bool,
}

/// Evaluates a constraint expression. `x` is the third context of validatetrans (the
/// task); terms that need it evaluate to false when it is absent, as a failed check must
/// never grant. `trace`, when given, receives every leaf term's value.
pub fn eval(
    policy: &Policy,
    expr: &[ConstraintExpr],
    s: &Context,
    t: &Context,
    x: Option<&Context>,
    mut trace: Option<&mut Vec<TermResult>>,
) -> bool {
    let mut stack = [false; MAX_DEPTH];
    let mut sp = 0usize;
    for (index, e) in expr.iter().enumerate() {
        let v = match e {
            ConstraintExpr::Not => {
                if sp == 0 {
                    return false;
                }
                stack[sp - 1] = !stack[sp - 1];
                continue;
            }
            ConstraintExpr::And | ConstraintExpr::Or => {
                if sp < 2 {
                    return false;
                }
                let b = stack[sp - 1];
                let a = stack[sp - 2];
                sp -= 1;
                stack[sp - 1] = if matches!(e, ConstraintExpr::And) {
                    a && b
                } else {
                    a || b
                };
                continue;
            }
            ConstraintExpr::Attr { attr: a, op } => eval_attr(policy, *a, *op, s, t),
            ConstraintExpr::Names {
                attr: a, op, names, ..
            } => eval_names(*a, *op, names, s, t, x),
        };
        // A leaf term: push its value.
        if sp >= MAX_DEPTH {
            return false;
        }
        stack[sp] = v;
        sp += 1;
        if let Some(tr) = trace.as_deref_mut() {
            tr.push(TermResult { index, value: v });
        }
    }
    sp == 1 && stack[0]
}

/// A names term: whether the user, role or type of the context `a` selects (source,
/// target or, for validatetrans, the task `x`) is in (`Eq`) or not in (`Neq`) `names`.
fn eval_names(
    a: u32,
    op: ConstraintOp,
    names: &Ebitmap,
    s: &Context,
    t: &Context,
    x: Option<&Context>,
) -> bool {
    let c = if a & attr::TARGET != 0 {
        Some(t)
    } else if a & attr::XTARGET != 0 {
        x
    } else {
        Some(s)
    };
    match c {
        None => false,
        Some(c) => {
            let val = if a & attr::USER != 0 {
                c.user.value()
            } else if a & attr::ROLE != 0 {
                c.role.value()
            } else if a & attr::TYPE != 0 {
                c.ty.value() as u32
            } else {
                0
            };
            if val == 0 {
                false
            } else {
                let has = names.contains(val - 1);
                match op {
                    ConstraintOp::Eq => has,
                    ConstraintOp::Neq => !has,
                    _ => false,
                }
            }
        }
    }
}

fn eval_attr(policy: &Policy, a: u32, op: ConstraintOp, s: &Context, t: &Context) -> bool {
    let (l1, l2) = match a {
        attr::USER => return eq_op(op, s.user.value(), t.user.value()),
        attr::TYPE => return eq_op(op, s.ty.value() as u32, t.ty.value() as u32),
        attr::ROLE => {
            let r1 = policy.roles.get(s.role.index());
            let r2 = policy.roles.get(t.role.index());
            let (Some(r1), Some(r2)) = (r1, r2) else {
                return false;
            };
            let dom12 = r1.dominates.contains(t.role.value() - 1);
            let dom21 = r2.dominates.contains(s.role.value() - 1);
            return match op {
                ConstraintOp::Dom => dom12,
                ConstraintOp::Domby => dom21,
                ConstraintOp::Incomp => !dom12 && !dom21,
                _ => eq_op(op, s.role.value(), t.role.value()),
            };
        }
        attr::L1L2 => (&s.range.low, &t.range.low),
        attr::L1H2 => (&s.range.low, &t.range.high),
        attr::H1L2 => (&s.range.high, &t.range.low),
        attr::H1H2 => (&s.range.high, &t.range.high),
        attr::L1H1 => (&s.range.low, &s.range.high),
        attr::L2H2 => (&t.range.low, &t.range.high),
        _ => return false,
    };
    match op {
        ConstraintOp::Eq => level_eq(l1, l2),
        ConstraintOp::Neq => !level_eq(l1, l2),
        ConstraintOp::Dom => level_dom(l1, l2),
        ConstraintOp::Domby => level_dom(l2, l1),
        ConstraintOp::Incomp => level_incomp(l2, l1),
    }
}

#[inline]
fn eq_op(op: ConstraintOp, a: u32, b: u32) -> bool {
    match op {
        ConstraintOp::Eq => a == b,
        ConstraintOp::Neq => a != b,
        _ => false,
    }
}

/// A constraint compiled for access-vector decisions (no third context): the postfix
/// program as a tree evaluated with short-circuits, the cheaper operand of each `and`/`or`
/// first, and `names` sets as dense bitsets. Terms have no side effects, so any order of
/// evaluation gives [`eval`]'s answer.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The permissions the constraint restricts.
    pub perms: u32,
    nodes: Box<[Node]>,
    /// Dense bitsets of the `names` terms.
    words: Box<[u64]>,
    root: u32,
}

#[derive(Copy, Clone, Debug)]
enum Node {
    Const(bool),
    Not(u32),
    And(u32, u32),
    Or(u32, u32),
    /// An attribute comparison, as [`eval`] does it.
    Attr(u32, ConstraintOp),
    /// Whether the source's or target's user/role/type value `v` has bit `v-1` in
    /// `words[start..start+len]`, XOR `negate`.
    Names {
        side: Side,
        what: What,
        start: u32,
        len: u32,
        negate: bool,
    },
}

#[derive(Copy, Clone, Debug)]
enum Side {
    Source,
    Target,
}

#[derive(Copy, Clone, Debug)]
enum What {
    User,
    Role,
    Type,
}

impl Compiled {
    /// Compiles `expr` for [`Compiled::eval`]; a malformed expression (which [`eval`]
    /// always rejects, whatever the contexts) compiles to `false`.
    pub fn new(perms: u32, expr: &[ConstraintExpr]) -> Compiled {
        let mut nodes: Vec<Node> = Vec::new();
        let mut words: Vec<u64> = Vec::new();
        let mut cost: Vec<u32> = Vec::new();
        let mut stack: Vec<u32> = Vec::new();
        let push = |nodes: &mut Vec<Node>, cost: &mut Vec<u32>, n: Node, c: u32| {
            nodes.push(n);
            cost.push(c);
            (nodes.len() - 1) as u32
        };
        let mut ok = true;
        for e in expr {
            match e {
                ConstraintExpr::Not => {
                    let Some(a) = stack.pop() else {
                        ok = false;
                        break;
                    };
                    let c = cost[a as usize];
                    stack.push(push(&mut nodes, &mut cost, Node::Not(a), c));
                }
                ConstraintExpr::And | ConstraintExpr::Or => {
                    if stack.len() < 2 {
                        ok = false;
                        break;
                    }
                    let b = stack.pop().expect("checked");
                    let a = stack.pop().expect("checked");
                    let (ca, cb) = (cost[a as usize], cost[b as usize]);
                    let (x, y) = if cb < ca { (b, a) } else { (a, b) };
                    let n = if matches!(e, ConstraintExpr::And) {
                        Node::And(x, y)
                    } else {
                        Node::Or(x, y)
                    };
                    stack.push(push(&mut nodes, &mut cost, n, ca + cb));
                }
                ConstraintExpr::Attr { attr: a, op } => {
                    if stack.len() >= MAX_DEPTH {
                        ok = false;
                        break;
                    }
                    let c = match *a {
                        attr::USER | attr::TYPE => 1,
                        attr::ROLE => 4,
                        _ => 8,
                    };
                    stack.push(push(&mut nodes, &mut cost, Node::Attr(*a, *op), c));
                }
                ConstraintExpr::Names {
                    attr: a, op, names, ..
                } => {
                    if stack.len() >= MAX_DEPTH {
                        ok = false;
                        break;
                    }
                    let side = if a & attr::TARGET != 0 {
                        Some(Side::Target)
                    } else if a & attr::XTARGET != 0 {
                        None // no third context in an access decision
                    } else {
                        Some(Side::Source)
                    };
                    let what = if a & attr::USER != 0 {
                        Some(What::User)
                    } else if a & attr::ROLE != 0 {
                        Some(What::Role)
                    } else if a & attr::TYPE != 0 {
                        Some(What::Type)
                    } else {
                        None // value 0: false
                    };
                    let negate = match op {
                        ConstraintOp::Eq => Some(false),
                        ConstraintOp::Neq => Some(true),
                        _ => None,
                    };
                    let n = match (side, what, negate) {
                        (Some(side), Some(what), Some(negate)) => {
                            let start = words.len();
                            for bit in names.iter() {
                                let w = start + bit as usize / 64;
                                if words.len() <= w {
                                    words.resize(w + 1, 0);
                                }
                                words[w] |= 1 << (bit % 64);
                            }
                            Node::Names {
                                side,
                                what,
                                start: start as u32,
                                len: (words.len() - start) as u32,
                                negate,
                            }
                        }
                        _ => Node::Const(false),
                    };
                    stack.push(push(&mut nodes, &mut cost, n, 1));
                }
            }
        }
        let root = if ok && stack.len() == 1 {
            stack[0]
        } else {
            nodes.push(Node::Const(false));
            (nodes.len() - 1) as u32
        };
        Compiled {
            perms,
            nodes: nodes.into_boxed_slice(),
            words: words.into_boxed_slice(),
            root,
        }
    }

    /// [`eval`] of the compiled expression with no third context.
    #[inline]
    pub fn eval(&self, policy: &Policy, s: &Context, t: &Context) -> bool {
        self.node(self.root, policy, s, t)
    }

    fn node(&self, i: u32, policy: &Policy, s: &Context, t: &Context) -> bool {
        match self.nodes[i as usize] {
            Node::Const(v) => v,
            Node::Not(a) => !self.node(a, policy, s, t),
            Node::And(a, b) => self.node(a, policy, s, t) && self.node(b, policy, s, t),
            Node::Or(a, b) => self.node(a, policy, s, t) || self.node(b, policy, s, t),
            Node::Attr(a, op) => eval_attr(policy, a, op, s, t),
            Node::Names {
                side,
                what,
                start,
                len,
                negate,
            } => {
                let c = match side {
                    Side::Source => s,
                    Side::Target => t,
                };
                let v = match what {
                    What::User => c.user.value(),
                    What::Role => c.role.value(),
                    What::Type => c.ty.value() as u32,
                } as usize;
                if v == 0 {
                    return false;
                }
                let bit = v - 1;
                let set = &self.words[start as usize..(start + len) as usize];
                let has = set
                    .get(bit / 64)
                    .is_some_and(|w| w & (1 << (bit % 64)) != 0);
                has != negate
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_policy::constraint::ConstraintExpr as E;
    use arbiter_policy::mls::MlsRange;
    use arbiter_policy::{Ebitmap, RoleId, TypeId, UserId};
    use arbiter_testkit::Rng;
    use std::path::PathBuf;

    fn policy() -> Policy {
        let debian = PathBuf::from(arbiter_testkit::DEBIAN_DEFAULT);
        let path = if debian.exists() {
            debian
        } else {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../policies/bin/default.33")
        };
        Policy::open(path).expect("policy")
    }

    fn op(rng: &mut Rng) -> ConstraintOp {
        [
            ConstraintOp::Eq,
            ConstraintOp::Neq,
            ConstraintOp::Dom,
            ConstraintOp::Domby,
            ConstraintOp::Incomp,
        ][rng.below(5)]
    }

    /// A random postfix program: mostly well formed, sometimes not.
    fn random_expr(rng: &mut Rng, p: &Policy) -> Vec<E> {
        let attrs = [
            attr::USER,
            attr::ROLE,
            attr::TYPE,
            attr::L1L2,
            attr::L1H2,
            attr::H1L2,
            attr::H1H2,
            attr::L1H1,
            attr::L2H2,
            0,
        ];
        let mut out = Vec::new();
        let mut depth = 0usize;
        let len = 1 + rng.below(12);
        for _ in 0..len {
            let k = rng.below(10);
            if depth >= 2 && k < 3 {
                out.push(if k == 0 { E::And } else { E::Or });
                depth -= 1;
            } else if depth >= 1 && k == 3 {
                out.push(E::Not);
            } else if k < 6 {
                out.push(E::Attr {
                    attr: attrs[rng.below(attrs.len())],
                    op: op(rng),
                });
                depth += 1;
            } else {
                let what = [attr::USER, attr::ROLE, attr::TYPE, 0][rng.below(4)];
                let side = [0, attr::TARGET, attr::XTARGET][rng.below(3)];
                let n = match what {
                    attr::USER => p.users.len(),
                    attr::ROLE => p.roles.len(),
                    _ => p.types.len(),
                };
                let mut names = Vec::new();
                for _ in 0..rng.below(40) {
                    names.push(rng.below(n + 70) as u32);
                }
                out.push(E::Names {
                    attr: what | side,
                    op: op(rng),
                    names: Ebitmap::from_bits(names),
                    type_names: None,
                });
                depth += 1;
            }
        }
        // Usually close it to one value.
        if rng.below(8) != 0 {
            while depth > 1 {
                out.push(if rng.below(2) == 0 { E::And } else { E::Or });
                depth -= 1;
            }
        }
        out
    }

    fn random_context(rng: &mut Rng, p: &Policy) -> Context {
        let u = UserId::from_index(rng.below(p.users.len())).unwrap();
        let r = &p.users[u.index()].range;
        let pick = |rng: &mut Rng| {
            if rng.below(2) == 0 {
                r.low.clone()
            } else {
                r.high.clone()
            }
        };
        let (a, b) = (pick(rng), pick(rng));
        Context {
            user: u,
            role: RoleId::from_index(rng.below(p.roles.len())).unwrap(),
            ty: TypeId::from_index(rng.below(p.types.len())).unwrap(),
            range: MlsRange { low: a, high: b },
        }
    }

    #[test]
    fn compiled_constraints_agree_with_postfix_evaluation() {
        let p = policy();
        let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
        let real: Vec<&[E]> = p
            .classes
            .iter()
            .flat_map(|c| c.constraints.iter().map(|k| &k.expr[..]))
            .collect();
        for i in 0..20_000 {
            let expr = if i % 2 == 0 && !real.is_empty() {
                real[rng.below(real.len())].to_vec()
            } else {
                random_expr(&mut rng, &p)
            };
            let c = Compiled::new(0, &expr);
            for _ in 0..4 {
                let (s, t) = (random_context(&mut rng, &p), random_context(&mut rng, &p));
                assert_eq!(
                    c.eval(&p, &s, &t),
                    eval(&p, &expr, &s, &t, None, None),
                    "{expr:?}"
                );
            }
        }
    }
}

//! Tunables: their values and the evaluation of `tunableif` expressions, done while
//! the statement list is built.

use super::*;

/// Every `(tunable NAME true|false)` of the input (tunables are only allowed outside
/// optionals, macros and conditionals, so the top level of each file holds them all).
pub(crate) fn collect_tunables(tree: &Tree) -> FxHashMap<Sym, bool> {
    let mut out = FxHashMap::default();
    if tree.heads & 1 << Kw::Tunable as u8 == 0 {
        return out;
    }
    for &(a, b) in &tree.files {
        for &n in &tree.kids[a as usize..b as usize] {
            let k = tree.kids(n);
            if k.len() == 3 && tree.sym(k[0]) == Some(Kw::Tunable.sym()) && !tree.is_list(k[1]) {
                if let Some(name) = tree.sym(k[1]) {
                    out.entry(name)
                        .or_insert(tree.sym(k[2]) == Some(Kw::True.sym()));
                }
            }
        }
    }
    out
}

/// Evaluates a tunableif expression (the operators of booleanif; a bare list is an `or`).
/// `None` if a name is not a tunable or the expression is malformed.
pub(crate) fn eval_tunable(
    tree: &Tree,
    tunables: &dyn Fn(Sym) -> Option<bool>,
    n: u32,
) -> Option<bool> {
    if !tree.is_list(n) {
        return tunables(tree.sym(n)?);
    }
    let k = tree.kids(n);
    let op = tree.sym(*k.first()?).and_then(Kw::of);
    match op {
        Some(Kw::Not) if k.len() == 2 => Some(!eval_tunable(tree, tunables, k[1])?),
        Some(o @ (Kw::And | Kw::Or | Kw::Xor | Kw::Eq | Kw::Neq)) if k.len() == 3 => {
            let a = eval_tunable(tree, tunables, k[1])?;
            let b = eval_tunable(tree, tunables, k[2])?;
            Some(match o {
                Kw::And => a && b,
                Kw::Or => a || b,
                Kw::Xor | Kw::Neq => a != b,
                _ => a == b,
            })
        }
        Some(Kw::Not | Kw::And | Kw::Or | Kw::Xor | Kw::Eq | Kw::Neq) => None,
        _ => {
            let mut acc = false;
            for &x in k {
                acc |= eval_tunable(tree, tunables, x)?;
            }
            Some(acc)
        }
    }
}

/// A tunable's value looked up from a `tunableif` written in block `written_in` (or at the
/// top): the enclosing blocks' tunables, innermost first, then the top level's.
pub(crate) fn tunable_as_written(
    int: &Interner,
    blocks: &crate::blocks::Blocks,
    top: &FxHashMap<Sym, bool>,
    written_in: Option<u32>,
    sym: Sym,
) -> Option<bool> {
    let b = int.bytes(sym);
    let mut q = Vec::new();
    let mut p = written_in.unwrap_or(NONE);
    while p != NONE {
        let o = &blocks.list[p as usize];
        q.clear();
        q.extend_from_slice(&o.qual);
        q.push(b'.');
        q.extend_from_slice(b);
        if let Some(&v) = blocks.tunables.get(&q) {
            return Some(v);
        }
        p = o.parent;
    }
    let b = b.strip_prefix(b".").unwrap_or(b);
    blocks
        .tunables
        .get(b)
        .copied()
        .or_else(|| top.get(&int.get(b)?).copied())
}

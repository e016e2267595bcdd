//! `booleanif` (and `tunableif` under `-P`): its branches' rules are statements of their
//! own; `tunableif`: decided now, its chosen branch joins the end of its container.

use super::*;

impl<'a> Walker<'a> {
    /// `tunableif` (without `-P`): evaluates the condition where the statement is
    /// written and defers the chosen branch's statements to the container's end.
    pub(super) fn tunableif(&mut self, at: &At<'a>) -> Result<(), Fail> {
        let (tree, kids, it) = (self.tree, at.kids, at.it);
        if kids.len() < 3 || it.cond != NONE {
            return Err(self.bad(at, "Invalid syntax"));
        }
        let lookup = |sym: Sym| self.tunable_value(it.n, it.scope, sym);
        let value = eval_tunable(tree, &lookup, kids[1]).ok_or_else(|| Fail {
            messages: vec![
                format!(
                    "Failed to resolve tunableif statement at {}",
                    self.here(&it)
                ),
                "Failed to resolve AST".into(),
                "Failed to compile cildb: -2".into(),
            ],
            status: 254,
        })?;
        // libsepol keeps the last branch of each kind.
        let want = if value { Kw::True } else { Kw::False };
        let mut chosen = None;
        for &b in &kids[2..] {
            let which = tree.kids(b).first().and_then(|&k| tree.sym(k));
            if which == Some(want.sym()) {
                chosen = Some(b);
            } else if which != Some(Kw::True.sym()) && which != Some(Kw::False.sym()) {
                return Err(self.bad(at, "Invalid syntax"));
            }
        }
        if let Some(b) = chosen {
            let body = &tree.kids(b)[1..];
            if body.iter().any(|&r| !tree.is_list(r)) {
                return Err(self.bad(at, "Invalid syntax"));
            }
            self.deferred
                .entry(it.cont)
                .or_default()
                .extend_from_slice(body);
        }
        Ok(())
    }

    /// The value of tunable `sym` as seen from tunableif node `n` in `scope`: from the
    /// block it is written in, else up the scope's tables, else the global tunables.
    fn tunable_value(&self, n: u32, scope: u32, sym: Sym) -> Option<bool> {
        let (int, blocks, ast) = (self.int, &self.blocks, &self.ast);
        let written_in = blocks.tif_block.get(&n).copied();
        if scope == NONE && written_in.is_none() {
            return self.tunables.get(&sym).copied();
        }
        if written_in.is_some() {
            return tunable_as_written(int, blocks, &self.tunables, written_in, sym);
        }
        let b = int.bytes(sym);
        let mut q = Vec::new();
        for sc in ast.table_chain(scope) {
            q.clear();
            q.extend_from_slice(&ast.scopes[sc as usize].prefix);
            q.push(b'.');
            q.extend_from_slice(b);
            if let Some(&v) = blocks.tunables.get(&q) {
                return Some(v);
            }
        }
        let b = b.strip_prefix(b".").unwrap_or(b);
        blocks
            .tunables
            .get(b)
            .copied()
            .or_else(|| self.tunables.get(&int.get(b)?).copied())
    }

    /// `booleanif` (or `tunableif` under `-P`): each branch's rules are walked as
    /// statements of the conditional, in order.
    pub(super) fn booleanif(&mut self, at: &At<'a>) -> Result<(), Fail> {
        let (tree, kids, it) = (self.tree, at.kids, at.it);
        if kids.len() < 3 || it.cond != NONE {
            return Err(self.bad(at, "Invalid syntax"));
        }
        // Branches: (true ...) / (false ...), each a list of rules: all checked, then
        // pushed (the last rule of the last branch first).
        for &b in &kids[2..] {
            let bk = tree.kids(b);
            let which = bk.first().and_then(|&k| tree.sym(k));
            if which != Some(Kw::True.sym()) && which != Some(Kw::False.sym()) {
                return Err(self.bad(at, "Invalid syntax"));
            }
            if !bk[1..].iter().all(|&r| tree.is_list(r)) {
                return Err(self.bad(at, "Invalid syntax"));
            }
        }
        for &branch in kids[2..].iter().rev() {
            for &r in tree.kids(branch)[1..].iter().rev() {
                self.stack.push(Item {
                    n: r,
                    cond: at.si,
                    branch,
                    parent: at.si,
                    ..it
                });
            }
        }
        Ok(())
    }
}

//! The bounds statements themselves, checked with and without `-N` as libsepol checks
//! them before any policy exists: a bound names no attribute and a child has one parent
//! (`cil_resolve_ast.c` `cil_resolve_bounds`), and no chain of parents loops
//! (`cil_verify.c` `__cil_verify_type`/`_role`/`_user_pre_eval`, Brent's cycle search).

use crate::ast::{loc, Ast};
use crate::intern::FxHashMap;
use crate::parse::Tree;
use crate::Fail;

/// Which bounds statement.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    User,
    Role,
    Type,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::User => "user",
            Kind::Role => "role",
            Kind::Type => "type",
        }
    }
}

/// One side of a bounds statement: the declaration it names (an alias already replaced
/// by its type), whether that is an attribute, and the name as written.
pub(crate) struct Side {
    pub decl: u32,
    pub is_attr: bool,
    pub written: String,
}

/// The parent of each bounded user, role and type (by declaration).
#[derive(Default)]
pub(crate) struct Hierarchy {
    parent: FxHashMap<u32, (Kind, u32)>,
}

/// Where statement `s` is.
fn here(tree: &Tree, ast: &Ast, names: &[String], s: u32) -> String {
    let st = ast.stmts[s as usize];
    loc(tree, names, st.file, st.node)
}

impl Hierarchy {
    /// Records `(typebounds parent child)` (or the user/role form) at statement `s`.
    pub fn bind(
        &mut self,
        (tree, ast, names): (&Tree, &Ast, &[String]),
        kind: Kind,
        s: u32,
        parent: Side,
        child: Side,
    ) -> Result<(), Fail> {
        let fail = |first: String| {
            Fail::bad(vec![
                first,
                format!("Bad bounds statement at {}", here(tree, ast, names, s)),
                "Failed to resolve AST".into(),
                "Failed to compile cildb: -1".into(),
            ])
        };
        if parent.is_attr {
            return Err(fail(format!(
                "Bounds parent {} is an attribute",
                parent.written
            )));
        }
        if child.is_attr {
            return Err(fail(format!(
                "Bounds child {} is an attribute",
                child.written
            )));
        }
        if let Some(&(_, prev)) = self.parent.get(&child.decl) {
            let at = here(tree, ast, names, ast.decls[prev as usize].stmt);
            let word = kind.word();
            let cap = format!("{}{}", word[..1].to_uppercase(), &word[1..]);
            return Err(fail(format!(
                "{cap} {} already bound by parent at {at}",
                child.written
            )));
        }
        self.parent.insert(child.decl, (kind, parent.decl));
        Ok(())
    }

    /// The parent of `decl`, if it is bounded.
    pub fn parent_of(&self, decl: u32) -> Option<u32> {
        self.parent.get(&decl).map(|&(_, p)| p)
    }

    /// Fails on the first declaration (in statement order) whose chain of parents loops,
    /// with libsepol's messages.
    pub fn verify(
        &self,
        tree: &Tree,
        ast: &Ast,
        names: &[String],
        name: &dyn Fn(u32) -> String,
    ) -> Result<(), Fail> {
        // Which chains loop, each node decided once (a walk stops at a decided node), so
        // a long chain costs its length, not its square.
        let mut loops: FxHashMap<u32, bool> = FxHashMap::default();
        for &d in self.parent.keys() {
            let mut path = Vec::new();
            let mut on_path = std::collections::HashSet::new();
            let mut x = Some(d);
            let verdict = loop {
                let Some(y) = x else { break false };
                if let Some(&v) = loops.get(&y) {
                    break v;
                }
                if !on_path.insert(y) {
                    break true;
                }
                path.push(y);
                x = self.parent_of(y);
            };
            for y in path {
                loops.insert(y, verdict);
            }
        }
        let first = self
            .parent
            .iter()
            .filter(|(d, _)| loops.get(d) == Some(&true))
            .map(|(&d, &(kind, _))| (ast.decls[d as usize].stmt, d, kind))
            .min_by_key(|&(s, d, _)| (s, d))
            .map(|(s, d, kind)| (s, kind, d));
        // Brent's search from that declaration, as libsepol runs it, names the member of
        // the loop it stops at.
        let first = first.map(|(s, kind, d)| {
            let (mut t1, mut t2) = (d, self.parent_of(d));
            let (mut steps, mut limit) = (0u32, 2u32);
            while let Some(x) = t2 {
                if t1 == x {
                    break;
                }
                if steps == limit {
                    steps = 0;
                    limit *= 2;
                    t1 = x;
                }
                t2 = self.parent_of(x);
                steps += 1;
            }
            (s, kind, t1)
        });
        let Some((s, kind, t1)) = first else {
            return Ok(());
        };
        // libsepol names the datum by its own name, without its block's prefix.
        let full = name(t1);
        let base = full.rsplit('.').next().unwrap_or(&full).to_string();
        let word = kind.word();
        Err(Fail::bad(vec![
            format!("Circular bounds found for {word} {base}"),
            format!("Invalid {word} at {}", here(tree, ast, names, s)),
            "Failed to verify cil database".into(),
            "Failed to verify cil database".into(),
            "Post process failed".into(),
            "Failed to compile cildb: -1".into(),
        ]))
    }
}

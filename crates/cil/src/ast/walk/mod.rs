//! The walk that builds the statement list: containers, `in`, `blockinherit` copies,
//! `call` bodies and chosen `tunableif` branches, in libsepol's order.
//!
//! One [`Walker`] holds the walk's state; each kind of statement has its own small
//! function: declarations (`declarations`), containers and their ends (`containers`),
//! conditionals (`conditionals`), macro calls (`calls`).

use super::*;

mod calls;
mod conditionals;
mod containers;
mod declarations;

/// The stack marker for the end of a container.
pub(super) const MARK: u32 = u32::MAX - 1;

/// One walk item: a statement node (or [`MARK`]: the end of container `cont`) with where
/// it sits.
#[derive(Copy, Clone)]
pub(super) struct Item {
    n: u32,
    file: u32,
    opt: u32,
    cond: u32,
    branch: u32,
    scope: u32,
    cont: u32,
    parent: u32,
}

/// A container the walk is inside: a file's top level, an optional, a block (or a
/// block's copy), an `in` body. Chosen tunableif branches are appended at its end, and a
/// block's end also receives its `in` bodies.
pub(super) struct Cont {
    file: u32,
    opt: u32,
    scope: u32,
    /// The block whose `in` bodies come at the end, or [`NONE`].
    block: u32,
    /// Only the block as written receives `(in after ...)` bodies, copies do not.
    original: bool,
    ins_done: bool,
    /// For a macro call's body: the macro; else [`NONE`].
    macro_id: u32,
    /// The container this one sits in ([`NONE`] for a file's top level).
    up: u32,
    /// The statement making the container ([`NONE`] for a file's top level).
    stmt: u32,
}

/// How many statements copies may add (blockinherit copies can nest: a bound keeps
/// memory finite on hostile input).
pub(super) const MAX_STMTS: usize = 1 << 21;

/// The walk's state: the input, the statement list being built and the bookkeeping of
/// blocks, copies and containers.
struct Walker<'a> {
    tree: &'a Tree,
    int: &'a Interner,
    names: &'a [String],
    opts: &'a crate::Options,
    ast: Ast,
    tunables: FxHashMap<Sym, bool>,
    blocks: crate::blocks::Blocks,
    /// Scope of each block as written (made on first use).
    oscope: Vec<u32>,
    tables: FxHashMap<Vec<u8>, u32>,
    /// Macros copied into inheriting blocks: qualified name -> (macro, the scope its
    /// body's lookups continue from).
    copy_macros: FxHashMap<Vec<u8>, (u32, u32)>,
    /// The block instances walked, by the table of their qualified name (one table per
    /// name): a copy may not repeat a block.
    instances: std::collections::HashSet<u32, crate::intern::FxBuild>,
    conts: Vec<Cont>,
    /// Statements of chosen tunableif branches, appended at the end of their container
    /// as libsepol's `cil_resolve_tunif` copies them there.
    deferred: FxHashMap<u32, Vec<u32>>,
    stack: Vec<Item>,
}

/// The statement being walked: its item, index, keyword and elements.
#[derive(Copy, Clone)]
struct At<'a> {
    it: Item,
    si: u32,
    kw: Kw,
    kids: &'a [u32],
}

/// Builds the statement list and declaration tables.
pub fn build(
    tree: &Tree,
    intm: &mut Interner,
    names: &[String],
    opts: &crate::Options,
) -> Result<Ast, Fail> {
    let int: &Interner = intm;
    let tunables = collect_tunables(tree);
    let blocks = crate::blocks::collect(tree, int, names, &tunables, opts.preserve_tunables)?;
    let mut w = Walker {
        tree,
        int,
        names,
        opts,
        // Every statement is a list, so the lists parsed bound the statement count
        // (macro bodies walked once per call can exceed it: the vector then grows).
        // Reserved at once, pages never written are never resident; growing by doubling
        // instead copied the list through the heap several times, and the freed copies
        // stayed resident (about 6 MB of peak RSS on the Debian store).
        ast: Ast {
            by_sym: vec![NONE; int.len()],
            stmts: Vec::with_capacity(tree.nodes.len()),
            ..Ast::default()
        },
        tunables,
        oscope: vec![NONE; blocks.list.len()],
        blocks,
        tables: FxHashMap::default(),
        copy_macros: FxHashMap::default(),
        instances: Default::default(),
        conts: Vec::new(),
        deferred: FxHashMap::default(),
        stack: Vec::new(),
    };
    for (f, &(a, b)) in tree.files.iter().enumerate() {
        w.walk_file(f as u32, &tree.kids[a as usize..b as usize])?;
    }
    let Walker {
        mut ast, tables, ..
    } = w;
    // Declarations in blocks join the global table under their qualified names.
    finish_pending(tree, names, &mut ast, intm, &tables)?;
    ast.stmts.shrink_to_fit();
    Ok(ast)
}

impl<'a> Walker<'a> {
    /// Walks file `f`'s top-level statements `top` and everything they contain.
    fn walk_file(&mut self, f: u32, top: &[u32]) -> Result<(), Fail> {
        let c = self.conts.len() as u32;
        self.conts.push(Cont {
            file: f,
            opt: NONE,
            scope: NONE,
            block: NONE,
            original: true,
            ins_done: true,
            macro_id: NONE,
            up: NONE,
            stmt: NONE,
        });
        let base = Item {
            n: MARK,
            file: f,
            opt: NONE,
            cond: NONE,
            branch: NONE,
            scope: NONE,
            cont: c,
            parent: NONE,
        };
        // The top-level statements are taken one at a time when the stack is empty (each
        // with all it holds before the next), then the file's end marker: the order of a
        // stack holding them all, without copying 8,000 items through a growing stack.
        let mut top = top.iter();
        let mut ended = false;
        loop {
            let it = match self.stack.pop() {
                Some(it) => it,
                None => match top.next() {
                    Some(&n) => Item { n, ..base },
                    None if !ended => {
                        ended = true;
                        base
                    }
                    None => return Ok(()),
                },
            };
            if it.n == MARK {
                self.end_of_container(it.cont);
            } else {
                self.statement(it)?;
            }
        }
    }

    /// Enters statement `it` in the list and walks into it as its keyword says.
    fn statement(&mut self, it: Item) -> Result<(), Fail> {
        let (tree, int) = (self.tree, self.int);
        let n = it.n;
        if self.ast.stmts.len() > MAX_STMTS {
            return Err(Fail::bad(vec![format!(
                "More than {MAX_STMTS} statements after copying inherited blocks (at {})",
                loc(tree, self.names, it.file, n)
            )]));
        }
        let kids = tree.kids(n);
        let kw = match kids.first().and_then(|&k| tree.sym(k)).and_then(Kw::of) {
            Some(k) => k,
            None => {
                let what = kids
                    .first()
                    .and_then(|&k| tree.sym(k))
                    .map(|s| int.str(s).into_owned())
                    .unwrap_or_else(|| "(list)".into());
                // libsepol 3.4's words: no location (its tree walk's `Problem at` line,
                // an info line, has it).
                let mut lines = vec![format!("Error: Unknown keyword {what}")];
                if self.opts.verbose >= 2 {
                    lines.push(format!("Problem at {}", self.here(&it)));
                }
                lines.push("Failed to build AST".into());
                return Err(Fail::bad(lines));
            }
        };
        let si = self.ast.stmts.len() as u32;
        self.ast.stmts.push(Stmt {
            kw,
            node: n,
            src: n,
            file: it.file,
            opt: it.opt,
            cond: it.cond,
            branch: it.branch,
            scope: it.scope,
            parent: it.parent,
        });
        let at = At { it, si, kw, kids };
        if it.cond != NONE && !allowed_in_conditional(kw) {
            // With -P a tunableif is a booleanif, and secilc says so.
            let what = if self.ast.stmts[it.cond as usize].kw == Kw::TunableIf {
                "tunableif being treated as a booleanif"
            } else {
                "booleanif"
            };
            return Err(Fail::bad(vec![
                format!(
                    "{} is not allowed in {what} at {}",
                    kw.text(),
                    self.here(&it)
                ),
                "Failed to build AST".into(),
                "Failed to compile cildb: -1".into(),
            ]));
        }
        if self.declaration(&at)? {
            return Ok(());
        }
        match kw {
            Kw::Optional => self.optional(&at),
            Kw::TunableIf if !self.opts.preserve_tunables => self.tunableif(&at),
            Kw::BooleanIf | Kw::TunableIf => self.booleanif(&at),
            Kw::Block => self.block(&at),
            Kw::BlockInherit if self.blocks.unresolved_inherits.contains(&n) => {
                self.ast.unresolved_stmts.push(si);
                Ok(())
            }
            Kw::BlockInherit => self.blockinherit(&at),
            // Copies hold no blockabstract: libsepol leaves them out when it copies an
            // inherited block (`cil_copy_ast.c` `__cil_copy_node_helper`), so only the
            // statement as written marks its block (`blocks` did that).
            Kw::BlockAbstract if !self.blocks.abstract_of.contains_key(&n) => {
                Err(self.bad(&at, "blockabstract is not allowed here"))
            }
            Kw::In if !self.blocks.in_nodes.contains_key(&n) => {
                Err(self.bad(&at, "in is not allowed here"))
            }
            // Walked only where it is called.
            Kw::Macro if !self.blocks.macro_nodes.contains_key(&n) => {
                Err(self.bad(&at, "macro is not allowed here"))
            }
            Kw::Call => self.call(&at),
            _ => Ok(()),
        }
    }

    /// Where statement `it` is written, for messages.
    fn here(&self, it: &Item) -> String {
        loc(self.tree, self.names, it.file, it.n)
    }

    /// The error of a malformed statement.
    fn bad(&self, at: &At, why: &str) -> Fail {
        Fail::bad(vec![
            why.to_string(),
            format!("Bad {} declaration at {}", at.kw.text(), self.here(&at.it)),
            "Failed to build AST".into(),
        ])
    }

    /// Pushes the body `stmts` of a new container (items like `base`), then its end
    /// marker below them: every element must be a statement (a list).
    fn push_body(&mut self, at: &At, base: Item, stmts: &[u32]) -> Result<(), Fail> {
        self.stack.push(base);
        for &k in stmts.iter().rev() {
            if !self.tree.is_list(k) {
                return Err(self.bad(at, "Invalid syntax"));
            }
            self.stack.push(Item { n: k, ..base });
        }
        Ok(())
    }
}

/// The statements a `booleanif` (or a `tunableif` under `-P`) may hold.
fn allowed_in_conditional(kw: Kw) -> bool {
    kw.is_te_rule() || kw == Kw::Call
}

/// Interns the qualified names of the declarations made in blocks and enters them in the
/// global table (after the walk: the walk holds the interner shared).
pub(super) fn finish_pending(
    tree: &Tree,
    names: &[String],
    ast: &mut Ast,
    int: &mut Interner,
    tables: &FxHashMap<Vec<u8>, u32>,
) -> Result<(), Fail> {
    let mut prefixes: Vec<&[u8]> = vec![&[]; tables.len()];
    for (p, &t) in tables {
        prefixes[t as usize] = p;
    }
    let pending = std::mem::take(&mut ast.pending);
    let mut buf = Vec::new();
    for &(d, table) in &pending {
        buf.clear();
        buf.extend_from_slice(prefixes[table as usize]);
        buf.push(b'.');
        buf.extend_from_slice(int.bytes(ast.decls[d as usize].name));
        if buf.len() >= 2048 {
            // libsepol's CIL_MAX_NAME_LENGTH, checked when it qualifies names (`cil_fqn.c`).
            let st = ast.stmts[ast.decls[d as usize].stmt as usize];
            return Err(Fail::bad(vec![
                format!(
                    "Problem qualifying names in block at {}",
                    loc(tree, names, st.file, st.node)
                ),
                "Failed to qualify names".into(),
                "Failed to compile cildb: -1".into(),
            ]));
        }
        let q = int.intern(&buf);
        ast.decls[d as usize].name = q;
    }
    if ast.by_sym.len() < int.len() {
        ast.by_sym.resize(int.len(), NONE);
    }
    for &(d, _) in &pending {
        let decl = ast.decls[d as usize];
        if let Some(prev) = ast.find(decl.kind.ns(), decl.name) {
            let _ = prev;
            return Err(Fail::bad(vec![format!(
                "Re-declaration of {} {}",
                decl.kind.word(),
                int.str(decl.name)
            )]));
        }
        let slot = &mut ast.by_sym[decl.name as usize];
        ast.decls[d as usize].next = *slot;
        *slot = d;
    }
    Ok(())
}

//! The statement list: every statement of every file in walk order (pre-order, files in
//! command-line order), with the optional and conditional that encloses it, and the
//! declaration tables built from it.

use crate::intern::{FxHashMap, Interner, Sym};
use crate::kw::Kw;
use crate::parse::Tree;
use crate::Fail;

pub const NONE: u32 = u32::MAX;

/// One statement.
#[derive(Copy, Clone, Debug)]
pub struct Stmt {
    pub kw: Kw,
    /// The statement's list node.
    pub node: u32,
    /// The node as written: `node` until names in blocks are qualified (`qualify`
    /// replaces `node` by a copy); a booleanif's rules are found by it.
    pub src: u32,
    pub file: u32,
    /// Innermost enclosing optional (index into [`Ast::optionals`]), or [`NONE`].
    pub opt: u32,
    /// Enclosing `booleanif` statement (index into [`Ast::stmts`]), or [`NONE`].
    pub cond: u32,
    /// The `(true ...)`/`(false ...)` list node holding the statement, or [`NONE`].
    pub branch: u32,
    /// The namespace the statement sits in (index into [`Ast::scopes`]), or [`NONE`] for
    /// the global one.
    pub scope: u32,
    /// The statement that holds this one in libsepol's resolved tree (a block, its
    /// blockinherit copy, an optional, a call, a booleanif), or [`NONE`] at a file's top
    /// level: reports list a rule's parents as secilc does (`__cil_print_parents`).
    pub parent: u32,
}

/// A namespace statements sit in: a block's table, or the copy of an inherited block
/// inside its inheritor (cil.md §5.4).
#[derive(Clone, Debug)]
pub struct Scope {
    /// The qualified name of the block whose table receives declarations (`a.b`);
    /// declared names become `a.b.NAME` (`cil_fqn.c`).
    pub prefix: Vec<u8>,
    /// The table's identity (scopes with one prefix share it).
    pub table: u32,
    /// Abstract blocks are skipped by lookups.
    pub abs: bool,
    /// The enclosing scope, or [`NONE`] for the global one.
    pub parent: u32,
    /// For the copy a `blockinherit` makes: the inherited block's own scope, searched
    /// after the inheriting side and its ancestors; else [`NONE`].
    pub orig: u32,
    /// Inside a blockinherit copy (copied blocks are never abstract).
    pub copy: bool,
    /// For the body of a macro call: the call (index into [`Ast::calls`]); else [`NONE`].
    pub call: u32,
}

/// One `call`: the macro's body is walked at the call's place in a scope of its own.
#[derive(Clone, Debug)]
pub struct Call {
    /// The call statement.
    pub stmt: u32,
    /// The scope the call sits in (declarations of the body go to its table).
    pub caller: u32,
    /// The scope of the block holding the macro ([`NONE`]: the top).
    pub macro_scope: u32,
    pub params: Vec<(Option<Ns>, Sym)>,
    /// The argument nodes as written.
    pub args: Vec<u32>,
    /// Names the macro's body declares.
    pub declared: Vec<Sym>,
    /// The arguments after `qualify`: the name each finds (an atom) or the anonymous
    /// value's qualified copy (a list).
    pub resolved: Vec<u32>,
}

/// An `optional` block: its parent optional (pre-order, so parents come first).
#[derive(Copy, Clone, Debug)]
pub struct Optional {
    pub parent: u32,
}

/// Symbol namespaces (libsepol's `cil_sym_index`, with permission tables per class).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Ns {
    Users,
    Roles,
    Types,
    Commons,
    Classes,
    ClassPermissions,
    Bools,
    Tunables,
    Sens,
    Cats,
    Sids,
    Contexts,
    Levels,
    LevelRanges,
    PolicyCaps,
    IpAddrs,
    PermissionX,
}

/// What a declaration declares.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DeclKind {
    Type,
    TypeAttribute,
    TypeAlias,
    Role,
    RoleAttribute,
    User,
    UserAttribute,
    Common,
    Class,
    ClassMap,
    ClassPermission,
    Bool,
    Tunable,
    Sens,
    SensAlias,
    Cat,
    CatAlias,
    CatSet,
    Sid,
    Context,
    Level,
    LevelRange,
    PolicyCap,
    IpAddr,
    PermissionX,
}

impl DeclKind {
    pub fn ns(self) -> Ns {
        use DeclKind::*;
        match self {
            Type | TypeAttribute | TypeAlias => Ns::Types,
            Role | RoleAttribute => Ns::Roles,
            User | UserAttribute => Ns::Users,
            Common => Ns::Commons,
            Class | ClassMap => Ns::Classes,
            ClassPermission => Ns::ClassPermissions,
            Bool => Ns::Bools,
            Tunable => Ns::Tunables,
            Sens | SensAlias => Ns::Sens,
            Cat | CatAlias | CatSet => Ns::Cats,
            Sid => Ns::Sids,
            Context => Ns::Contexts,
            Level => Ns::Levels,
            LevelRange => Ns::LevelRanges,
            PolicyCap => Ns::PolicyCaps,
            IpAddr => Ns::IpAddrs,
            PermissionX => Ns::PermissionX,
        }
    }
    /// The word libsepol's messages use.
    pub fn word(self) -> &'static str {
        use DeclKind::*;
        match self {
            Type => "type",
            TypeAttribute => "typeattribute",
            TypeAlias => "typealias",
            Role => "role",
            RoleAttribute => "roleattribute",
            User => "user",
            UserAttribute => "userattribute",
            Common => "common",
            Class => "class",
            ClassMap => "classmap",
            ClassPermission => "classpermission",
            Bool => "boolean",
            Tunable => "tunable",
            Sens => "sensitivity",
            SensAlias => "sensitivityalias",
            Cat => "category",
            CatAlias => "categoryalias",
            CatSet => "categoryset",
            Sid => "sid",
            Context => "context",
            Level => "level",
            LevelRange => "levelrange",
            PolicyCap => "policycap",
            IpAddr => "ipaddr",
            PermissionX => "permissionx",
        }
    }
}

#[derive(Copy, Clone, Debug)]
pub struct Decl {
    pub kind: DeclKind,
    pub name: Sym,
    pub stmt: u32,
    /// The next declaration of the same symbol (another namespace), or [`NONE`].
    pub next: u32,
}

impl Ast {
    /// The declaration of `sym` in `ns`, live or not.
    #[inline]
    pub fn find(&self, ns: Ns, sym: Sym) -> Option<u32> {
        let mut d = *self.by_sym.get(sym as usize)?;
        while d != NONE {
            let decl = &self.decls[d as usize];
            if decl.kind.ns() == ns {
                return Some(d);
            }
            d = decl.next;
        }
        None
    }

    /// The scopes whose tables a lookup from `scope` visits, in order (the global table
    /// comes last and is not listed): the scope's block and its ancestors; in a
    /// blockinherit copy the inheriting side first, then the inherited block's
    /// ancestors; in a macro call's body the macro's ancestors, then the caller's
    /// (cil.md §5.4). Abstract blocks are skipped.
    pub fn table_chain(&self, scope: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut stack = vec![scope];
        let mut steps = 0usize;
        while let Some(s) = stack.pop() {
            steps += 1;
            if s == NONE || steps > 1 << 16 {
                continue;
            }
            let sc = &self.scopes[s as usize];
            if sc.call != NONE {
                stack.push(sc.parent);
                stack.push(self.calls[sc.call as usize].macro_scope);
            } else if sc.orig != NONE {
                stack.push(sc.orig);
                stack.push(sc.parent);
            } else {
                if !sc.abs && !sc.prefix.is_empty() {
                    out.push(s);
                }
                stack.push(sc.parent);
            }
        }
        out
    }

    /// The declaration of base name `sym` in block table `table` (during the walk).
    fn find_scoped(&self, table: u32, ns: Ns, sym: Sym) -> Option<u32> {
        let mut d = *self.scoped.get(&(table, sym))?;
        while d != NONE {
            let decl = &self.decls[d as usize];
            if decl.kind.ns() == ns {
                return Some(d);
            }
            d = decl.next;
        }
        None
    }

    /// The 0-based index of permission `perm` in class/common `decl`.
    #[inline]
    pub fn perm_index(&self, decl: u32, perm: Sym) -> Option<u32> {
        self.perm_lists
            .get(&decl)?
            .iter()
            .position(|&p| p == perm)
            .map(|i| i as u32)
    }
}

/// Statements, optionals and declarations of the whole input.
#[derive(Default)]
pub struct Ast {
    pub stmts: Vec<Stmt>,
    pub optionals: Vec<Optional>,
    pub decls: Vec<Decl>,
    /// Per symbol: its first declaration (any namespace), then `Decl::next` (a symbol is
    /// declared in one or two namespaces, so the chain is a direct lookup).
    pub by_sym: Vec<u32>,
    /// Permission names per class/common decl (index = decl), in declaration order; at
    /// most 32, so a scan finds a permission's index.
    pub perm_lists: FxHashMap<u32, Vec<Sym>>,
    /// `classcommon`: class name -> (statement, common name).
    pub class_common: FxHashMap<Sym, (u32, Sym)>,
    /// Block namespaces (statements outside blocks have scope [`NONE`]).
    pub scopes: Vec<Scope>,
    pub calls: Vec<Call>,
    /// Call statement -> index in `calls`.
    pub call_of_stmt: FxHashMap<u32, u32>,
    /// Calls and blockinherits in optionals whose macro or block does not exist (in
    /// statement order, so sorted).
    pub unresolved_stmts: Vec<u32>,
    /// Declarations in block tables while the walk runs: (table, base name) -> first
    /// declaration; they join `by_sym` under their qualified names when the walk ends.
    scoped: FxHashMap<(u32, Sym), u32>,
    /// Declarations made in blocks, with their table, for that final step.
    pending: Vec<(u32, u32)>,
}

/// Where a node is, for messages: `file:line`.
pub fn loc(tree: &Tree, names: &[String], file: u32, node: u32) -> String {
    format!("{}:{}", names[file as usize], tree.node(node).line())
}

/// `__cil_is_reserved_name`: words expressions use may not name what expressions name.
fn reserved_name(kind: DeclKind, name: Sym) -> bool {
    use DeclKind as D;
    let is = |k: Kw| name == k.sym();
    let special = match kind {
        D::Bool | D::Tunable => is(Kw::Eq) || is(Kw::Neq),
        D::User | D::UserAttribute | D::Role | D::RoleAttribute => is(Kw::All),
        D::Type | D::TypeAttribute | D::TypeAlias => is(Kw::All) || is(Kw::SelfKw),
        D::Cat | D::CatAlias | D::CatSet | D::PermissionX => is(Kw::All) || is(Kw::Range),
        _ => return false,
    };
    special || is(Kw::And) || is(Kw::Or) || is(Kw::Not) || is(Kw::Xor)
}

/// Checks a declared name as `cil_verify_name` does.
pub(crate) fn verify_name(int: &Interner, sym: Sym, qualified: bool) -> bool {
    let b = int.bytes(sym);
    if b.is_empty() || b.len() >= 2048 || !b[0].is_ascii_alphabetic() {
        return false;
    }
    b.iter()
        .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || (qualified && c == b'.'))
}

/// The stack marker for the end of a container.
const MARK: u32 = u32::MAX - 1;

/// Every `(tunable NAME true|false)` of the input (tunables are only allowed outside
/// optionals, macros and conditionals, so the top level of each file holds them all).
pub(crate) fn collect_tunables(tree: &Tree) -> FxHashMap<Sym, bool> {
    let mut out = FxHashMap::default();
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

/// One walk item: a statement node (or [`MARK`]: the end of container `cont`) with where
/// it sits.
#[derive(Copy, Clone)]
struct Item {
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
struct Cont {
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
const MAX_STMTS: usize = 1 << 21;

/// Builds the statement list and declaration tables.
pub fn build(
    tree: &Tree,
    intm: &mut Interner,
    names: &[String],
    opts: &crate::Options,
) -> Result<Ast, Fail> {
    let int: &Interner = intm;
    // Every statement is a list, so the lists parsed bound the statement count (macro
    // bodies walked once per call can exceed it: the vector then grows). Reserved at once,
    // pages never written are never resident; growing by doubling instead copied the
    // list through the heap several times, and the freed copies stayed resident (about
    // 6 MB of peak RSS on the Debian store).
    let mut ast = Ast {
        by_sym: vec![NONE; int.len()],
        stmts: Vec::with_capacity(tree.nodes.len()),
        ..Ast::default()
    };
    let tunables = collect_tunables(tree);
    let blocks = crate::blocks::collect(tree, int, names, &tunables, opts.preserve_tunables)?;
    // Scope of each block as written (made on first use).
    let mut oscope: Vec<u32> = vec![NONE; blocks.list.len()];
    let mut tables: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
    // Macros copied into inheriting blocks: qualified name -> (macro, the scope its body's
    // lookups continue from).
    let mut copy_macros: FxHashMap<Vec<u8>, (u32, u32)> = FxHashMap::default();
    // Qualified names of the block instances walked (a copy may not repeat a block).
    let mut instances: std::collections::HashSet<Vec<u8>> = Default::default();
    let mut conts: Vec<Cont> = Vec::new();
    // Statements of chosen tunableif branches, appended at the end of their container as
    // libsepol's `cil_resolve_tunif` copies them there.
    let mut deferred: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    let mut stack: Vec<Item> = Vec::new();
    for (f, &(a, b)) in tree.files.iter().enumerate() {
        let c = conts.len() as u32;
        conts.push(Cont {
            file: f as u32,
            opt: NONE,
            scope: NONE,
            block: NONE,
            original: true,
            ins_done: true,
            macro_id: NONE,
            up: NONE,
            stmt: NONE,
        });
        let top = Item {
            n: MARK,
            file: f as u32,
            opt: NONE,
            cond: NONE,
            branch: NONE,
            scope: NONE,
            cont: c,
            parent: NONE,
        };
        stack.push(top);
        for &n in tree.kids[a as usize..b as usize].iter().rev() {
            stack.push(Item { n, ..top });
        }
        while let Some(it) = stack.pop() {
            let Item {
                n,
                file,
                opt,
                cond,
                branch,
                scope,
                cont,
                parent,
            } = it;
            if n == MARK {
                let c = &mut conts[cont as usize];
                let at = Item {
                    n: MARK,
                    file: c.file,
                    opt: c.opt,
                    cond: NONE,
                    branch: NONE,
                    scope: c.scope,
                    cont,
                    parent: c.stmt,
                };
                if let Some(list) = deferred.remove(&cont) {
                    stack.push(at);
                    for &x in list.iter().rev() {
                        stack.push(Item { n: x, ..at });
                    }
                } else if c.block != NONE && !c.ins_done {
                    c.ins_done = true;
                    let original = c.original;
                    stack.push(at);
                    // Applied in reverse document order: the latest `in` first; the
                    // `after` ones after all others.
                    let ins = &blocks.list[c.block as usize].ins;
                    let order: Vec<_> = ins
                        .iter()
                        .filter(|x| !x.2)
                        .chain(ins.iter().filter(|x| x.2 && original))
                        .collect();
                    for &&(inode, ifile, _) in order.iter().rev() {
                        let ci = conts.len() as u32;
                        conts.push(Cont {
                            file: ifile,
                            opt: at.opt,
                            scope: at.scope,
                            block: NONE,
                            original: true,
                            ins_done: true,
                            macro_id: NONE,
                            up: cont,
                            stmt: at.parent,
                        });
                        let body_at = blocks.in_nodes[&inode] as usize;
                        let base = Item {
                            n: MARK,
                            file: ifile,
                            cont: ci,
                            ..at
                        };
                        stack.push(base);
                        for &x in tree.kids(inode)[body_at..].iter().rev() {
                            stack.push(Item { n: x, ..base });
                        }
                    }
                }
                continue;
            }
            if ast.stmts.len() > MAX_STMTS {
                return Err(Fail::bad(vec![format!(
                    "More than {MAX_STMTS} statements after copying inherited blocks (at {})",
                    loc(tree, names, file, n)
                )]));
            }
            let here = || loc(tree, names, file, n);
            let kids = tree.kids(n);
            let kw = match kids.first().and_then(|&k| tree.sym(k)).and_then(Kw::of) {
                Some(k) => k,
                None => {
                    let what = kids
                        .first()
                        .and_then(|&k| tree.sym(k))
                        .map(|s| int.str(s).into_owned())
                        .unwrap_or_else(|| "(list)".into());
                    return Err(Fail::bad(vec![
                        format!("Unknown keyword {what} at {}", here()),
                        "Failed to build AST".into(),
                    ]));
                }
            };
            let si = ast.stmts.len() as u32;
            ast.stmts.push(Stmt {
                kw,
                node: n,
                src: n,
                file,
                opt,
                cond,
                branch,
                scope,
                parent,
            });
            let bad = |why: &str| {
                Fail::bad(vec![
                    format!("{why}"),
                    format!("Bad {} declaration at {}", kw.text(), here()),
                    "Failed to build AST".into(),
                ])
            };
            let name_at = |i: usize| -> Result<Sym, Fail> {
                let s = kids
                    .get(i)
                    .and_then(|&k| (!tree.is_list(k)).then(|| tree.sym(k)).flatten())
                    .ok_or_else(|| bad("Invalid syntax"))?;
                if !verify_name(int, s, opts.qualified_names) {
                    return Err(bad(&format!("Invalid name: {}", int.str(s))));
                }
                Ok(s)
            };
            let declare = |ast: &mut Ast, kind: DeclKind, name: Sym| -> Result<u32, Fail> {
                if reserved_name(kind, name) {
                    return Err(Fail::bad(vec![
                        format!("Name {} is a reserved word", int.str(name)),
                        "Invalid name".into(),
                        format!("Bad {} declaration at {}", kw.text(), here()),
                        "Failed to build AST".into(),
                        "Failed to compile cildb: -1".into(),
                    ]));
                }
                let id = ast.decls.len() as u32;
                let table = match scope {
                    NONE => NONE,
                    sc if ast.scopes[sc as usize].prefix.is_empty() => NONE,
                    sc => ast.scopes[sc as usize].table,
                };
                let prev = if table == NONE {
                    ast.find(kind.ns(), name)
                } else {
                    ast.find_scoped(table, kind.ns(), name)
                };
                match prev {
                    Some(prev) => {
                        let p = ast.decls[prev as usize];
                        let same_ok = opts.multiple_decls
                            && p.kind == kind
                            && matches!(kind, DeclKind::Type | DeclKind::TypeAttribute);
                        if same_ok {
                            return Ok(prev);
                        }
                        Err(Fail::bad(vec![
                            format!("Re-declaration of {} {}", kind.word(), int.str(name)),
                            format!("Previous declaration of {} at {}", p.kind.word(), here()),
                            format!("Bad {} declaration at {}", kw.text(), here()),
                            "Failed to build AST".into(),
                        ]))
                    }
                    None if table != NONE => {
                        let slot = ast.scoped.entry((table, name)).or_insert(NONE);
                        ast.decls.push(Decl {
                            kind,
                            name,
                            stmt: si,
                            next: *slot,
                        });
                        *slot = id;
                        ast.pending.push((id, table));
                        Ok(id)
                    }
                    None => {
                        let slot = &mut ast.by_sym[name as usize];
                        ast.decls.push(Decl {
                            kind,
                            name,
                            stmt: si,
                            next: *slot,
                        });
                        *slot = id;
                        Ok(id)
                    }
                }
            };
            let expect_len = |min: usize, max: usize| -> Result<(), Fail> {
                if kids.len() < min || kids.len() > max {
                    Err(bad("Invalid syntax"))
                } else {
                    Ok(())
                }
            };
            if cond != NONE
                && !matches!(
                    kw,
                    Kw::Allow
                        | Kw::AuditAllow
                        | Kw::DontAudit
                        | Kw::TypeTransition
                        | Kw::TypeChange
                        | Kw::TypeMember
                        | Kw::Call
                )
            {
                // With -P a tunableif is a booleanif, and secilc says so.
                let what = if ast.stmts[cond as usize].kw == Kw::TunableIf {
                    "tunableif being treated as a booleanif"
                } else {
                    "booleanif"
                };
                return Err(Fail::bad(vec![
                    format!("{} is not allowed in {what} at {}", kw.text(), here()),
                    "Failed to build AST".into(),
                    "Failed to compile cildb: -1".into(),
                ]));
            }
            use DeclKind as D;
            let simple = match kw {
                Kw::Type => Some(D::Type),
                Kw::TypeAttribute => Some(D::TypeAttribute),
                Kw::TypeAlias => Some(D::TypeAlias),
                Kw::Role => Some(D::Role),
                Kw::RoleAttribute => Some(D::RoleAttribute),
                Kw::User => Some(D::User),
                Kw::UserAttribute => Some(D::UserAttribute),
                Kw::Sensitivity => Some(D::Sens),
                Kw::SensitivityAlias => Some(D::SensAlias),
                Kw::Category => Some(D::Cat),
                Kw::CategoryAlias => Some(D::CatAlias),
                Kw::Sid => Some(D::Sid),
                Kw::PolicyCap => Some(D::PolicyCap),
                Kw::ClassPermission => Some(D::ClassPermission),
                _ => None,
            };
            if let Some(kind) = simple {
                expect_len(2, 2)?;
                let name = name_at(1)?;
                if kind == D::Role && name == Kw::ObjectR.sym() {
                    // object_r is libsepol's built-in role 1; declaring it is allowed.
                }
                declare(&mut ast, kind, name)?;
                continue;
            }
            match kw {
                Kw::Boolean | Kw::Tunable => {
                    expect_len(3, 3)?;
                    let name = name_at(1)?;
                    let v = tree.sym(kids[2]);
                    if v != Some(Kw::True.sym()) && v != Some(Kw::False.sym()) {
                        return Err(bad("Value must be either 'true' or 'false'"));
                    }
                    let kind = if kw == Kw::Tunable && !opts.preserve_tunables {
                        D::Tunable
                    } else {
                        D::Bool
                    };
                    if kw == Kw::Tunable && opts.preserve_tunables {
                        // `-P`: tunables are booleans.
                    }
                    declare(&mut ast, kind, name)?;
                }
                Kw::Common | Kw::Class | Kw::ClassMap => {
                    expect_len(3, 3)?;
                    let name = name_at(1)?;
                    if !tree.is_list(kids[2]) {
                        return Err(bad("Invalid syntax"));
                    }
                    let kind = match kw {
                        Kw::Common => D::Common,
                        Kw::Class => D::Class,
                        _ => D::ClassMap,
                    };
                    let id = declare(&mut ast, kind, name)?;
                    let mut list = Vec::new();
                    for &p in tree.kids(kids[2]) {
                        let ps = match tree.sym(p) {
                            Some(s) if verify_name(int, s, false) => s,
                            _ => return Err(bad("Invalid permission name")),
                        };
                        if list.contains(&ps) {
                            return Err(bad(&format!(
                                "Re-declaration of permission {}",
                                int.str(ps)
                            )));
                        }
                        list.push(ps);
                    }
                    if list.len() > 32 && kw != Kw::ClassMap {
                        return Err(bad("Too many permissions in class"));
                    }
                    ast.perm_lists.insert(id, list);
                }
                Kw::ClassCommon => {
                    expect_len(3, 3)?;
                    let c = name_at(1)?;
                    let m = name_at(2)?;
                    ast.class_common.entry(c).or_insert((si, m));
                }
                Kw::CategorySet => {
                    expect_len(3, 3)?;
                    let name = name_at(1)?;
                    declare(&mut ast, D::CatSet, name)?;
                }
                Kw::Level | Kw::LevelRange | Kw::Context | Kw::IpAddr | Kw::PermissionX => {
                    expect_len(3, 3)?;
                    let name = name_at(1)?;
                    let kind = match kw {
                        Kw::Level => D::Level,
                        Kw::LevelRange => D::LevelRange,
                        Kw::Context => D::Context,
                        Kw::IpAddr => D::IpAddr,
                        _ => D::PermissionX,
                    };
                    declare(&mut ast, kind, name)?;
                }
                Kw::Optional => {
                    if kids.len() < 2 {
                        return Err(bad("Invalid syntax"));
                    }
                    name_at(1)?;
                    let oi = ast.optionals.len() as u32;
                    ast.optionals.push(Optional { parent: opt });
                    let c = conts.len() as u32;
                    conts.push(Cont {
                        file,
                        opt: oi,
                        scope,
                        block: NONE,
                        original: true,
                        ins_done: true,
                        macro_id: NONE,
                        up: cont,
                        stmt: si,
                    });
                    let base = Item {
                        n: MARK,
                        opt: oi,
                        cont: c,
                        parent: si,
                        ..it
                    };
                    stack.push(base);
                    for &k in kids[2..].iter().rev() {
                        if !tree.is_list(k) {
                            return Err(bad("Invalid syntax"));
                        }
                        stack.push(Item { n: k, ..base });
                    }
                }
                Kw::TunableIf if !opts.preserve_tunables => {
                    if kids.len() < 3 || cond != NONE {
                        return Err(bad("Invalid syntax"));
                    }
                    // A tunable's name is looked up from the tunableif's place.
                    let written_in = blocks.tif_block.get(&n).copied();
                    let lookup = |sym: Sym| -> Option<bool> {
                        if scope == NONE && written_in.is_none() {
                            return tunables.get(&sym).copied();
                        }
                        if written_in.is_some() {
                            return tunable_as_written(int, &blocks, &tunables, written_in, sym);
                        }
                        let b = int.bytes(sym);
                        let mut q = Vec::new();
                        {
                            for sc in ast.table_chain(scope) {
                                q.clear();
                                q.extend_from_slice(&ast.scopes[sc as usize].prefix);
                                q.push(b'.');
                                q.extend_from_slice(b);
                                if let Some(&v) = blocks.tunables.get(&q) {
                                    return Some(v);
                                }
                            }
                        }
                        let b = b.strip_prefix(b".").unwrap_or(b);
                        blocks
                            .tunables
                            .get(b)
                            .copied()
                            .or_else(|| tunables.get(&int.get(b)?).copied())
                    };
                    let value = eval_tunable(tree, &lookup, kids[1]).ok_or_else(|| Fail {
                        messages: vec![
                            format!("Failed to resolve tunableif statement at {}", here()),
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
                            return Err(bad("Invalid syntax"));
                        }
                    }
                    if let Some(b) = chosen {
                        let body = &tree.kids(b)[1..];
                        if body.iter().any(|&r| !tree.is_list(r)) {
                            return Err(bad("Invalid syntax"));
                        }
                        deferred.entry(cont).or_default().extend_from_slice(body);
                    }
                }
                Kw::BooleanIf | Kw::TunableIf => {
                    if kids.len() < 3 || cond != NONE {
                        return Err(bad("Invalid syntax"));
                    }
                    // Branches: (true ...) / (false ...), each a list of rules.
                    let mut pushes = Vec::new();
                    for &b in &kids[2..] {
                        let bk = tree.kids(b);
                        let which = bk.first().and_then(|&k| tree.sym(k));
                        let br = if which == Some(Kw::True.sym()) {
                            true
                        } else if which == Some(Kw::False.sym()) {
                            false
                        } else {
                            return Err(bad("Invalid syntax"));
                        };
                        for &r in &bk[1..] {
                            if !tree.is_list(r) {
                                return Err(bad("Invalid syntax"));
                            }
                            let _ = br;
                            pushes.push((r, file, opt, si, b));
                        }
                    }
                    for (r, file, opt, cond, branch) in pushes.into_iter().rev() {
                        stack.push(Item {
                            n: r,
                            file,
                            opt,
                            cond,
                            branch,
                            scope,
                            cont,
                            parent: si,
                        });
                    }
                }
                Kw::Block => {
                    let ob = *blocks
                        .of_node
                        .get(&n)
                        .ok_or_else(|| bad("block is not allowed here"))?;
                    let o = &blocks.list[ob as usize];
                    let copy = scope != NONE && ast.scopes[scope as usize].copy;
                    if !copy && o.abs {
                        // Abstract: only its copies count (cil.md §1.1).
                        continue;
                    }
                    let sc = if copy {
                        let mut prefix = ast.scopes[scope as usize].prefix.clone();
                        if !prefix.is_empty() {
                            prefix.push(b'.');
                        }
                        prefix.extend_from_slice(int.bytes(o.name));
                        new_scope(&mut ast, &mut tables, prefix, false, scope, NONE, true)
                    } else {
                        original_scope(&mut ast, &mut tables, &blocks, &mut oscope, ob)
                    };
                    if copy {
                        register_macros(&ast, &blocks, tree, int, n, sc, &mut copy_macros);
                    }
                    if !instances.insert(ast.scopes[sc as usize].prefix.clone()) {
                        return Err(Fail::bad(vec![
                            format!("Re-declaration of block {}", int.str(o.name)),
                            format!("Bad block declaration at {}", here()),
                            "Failed to build AST".into(),
                        ]));
                    }
                    let c = conts.len() as u32;
                    conts.push(Cont {
                        file,
                        opt,
                        scope: sc,
                        block: ob,
                        original: !copy,
                        ins_done: false,
                        macro_id: NONE,
                        up: cont,
                        stmt: si,
                    });
                    let base = Item {
                        n: MARK,
                        scope: sc,
                        cont: c,
                        parent: si,
                        ..it
                    };
                    stack.push(base);
                    for &k in kids[2..].iter().rev() {
                        if !tree.is_list(k) {
                            return Err(bad("Invalid syntax"));
                        }
                        stack.push(Item { n: k, ..base });
                    }
                }
                Kw::BlockInherit if blocks.unresolved_inherits.contains(&n) => {
                    ast.unresolved_stmts.push(si);
                }
                Kw::BlockInherit => {
                    let target = *blocks
                        .inherit_of
                        .get(&n)
                        .ok_or_else(|| bad("blockinherit is not allowed here"))?;
                    let prefix = match scope {
                        NONE => Vec::new(),
                        s => ast.scopes[s as usize].prefix.clone(),
                    };
                    let orig = original_scope(&mut ast, &mut tables, &blocks, &mut oscope, target);
                    let sc = new_scope(&mut ast, &mut tables, prefix, false, scope, orig, true);
                    let t = &blocks.list[target as usize];
                    register_macros(&ast, &blocks, tree, int, t.node, sc, &mut copy_macros);
                    let c = conts.len() as u32;
                    conts.push(Cont {
                        file: t.file,
                        opt,
                        scope: sc,
                        block: target,
                        original: false,
                        ins_done: false,
                        macro_id: NONE,
                        up: cont,
                        stmt: si,
                    });
                    let base = Item {
                        n: MARK,
                        file: t.file,
                        scope: sc,
                        cont: c,
                        parent: si,
                        ..it
                    };
                    stack.push(base);
                    for &k in tree.kids(t.node)[2..].iter().rev() {
                        if !tree.is_list(k) {
                            return Err(bad("Invalid syntax"));
                        }
                        stack.push(Item { n: k, ..base });
                    }
                }
                // Copies hold no blockabstract: libsepol leaves them out when it copies an
                // inherited block (`cil_copy_ast.c` `__cil_copy_node_helper`), so only the
                // statement as written marks its block (`blocks` did that).
                Kw::BlockAbstract if !blocks.abstract_of.contains_key(&n) => {
                    return Err(bad("blockabstract is not allowed here"));
                }
                Kw::In if !blocks.in_nodes.contains_key(&n) => {
                    return Err(bad("in is not allowed here"));
                }
                // Walked only where it is called.
                Kw::Macro if !blocks.macro_nodes.contains_key(&n) => {
                    return Err(bad("macro is not allowed here"));
                }
                Kw::Call => {
                    let unresolved = || Fail {
                        messages: vec![
                            format!("Failed to resolve call statement at {}", here()),
                            "Failed to resolve AST".into(),
                            "Failed to compile cildb: -2".into(),
                        ],
                        status: 254,
                    };
                    let mname = kids
                        .get(1)
                        .and_then(|&k| tree.sym(k))
                        .ok_or_else(|| bad("Invalid syntax"))?;
                    let Some((mid, copied_scope)) =
                        find_macro(&ast, &blocks, &copy_macros, int, scope, mname)
                    else {
                        if opt == NONE {
                            return Err(unresolved());
                        }
                        // Inside an optional: the resolver disables it.
                        ast.unresolved_stmts.push(si);
                        continue;
                    };
                    let m = &blocks.macros[mid as usize];
                    let args: Vec<u32> = match kids.get(2) {
                        Some(&l) if tree.is_list(l) && kids.len() == 3 => tree.kids(l).to_vec(),
                        None => Vec::new(),
                        _ => return Err(bad("Invalid syntax")),
                    };
                    if args.len() != m.params.len() {
                        let what = if args.len() < m.params.len() {
                            "Missing arguments"
                        } else {
                            "Unexpected arguments"
                        };
                        return Err(Fail::bad(vec![
                            format!("{what} at {}", here()),
                            "Failed to resolve AST".into(),
                            "Failed to compile cildb: -1".into(),
                        ]));
                    }
                    // A macro already being expanded on the way up is a recursion.
                    let mut c = cont;
                    while c != NONE {
                        if conts[c as usize].macro_id == mid {
                            return Err(Fail::bad(vec![
                                "Recursive macro call found:".into(),
                                format!(
                                    "macro {} at {}",
                                    int.str(m.name),
                                    loc(tree, names, m.file, m.node)
                                ),
                                format!("call {} at {}", int.str(m.name), here()),
                                "Failed to resolve AST".into(),
                            ]));
                        }
                        c = conts[c as usize].up;
                    }
                    let macro_scope = match (copied_scope, m.parent) {
                        (Some(sc), _) => sc,
                        (None, NONE) => NONE,
                        (None, p) => original_scope(&mut ast, &mut tables, &blocks, &mut oscope, p),
                    };
                    let ci = ast.calls.len() as u32;
                    ast.calls.push(Call {
                        stmt: si,
                        caller: scope,
                        macro_scope,
                        params: m.params.clone(),
                        args,
                        declared: m.declared.clone(),
                        resolved: Vec::new(),
                    });
                    ast.call_of_stmt.insert(si, ci);
                    let prefix = match scope {
                        NONE => Vec::new(),
                        s => ast.scopes[s as usize].prefix.clone(),
                    };
                    let copy = scope != NONE && ast.scopes[scope as usize].copy;
                    let sc = new_scope(&mut ast, &mut tables, prefix, false, scope, NONE, copy);
                    ast.scopes[sc as usize].call = ci;
                    let c = conts.len() as u32;
                    conts.push(Cont {
                        file: m.file,
                        opt,
                        scope: sc,
                        block: NONE,
                        original: true,
                        ins_done: true,
                        macro_id: mid,
                        up: cont,
                        stmt: si,
                    });
                    let base = Item {
                        n: MARK,
                        file: m.file,
                        scope: sc,
                        cont: c,
                        parent: si,
                        ..it
                    };
                    stack.push(base);
                    for &k in tree.kids(m.node)[3..].iter().rev() {
                        if !tree.is_list(k) {
                            return Err(bad("Invalid syntax"));
                        }
                        stack.push(Item { n: k, ..base });
                    }
                }
                _ => {}
            }
        }
    }
    // Declarations in blocks join the global table under their qualified names.
    finish_pending(tree, names, &mut ast, intm, &tables)?;
    ast.stmts.shrink_to_fit();
    Ok(ast)
}

/// Interns the qualified names of the declarations made in blocks and enters them in the
/// global table (after the walk: the walk holds the interner shared).
fn finish_pending(
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
    ast.scoped.clear();
    Ok(())
}

/// The macros among the children of block node `block`, copied into scope `sc`.
fn register_macros(
    ast: &Ast,
    blocks: &crate::blocks::Blocks,
    tree: &Tree,
    int: &Interner,
    block: u32,
    sc: u32,
    out: &mut FxHashMap<Vec<u8>, (u32, u32)>,
) {
    let prefix = &ast.scopes[sc as usize].prefix;
    // The block's own statements, then the bodies of the `in`s copied into it before
    // inheritance (macros declared there belong to the block too).
    let mut bodies: Vec<&[u32]> = vec![tree.kids(block).get(2..).unwrap_or(&[])];
    if let Some(&b) = blocks.of_node.get(&block) {
        for &(inode, _, after) in &blocks.list[b as usize].ins {
            if !after {
                let at = blocks.in_nodes.get(&inode).copied().unwrap_or(0) as usize;
                bodies.push(tree.kids(inode).get(at..).unwrap_or(&[]));
            }
        }
    }
    // Chosen tunableif branches count as the block's own statements.
    let mut list: Vec<u32> = Vec::new();
    let mut todo: Vec<u32> = bodies.into_iter().flatten().copied().collect();
    todo.reverse();
    while let Some(k) = todo.pop() {
        match blocks.tif_choice.get(&k) {
            Some(&b) => todo.extend(tree.kids(b)[1..].iter().rev()),
            None => list.push(k),
        }
    }
    for &k in &list {
        if let Some(&mid) = blocks.macro_nodes.get(&k) {
            let mut q = prefix.clone();
            if !q.is_empty() {
                q.push(b'.');
            }
            q.extend_from_slice(int.bytes(blocks.macros[mid as usize].name));
            out.insert(q, (mid, sc));
        }
    }
}

/// The macro `name` names from `scope`: the scope's tables in lookup order, then the top;
/// a macro copied by a blockinherit comes with the scope its body's lookups continue from.
fn find_macro(
    ast: &Ast,
    blocks: &crate::blocks::Blocks,
    copies: &FxHashMap<Vec<u8>, (u32, u32)>,
    int: &Interner,
    scope: u32,
    name: Sym,
) -> Option<(u32, Option<u32>)> {
    let get = |q: &[u8]| {
        if let Some(&(m, sc)) = copies.get(q) {
            return Some((m, Some(sc)));
        }
        blocks.macro_by_qual.get(q).map(|&m| (m, None))
    };
    let b = int.bytes(name);
    if let Some(rest) = b.strip_prefix(b".") {
        return get(rest);
    }
    let mut q = Vec::new();
    for s in ast.table_chain(scope) {
        q.clear();
        q.extend_from_slice(&ast.scopes[s as usize].prefix);
        q.push(b'.');
        q.extend_from_slice(b);
        if let Some(x) = get(&q) {
            return Some(x);
        }
    }
    get(b)
}

/// A new scope; its table is shared with every scope of the same prefix.
fn new_scope(
    ast: &mut Ast,
    tables: &mut FxHashMap<Vec<u8>, u32>,
    prefix: Vec<u8>,
    abs: bool,
    parent: u32,
    orig: u32,
    copy: bool,
) -> u32 {
    let n = tables.len() as u32;
    let table = *tables.entry(prefix.clone()).or_insert(n);
    ast.scopes.push(Scope {
        prefix,
        table,
        abs,
        parent,
        orig,
        copy,
        call: NONE,
    });
    ast.scopes.len() as u32 - 1
}

/// The scope of block `b` as written (and of its enclosing blocks), made once.
fn original_scope(
    ast: &mut Ast,
    tables: &mut FxHashMap<Vec<u8>, u32>,
    blocks: &crate::blocks::Blocks,
    memo: &mut [u32],
    b: u32,
) -> u32 {
    // The chain of blocks without a scope yet, innermost first.
    let mut chain = Vec::new();
    let mut x = b;
    while x != NONE && memo[x as usize] == NONE {
        chain.push(x);
        x = blocks.list[x as usize].parent;
    }
    for &y in chain.iter().rev() {
        let o = &blocks.list[y as usize];
        let parent = match o.parent {
            NONE => NONE,
            p => memo[p as usize],
        };
        memo[y as usize] = new_scope(ast, tables, o.qual.clone(), o.abs, parent, NONE, false);
    }
    memo[b as usize]
}

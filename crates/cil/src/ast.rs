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
    pub file: u32,
    /// Innermost enclosing optional (index into [`Ast::optionals`]), or [`NONE`].
    pub opt: u32,
    /// Enclosing `booleanif` statement (index into [`Ast::stmts`]), or [`NONE`].
    pub cond: u32,
    /// The `(true ...)`/`(false ...)` list node holding the statement, or [`NONE`].
    pub branch: u32,
}

/// An `optional` block: its parent optional (pre-order, so parents come first).
#[derive(Copy, Clone, Debug)]
pub struct Optional {
    pub parent: u32,
    pub stmt: u32,
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
}

/// Where a node is, for messages: `file:line`.
pub fn loc(tree: &Tree, names: &[String], file: u32, node: u32) -> String {
    format!("{}:{}", names[file as usize], tree.node(node).line())
}

/// Checks a declared name as `cil_verify_name` does.
fn verify_name(int: &Interner, sym: Sym, qualified: bool) -> bool {
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
fn collect_tunables(tree: &Tree) -> FxHashMap<Sym, bool> {
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
fn eval_tunable(tree: &Tree, tunables: &FxHashMap<Sym, bool>, n: u32) -> Option<bool> {
    if !tree.is_list(n) {
        return tunables.get(&tree.sym(n)?).copied();
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

/// Builds the statement list and declaration tables.
pub fn build(
    tree: &Tree,
    int: &Interner,
    names: &[String],
    opts: &crate::Options,
) -> Result<Ast, Fail> {
    let mut ast = Ast {
        by_sym: vec![NONE; int.len()],
        ..Ast::default()
    };
    let tunables = collect_tunables(tree);
    // Statements of chosen tunableif branches, appended at the end of their container
    // (file or optional) as libsepol's `cil_resolve_tunif` copies them there.
    let mut deferred: FxHashMap<(u32, u32), Vec<u32>> = FxHashMap::default();
    // (node, file, opt, cond, branch); node MARK = the end of container (file, opt).
    let mut stack: Vec<(u32, u32, u32, u32, u32)> = Vec::new();
    for (f, &(a, b)) in tree.files.iter().enumerate() {
        stack.push((MARK, f as u32, NONE, NONE, NONE));
        for &n in tree.kids[a as usize..b as usize].iter().rev() {
            stack.push((n, f as u32, NONE, NONE, NONE));
        }
        while let Some((n, file, opt, cond, branch)) = stack.pop() {
            if n == MARK {
                if let Some(list) = deferred.remove(&(file, opt)) {
                    stack.push((MARK, file, opt, NONE, NONE));
                    for &x in list.iter().rev() {
                        stack.push((x, file, opt, NONE, NONE));
                    }
                }
                continue;
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
                file,
                opt,
                cond,
                branch,
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
                let id = ast.decls.len() as u32;
                match ast.find(kind.ns(), name) {
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
                )
            {
                return Err(Fail::bad(vec![
                    format!("{} is not allowed in booleanif at {}", kw.text(), here()),
                    "Failed to build AST".into(),
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
                    ast.optionals.push(Optional {
                        parent: opt,
                        stmt: si,
                    });
                    stack.push((MARK, file, oi, cond, branch));
                    for &k in kids[2..].iter().rev() {
                        if !tree.is_list(k) {
                            return Err(bad("Invalid syntax"));
                        }
                        stack.push((k, file, oi, cond, branch));
                    }
                }
                Kw::TunableIf if !opts.preserve_tunables => {
                    if kids.len() < 3 || cond != NONE {
                        return Err(bad("Invalid syntax"));
                    }
                    let value = eval_tunable(tree, &tunables, kids[1]).ok_or_else(|| Fail {
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
                        deferred
                            .entry((file, opt))
                            .or_default()
                            .extend_from_slice(body);
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
                    for p in pushes.into_iter().rev() {
                        stack.push(p);
                    }
                }
                Kw::Block
                | Kw::BlockAbstract
                | Kw::BlockInherit
                | Kw::In
                | Kw::Macro
                | Kw::Call => {
                    return Err(Fail::bad(vec![format!(
                        "{} statements are not supported by arbiter's CIL compiler yet (at {})",
                        kw.text(),
                        here()
                    )]));
                }
                _ => {}
            }
        }
    }
    Ok(ast)
}

//! The statement list: every statement of every file in walk order (pre-order, files in
//! command-line order), with the optional and conditional that encloses it, and the
//! declaration tables built from it.

use crate::intern::{FxHashMap, Interner, Sym};
use crate::kw::Kw;
use crate::parse::Tree;
use crate::Fail;

mod names;
mod scopes;
mod tunables;
mod walk;

pub(crate) use names::*;
use scopes::*;
pub(crate) use tunables::*;
pub(crate) use walk::*;

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
    /// The macro's parameters (shared with the macro: `blocks::OMacro::params`).
    pub params: std::rc::Rc<[(Option<Ns>, Sym)]>,
    /// The list of the arguments as written ([`NONE`]: the call has none); see
    /// [`Call::args`].
    pub arg_list: u32,
    /// Names the macro's body declares (shared with the macro).
    pub declared: std::rc::Rc<[Sym]>,
    /// The arguments after `qualify`: the name each finds (an atom) or the anonymous
    /// value's qualified copy (a list).
    pub resolved: Vec<u32>,
}

impl Call {
    /// The argument nodes as written.
    pub fn args<'t>(&self, tree: &'t crate::parse::Tree) -> &'t [u32] {
        match self.arg_list {
            NONE => &[],
            l => tree.kids(l),
        }
    }
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

impl Ns {
    /// The namespace an order statement (`classorder`, `sidorder`, `sensitivityorder`,
    /// `categoryorder`) names its members in; `None` for any other keyword.
    pub fn of_order(kw: Kw) -> Option<Ns> {
        match kw {
            Kw::ClassOrder => Some(Ns::Classes),
            Kw::SidOrder => Some(Ns::Sids),
            Kw::SensitivityOrder => Some(Ns::Sens),
            Kw::CategoryOrder => Some(Ns::Cats),
            _ => None,
        }
    }
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

    /// After the walk: the qualified name of what block table `table` declares as base
    /// name `sym` (`prefix.sym`, declared in one namespace or more), or `None` when it
    /// declares nothing by that name. For a name without dots this is the symbol a lookup
    /// of `prefix.sym` in the interner finds among declarations, without building and
    /// hashing the string.
    pub fn scoped_name(&self, table: u32, sym: Sym) -> Option<Sym> {
        let d = *self.scoped.get(&(table, sym))?;
        Some(self.decls[d as usize].name)
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
    /// Per optional, set by the last `qualify`: whether one of its names found a
    /// declaration inside that optional. Disabling optionals none of which is marked
    /// leaves every qualified name as it is (see `qualify::needs_requalify`).
    pub qualified_into: Vec<bool>,
    /// Declarations in block tables: (table, base name) -> a declaration (while the walk
    /// runs, the first of a chain by `Decl::next`); they join `by_sym` under their
    /// qualified names when the walk ends, and the map stays for
    /// [`Ast::scoped_name`] (the chains do not: `next` then links `by_sym`'s).
    scoped: FxHashMap<(u32, Sym), u32>,
    /// Declarations made in blocks, with their table, for that final step.
    pending: Vec<(u32, u32)>,
}

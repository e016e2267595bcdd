//! Names inside blocks, made global: every statement that sits in a block (or in a
//! blockinherit copy) is replaced by a copy whose names are the qualified names of the
//! declarations they find (`x` in block `a.b` may mean `a.b.x`, `a.x` or `x`), so the
//! later passes, which look names up in the one global table, need no notion of scope.
//!
//! The lookup order is libsepol's (`__cil_resolve_name_with_parents`, cil.md §5.4): the
//! statement's block, then its enclosing blocks; in a blockinherit copy first the
//! inheriting side and its ancestors, then the inherited block's ancestors; finally the
//! global table. Abstract blocks are skipped. Which arguments are names, and of which
//! kind, follows the statement shapes `resolve` checks; an argument that finds nothing is
//! left as written and fails there.

use crate::ast::{Ast, Ns, NONE};
use crate::intern::{Interner, Sym};
use crate::kw::{named_declaration_kws, Kw};
use crate::parse::{Tree, ATOM};
use crate::Fail;
use std::cell::Cell;

/// An upper bound on the tables one lookup visits (nested inheritance can repeat them).
const MAX_STEPS: usize = 1 << 16;

/// A replaced element: (list node, index, new element: an atom or a list).
type Edit = (u32, usize, u32);

/// One step of a lookup.
#[derive(Copy, Clone)]
enum Step {
    /// A block's table (a scope with a prefix).
    Table(u32),
    /// A macro call: names its body declares are on the caller's side.
    CallDecl(u32),
    /// A macro call's arguments, by parameter name.
    Args(u32),
}

struct Q<'a> {
    /// Per optional: live (after a resolution round), or `None` before any.
    live: Option<&'a [bool]>,
    /// Per optional: a lookup found a declaration inside it ([`Ast::qualified_into`]).
    into: &'a [Cell<bool>],
    tree: &'a Tree,
    int: &'a Interner,
    ast: &'a Ast,
    /// The statement's lookup plan (the global table is implied at its end).
    chain: Vec<Step>,
    /// (list node, index, new element: an atom or a list)
    edits: Vec<(u32, usize, u32)>,
    buf: Vec<u8>,
    /// The scope `chain` was planned for (statements of one block come in runs, so the
    /// plan is reused instead of rebuilt per statement).
    chain_scope: Option<u32>,
    /// Scratch stack of [`plan_into`].
    plan_stack: Vec<u32>,
    /// Scratch stack of the expression walks.
    walk: Vec<u32>,
}

/// The buffers of a [`Q`], kept from one to the next.
#[derive(Default)]
struct QBuffers {
    chain: Vec<Step>,
    edits: Vec<Edit>,
    buf: Vec<u8>,
    plan_stack: Vec<u32>,
    walk: Vec<u32>,
}

impl Q<'_> {
    /// Ends this `Q`, keeping its buffers for the next.
    fn into_buffers(self) -> QBuffers {
        QBuffers {
            chain: self.chain,
            edits: self.edits,
            buf: self.buf,
            plan_stack: self.plan_stack,
            walk: self.walk,
        }
    }

    /// Whether `q` names a declaration in `ns` that is not inside a disabled optional
    /// (one found inside an optional is marked in `into`).
    fn declared(&self, ns: Ns, q: Sym) -> bool {
        let Some(d) = self.ast.find(ns, q) else {
            return false;
        };
        let o = self.ast.stmts[self.ast.decls[d as usize].stmt as usize].opt;
        if o == NONE {
            return true;
        }
        let found = match self.live {
            Some(live) => live[o as usize],
            None => true,
        };
        if found {
            self.into[o as usize].set(true);
        }
        found
    }

    fn set_chain(&mut self, scope: u32) {
        if self.chain_scope != Some(scope) {
            plan_into(self.ast, scope, &mut self.chain, &mut self.plan_stack);
            self.chain_scope = Some(scope);
        }
    }

    /// What `sym` finds in `ns`: a qualified name (an atom) or an anonymous argument (a
    /// list); `None` when it is the global name as written or nothing.
    fn find(&mut self, ns: Ns, sym: Sym) -> Option<u32> {
        let b = self.int.bytes(sym);
        if let Some(rest) = b.strip_prefix(b".") {
            return self
                .int
                .get(rest)
                .filter(|&q| self.declared(ns, q))
                .map(|q| q | ATOM);
        }
        // A name without dots finds `prefix.name` exactly when the prefix's table declares
        // it (`Ast::scoped_name`): no string to build and hash per step.
        // (Decided at the first step that needs it: call bodies at the top need none.)
        let mut plain = None;
        for &step in &self.chain {
            match step {
                Step::Table(s) => {
                    if *plain.get_or_insert_with(|| !b.contains(&b'.')) {
                        let t = self.ast.scopes[s as usize].table;
                        if let Some(q) = self.ast.scoped_name(t, sym) {
                            if self.declared(ns, q) {
                                return Some(q | ATOM);
                            }
                        }
                        continue;
                    }
                    self.buf.clear();
                    self.buf
                        .extend_from_slice(&self.ast.scopes[s as usize].prefix);
                    self.buf.push(b'.');
                    self.buf.extend_from_slice(b);
                    if let Some(q) = self.int.get(&self.buf) {
                        if self.declared(ns, q) {
                            return Some(q | ATOM);
                        }
                    }
                }
                Step::CallDecl(c) => {
                    let call = &self.ast.calls[c as usize];
                    if !call.declared.contains(&sym) {
                        continue;
                    }
                    let prefix: &[u8] = match call.caller {
                        NONE => &[],
                        s => &self.ast.scopes[s as usize].prefix,
                    };
                    if prefix.is_empty() {
                        if self.declared(ns, sym) {
                            return None;
                        }
                        continue;
                    }
                    if *plain.get_or_insert_with(|| !b.contains(&b'.')) {
                        let t = self.ast.scopes[call.caller as usize].table;
                        if let Some(q) = self.ast.scoped_name(t, sym) {
                            if self.declared(ns, q) {
                                return Some(q | ATOM);
                            }
                        }
                        continue;
                    }
                    self.buf.clear();
                    self.buf.extend_from_slice(prefix);
                    self.buf.push(b'.');
                    self.buf.extend_from_slice(b);
                    if let Some(q) = self.int.get(&self.buf) {
                        if self.declared(ns, q) {
                            return Some(q | ATOM);
                        }
                    }
                }
                Step::Args(c) => {
                    let call = &self.ast.calls[c as usize];
                    if let Some(k) = call
                        .params
                        .iter()
                        .position(|&(pns, p)| p == sym && pns == Some(ns))
                    {
                        return call.resolved.get(k).copied();
                    }
                }
            }
        }
        None
    }

    /// A `string`/`name` parameter at `(l, i)` becomes its argument.
    fn string_param(&mut self, l: u32, i: usize) {
        let Some(s) = self.arg(l, i).and_then(|n| self.tree.sym(n)) else {
            return;
        };
        for &step in &self.chain {
            if let Step::Args(c) = step {
                let call = &self.ast.calls[c as usize];
                if let Some(k) = call
                    .params
                    .iter()
                    .position(|&(pns, p)| p == s && pns.is_none())
                {
                    if let Some(&v) = call.resolved.get(k) {
                        self.edits.push((l, i, v));
                    }
                    return;
                }
            }
        }
    }

    fn name(&mut self, l: u32, i: usize, ns: Ns) {
        let Some(&n) = self.tree.kids(l).get(i) else {
            return;
        };
        let Some(s) = self.tree.sym(n) else {
            return;
        };
        if let Some(q) = self.find(ns, s) {
            if q != n {
                self.edits.push((l, i, q));
            }
        }
    }

    fn type_or_self(&mut self, l: u32, i: usize) {
        let n = self.tree.kids(l).get(i).copied();
        if n.and_then(|n| self.tree.sym(n)) != Some(Kw::SelfKw.sym()) {
            self.name(l, i, Ns::Types);
        }
    }

    /// Every atom of an expression but its operators.
    fn expr(&mut self, l: u32, i: usize, ns: Ns, ops: &[Kw]) {
        let Some(&n) = self.tree.kids(l).get(i) else {
            return;
        };
        if !self.tree.is_list(n) {
            if !self.is_op(n, ns, ops) {
                self.name(l, i, ns);
            }
            return;
        }
        let mut stack = std::mem::take(&mut self.walk);
        stack.clear();
        stack.push(n);
        while let Some(x) = stack.pop() {
            for (j, &k) in self.tree.kids(x).iter().enumerate() {
                if self.tree.is_list(k) {
                    stack.push(k);
                } else if !self.is_op(k, ns, ops) {
                    self.name(x, j, ns);
                }
            }
        }
        self.walk = stack;
    }

    fn is_op(&self, n: u32, ns: Ns, ops: &[Kw]) -> bool {
        let Some(s) = self.tree.sym(n) else {
            return true;
        };
        if ns == Ns::Types && s == Kw::SelfKw.sym() {
            return true;
        }
        Kw::of(s).is_some_and(|k| ops.contains(&k))
    }

    fn set_expr(&mut self, l: u32, i: usize, ns: Ns) {
        use Kw::*;
        self.expr(l, i, ns, &[And, Or, Xor, Not, All, Range]);
    }

    fn bool_expr(&mut self, l: u32, i: usize) {
        use Kw::*;
        self.expr(l, i, Ns::Bools, &[And, Or, Xor, Not, Eq, Neq]);
    }

    fn arg(&self, l: u32, i: usize) -> Option<u32> {
        self.tree.kids(l).get(i).copied()
    }

    fn classperms(&mut self, l: u32, i: usize) {
        match self.arg(l, i) {
            Some(n) if self.tree.is_list(n) => self.name(n, 0, Ns::Classes),
            Some(_) => self.name(l, i, Ns::ClassPermissions),
            None => {}
        }
    }

    fn level(&mut self, l: u32, i: usize) {
        match self.arg(l, i) {
            Some(n) if self.tree.is_list(n) => {
                self.name(n, 0, Ns::Sens);
                self.set_expr(n, 1, Ns::Cats);
            }
            Some(_) => self.name(l, i, Ns::Levels),
            None => {}
        }
    }

    fn range(&mut self, l: u32, i: usize) {
        match self.arg(l, i) {
            Some(n) if self.tree.is_list(n) => {
                self.level(n, 0);
                self.level(n, 1);
            }
            Some(_) => self.name(l, i, Ns::LevelRanges),
            None => {}
        }
    }

    fn context(&mut self, l: u32, i: usize) {
        match self.arg(l, i) {
            Some(n) if self.tree.is_list(n) => {
                self.name(n, 0, Ns::Users);
                self.name(n, 1, Ns::Roles);
                self.name(n, 2, Ns::Types);
                self.range(n, 3);
            }
            Some(_) => self.name(l, i, Ns::Contexts),
            None => {}
        }
    }

    fn permx(&mut self, l: u32, i: usize) {
        match self.arg(l, i) {
            Some(n) if self.tree.is_list(n) => self.name(n, 1, Ns::Classes),
            Some(_) => self.name(l, i, Ns::PermissionX),
            None => {}
        }
    }

    fn ipaddr(&mut self, l: u32, i: usize) {
        if let Some(n) = self.arg(l, i) {
            if !self.tree.is_list(n) {
                self.name(l, i, Ns::IpAddrs);
            }
        }
    }

    fn names_or_list(&mut self, l: u32, i: usize, ns: Ns) {
        match self.arg(l, i) {
            Some(n) if self.tree.is_list(n) => {
                for j in 0..self.tree.kids(n).len() {
                    let k = self.tree.kids(n)[j];
                    if !(ns == Ns::Classes && self.tree.sym(k) == Some(Kw::Unordered.sym())) {
                        self.name(n, j, ns);
                    }
                }
            }
            Some(_) => self.name(l, i, ns),
            None => {}
        }
    }

    fn constraint(&mut self, l: u32, i: usize) {
        let Some(n) = self.arg(l, i) else {
            return;
        };
        let mut stack = vec![n];
        while let Some(x) = stack.pop() {
            let k = self.tree.kids(x);
            let op = k.first().and_then(|&y| self.tree.sym(y)).and_then(Kw::of);
            match op {
                Some(Kw::And | Kw::Or) if k.len() == 3 => {
                    stack.push(k[1]);
                    stack.push(k[2]);
                }
                Some(Kw::Not) if k.len() == 2 => stack.push(k[1]),
                Some(Kw::Eq | Kw::Neq | Kw::Dom | Kw::Domby | Kw::Incomp) if k.len() == 3 => {
                    let ns = match self.tree.sym(k[1]).and_then(Kw::of) {
                        Some(Kw::U1 | Kw::U2 | Kw::U3) => Ns::Users,
                        Some(Kw::R1 | Kw::R2 | Kw::R3) => Ns::Roles,
                        Some(Kw::T1 | Kw::T2 | Kw::T3) => Ns::Types,
                        _ => continue,
                    };
                    let right = self.tree.sym(k[2]).and_then(Kw::of);
                    if matches!(
                        right,
                        Some(
                            Kw::U1
                                | Kw::U2
                                | Kw::U3
                                | Kw::R1
                                | Kw::R2
                                | Kw::R3
                                | Kw::T1
                                | Kw::T2
                                | Kw::T3
                        )
                    ) {
                        continue;
                    }
                    self.names_or_list(x, 2, ns);
                }
                _ => {}
            }
        }
    }

    /// Records the edits of statement node `l` (keyword `kw`, declaring in `prefix`).
    fn statement(&mut self, kw: Kw, l: u32, prefix: &[u8]) {
        let n = self.tree.kids(l).len();
        use Ns::*;
        match kw {
            Kw::Allow | Kw::AuditAllow | Kw::DontAudit | Kw::NeverAllow => {
                self.name(l, 1, Types);
                self.type_or_self(l, 2);
                self.classperms(l, 3);
            }
            Kw::AllowX | Kw::AuditAllowX | Kw::DontAuditX | Kw::NeverAllowX => {
                self.name(l, 1, Types);
                self.type_or_self(l, 2);
                self.permx(l, 3);
            }
            Kw::TypeTransition | Kw::TypeChange | Kw::TypeMember => {
                self.name(l, 1, Types);
                self.type_or_self(l, 2);
                self.name(l, 3, Classes);
                if n >= 5 {
                    self.name(l, n - 1, Types);
                }
                if n == 6 {
                    self.string_param(l, 4);
                }
            }
            Kw::TypeAttributeSet => {
                self.name(l, 1, Types);
                self.set_expr(l, 2, Types);
            }
            Kw::TypeAliasActual | Kw::TypeBounds => {
                self.name(l, 1, Types);
                self.name(l, 2, Types);
            }
            Kw::TypePermissive => self.name(l, 1, Types),
            Kw::ExpandTypeAttribute => self.set_expr(l, 1, Types),
            Kw::RoleType => {
                self.name(l, 1, Roles);
                self.name(l, 2, Types);
            }
            Kw::RoleAttributeSet => {
                self.name(l, 1, Roles);
                self.set_expr(l, 2, Roles);
            }
            Kw::RoleAllow | Kw::RoleBounds => {
                self.name(l, 1, Roles);
                self.name(l, 2, Roles);
            }
            Kw::RoleTransition => {
                self.name(l, 1, Roles);
                self.name(l, 2, Types);
                self.name(l, 3, Classes);
                self.name(l, 4, Roles);
            }
            Kw::UserRole => {
                self.name(l, 1, Users);
                self.name(l, 2, Roles);
            }
            Kw::UserLevel => {
                self.name(l, 1, Users);
                self.level(l, 2);
            }
            Kw::UserRange => {
                self.name(l, 1, Users);
                self.range(l, 2);
            }
            Kw::UserBounds => {
                self.name(l, 1, Users);
                self.name(l, 2, Users);
            }
            Kw::UserPrefix => self.name(l, 1, Users),
            Kw::UserAttributeSet => {
                self.name(l, 1, Users);
                self.set_expr(l, 2, Users);
            }
            Kw::SelinuxUser => {
                self.name(l, 2, Users);
                self.range(l, 3);
            }
            Kw::SelinuxUserDefault => {
                self.name(l, 1, Users);
                self.range(l, 2);
            }
            Kw::ClassCommon => {
                self.name(l, 1, Classes);
                self.name(l, 2, Commons);
            }
            Kw::ClassOrder => self.names_or_list(l, 1, Classes),
            Kw::SidOrder => self.names_or_list(l, 1, Sids),
            Kw::SensitivityOrder => self.names_or_list(l, 1, Sens),
            Kw::CategoryOrder => self.names_or_list(l, 1, Cats),
            Kw::ClassMapping => {
                self.name(l, 1, Classes);
                self.classperms(l, 3);
            }
            Kw::ClassPermissionSet => {
                self.name(l, 1, ClassPermissions);
                self.classperms(l, 2);
            }
            Kw::SidContext => {
                self.name(l, 1, Sids);
                self.context(l, 2);
            }
            Kw::SensitivityCategory => {
                self.name(l, 1, Sens);
                self.set_expr(l, 2, Cats);
            }
            Kw::SensitivityAliasActual => {
                self.name(l, 1, Sens);
                self.name(l, 2, Sens);
            }
            Kw::CategoryAliasActual => {
                self.name(l, 1, Cats);
                self.name(l, 2, Cats);
            }
            // A tunableif left in the statements is one `-P` made a booleanif.
            Kw::BooleanIf | Kw::TunableIf => self.bool_expr(l, 1),
            Kw::RangeTransition => {
                self.name(l, 1, Types);
                self.type_or_self(l, 2);
                self.name(l, 3, Classes);
                self.range(l, 4);
            }
            Kw::Constrain | Kw::MlsConstrain => {
                self.classperms(l, 1);
                self.constraint(l, 2);
            }
            Kw::ValidateTrans | Kw::MlsValidateTrans => {
                self.name(l, 1, Classes);
                self.constraint(l, 2);
            }
            Kw::FileCon | Kw::PortCon | Kw::FsUse | Kw::IbPkeyCon | Kw::IbEndportCon => {
                self.context(l, 3)
            }
            Kw::GenfsCon if n >= 2 => self.context(l, n - 1),
            Kw::NetifCon => {
                self.context(l, 2);
                self.context(l, 3);
            }
            Kw::NodeCon => {
                self.ipaddr(l, 1);
                self.ipaddr(l, 2);
                self.context(l, 3);
            }
            Kw::DefaultUser | Kw::DefaultRole | Kw::DefaultType | Kw::DefaultRange => {
                self.names_or_list(l, 1, Classes)
            }
            _ => {}
        }
        // Declarations: the declared name becomes the qualified one, and the value part of
        // the named forms is resolved like the anonymous ones.
        let declares = matches!(kw, named_declaration_kws!() | Kw::Tunable);
        if declares && !prefix.is_empty() {
            if let Some(s) = self.arg(l, 1).and_then(|x| self.tree.sym(x)) {
                self.buf.clear();
                self.buf.extend_from_slice(prefix);
                self.buf.push(b'.');
                self.buf.extend_from_slice(self.int.bytes(s));
                if let Some(q) = self.int.get(&self.buf) {
                    self.edits.push((l, 1, q | ATOM));
                }
            }
        }
        match kw {
            Kw::CategorySet => self.set_expr(l, 2, Ns::Cats),
            Kw::Level => self.level(l, 2),
            Kw::LevelRange => self.range(l, 2),
            Kw::Context => self.context(l, 2),
            Kw::PermissionX => self.permx(l, 2),
            _ => {}
        }
    }
}

/// The lookup plan from `scope` (see [`Ast::table_chain`]; a macro call's body first
/// looks at what the macro declares, then at the arguments), into `out` (cleared
/// first), with `stack` as scratch.
fn plan_into(ast: &Ast, scope: u32, out: &mut Vec<Step>, stack: &mut Vec<u32>) {
    out.clear();
    stack.clear();
    stack.push(scope);
    let mut steps = 0usize;
    while let Some(s) = stack.pop() {
        steps += 1;
        if s == NONE || steps > MAX_STEPS {
            continue;
        }
        let sc = &ast.scopes[s as usize];
        if sc.call != NONE {
            out.push(Step::CallDecl(sc.call));
            out.push(Step::Args(sc.call));
            stack.push(sc.parent);
            stack.push(ast.calls[sc.call as usize].macro_scope);
        } else if sc.orig != NONE {
            stack.push(sc.orig);
            stack.push(sc.parent);
        } else {
            if !sc.abs && !sc.prefix.is_empty() {
                out.push(Step::Table(s));
            }
            stack.push(sc.parent);
        }
    }
}

/// Resolves every call's arguments from the call's place (calls in walk order: a call in
/// a macro body comes after the call that walked it, whose arguments it may use).
fn resolve_args(
    tree: &mut Tree,
    int: &Interner,
    ast: &mut Ast,
    live: Option<&[bool]>,
    into: &[Cell<bool>],
) -> Result<(), Fail> {
    // One set of buffers for every argument's short-lived `Q` (each needed a handful of
    // allocations: 1,700 arguments on `bench.cil`).
    let mut bufs = QBuffers::default();
    let mut scratch = CopyScratch::default();
    // The arguments of the call at hand (the loop below adds lists to the tree).
    let mut args = Vec::new();
    for c in 0..ast.calls.len() {
        let call = &ast.calls[c];
        args.clear();
        args.extend_from_slice(call.args(tree));
        let list = tree.kids(ast.stmts[call.stmt as usize].node)[2..]
            .first()
            .copied()
            .unwrap_or(NONE);
        let mut resolved = Vec::with_capacity(args.len());
        for (k, (&arg, &(ns, _))) in args.iter().zip(call.params.iter()).enumerate() {
            let QBuffers {
                mut chain,
                mut edits,
                buf,
                mut plan_stack,
                walk,
            } = std::mem::take(&mut bufs);
            plan_into(ast, call.caller, &mut chain, &mut plan_stack);
            edits.clear();
            let mut q = Q {
                live,
                into,
                tree: &*tree,
                int,
                ast: &*ast,
                chain,
                edits,
                buf,
                chain_scope: None,
                plan_stack,
                walk,
            };
            let Some(ns) = ns else {
                // A string; the enclosing call's own string parameter passes through.
                let mut v = arg;
                if let Some(sym) = tree.sym(arg) {
                    for &step in &q.chain {
                        if let Step::Args(oc) = step {
                            let outer = &ast.calls[oc as usize];
                            if let Some(j) = outer
                                .params
                                .iter()
                                .position(|&(pns, p)| p == sym && pns.is_none())
                            {
                                v = outer.resolved.get(j).copied().unwrap_or(arg);
                                break;
                            }
                        }
                    }
                }
                bufs = q.into_buffers();
                resolved.push(v);
                continue;
            };
            let at = || tree.node(ast.stmts[call.stmt as usize].node).line();
            if !tree.is_list(arg) {
                let sym = tree.sym(arg).unwrap_or(0);
                let found = q.find(ns, sym);
                let global = q.declared(ns, sym);
                bufs = q.into_buffers();
                if ns == Ns::IpAddrs && found.is_none() && !global {
                    // Not an ipaddr's name: an address, passed as an anonymous ipaddr.
                    let line = at();
                    resolved.push(tree.push_list(line, &[arg]));
                    continue;
                }
                resolved.push(found.unwrap_or(arg));
                continue;
            }
            if ns == Ns::IpAddrs {
                return Err(Fail::bad(vec![
                    format!("Invalid macro parameter at line {}", at()),
                    "Failed to resolve AST".into(),
                    "Failed to compile cildb: -1".into(),
                ]));
            }
            match ns {
                Ns::Cats => q.set_expr(list, k, Ns::Cats),
                Ns::Levels => q.level(list, k),
                Ns::LevelRanges => q.range(list, k),
                Ns::ClassPermissions => q.classperms(list, k),
                _ => {
                    return Err(Fail::bad(vec![format!(
                        "Invalid anonymous argument to call at {}",
                        tree.node(ast.stmts[call.stmt as usize].node).line()
                    )]))
                }
            }
            bufs = q.into_buffers();
            resolved.push(copy_with(tree, arg, &bufs.edits, &mut scratch));
        }
        ast.calls[c].resolved = resolved;
    }
    Ok(())
}

/// Whether qualifying again for the optionals `live` leaves (after the last [`qualify`])
/// could change a name: only when one of them found a declaration in an optional that is
/// no longer live. Lookups that found nothing find nothing with fewer optionals, and
/// lookups that found a declaration outside the disabled optionals find the same one.
pub fn needs_requalify(ast: &Ast, live: &[bool]) -> bool {
    ast.qualified_into
        .iter()
        .zip(live)
        .any(|(&into, &live)| into && !live)
}

/// Rewrites the statements that sit in blocks (see the module doc).
pub fn qualify(
    tree: &mut Tree,
    int: &Interner,
    ast: &mut Ast,
    live: Option<&[bool]>,
) -> Result<(), Fail> {
    if ast.scopes.is_empty() {
        return Ok(());
    }
    let mut into = std::mem::take(&mut ast.qualified_into);
    into.clear();
    into.resize(ast.optionals.len(), false);
    let into_cells = Cell::from_mut(&mut into[..]).as_slice_of_cells();
    resolve_args(tree, int, ast, live, into_cells)?;
    // Edits of every statement in one list: (statement, end of its edits in `edits`).
    let mut edited: Vec<(u32, usize)> = Vec::new();
    let mut edits: Vec<Edit> = Vec::new();
    {
        let mut q = Q {
            live,
            into: into_cells,
            tree: &*tree,
            int,
            ast,
            chain: Vec::new(),
            edits: Vec::new(),
            buf: Vec::new(),
            chain_scope: None,
            plan_stack: Vec::new(),
            walk: Vec::new(),
        };
        // Statements outside blocks can only name `.name` (from the top): without such a
        // name in the input they stay as written, and are not visited (most of a
        // policy's statements sit outside blocks even when it has some).
        let dotted = (0..int.len() as Sym).any(|s| int.bytes(s).first() == Some(&b'.'));
        for s in 0..ast.stmts.len() {
            let st = ast.stmts[s];
            if st.scope == NONE && !dotted {
                continue;
            }
            q.set_chain(st.scope);
            q.edits.clear();
            let prefix: &[u8] = match st.scope {
                NONE => &[],
                sc => &ast.scopes[sc as usize].prefix,
            };
            q.statement(st.kw, st.node, prefix);
            if !q.edits.is_empty() {
                edits.extend_from_slice(&q.edits);
                edited.push((s as u32, edits.len()));
            }
        }
    }
    ast.qualified_into = into;
    let mut scratch = CopyScratch::default();
    let mut start = 0;
    for (s, end) in edited {
        let node = ast.stmts[s as usize].node;
        ast.stmts[s as usize].node = copy_with(tree, node, &edits[start..end], &mut scratch);
        start = end;
    }
    // `classcommon` is kept by class name: again, by the qualified names.
    ast.class_common.clear();
    for (i, st) in ast.stmts.iter().enumerate() {
        if st.kw == Kw::ClassCommon {
            let k = tree.kids(st.node);
            if let (Some(c), Some(m)) = (
                k.get(1).and_then(|&x| tree.sym(x)),
                k.get(2).and_then(|&x| tree.sym(x)),
            ) {
                ast.class_common.entry(c).or_insert((i as u32, m));
            }
        }
    }
    Ok(())
}

/// Buffers [`copy_with`] reuses from one statement to the next.
#[derive(Default)]
struct CopyScratch {
    /// The statement's lists in pre-order: (list, position of its parent list here, its
    /// index among the parent's elements, its copy or [`NONE`] while shared).
    lists: Vec<(u32, u32, u32, u32)>,
    /// Positions in `lists` whose elements are still to enter.
    stack: Vec<u32>,
    /// Positions in `lists` on the way up to a copied list ([`copy_path`]).
    up: Vec<usize>,
}

/// A copy of statement `root` with `edits` applied: the lists on the way from the root
/// to an edited list are copied, every other list is shared with the original (no pass
/// writes into a list after this one, and `st.src` keeps the original for a later round).
fn copy_with(tree: &mut Tree, root: u32, edits: &[Edit], scratch: &mut CopyScratch) -> u32 {
    // Mostly the statement's own names change (a rule's source and target): one copy.
    if !edits.is_empty() && edits.iter().all(|&(l, ..)| l == root) {
        let new = tree.copy_list(root);
        let a = tree.node(new).a as usize;
        for &(_, i, sym) in edits {
            tree.kids[a + i] = sym;
        }
        return new;
    }
    let CopyScratch { lists, stack, up } = scratch;
    lists.clear();
    stack.clear();
    // The order of the full copy this replaces (a list is entered when its parent is
    // taken from the stack), so "last place" means what it meant there.
    lists.push((root, NONE, 0, NONE));
    stack.push(0);
    while let Some(at) = stack.pop() {
        let l = lists[at as usize].0;
        for (j, &k) in tree.kids(l).iter().enumerate() {
            if tree.is_list(k) {
                stack.push(lists.len() as u32);
                lists.push((k, at, j as u32, NONE));
            }
        }
    }
    for &(l, i, sym) in edits {
        // Statements hold a handful of lists: a scan beats hashing. A list that occurs
        // twice (a shared anonymous argument) is edited in its last place.
        let Some(at) = lists.iter().rposition(|&(o, ..)| o == l) else {
            continue;
        };
        let new = copy_path(tree, lists, up, at);
        let a = tree.node(new).a as usize;
        tree.kids[a + i] = sym;
    }
    match lists.first() {
        Some(&(_, _, _, new)) if new != NONE => new,
        _ => root,
    }
}

/// The copy of `lists[at]`, made (with the copies of its parents, each patched to hold
/// the next) when it has none yet.
fn copy_path(
    tree: &mut Tree,
    lists: &mut [(u32, u32, u32, u32)],
    up: &mut Vec<usize>,
    at: usize,
) -> u32 {
    // Up to the first list already copied (or past the root), then copies downward.
    let mut top = at;
    up.clear();
    while lists[top].3 == NONE {
        up.push(top);
        match lists[top].1 {
            NONE => break,
            p => top = p as usize,
        }
    }
    for &pos in up.iter().rev() {
        let (old, parent, slot, _) = lists[pos];
        let c = tree.copy_list(old);
        lists[pos].3 = c;
        if parent != NONE {
            let a = tree.node(lists[parent as usize].3).a as usize;
            tree.kids[a + slot as usize] = c;
        }
    }
    lists[at].3
}

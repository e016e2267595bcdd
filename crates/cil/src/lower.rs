//! Lowering: the resolved statements to an [`arbiter_policy::Policy`] in libsepol 3.4's
//! value orders and list orders (cil.md §1, §3), plus the text outputs (§4).

use crate::ast::{Ast, DeclKind, Ns, NONE};
use crate::bits::Bits;
use crate::intern::{FxHashMap, Interner, Sym};
use crate::kw::Kw;
use crate::msort::msort;
use crate::parse::Tree;
use crate::resolve::Resolver;
use crate::{Fail, Options};
use arbiter_policy::avtab::{Avtab, AvtabDatum, AvtabEntry, AvtabKey, AvtabKind};
use arbiter_policy::cond::{CondExpr, CondNode};
use arbiter_policy::constraint::{attr, Constraint, ConstraintExpr, ConstraintOp, TypeSet};
use arbiter_policy::mls::{Context, MlsLevel, MlsRange};
use arbiter_policy::ocontext::{FsUse, FsUseBehavior, GenfsCon, InitialSid, OContexts, PortCon};
use arbiter_policy::symbols::{
    Bool, Category, Class, Common, MlsAlias, Perm, Role, Sensitivity, TypeAlias, TypeDatum,
    TypeFlavor, User,
};
use arbiter_policy::transitions::{FilenameTrans, RangeTrans, RoleAllow, RoleTrans};
use arbiter_policy::{ClassId, Ebitmap, HandleUnknown, Policy, RoleId, TypeId, UserId};
use std::cmp::Ordering;

/// Attribute-in-attribute nesting accepted (real policies nest a handful deep).
const MAX_ATTR_DEPTH: u32 = 4096;

/// The symbol of a list where a name was expected: no declaration has it.
const NOSYM: Sym = u32::MAX;

/// Attribute usage marks (libsepol's `CIL_ATTR_*`).
const USED_AVRULE: u8 = 1;
const USED_NEVERALLOW: u8 = 2;
const USED_CONSTRAINT: u8 = 4;
const USED_EXPAND_TRUE: u8 = 8;
const USED_EXPAND_FALSE: u8 = 16;

/// A name in the types namespace, resolved.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum TRef {
    Type(u32),
    Attr(u32),
    SelfT,
}

/// A resolved level: sensitivity order position and category positions (ascending).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Lvl {
    sens: u32,
    cats: Vec<u32>,
}

#[derive(Clone, Debug)]
struct Ctx {
    user: u32,
    role: u32,
    ty: u32,
    range: (Lvl, Lvl),
}

pub struct Lowered {
    pub policy: Policy,
    pub file_contexts: Vec<u8>,
    pub seusers: Vec<u8>,
    pub users_extra: Vec<u8>,
}

struct L<'a> {
    t: &'a Tree,
    int: &'a Interner,
    ast: &'a Ast,
    r: &'a Resolver<'a>,
    names: &'a [String],
    opts: &'a Options,
    live: Vec<u32>,
    /// Per decl: internal index (types, attributes, roles, role attributes, users, bools,
    /// classes' order position, sens/cat order position).
    dint: Vec<u32>,
    types: Vec<u32>,
    attrs: Vec<u32>,
    attr_members: Vec<Option<Bits>>,
    attr_busy: Vec<bool>,
    attr_exprs: Vec<Vec<u32>>,
    attr_used: Vec<u8>,
    attr_val: Vec<u32>,
    type_val: Vec<u32>,
    alias_actual: FxHashMap<u32, u32>,
    roles: Vec<u32>,
    rattrs: Vec<u32>,
    rattr_members: Vec<Option<Bits>>,
    rattr_exprs: Vec<Vec<u32>>,
    uattrs: Vec<u32>,
    uattr_members: Vec<Option<Bits>>,
    uattr_exprs: Vec<Vec<u32>>,
    role_val: Vec<u32>,
    users: Vec<u32>,
    bools: Vec<u32>,
    classes: Vec<u32>,
    class_common: Vec<Option<u32>>,
    /// Per (class declaration, permission name): its bit, as [`L::perm_bit_slow`] finds it
    /// (class permissions first, then the common's); filled once the classes are ordered,
    /// so the 180,000 permission lists of a distribution policy cost one probe a name.
    perm_bits: FxHashMap<(u32, Sym), u32>,
    commons: Vec<u32>,
    sens: Vec<u32>,
    cats: Vec<u32>,
    mls: bool,
    /// `classpermissionset` bodies per classpermission, `classmapping` bodies per
    /// (classmap, map permission), in statement order.
    cp_sets: FxHashMap<u32, Vec<u32>>,
    /// Reused buffers of the av-rule loop (one allocation for 200,000 rules).
    cp_buf: Vec<(u32, u32)>,
    src_buf: Vec<u32>,
    tgt_buf: Vec<u32>,
    map_sets: FxHashMap<(u32, Sym), Vec<u32>>,
    /// How many attribute evaluations are open (bounded: attribute chains are as long as
    /// the input makes them, and evaluation recurses).
    attr_depth: u32,
    /// The statement being lowered, and every context it used (verified afterwards, as
    /// libsepol's `__cil_verify_context` does).
    cur_stmt: std::cell::Cell<u32>,
    ctx_log: std::cell::RefCell<Vec<(u32, Ctx)>>,
    /// Per symbol: what [`L::tref`] found for it, once every type value is known
    /// (`Type(i)` as `i + 1`, `Attr(a)` as `a | 1 << 31`, 0 not yet looked up); empty
    /// until then. A name is looked up once instead of once per rule that uses it.
    tref_memo: Vec<std::cell::Cell<u32>>,
}

fn err(m: String) -> Fail {
    Fail::bad(vec![m])
}

impl<'a> L<'a> {
    fn here(&self, s: u32) -> String {
        let st = self.ast.stmts[s as usize];
        crate::ast::loc(self.t, self.names, st.file, st.node)
    }
    fn args(&self, s: u32) -> &'a [u32] {
        self.t.kids(self.ast.stmts[s as usize].node)
    }
    /// The symbol of an atom; a list gives a symbol no declaration has, so lookups fail
    /// cleanly on malformed statements.
    fn sym(&self, n: u32) -> Sym {
        self.t.sym(n).unwrap_or(NOSYM)
    }

    /// The bytes of an atom argument (a path, a protocol, a number ...).
    fn atom_bytes(&self, n: u32) -> Result<&'a [u8], Fail> {
        match self.t.sym(n) {
            Some(s) => Ok(self.int.bytes(s)),
            None => Err(err(format!(
                "Invalid syntax: expected a name or value, not a list, at {}",
                self.here(self.cur_stmt.get())
            ))),
        }
    }

    fn atom_sym(&self, n: u32) -> Result<Sym, Fail> {
        self.t.sym(n).ok_or_else(|| {
            err(format!(
                "Invalid syntax: expected a name or value, not a list, at {}",
                self.here(self.cur_stmt.get())
            ))
        })
    }
    fn look(&self, ns: Ns, n: u32) -> Result<u32, Fail> {
        let s = self.sym(n);
        self.r.lookup(ns, s).ok_or_else(|| {
            let name = if s == NOSYM {
                "(a list)".into()
            } else {
                self.int.str(s).into_owned()
            };
            err(format!(
                "Unresolved name {name} at {}",
                self.here(self.cur_stmt.get())
            ))
        })
    }
    fn kind(&self, d: u32) -> DeclKind {
        self.ast.decls[d as usize].kind
    }
    fn name(&self, d: u32) -> String {
        self.int.str(self.ast.decls[d as usize].name).into_owned()
    }

    fn tref(&self, n: u32) -> Result<TRef, Fail> {
        if self.t.sym(n) == Some(Kw::SelfKw.sym()) {
            return Ok(TRef::SelfT);
        }
        const ATTR: u32 = 1 << 31;
        let memo = self.t.sym(n).and_then(|s| self.tref_memo.get(s as usize));
        match memo.map(|m| m.get()) {
            Some(0) | None => {}
            Some(v) if v & ATTR != 0 => return Ok(TRef::Attr(v & !ATTR)),
            Some(v) => return Ok(TRef::Type(v - 1)),
        }
        let r = self.tref_lookup(n)?;
        if let Some(m) = memo {
            match r {
                TRef::Type(i) if i < ATTR - 1 => m.set(i + 1),
                TRef::Attr(a) if a < ATTR => m.set(a | ATTR),
                _ => {}
            }
        }
        Ok(r)
    }

    /// [`L::tref`] without the memo.
    fn tref_lookup(&self, n: u32) -> Result<TRef, Fail> {
        let mut d = self.look(Ns::Types, n)?;
        if self.kind(d) == DeclKind::TypeAlias {
            d = *self
                .alias_actual
                .get(&d)
                .ok_or_else(|| err(format!("Alias {} was not bound to a type", self.name(d))))?;
        }
        Ok(match self.kind(d) {
            DeclKind::TypeAttribute => TRef::Attr(self.dint[d as usize]),
            _ => TRef::Type(self.dint[d as usize]),
        })
    }

    /// Members of attribute `a` (internal type indices), evaluated on first use.
    fn members(&mut self, a: u32) -> Result<Bits, Fail> {
        self.ensure_members(a)?;
        Ok(self.attr_members[a as usize].clone().unwrap_or_default())
    }

    /// Evaluates attribute `a`'s members once (kept in `attr_members`), without a copy.
    fn ensure_members(&mut self, a: u32) -> Result<(), Fail> {
        if self.attr_members[a as usize].is_some() {
            return Ok(());
        }
        if self.attr_busy[a as usize] {
            return Err(err(format!(
                "Self-reference found for {}",
                self.name(self.attrs[a as usize])
            )));
        }
        self.attr_depth += 1;
        if self.attr_depth > MAX_ATTR_DEPTH {
            return Err(err(format!(
                "Attribute {} is nested more than {MAX_ATTR_DEPTH} attributes deep",
                self.name(self.attrs[a as usize])
            )));
        }
        self.attr_busy[a as usize] = true;
        let mut acc = Bits::new(self.types.len());
        for i in 0..self.attr_exprs[a as usize].len() {
            let e = self.attr_exprs[a as usize][i];
            self.type_expr_or(e, &mut acc)?;
        }
        self.attr_busy[a as usize] = false;
        self.attr_depth -= 1;
        self.attr_members[a as usize] = Some(acc);
        Ok(())
    }

    /// ORs the types of expression `n` into `acc`: names and plain lists add in place
    /// (an attribute's set is read, not copied); operators evaluate into a new set.
    fn type_expr_or(&mut self, n: u32, acc: &mut Bits) -> Result<(), Fail> {
        if !self.t.is_list(n) {
            match self.tref(n)? {
                TRef::Type(i) => acc.set(i as usize),
                TRef::Attr(a) => {
                    self.ensure_members(a)?;
                    if let Some(m) = &self.attr_members[a as usize] {
                        acc.or(m);
                    }
                }
                TRef::SelfT => return Err(err("self in a type expression".into())),
            }
            return Ok(());
        }
        let k = self.t.kids(n);
        let op = k.first().and_then(|&x| self.t.sym(x)).and_then(Kw::of);
        match op {
            Some(Kw::All) | Some(Kw::Not | Kw::And | Kw::Or | Kw::Xor) => {
                let b = self.type_expr(n)?;
                acc.or(&b);
            }
            _ => {
                for &x in k {
                    self.type_expr_or(x, acc)?;
                }
            }
        }
        Ok(())
    }

    fn type_expr(&mut self, n: u32) -> Result<Bits, Fail> {
        let nt = self.types.len();
        if !self.t.is_list(n) {
            return match self.tref(n)? {
                TRef::Type(i) => {
                    let mut b = Bits::new(nt);
                    b.set(i as usize);
                    Ok(b)
                }
                TRef::Attr(a) => self.members(a),
                TRef::SelfT => Err(err("self in a type expression".into())),
            };
        }
        let k = self.t.kids(n);
        let op = k.first().and_then(|&x| self.t.sym(x)).and_then(Kw::of);
        match op {
            Some(Kw::All) => Ok(Bits::all(nt)),
            Some(Kw::Not) if k.len() == 2 => {
                let mut b = self.type_expr(k[1])?;
                b.not(nt);
                Ok(b)
            }
            Some(o @ (Kw::And | Kw::Or | Kw::Xor)) if k.len() == 3 => {
                let mut a = self.type_expr(k[1])?;
                let b = self.type_expr(k[2])?;
                match o {
                    Kw::And => a.and(&b),
                    Kw::Or => a.or(&b),
                    _ => a.xor(&b),
                }
                Ok(a)
            }
            _ => {
                let mut acc = Bits::new(nt);
                for &x in k {
                    self.type_expr_or(x, &mut acc)?;
                }
                Ok(acc)
            }
        }
    }

    fn role_members(&mut self, a: u32) -> Result<Bits, Fail> {
        if let Some(b) = &self.rattr_members[a as usize] {
            return Ok(b.clone());
        }
        let mut acc = Bits::new(self.roles.len());
        self.rattr_members[a as usize] = Some(acc.clone());
        self.attr_depth += 1;
        if self.attr_depth > MAX_ATTR_DEPTH {
            return Err(err(format!(
                "Role attribute {} is nested more than {MAX_ATTR_DEPTH} attributes deep",
                self.name(self.rattrs[a as usize])
            )));
        }
        for e in self.rattr_exprs[a as usize].clone() {
            let b = self.role_expr(e)?;
            acc.or(&b);
        }
        self.attr_depth -= 1;
        self.rattr_members[a as usize] = Some(acc.clone());
        Ok(acc)
    }

    fn role_expr(&mut self, n: u32) -> Result<Bits, Fail> {
        let nr = self.roles.len();
        if !self.t.is_list(n) {
            let d = self.look(Ns::Roles, n)?;
            return if self.kind(d) == DeclKind::RoleAttribute {
                self.role_members(self.dint[d as usize])
            } else {
                let mut b = Bits::new(nr);
                b.set(self.dint[d as usize] as usize);
                Ok(b)
            };
        }
        let k = self.t.kids(n);
        let op = k.first().and_then(|&x| self.t.sym(x)).and_then(Kw::of);
        match op {
            Some(Kw::All) => Ok(Bits::all(nr)),
            Some(Kw::Not) if k.len() == 2 => {
                let mut b = self.role_expr(k[1])?;
                b.not(nr);
                Ok(b)
            }
            Some(o @ (Kw::And | Kw::Or | Kw::Xor)) if k.len() == 3 => {
                let mut a = self.role_expr(k[1])?;
                let b = self.role_expr(k[2])?;
                match o {
                    Kw::And => a.and(&b),
                    Kw::Or => a.or(&b),
                    _ => a.xor(&b),
                }
                Ok(a)
            }
            _ => {
                let mut acc = Bits::new(nr);
                for &x in k {
                    let b = self.role_expr(x)?;
                    acc.or(&b);
                }
                Ok(acc)
            }
        }
    }

    /// A name that must be a user (not a user attribute): its declaration.
    fn user_decl(&self, n: u32) -> Result<u32, Fail> {
        let d = self.look(Ns::Users, n)?;
        if self.kind(d) != DeclKind::User {
            return Err(err(format!(
                "{} is a user attribute, not a user, at {}",
                self.name(d),
                self.here(self.cur_stmt.get())
            )));
        }
        Ok(d)
    }

    /// The users a user or user attribute stands for (bits = user index).
    fn user_set(&mut self, n: u32) -> Result<Bits, Fail> {
        let d = self.look(Ns::Users, n)?;
        if self.kind(d) == DeclKind::UserAttribute {
            return self.uattr_members(self.dint[d as usize]);
        }
        let mut b = Bits::new(self.users.len());
        b.set(self.dint[d as usize] as usize);
        Ok(b)
    }

    fn uattr_members(&mut self, a: u32) -> Result<Bits, Fail> {
        if let Some(b) = &self.uattr_members[a as usize] {
            return Ok(b.clone());
        }
        let nu = self.users.len();
        let mut acc = Bits::new(nu);
        self.uattr_members[a as usize] = Some(acc.clone());
        self.attr_depth += 1;
        if self.attr_depth > MAX_ATTR_DEPTH {
            return Err(err(format!(
                "User attribute {} is nested more than {MAX_ATTR_DEPTH} attributes deep",
                self.name(self.uattrs[a as usize])
            )));
        }
        for e in self.uattr_exprs[a as usize].clone() {
            let b = self.user_expr(e)?;
            acc.or(&b);
        }
        self.attr_depth -= 1;
        self.uattr_members[a as usize] = Some(acc.clone());
        Ok(acc)
    }

    fn user_expr(&mut self, n: u32) -> Result<Bits, Fail> {
        let nu = self.users.len();
        if !self.t.is_list(n) {
            return self.user_set(n);
        }
        let k = self.t.kids(n);
        let op = k.first().and_then(|&x| self.t.sym(x)).and_then(Kw::of);
        match op {
            Some(Kw::All) => Ok(Bits::all(nu)),
            Some(Kw::Not) if k.len() == 2 => {
                let mut b = self.user_expr(k[1])?;
                b.not(nu);
                Ok(b)
            }
            Some(o @ (Kw::And | Kw::Or | Kw::Xor)) if k.len() == 3 => {
                let mut a = self.user_expr(k[1])?;
                let b = self.user_expr(k[2])?;
                match o {
                    Kw::And => a.and(&b),
                    Kw::Or => a.or(&b),
                    _ => a.xor(&b),
                }
                Ok(a)
            }
            _ => {
                let mut acc = Bits::new(nu);
                for &x in k {
                    acc.or(&self.user_expr(x)?);
                }
                Ok(acc)
            }
        }
    }

    /// Role values a role name stands for (attributes expanded), ascending internal order.
    fn role_vals(&mut self, n: u32) -> Result<Vec<u32>, Fail> {
        let b = self.role_expr(n)?;
        Ok(b.iter().map(|i| self.role_val[i]).collect())
    }

    /// Sepol values a type name stands for when fully expanded.
    fn expand_all(&mut self, r: TRef) -> Result<Vec<u32>, Fail> {
        Ok(match r {
            TRef::Type(i) => vec![self.type_val[i as usize]],
            TRef::Attr(a) => {
                if self.attr_members[a as usize].is_none() {
                    self.ensure_members(a)?;
                }
                match &self.attr_members[a as usize] {
                    Some(m) => m.iter().map(|i| self.type_val[i]).collect(),
                    None => vec![],
                }
            }
            TRef::SelfT => vec![],
        })
    }

    /// [`Self::expand_all`] into a reused buffer.
    fn expand_all_into(&mut self, r: TRef, out: &mut Vec<u32>) -> Result<(), Fail> {
        out.clear();
        match r {
            TRef::Type(i) => out.push(self.type_val[i as usize]),
            TRef::Attr(a) => {
                if self.attr_members[a as usize].is_none() {
                    self.ensure_members(a)?;
                }
                if let Some(m) = &self.attr_members[a as usize] {
                    out.extend(m.iter().map(|i| self.type_val[i]));
                }
            }
            TRef::SelfT => {}
        }
        Ok(())
    }

    /// [`Self::expand_av`] into a reused buffer.
    fn expand_av_into(&mut self, r: TRef, out: &mut Vec<u32>) -> Result<(), Fail> {
        if let TRef::Attr(a) = r {
            // A kept attribute with fewer members than -X is still expanded
            // (`__cil_should_expand_attribute`): an empty one gives no rule at all.
            if self.attr_val[a as usize] != 0
                && self.members(a)?.count() >= self.opts.expand_size as usize
            {
                out.clear();
                out.push(self.attr_val[a as usize]);
                return Ok(());
            }
        }
        self.expand_all_into(r, out)
    }

    /// Sepol values for an av rule side: kept attributes stay, others expand.
    fn expand_av(&mut self, r: TRef) -> Result<Vec<u32>, Fail> {
        let mut out = Vec::new();
        self.expand_av_into(r, &mut out)?;
        Ok(out)
    }

    fn class_of(&self, n: u32) -> Result<u32, Fail> {
        let d = self.look(Ns::Classes, n)?;
        Ok(self.dint[d as usize])
    }

    /// `(class (perms))` → list of (class position, perm bits).
    fn classperms(&mut self, n: u32) -> Result<Vec<(u32, u32)>, Fail> {
        let mut out = vec![];
        self.classperms_into(n, 0, &mut out)?;
        Ok(out)
    }

    /// Expands class permissions: `(class (perms))`, a `classpermission` name (its sets in
    /// order), or `(classmap (mapperms))` (each map permission's mappings in order).
    fn classperms_into(
        &mut self,
        n: u32,
        depth: u32,
        out: &mut Vec<(u32, u32)>,
    ) -> Result<(), Fail> {
        if depth > 64 {
            return Err(err("Class permissions nested too deeply".into()));
        }
        if !self.t.is_list(n) {
            let d = self.look(Ns::ClassPermissions, n)?;
            for x in self.cp_sets.get(&d).cloned().unwrap_or_default() {
                self.classperms_into(x, depth + 1, out)?;
            }
            return Ok(());
        }
        let k = self.t.kids(n);
        if k.len() != 2 {
            return Err(err("Invalid class permissions".into()));
        }
        let cd = self.look(Ns::Classes, k[0])?;
        if self.kind(cd) == DeclKind::ClassMap {
            let all = self.ast.perm_lists.get(&cd).cloned().unwrap_or_default();
            let mut wanted = vec![];
            let mut stack = vec![k[1]];
            while let Some(x) = stack.pop() {
                if self.t.is_list(x) {
                    stack.extend(self.t.kids(x).iter().rev());
                } else if self.t.sym(x) == Some(Kw::All.sym()) {
                    wanted.extend(all.iter().copied());
                } else {
                    wanted.push(self.sym(x));
                }
            }
            for p in wanted {
                for x in self.map_sets.get(&(cd, p)).cloned().unwrap_or_default() {
                    self.classperms_into(x, depth + 1, out)?;
                }
            }
            return Ok(());
        }
        let ci = self.dint[cd as usize];
        let bits = self.perm_expr(cd, ci, k[1])?;
        out.push((ci, bits));
        Ok(())
    }

    fn perm_bit(&self, cd: u32, ci: u32, s: Sym) -> Result<u32, Fail> {
        match self.perm_bits.get(&(cd, s)) {
            Some(&b) => Ok(b),
            None => self.perm_bit_slow(cd, ci, s),
        }
    }

    /// A permission's bit found in the class's and its common's lists (the error for a
    /// name in neither).
    fn perm_bit_slow(&self, cd: u32, ci: u32, s: Sym) -> Result<u32, Fail> {
        let common = self.class_common[ci as usize];
        let ncommon = common
            .map(|c| self.ast.perm_lists[&c].len() as u32)
            .unwrap_or(0);
        if let Some(i) = self.ast.perm_index(cd, s) {
            return Ok(1 << (ncommon + i));
        }
        if let Some(c) = common {
            if let Some(i) = self.ast.perm_index(c, s) {
                return Ok(1 << i);
            }
        }
        let shown = if s == NOSYM {
            "(a list)".into()
        } else {
            self.int.str(s).into_owned()
        };
        Err(err(format!("Unknown permission {shown}")))
    }

    fn all_perms(&self, cd: u32, ci: u32) -> u32 {
        let common = self.class_common[ci as usize];
        let ncommon = common
            .map(|c| self.ast.perm_lists[&c].len() as u32)
            .unwrap_or(0);
        let n = ncommon + self.ast.perm_lists[&cd].len() as u32;
        if n >= 32 {
            !0
        } else {
            (1u32 << n) - 1
        }
    }

    fn perm_expr(&self, cd: u32, ci: u32, n: u32) -> Result<u32, Fail> {
        if !self.t.is_list(n) {
            return self.perm_bit(cd, ci, self.sym(n));
        }
        let k = self.t.kids(n);
        let op = k.first().and_then(|&x| self.t.sym(x)).and_then(Kw::of);
        match op {
            Some(Kw::All) => Ok(self.all_perms(cd, ci)),
            Some(Kw::Not) if k.len() == 2 => {
                Ok(!self.perm_expr(cd, ci, k[1])? & self.all_perms(cd, ci))
            }
            Some(o @ (Kw::And | Kw::Or | Kw::Xor)) if k.len() == 3 => {
                let a = self.perm_expr(cd, ci, k[1])?;
                let b = self.perm_expr(cd, ci, k[2])?;
                Ok(match o {
                    Kw::And => a & b,
                    Kw::Or => a | b,
                    _ => a ^ b,
                })
            }
            _ => {
                let mut acc = 0;
                for &x in k {
                    acc |= match self.t.sym(x) {
                        Some(s) => self.perm_bit(cd, ci, s)?,
                        None => self.perm_expr(cd, ci, x)?,
                    };
                }
                Ok(acc)
            }
        }
    }

    fn catset(&self, n: u32) -> Result<Bits, Fail> {
        let nc = self.cats.len();
        if !self.t.is_list(n) {
            let d = self.look(Ns::Cats, n)?;
            let mut b = Bits::new(nc);
            match self.kind(d) {
                DeclKind::CatSet => {
                    let s = self.ast.decls[d as usize].stmt;
                    return self.catset(self.args(s)[2]);
                }
                _ => b.set(self.dint[self.cat_actual(d) as usize] as usize),
            }
            return Ok(b);
        }
        let k = self.t.kids(n);
        let op = k.first().and_then(|&x| self.t.sym(x)).and_then(Kw::of);
        match op {
            Some(Kw::All) => Ok(Bits::all(nc)),
            Some(Kw::Range) if k.len() == 3 => {
                let a = self.dint[self.cat_actual(self.look(Ns::Cats, k[1])?) as usize];
                let b = self.dint[self.cat_actual(self.look(Ns::Cats, k[2])?) as usize];
                let mut r = Bits::new(nc);
                for i in a..=b {
                    r.set(i as usize);
                }
                Ok(r)
            }
            Some(Kw::Not) if k.len() == 2 => {
                let mut b = self.catset(k[1])?;
                b.not(nc);
                Ok(b)
            }
            Some(o @ (Kw::And | Kw::Or | Kw::Xor)) if k.len() == 3 => {
                let mut a = self.catset(k[1])?;
                let b = self.catset(k[2])?;
                match o {
                    Kw::And => a.and(&b),
                    Kw::Or => a.or(&b),
                    _ => a.xor(&b),
                }
                Ok(a)
            }
            _ => {
                let mut acc = Bits::new(nc);
                for &x in k {
                    acc.or(&self.catset(x)?);
                }
                Ok(acc)
            }
        }
    }

    fn cat_actual(&self, d: u32) -> u32 {
        if self.kind(d) == DeclKind::CatAlias {
            self.alias_actual.get(&d).copied().unwrap_or(d)
        } else {
            d
        }
    }
    fn sens_actual(&self, d: u32) -> u32 {
        if self.kind(d) == DeclKind::SensAlias {
            self.alias_actual.get(&d).copied().unwrap_or(d)
        } else {
            d
        }
    }

    fn level(&self, n: u32) -> Result<Lvl, Fail> {
        if !self.t.is_list(n) {
            let d = self.look(Ns::Levels, n)?;
            let s = self.ast.decls[d as usize].stmt;
            return self.level(self.args(s)[2]);
        }
        let k = self.t.kids(n);
        let sd = self.sens_actual(self.look(Ns::Sens, k[0])?);
        let cats = if k.len() == 2 {
            self.catset(k[1])?.iter().map(|c| c as u32).collect()
        } else {
            Vec::new()
        };
        Ok(Lvl {
            sens: self.dint[sd as usize],
            cats,
        })
    }

    fn range(&self, n: u32) -> Result<(Lvl, Lvl), Fail> {
        if !self.t.is_list(n) {
            let d = self.look(Ns::LevelRanges, n)?;
            let s = self.ast.decls[d as usize].stmt;
            return self.range(self.args(s)[2]);
        }
        let k = self.t.kids(n);
        Ok((self.level(k[0])?, self.level(k[1])?))
    }

    fn context(&self, n: u32) -> Result<Ctx, Fail> {
        if !self.t.is_list(n) {
            let d = self.look(Ns::Contexts, n)?;
            let s = self.ast.decls[d as usize].stmt;
            // A named context is verified where it is declared (`Invalid named context`).
            let user = self.cur_stmt.replace(s);
            let c = self.context(self.args(s)[2]);
            self.cur_stmt.set(user);
            return c;
        }
        let k = self.t.kids(n);
        let u = self.user_decl(k[0])?;
        let r = self.look(Ns::Roles, k[1])?;
        if self.kind(r) != DeclKind::Role {
            return Err(err(format!(
                "Role attribute {} used in a context at {}",
                self.name(r),
                self.here(self.cur_stmt.get())
            )));
        }
        let ty = match self.tref(k[2])? {
            TRef::Type(i) => i,
            _ => {
                return Err(err(format!(
                    "Type in a context must be a type at {}",
                    self.here(self.cur_stmt.get())
                )))
            }
        };
        let c = Ctx {
            user: self.dint[u as usize],
            role: self.dint[r as usize],
            ty,
            range: self.range(k[3])?,
        };
        self.ctx_log
            .borrow_mut()
            .push((self.cur_stmt.get(), c.clone()));
        Ok(c)
    }

    /// An `ipaddr` name or an anonymous `(address)`: IPv6 when it holds a colon.
    fn ipaddr(&self, n: u32) -> Result<std::net::IpAddr, Fail> {
        let text_node = if self.t.is_list(n) {
            self.t.kids(n)[0]
        } else {
            let d = self.look(Ns::IpAddrs, n)?;
            self.args(self.ast.decls[d as usize].stmt)[2]
        };
        let txt = String::from_utf8_lossy(self.atom_bytes(text_node)?);
        let parsed = if txt.contains(':') {
            txt.parse::<std::net::Ipv6Addr>()
                .map(std::net::IpAddr::V6)
                .ok()
        } else {
            txt.parse::<std::net::Ipv4Addr>()
                .map(std::net::IpAddr::V4)
                .ok()
        };
        parsed.ok_or_else(|| err(format!("Invalid IP address {txt}")))
    }

    fn mls_level(&self, l: &Lvl) -> MlsLevel {
        if !self.mls {
            return MlsLevel::default();
        }
        MlsLevel {
            sens: l.sens + 1,
            cats: Ebitmap::from_bits(l.cats.iter().copied()),
        }
    }
    fn mls_range(&self, r: &(Lvl, Lvl)) -> MlsRange {
        MlsRange {
            low: self.mls_level(&r.0),
            high: self.mls_level(&r.1),
        }
    }
    fn sepol_context(&self, c: &Ctx) -> Result<Context, Fail> {
        let bad = || err("context value out of range".into());
        Ok(Context {
            user: UserId::new(c.user + 1).ok_or_else(bad)?,
            role: RoleId::new(self.role_val[c.role as usize]).ok_or_else(bad)?,
            ty: TypeId::new(self.type_val[c.ty as usize] as u16).ok_or_else(bad)?,
            range: self.mls_range(&c.range),
        })
    }
}

/// libsepol 3.4's `__cil_ordered_lists_merge_all`: sweep the pending lists, merging each
/// into the composite when it shares an item placed so that the order is unambiguous
/// (its first item, or the composite's first item, is the shared one), until nothing
/// changes. `lists` holds (statement, items); `what` names the item kind for messages.
fn merge_orders(l: &L<'_>, lists: &[(u32, Vec<u32>)], what: &str) -> Result<Vec<u32>, Fail> {
    let mut out: Vec<u32> = Vec::new();
    let mut ordered: std::collections::HashSet<u32, crate::intern::FxBuild> = Default::default();
    let mut merged = vec![false; lists.len()];
    // Inserts `items` at `at`, failing on an item already placed.
    let insert = |out: &mut Vec<u32>,
                  ordered: &mut std::collections::HashSet<u32, crate::intern::FxBuild>,
                  at: usize,
                  items: &[u32]|
     -> Result<(), Fail> {
        for (k, &x) in items.iter().enumerate() {
            if !ordered.insert(x) {
                return Err(err(format!(
                    "{what} {} has already been merged into the ordered list",
                    l.name(x)
                )));
            }
            out.insert(at + k, x);
        }
        Ok(())
    };
    // Returns Ok(true) when merged, Ok(false) when it must wait.
    let merge_one = |out: &mut Vec<u32>,
                     ordered: &mut std::collections::HashSet<u32, crate::intern::FxBuild>,
                     new: &[u32]|
     -> Result<bool, Fail> {
        if new.is_empty() {
            return Ok(true);
        }
        if out.is_empty() {
            insert(out, ordered, 0, new)?;
            return Ok(true);
        }
        let Some((ni, oi)) = new
            .iter()
            .enumerate()
            .find_map(|(ni, x)| out.iter().position(|y| y == x).map(|oi| (ni, oi)))
        else {
            return Ok(false);
        };
        if ni != 0 && oi != 0 {
            return Ok(false);
        }
        let mut oi = oi;
        if ni != 0 {
            insert(out, ordered, 0, &new[..ni])?;
            oi += ni;
        }
        // Overlap: `oprev` is the index of the last matched old item.
        let mut nc = ni + 1;
        let mut oc = oi + 1;
        let mut oprev = oi;
        while nc < new.len() && oc < out.len() {
            if new[nc] == out[oc] {
                oprev = oc;
                oc += 1;
                nc += 1;
                continue;
            }
            // Gap in old: old (A C), new (A B C).
            if let Some(m) = new[nc + 1..].iter().position(|&x| x == out[oc]) {
                let m = nc + 1 + m;
                let count = m - nc;
                insert(out, ordered, oprev + 1, &new[nc..m])?;
                oc += count;
                oprev = oc;
                oc += 1;
                nc = m + 1;
                continue;
            }
            // Gap in new: old (A B C), new (A C).
            if let Some(m) = out[oc + 1..].iter().position(|&x| x == new[nc]) {
                let m = oc + 1 + m;
                oprev = m;
                oc = m + 1;
                nc += 1;
                continue;
            }
            return Ok(false);
        }
        if nc < new.len() {
            let end = out.len();
            insert(out, ordered, end, &new[nc..])?;
        }
        Ok(true)
    };
    let mut changed = true;
    let mut waiting = 1;
    while waiting > 0 && changed {
        changed = false;
        waiting = 0;
        for (i, (_, list)) in lists.iter().enumerate() {
            if merged[i] {
                continue;
            }
            if merge_one(&mut out, &mut ordered, list)? {
                merged[i] = true;
                changed = true;
            } else {
                waiting += 1;
            }
        }
        if waiting > 0 && !changed {
            let mut m: Vec<String> = lists
                .iter()
                .zip(&merged)
                .filter(|(_, &done)| !done)
                .map(|((s, _), _)| format!("Unable to merge ordered list at {}", l.here(*s)))
                .collect();
            m.push("Failed to resolve AST".into());
            m.push("Failed to compile cildb: -1".into());
            return Err(Fail::bad(m));
        }
    }
    Ok(out)
}

fn murmur(key: &AvtabKey) -> u32 {
    key.libsepol_hash() & (crate::CIL_AVTAB_SLOTS - 1)
}

/// Sorts unconditional entries into libsepol's written order: slot, then (s, t, c), then
/// insertion order.
fn avtab_order(entries: &mut [AvtabEntry]) {
    entries.sort_by_cached_key(|e| (murmur(&e.key), e.key.source, e.key.target, e.key.class));
}

fn kind_bits(kw: Kw) -> AvtabKind {
    match kw {
        Kw::Allow => AvtabKind::Allowed,
        Kw::AuditAllow => AvtabKind::AuditAllow,
        Kw::DontAudit => AvtabKind::AuditDeny,
        Kw::TypeTransition => AvtabKind::Transition,
        Kw::TypeChange => AvtabKind::Change,
        _ => AvtabKind::Member,
    }
}

struct CondBuild {
    nbools: usize,
    bools: Vec<u32>,
    pre: u32,
    expr: Vec<CondExpr>,
    /// Rules in insertion order (libsepol prepends, so its lists are these reversed; they
    /// are reversed once when the node is finished instead of inserting at the front).
    true_list: Vec<AvtabEntry>,
    false_list: Vec<AvtabEntry>,
}

fn eval_cond(expr: &[CondExpr], val: &dyn Fn(u32) -> bool) -> Option<bool> {
    let mut st: Vec<bool> = Vec::new();
    for e in expr {
        match *e {
            CondExpr::Bool(b) => st.push(val(b.value())),
            CondExpr::Not => {
                let a = st.pop()?;
                st.push(!a)
            }
            op => {
                let b = st.pop()?;
                let a = st.pop()?;
                st.push(match op {
                    CondExpr::Or => a | b,
                    CondExpr::And => a & b,
                    CondExpr::Xor => a ^ b,
                    CondExpr::Eq => a == b,
                    _ => a != b,
                })
            }
        }
    }
    if st.len() == 1 {
        st.pop()
    } else {
        None
    }
}

pub fn lower(
    t: &Tree,
    int: &Interner,
    ast: &Ast,
    r: &Resolver<'_>,
    names: &[String],
    opts: &Options,
) -> Result<Lowered, Fail> {
    let live: Vec<u32> = (0..ast.stmts.len() as u32)
        .filter(|&s| r.stmt_live(s))
        .collect();
    let nd = ast.decls.len();
    let mut l = L {
        t,
        int,
        ast,
        r,
        names,
        opts,
        live,
        dint: vec![NONE; nd],
        types: vec![],
        attrs: vec![],
        attr_members: vec![],
        attr_busy: vec![],
        attr_exprs: vec![],
        attr_used: vec![],
        attr_val: vec![],
        type_val: vec![],
        alias_actual: FxHashMap::default(),
        roles: vec![],
        rattrs: vec![],
        rattr_members: vec![],
        rattr_exprs: vec![],
        uattrs: vec![],
        uattr_members: vec![],
        uattr_exprs: vec![],
        role_val: vec![],
        users: vec![],
        bools: vec![],
        classes: vec![],
        class_common: vec![],
        perm_bits: FxHashMap::default(),
        commons: vec![],
        sens: vec![],
        cats: vec![],
        mls: false,
        cp_sets: FxHashMap::default(),
        cp_buf: vec![],
        src_buf: vec![],
        tgt_buf: vec![],
        map_sets: FxHashMap::default(),
        attr_depth: 0,
        cur_stmt: std::cell::Cell::new(0),
        ctx_log: std::cell::RefCell::new(vec![]),
        tref_memo: vec![],
    };
    // Declarations in walk order; decl ids of live declaring statements.
    let mut decl_of_stmt: FxHashMap<u32, u32> = FxHashMap::default();
    for (d, decl) in ast.decls.iter().enumerate() {
        decl_of_stmt.insert(decl.stmt, d as u32);
    }
    let mut mls_stmt = None;
    let mut handle_unknown = None;
    let mut class_orders = vec![];
    let mut sid_orders = vec![];
    let mut sens_orders = vec![];
    let mut cat_orders = vec![];
    let mut unordered: Vec<u32> = vec![];
    for &s in &l.live.clone() {
        let st = ast.stmts[s as usize];
        let a = l.args(s);
        if let Some(&d) = decl_of_stmt.get(&s) {
            let list = match ast.decls[d as usize].kind {
                DeclKind::Type => Some(&mut l.types),
                DeclKind::TypeAttribute => Some(&mut l.attrs),
                DeclKind::Role => Some(&mut l.roles),
                DeclKind::RoleAttribute => Some(&mut l.rattrs),
                DeclKind::User => Some(&mut l.users),
                DeclKind::UserAttribute => Some(&mut l.uattrs),
                DeclKind::Bool => Some(&mut l.bools),
                DeclKind::Common => Some(&mut l.commons),
                _ => None,
            };
            if let Some(list) = list {
                l.dint[d as usize] = list.len() as u32;
                list.push(d);
            }
        }
        match st.kw {
            Kw::Mls => {
                if mls_stmt.is_some() {
                    return Err(err(format!(
                        "Mls statement already defined at {}",
                        l.here(s)
                    )));
                }
                mls_stmt = Some(t.sym(a[1]) == Some(Kw::True.sym()));
            }
            Kw::HandleUnknown => {
                handle_unknown = Some(match t.sym(a[1]).and_then(Kw::of) {
                    Some(Kw::Allow) => HandleUnknown::Allow,
                    Some(Kw::Reject) => HandleUnknown::Reject,
                    _ => HandleUnknown::Deny,
                });
            }
            Kw::ClassOrder | Kw::SidOrder | Kw::SensitivityOrder | Kw::CategoryOrder => {
                let ns = match st.kw {
                    Kw::ClassOrder => Ns::Classes,
                    Kw::SidOrder => Ns::Sids,
                    Kw::SensitivityOrder => Ns::Sens,
                    _ => Ns::Cats,
                };
                let mut v = vec![];
                let mut un = false;
                for &x in t.kids(a[1]) {
                    if ns == Ns::Classes && t.sym(x) == Some(Kw::Unordered.sym()) {
                        un = true;
                        continue;
                    }
                    v.push(l.look(ns, x)?);
                }
                match st.kw {
                    Kw::ClassOrder if un => {
                        for d in v {
                            if !unordered.contains(&d) {
                                unordered.push(d)
                            }
                        }
                    }
                    Kw::ClassOrder => class_orders.push((s, v)),
                    Kw::SidOrder => sid_orders.push((s, v)),
                    Kw::SensitivityOrder => sens_orders.push((s, v)),
                    _ => cat_orders.push((s, v)),
                }
            }
            Kw::ClassPermissionSet => {
                let d = l.look(Ns::ClassPermissions, a[1])?;
                l.cp_sets.entry(d).or_default().push(a[2]);
            }
            Kw::ClassMapping => {
                let d = l.look(Ns::Classes, a[1])?;
                let p = l.sym(a[2]);
                l.map_sets.entry((d, p)).or_default().push(a[3]);
            }
            Kw::TypeAliasActual | Kw::SensitivityAliasActual | Kw::CategoryAliasActual => {
                let ns = match st.kw {
                    Kw::TypeAliasActual => Ns::Types,
                    Kw::SensitivityAliasActual => Ns::Sens,
                    _ => Ns::Cats,
                };
                let al = l.look(ns, a[1])?;
                let ac = l.look(ns, a[2])?;
                l.alias_actual.insert(al, ac);
            }
            _ => {}
        }
    }
    l.mls = opts.mls.or(mls_stmt).unwrap_or(false);
    let mut classes = merge_orders(&l, &class_orders, "Class")?;
    for d in unordered {
        if !classes.contains(&d) {
            classes.push(d);
        }
    }
    l.classes = classes;
    for (i, &d) in l.classes.clone().iter().enumerate() {
        l.dint[d as usize] = i as u32;
    }
    let sids = merge_orders(&l, &sid_orders, "SID")?;
    l.sens = merge_orders(&l, &sens_orders, "Sensitivity")?;
    l.cats = merge_orders(&l, &cat_orders, "Category")?;
    for (i, &d) in l.sens.clone().iter().enumerate() {
        l.dint[d as usize] = i as u32;
    }
    for (i, &d) in l.cats.clone().iter().enumerate() {
        l.dint[d as usize] = i as u32;
    }
    for (i, &d) in sids.iter().enumerate() {
        l.dint[d as usize] = i as u32;
    }
    // Every declared class must be ordered.
    // Every declared class, SID, sensitivity and category must be ordered
    // (`__cil_verify_ordered`).
    for (d, decl) in ast.decls.iter().enumerate() {
        let what = match decl.kind {
            DeclKind::Class => "Class %s not in classorder statement",
            DeclKind::Sid => "SID %s not in sidorder statement",
            DeclKind::Cat => "Category %s not in categoryorder statement",
            DeclKind::Sens => "Sensitivity %s not in sensitivityorder statement",
            _ => continue,
        };
        if r.stmt_live(decl.stmt) && l.dint[d] == NONE {
            return Err(Fail::bad(vec![
                format!(
                    "{} at {}",
                    what.replace("%s", &l.name(d as u32)),
                    l.here(decl.stmt)
                ),
                "Failed to verify cil database".into(),
                "Post process failed".into(),
                "Failed to compile cildb: -1".into(),
            ]));
        }
    }
    l.class_common = l.classes.iter().map(|&c| r.class_common(c)).collect();
    // Type values and aliases are all known from here on.
    l.tref_memo = vec![std::cell::Cell::new(0); int.len()];
    for (ci, &cd) in l.classes.iter().enumerate() {
        let own = ast.perm_lists.get(&cd).map_or(&[][..], |v| v.as_slice());
        let common = l.class_common[ci].and_then(|c| ast.perm_lists.get(&c));
        let ncommon = common.map_or(0, |c| c.len());
        if ncommon + own.len() > 32 {
            continue; // refused below ("Too many permissions"); the slow path meanwhile
        }
        let own_bits = own.iter().enumerate().map(|(i, &p)| (p, ncommon + i));
        let common_bits = common
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, &p)| (p, i));
        for (p, bit) in own_bits.chain(common_bits) {
            l.perm_bits.entry((cd, p)).or_insert(1u32 << bit);
        }
    }

    // Attribute expressions and usage marks.
    let na = l.attrs.len();
    l.attr_members = vec![None; na];
    l.attr_busy = vec![false; na];
    l.attr_exprs = vec![vec![]; na];
    l.attr_used = vec![0; na];
    l.rattr_members = vec![None; l.rattrs.len()];
    l.rattr_exprs = vec![vec![]; l.rattrs.len()];
    l.uattr_members = vec![None; l.uattrs.len()];
    l.uattr_exprs = vec![vec![]; l.uattrs.len()];
    for &s in &l.live.clone() {
        let st = ast.stmts[s as usize];
        let a = l.args(s);
        match st.kw {
            Kw::TypeAttributeSet => {
                let d = l.look(Ns::Types, a[1])?;
                if l.kind(d) != DeclKind::TypeAttribute {
                    return Err(err(format!(
                        "Attribute type not an attribute at {}",
                        l.here(s)
                    )));
                }
                l.attr_exprs[l.dint[d as usize] as usize].push(a[2]);
            }
            Kw::UserAttributeSet => {
                let d = l.look(Ns::Users, a[1])?;
                if l.kind(d) != DeclKind::UserAttribute {
                    return Err(err(format!("Not a user attribute at {}", l.here(s))));
                }
                l.uattr_exprs[l.dint[d as usize] as usize].push(a[2]);
            }
            Kw::RoleAttributeSet => {
                let d = l.look(Ns::Roles, a[1])?;
                if l.kind(d) != DeclKind::RoleAttribute {
                    return Err(err(format!("Not a role attribute at {}", l.here(s))));
                }
                l.rattr_exprs[l.dint[d as usize] as usize].push(a[2]);
            }
            Kw::ExpandTypeAttribute => {
                let flag = match t.sym(a[2]).and_then(Kw::of) {
                    Some(Kw::True) => USED_EXPAND_TRUE,
                    Some(Kw::False) => USED_EXPAND_FALSE,
                    _ => return Err(err(format!("Bad expandtypeattribute at {}", l.here(s)))),
                };
                let names: Vec<u32> = if t.is_list(a[1]) {
                    t.kids(a[1]).to_vec()
                } else {
                    vec![a[1]]
                };
                for x in names {
                    match l.tref(x)? {
                        TRef::Attr(i) => {
                            let u = &mut l.attr_used[i as usize];
                            *u |= flag;
                            if *u & USED_EXPAND_TRUE != 0 && *u & USED_EXPAND_FALSE != 0 {
                                *u &= !USED_EXPAND_TRUE;
                            }
                        }
                        _ => {
                            return Err(err(format!(
                                "Attribute type not an attribute at {}",
                                l.here(s)
                            )))
                        }
                    }
                }
            }
            Kw::Allow
            | Kw::AuditAllow
            | Kw::DontAudit
            | Kw::NeverAllow
            | Kw::AllowX
            | Kw::AuditAllowX
            | Kw::DontAuditX
            | Kw::NeverAllowX
                if t.sym(a[2]) != Some(Kw::SelfKw.sym()) =>
            {
                // The source is not marked when the target is `self` (cil_resolve_avrule).
                let used = if matches!(st.kw, Kw::NeverAllow | Kw::NeverAllowX) {
                    USED_NEVERALLOW
                } else {
                    USED_AVRULE
                };
                for &x in &a[1..3] {
                    if let TRef::Attr(i) = l.tref(x)? {
                        l.attr_used[i as usize] |= used;
                    }
                }
            }
            Kw::Constrain | Kw::MlsConstrain | Kw::ValidateTrans | Kw::MlsValidateTrans => {
                let mut stack = vec![a[2]];
                while let Some(n) = stack.pop() {
                    let k = t.kids(n);
                    match k.first().and_then(|&x| t.sym(x)).and_then(Kw::of) {
                        Some(Kw::And | Kw::Or | Kw::Not) => stack.extend_from_slice(&k[1..]),
                        _ if k.len() == 3
                            && matches!(
                                t.sym(k[1]).and_then(Kw::of),
                                Some(Kw::T1 | Kw::T2 | Kw::T3)
                            ) =>
                        {
                            let names: Vec<u32> = if t.is_list(k[2]) {
                                t.kids(k[2]).to_vec()
                            } else if matches!(
                                t.sym(k[2]).and_then(Kw::of),
                                Some(Kw::T1 | Kw::T2 | Kw::T3)
                            ) {
                                vec![]
                            } else {
                                vec![k[2]]
                            };
                            for x in names {
                                if let TRef::Attr(i) = l.tref(x)? {
                                    l.attr_used[i as usize] |= USED_CONSTRAINT;
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    // Attributes generated for neverallows (`*_typeattr_*`) pass their mark on to the
    // attributes named in their expressions (`__mark_neverallow_attrs`).
    let is_gen = |l: &L<'_>, a: usize| {
        int.bytes(ast.decls[l.attrs[a] as usize].name)
            .windows(10)
            .any(|w| w == b"_typeattr_")
    };
    for i in 0..na {
        if l.attr_used[i] & USED_NEVERALLOW == 0 || !is_gen(&l, i) {
            continue;
        }
        let mut seen = vec![false; na];
        seen[i] = true;
        let mut stack: Vec<u32> = l.attr_exprs[i].clone();
        while let Some(n) = stack.pop() {
            if t.is_list(n) {
                stack.extend_from_slice(t.kids(n));
                continue;
            }
            if let Ok(TRef::Attr(a)) = l.tref(n) {
                let a = a as usize;
                if is_gen(&l, a) {
                    if !seen[a] {
                        seen[a] = true;
                        stack.extend(l.attr_exprs[a].iter().copied());
                    }
                } else {
                    l.attr_used[a] |= USED_NEVERALLOW;
                }
            }
        }
    }
    for i in 0..na {
        l.ensure_members(i as u32)?;
    }
    // Keep decision (cil_typeattribute_used).
    let keep: Vec<bool> = (0..na)
        .map(|i| {
            let used = l.attr_used[i];
            let name = int.bytes(ast.decls[l.attrs[i] as usize].name);
            if used == 0 {
                return false;
            }
            if used & USED_EXPAND_FALSE != 0 {
                return true;
            }
            if used & USED_EXPAND_TRUE != 0 {
                return false;
            }
            if used & USED_CONSTRAINT != 0 {
                return true;
            }
            if opts.expand_generated || used == USED_NEVERALLOW {
                if name == b"cil_gen_require" || name.windows(10).any(|w| w == b"_typeattr_") {
                    return false;
                }
                if used == USED_NEVERALLOW {
                    return true;
                }
            }
            if used == USED_AVRULE {
                let n = l.attr_members[i].as_ref().map_or(0, |b| b.count());
                if (n as u32) < opts.expand_size {
                    return false;
                }
            }
            true
        })
        .collect();
    // Sepol type values: types and kept attributes in walk order.
    l.type_val = vec![0; l.types.len()];
    l.attr_val = vec![0; na];
    let mut tdatums: Vec<TypeDatum> = vec![];
    for &s in &l.live.clone() {
        if let Some(&d) = decl_of_stmt.get(&s) {
            match ast.decls[d as usize].kind {
                DeclKind::Type => {
                    tdatums.push(TypeDatum {
                        name: l.name(d).into(),
                        flavor: TypeFlavor::Type,
                        bounds: None,
                    });
                    l.type_val[l.dint[d as usize] as usize] = tdatums.len() as u32;
                }
                DeclKind::TypeAttribute if keep[l.dint[d as usize] as usize] => {
                    tdatums.push(TypeDatum {
                        name: l.name(d).into(),
                        flavor: TypeFlavor::Attribute,
                        bounds: None,
                    });
                    l.attr_val[l.dint[d as usize] as usize] = tdatums.len() as u32;
                }
                _ => {}
            }
        }
    }
    if tdatums.len() > u16::MAX as usize {
        return Err(err("too many types".into()));
    }
    let tid = |v: u32| TypeId::new(v as u16).expect("type values start at 1");
    // Roles: object_r is value 1.
    l.role_val = vec![0; l.roles.len()];
    let mut rdatums: Vec<Role> = vec![Role {
        name: "object_r".into(),
        bounds: None,
        dominates: Ebitmap::default(),
        types: Ebitmap::default(),
    }];
    for (i, &d) in l.roles.clone().iter().enumerate() {
        if ast.decls[d as usize].name == Kw::ObjectR.sym() {
            l.role_val[i] = 1;
        } else {
            rdatums.push(Role {
                name: l.name(d).into(),
                bounds: None,
                dominates: Ebitmap::from_bits([rdatums.len() as u32]),
                types: Ebitmap::default(),
            });
            l.role_val[i] = rdatums.len() as u32;
        }
    }
    for i in 0..l.rattrs.len() {
        l.role_members(i as u32)?;
    }
    // Type aliases.
    let mut type_aliases = vec![];
    for &s in &l.live.clone() {
        if let Some(&d) = decl_of_stmt.get(&s) {
            if ast.decls[d as usize].kind == DeclKind::TypeAlias {
                let n = t.kids(ast.stmts[s as usize].node)[1];
                if let TRef::Type(i) = l.tref(n)? {
                    type_aliases.push(TypeAlias {
                        name: l.name(d).into(),
                        target: tid(l.type_val[i as usize]),
                    });
                } else {
                    return Err(err(format!("Alias {} must refer to a type", l.name(d))));
                }
            }
        }
    }
    // Classes and commons.
    let mut common_val: FxHashMap<u32, u32> = FxHashMap::default();
    let mut commons: Vec<Common> = vec![];
    let mut classes: Vec<Class> = vec![];
    for (ci, &cd) in l.classes.clone().iter().enumerate() {
        let cm = l.class_common[ci];
        let mut ncommon = 0;
        let common = match cm {
            Some(c) => {
                let perms = &ast.perm_lists[&c];
                ncommon = perms.len() as u32;
                let v = *common_val.entry(c).or_insert_with(|| {
                    commons.push(Common {
                        name: l.name(c).into(),
                        nprim: perms.len() as u32,
                        perms: perms
                            .iter()
                            .enumerate()
                            .map(|(i, &p)| Perm {
                                name: int.str(p).into(),
                                value: i as u32 + 1,
                            })
                            .collect(),
                    });
                    commons.len() as u32
                });
                arbiter_policy::CommonId::new(v as u8 as _)
            }
            None => None,
        };
        let own = &ast.perm_lists[&cd];
        if ncommon + own.len() as u32 > 32 {
            return Err(err(format!("Too many permissions in class {}", l.name(cd))));
        }
        classes.push(Class {
            name: l.name(cd).into(),
            common,
            nprim: ncommon + own.len() as u32,
            perms: own
                .iter()
                .enumerate()
                .map(|(i, &p)| Perm {
                    name: int.str(p).into(),
                    value: ncommon + i as u32 + 1,
                })
                .collect(),
            constraints: Box::new([]),
            validatetrans: Box::new([]),
            default_user: Default::default(),
            default_role: Default::default(),
            default_type: Default::default(),
            default_range: Default::default(),
        });
    }
    let cid = |c: u32| ClassId::new(c as u16 + 1).expect("class");

    // Users.
    let mut udatums: Vec<User> = l
        .users
        .iter()
        .map(|&d| User {
            name: l.name(d).into(),
            bounds: None,
            roles: Ebitmap::default(),
            range: MlsRange::default(),
            default_level: MlsLevel::default(),
        })
        .collect();
    let mut user_roles: Vec<Vec<u32>> = vec![vec![]; l.users.len()];
    let mut role_types: Vec<Bits> = vec![Bits::new(l.types.len()); l.roles.len()];
    // Booleans.
    let bdatums: Vec<Bool> = l
        .bools
        .iter()
        .map(|&d| {
            let s = ast.decls[d as usize].stmt;
            Bool {
                name: l.name(d).into(),
                state: t.sym(l.args(s)[2]) == Some(Kw::True.sym()),
            }
        })
        .collect();
    // Sensitivities and categories.
    let mut sdatums: Vec<Sensitivity> = l
        .sens
        .iter()
        .enumerate()
        .map(|(i, &d)| Sensitivity {
            name: l.name(d).into(),
            level: MlsLevel {
                sens: i as u32 + 1,
                cats: Ebitmap::default(),
            },
        })
        .collect();
    let mut sens_cats: Vec<Bits> = vec![Bits::new(l.cats.len()); l.sens.len()];
    let cdatums: Vec<Category> = l
        .cats
        .iter()
        .map(|&d| Category {
            name: l.name(d).into(),
        })
        .collect();
    let mut sens_aliases = vec![];
    let mut cat_aliases = vec![];
    let mut policycaps = vec![];
    let mut permissive = vec![];

    // Pass 2 and 3 collections.
    let mut avtab: Vec<AvtabEntry> = vec![];
    // `avtab` and its index (rule key -> entry, u32 to keep the index small: it is the
    // largest table while rules are entered) are sized up front from the count of
    // unconditional rule statements, an estimate (the Debian store has 174,000 such
    // statements for 102,000 entries): growing by doubling copied them through the heap,
    // and the freed copies stayed resident. Reserved pages never written cost nothing.
    let rule_stmts = ast
        .stmts
        .iter()
        .filter(|st| {
            st.cond == NONE
                && matches!(
                    st.kw,
                    Kw::Allow
                        | Kw::AuditAllow
                        | Kw::DontAudit
                        | Kw::TypeTransition
                        | Kw::TypeChange
                        | Kw::TypeMember
                )
        })
        .count();
    avtab.reserve(rule_stmts);
    let mut avindex: FxHashMap<AvtabKey, u32> =
        FxHashMap::with_capacity_and_hasher(rule_stmts, Default::default());
    let mut ftrans: Vec<FilenameTrans> = vec![];
    let mut ftindex: FxHashMap<(u32, u32, Sym), usize> = FxHashMap::default();
    let mut role_trans: Vec<RoleTrans> = vec![];
    let mut rtseen: FxHashMap<(u32, u32, u32), u32> = FxHashMap::default();
    let mut role_allow: Vec<RoleAllow> = vec![];
    let mut range_trans: Vec<RangeTrans> = vec![];
    let mut rtrindex: FxHashMap<(u32, u32, u32), usize> = FxHashMap::default();
    let mut constraints: Vec<Vec<Constraint>> = vec![vec![]; classes.len()];
    let mut validatetrans: Vec<Vec<Constraint>> = vec![vec![]; classes.len()];
    let mut conds: Vec<CondBuild> = vec![];
    let mut filecons = vec![];
    let mut portcons = vec![];
    let mut genfscons = vec![];
    let mut fsuses = vec![];
    let mut netifcons: Vec<(Vec<u8>, Ctx, Ctx)> = vec![];
    let mut nodecons: Vec<(std::net::IpAddr, std::net::IpAddr, Ctx)> = vec![];
    let mut ibpkeycons: Vec<(Vec<u8>, std::net::Ipv6Addr, u32, u32, Ctx)> = vec![];
    let mut ibendportcons: Vec<(Vec<u8>, u32, Ctx)> = vec![];
    let mut xencons: Vec<crate::xencon::XenCon<Ctx>> = vec![];
    let mut sidctx: FxHashMap<u32, Ctx> = FxHashMap::default();
    let mut selinuxusers = vec![];
    let mut seuser_default = None;
    let mut userprefixes = vec![];
    let mut type_bounds = vec![];
    let mut neverallows: Vec<u32> = vec![];
    let mut xside: Vec<(AvtabKey, Bits)> = vec![];
    let mut xindex: FxHashMap<AvtabKey, usize> = FxHashMap::default();
    let mut role_bounds: Vec<(u32, u32)> = vec![];
    let mut user_bounds: Vec<(u32, u32)> = vec![];
    let mut hierarchy = crate::check::hierarchy::Hierarchy::default();

    let type_rule = |l: &mut L<'_>,
                     s: u32,
                     avtab: &mut Vec<AvtabEntry>,
                     avindex: &mut FxHashMap<AvtabKey, u32>,
                     ftrans: &mut Vec<FilenameTrans>,
                     ftindex: &mut FxHashMap<(u32, u32, Sym), usize>,
                     cond: Option<(&mut CondBuild, bool)>|
     -> Result<(), Fail> {
        let st = ast.stmts[s as usize];
        let a = l.args(s);
        let src = l.tref(a[1])?;
        let tgt = l.tref(a[2])?;
        let ci = l.class_of(a[3])?;
        let res = match l.tref(a[a.len() - 1])? {
            TRef::Type(i) => l.type_val[i as usize],
            _ => {
                return Err(err(format!(
                    "Type rule result must be a type at {}",
                    l.here(s)
                )))
            }
        };
        let named = a.len() == 6 && t.sym(a[4]) != Some(Kw::Star.sym());
        let kind = kind_bits(st.kw);
        let srcs = l.expand_all(src)?;
        let mut cond = cond;
        for &sv in &srcs {
            let tgts = if tgt == TRef::SelfT {
                vec![sv]
            } else {
                l.expand_all(tgt)?
            };
            for &tv in &tgts {
                if named {
                    let name = t.sym(a[4]).unwrap_or(0);
                    let key = (tv, ci, name);
                    let idx = *ftindex.entry(key).or_insert_with(|| {
                        ftrans.push(FilenameTrans {
                            target: tid(tv),
                            class: cid(ci),
                            name: int.str(name).into(),
                            outcomes: Box::new([]),
                        });
                        ftrans.len() - 1
                    });
                    let ft = &mut ftrans[idx];
                    if let Some((_, o)) = ft.outcomes.iter().find(|(b, _)| b.contains(sv - 1)) {
                        if o.value() as u32 != res {
                            return Err(err(format!(
                                "Conflicting name type transition rules at {}",
                                l.here(s)
                            )));
                        }
                        continue;
                    }
                    let mut outs = ft.outcomes.to_vec();
                    match outs.iter_mut().find(|(_, o)| o.value() as u32 == res) {
                        Some((b, _)) => {
                            *b = Ebitmap::from_bits(b.iter().chain([sv - 1]));
                        }
                        None => outs.push((Ebitmap::from_bits([sv - 1]), tid(res))),
                    }
                    ft.outcomes = outs.into_boxed_slice();
                    continue;
                }
                let key = AvtabKey {
                    source: tid(sv),
                    target: tid(tv),
                    class: cid(ci),
                    kind,
                };
                let datum = AvtabDatum::Type(tid(res));
                if let Some(&i) = avindex.get(&key) {
                    if avtab[i as usize].datum != datum {
                        return Err(err(format!("Conflicting type rules at {}", l.here(s))));
                    }
                    continue;
                }
                match cond.as_mut() {
                    None => {
                        avindex.insert(key, index_u32(avtab.len())?);
                        avtab.push(AvtabEntry { key, datum });
                    }
                    Some((cb, br)) => {
                        let (this, other) = if *br {
                            (&cb.true_list, &cb.false_list)
                        } else {
                            (&cb.false_list, &cb.true_list)
                        };
                        if !other.iter().any(|e| e.key == key) && this.iter().any(|e| e.key == key)
                        {
                            continue;
                        }
                        let list = if *br {
                            &mut cb.true_list
                        } else {
                            &mut cb.false_list
                        };
                        list.push(AvtabEntry { key, datum });
                    }
                }
            }
        }
        Ok(())
    };

    // Pass 1/2 (walk order).
    let mut user_level: Vec<Option<Lvl>> = vec![None; l.users.len()];
    let mut user_range: Vec<Option<(Lvl, Lvl)>> = vec![None; l.users.len()];
    for &s in &l.live.clone() {
        l.cur_stmt.set(s);
        let st = ast.stmts[s as usize];
        if st.cond != NONE {
            continue;
        }
        let a = l.args(s);
        match st.kw {
            Kw::PolicyCap => {
                let cap = match &*String::from_utf8_lossy(l.atom_bytes(a[1])?) {
                    "network_peer_controls" => 0,
                    "open_perms" => 1,
                    "extended_socket_class" => 2,
                    "always_check_network" => 3,
                    "cgroup_seclabel" => 4,
                    "nnp_nosuid_transition" => 5,
                    "genfs_seclabel_symlinks" => 6,
                    "ioctl_skip_cloexec" => 7,
                    other => {
                        return Err(err(format!(
                            "Unknown policy capability {other} at {}",
                            l.here(s)
                        )))
                    }
                };
                policycaps.push(cap);
            }
            Kw::SensitivityAlias | Kw::CategoryAlias => {
                let d = decl_of_stmt[&s];
                let act = *l.alias_actual.get(&d).ok_or_else(|| {
                    err(format!(
                        "Alias {} was not bound at {}",
                        l.name(d),
                        l.here(s)
                    ))
                })?;
                let m = MlsAlias {
                    name: l.name(d).into(),
                    value: l.dint[act as usize] + 1,
                };
                if st.kw == Kw::SensitivityAlias {
                    sens_aliases.push(m)
                } else {
                    cat_aliases.push(m)
                }
            }
            Kw::SensitivityCategory => {
                let sd = l.sens_actual(l.look(Ns::Sens, a[1])?);
                let b = l.catset(a[2])?;
                sens_cats[l.dint[sd as usize] as usize].or(&b);
            }
            Kw::TypePermissive => {
                if let TRef::Type(i) = l.tref(a[1])? {
                    permissive.push(l.type_val[i as usize]);
                }
            }
            Kw::TypeBounds | Kw::RoleBounds | Kw::UserBounds => {
                use crate::check::hierarchy::{Kind, Side};
                let kind = match st.kw {
                    Kw::TypeBounds => Kind::Type,
                    Kw::RoleBounds => Kind::Role,
                    _ => Kind::User,
                };
                let side = |l: &L<'_>, n: u32| -> Result<Side, Fail> {
                    let written = l.int.str(l.sym(n)).into_owned();
                    let (decl, is_attr) = match kind {
                        Kind::Type => match l.tref(n)? {
                            TRef::Type(i) => (l.types[i as usize], false),
                            TRef::Attr(x) => (l.attrs[x as usize], true),
                            TRef::SelfT => (l.look(Ns::Types, n)?, true),
                        },
                        Kind::Role => {
                            let d = l.look(Ns::Roles, n)?;
                            (d, l.kind(d) != DeclKind::Role)
                        }
                        Kind::User => {
                            let d = l.look(Ns::Users, n)?;
                            (d, l.kind(d) != DeclKind::User)
                        }
                    };
                    Ok(Side {
                        decl,
                        is_attr,
                        written,
                    })
                };
                let parent = side(&l, a[1])?;
                let child = side(&l, a[2])?;
                let (pd, cd) = (parent.decl, child.decl);
                hierarchy.bind((t, ast, names), kind, s, parent, child)?;
                match kind {
                    Kind::Type => type_bounds.push((l.tref(a[2])?, l.tref(a[1])?)),
                    Kind::Role => role_bounds.push((l.dint[cd as usize], l.dint[pd as usize])),
                    Kind::User => user_bounds.push((l.dint[cd as usize], l.dint[pd as usize])),
                }
            }
            Kw::NeverAllow | Kw::NeverAllowX if !opts.disable_neverallow => neverallows.push(s),
            Kw::RoleType => {
                let roles = l.role_expr(a[1])?;
                let types = match l.tref(a[2])? {
                    TRef::Type(i) => {
                        let mut b = Bits::new(l.types.len());
                        b.set(i as usize);
                        b
                    }
                    TRef::Attr(x) => l.members(x)?,
                    TRef::SelfT => Bits::new(l.types.len()),
                };
                for ri in roles.iter() {
                    role_types[ri].or(&types);
                }
            }
            Kw::UserRole => {
                let us = l.user_set(a[1])?;
                let rv = l.role_vals(a[2])?;
                for ui in us.iter() {
                    user_roles[ui].extend(rv.iter().copied());
                }
            }
            Kw::UserLevel => {
                let u = l.user_decl(a[1])?;
                let lv = l.level(a[2])?;
                udatums[l.dint[u as usize] as usize].default_level = l.mls_level(&lv);
                user_level[l.dint[u as usize] as usize] = Some(lv);
            }
            Kw::UserRange => {
                let u = l.user_decl(a[1])?;
                let rg = l.range(a[2])?;
                udatums[l.dint[u as usize] as usize].range = l.mls_range(&rg);
                user_range[l.dint[u as usize] as usize] = Some(rg);
            }
            Kw::TypeTransition | Kw::TypeChange | Kw::TypeMember => {
                type_rule(
                    &mut l,
                    s,
                    &mut avtab,
                    &mut avindex,
                    &mut ftrans,
                    &mut ftindex,
                    None,
                )?;
            }
            Kw::RoleTransition => {
                let roles = l.role_vals(a[1])?;
                let tys = {
                    let r = l.tref(a[2])?;
                    l.expand_all(r)?
                };
                let ci = l.class_of(a[3])?;
                let nr = l.look(Ns::Roles, a[4])?;
                let nv = l.role_val[l.dint[nr as usize] as usize];
                for &rv in &roles {
                    for &tv in &tys {
                        match rtseen.get(&(rv, tv, ci)) {
                            Some(&o) if o == nv => continue,
                            Some(_) => {
                                return Err(err(format!(
                                    "Conflicting role transition at {}",
                                    l.here(s)
                                )))
                            }
                            None => {}
                        }
                        rtseen.insert((rv, tv, ci), nv);
                        role_trans.push(RoleTrans {
                            role: RoleId::new(rv).expect("role"),
                            ty: tid(tv),
                            class: cid(ci),
                            new_role: RoleId::new(nv).expect("role"),
                        });
                    }
                }
            }
            Kw::Constrain | Kw::MlsConstrain | Kw::ValidateTrans | Kw::MlsValidateTrans => {
                let is_mls = matches!(st.kw, Kw::MlsConstrain | Kw::MlsValidateTrans);
                if is_mls && !l.mls {
                    continue;
                }
                let expr = constraint_expr(&mut l, a[2])?;
                if matches!(st.kw, Kw::Constrain | Kw::MlsConstrain) {
                    for (ci, bits) in l.classperms(a[1])? {
                        if bits == 0 {
                            continue;
                        }
                        constraints[ci as usize].insert(
                            0,
                            Constraint {
                                perms: bits,
                                expr: expr.clone().into_boxed_slice(),
                            },
                        );
                    }
                } else {
                    let ci = l.class_of(a[1])?;
                    validatetrans[ci as usize].insert(
                        0,
                        Constraint {
                            perms: 0,
                            expr: expr.into_boxed_slice(),
                        },
                    );
                }
            }
            Kw::RangeTransition => {
                if !l.mls {
                    continue;
                }
                let src = l.tref(a[1])?;
                let tgt = l.tref(a[2])?;
                let ci = l.class_of(a[3])?;
                let rg = l.range(a[4])?;
                let range = l.mls_range(&rg);
                for sv in l.expand_all(src)? {
                    let tgts = if tgt == TRef::SelfT {
                        vec![sv]
                    } else {
                        l.expand_all(tgt)?
                    };
                    for tv in tgts {
                        if let Some(&i) = rtrindex.get(&(sv, tv, ci)) {
                            if range_trans[i].range != range {
                                return Err(err(format!(
                                    "Conflicting range transition at {}",
                                    l.here(s)
                                )));
                            }
                            continue;
                        }
                        rtrindex.insert((sv, tv, ci), range_trans.len());
                        range_trans.push(RangeTrans {
                            source: tid(sv),
                            target: tid(tv),
                            class: cid(ci),
                            range: range.clone(),
                        });
                    }
                }
            }
            Kw::SidContext => {
                let sd = l.look(Ns::Sids, a[1])?;
                sidctx.insert(sd, l.context(a[2])?);
            }
            Kw::FileCon => {
                let path = l.atom_bytes(a[1])?.to_vec();
                let ft: u32 = match t.sym(a[2]).and_then(Kw::of) {
                    Some(Kw::Any) => 0,
                    Some(Kw::File) => 1,
                    Some(Kw::Dir) => 2,
                    Some(Kw::Char) => 3,
                    Some(Kw::Block) => 4,
                    Some(Kw::Socket) => 5,
                    Some(Kw::Pipe) => 6,
                    Some(Kw::Symlink) => 7,
                    _ => return Err(err(format!("Invalid file type at {}", l.here(s)))),
                };
                let ctx = if t.is_list(a[3]) && t.kids(a[3]).is_empty() {
                    None
                } else {
                    Some(l.context(a[3])?)
                };
                filecons.push((path, ft, ctx, s));
            }
            Kw::PortCon => {
                let proto = match t.sym(a[1]).and_then(Kw::of) {
                    Some(Kw::Udp) => 1u32,
                    Some(Kw::Tcp) => 2,
                    Some(Kw::Dccp) => 3,
                    Some(Kw::Sctp) => 4,
                    _ => return Err(err(format!("Invalid protocol at {}", l.here(s)))),
                };
                let num = |n: u32| -> Result<u32, Fail> {
                    String::from_utf8_lossy(l.atom_bytes(n)?)
                        .parse::<u32>()
                        .ok()
                        .filter(|&p| p <= 65535)
                        .ok_or_else(|| err(format!("Invalid port at {}", l.here(s))))
                };
                let (lo, hi) = if t.is_list(a[2]) {
                    let k = t.kids(a[2]);
                    if k.len() != 2 {
                        return Err(err(format!("Invalid port range at {}", l.here(s))));
                    }
                    (num(k[0])?, num(k[1])?)
                } else {
                    let p = num(a[2])?;
                    (p, p)
                };
                portcons.push((proto, lo, hi, l.context(a[3])?));
            }
            Kw::GenfsCon => {
                let fs = l.atom_bytes(a[1])?.to_vec();
                let path = l.atom_bytes(a[2])?.to_vec();
                let ft = if a.len() == 5 {
                    match t.sym(a[3]).and_then(Kw::of) {
                        Some(Kw::Any) => 0,
                        Some(Kw::File) => 1,
                        Some(Kw::Dir) => 2,
                        Some(Kw::Char) => 3,
                        Some(Kw::Block) => 4,
                        Some(Kw::Socket) => 5,
                        Some(Kw::Pipe) => 6,
                        Some(Kw::Symlink) => 7,
                        _ => return Err(err(format!("Invalid file type at {}", l.here(s)))),
                    }
                } else {
                    0
                };
                genfscons.push((fs, path, ft, l.context(a[a.len() - 1])?));
            }
            Kw::FsUse => {
                let ty = match t.sym(a[1]).and_then(Kw::of) {
                    Some(Kw::Xattr) => 1u32,
                    Some(Kw::Trans) => 2,
                    Some(Kw::Task) => 3,
                    _ => return Err(err(format!("Invalid fsuse type at {}", l.here(s)))),
                };
                let fs = l.atom_bytes(a[2])?.to_vec();
                fsuses.push((ty, fs, l.context(a[3])?));
            }
            Kw::NetifCon => {
                let name = l.atom_bytes(a[1])?.to_vec();
                netifcons.push((name, l.context(a[2])?, l.context(a[3])?));
            }
            Kw::NodeCon => {
                let addr = l.ipaddr(a[1])?;
                let mask = l.ipaddr(a[2])?;
                let v6 = |x: &std::net::IpAddr| x.is_ipv6();
                if v6(&addr) != v6(&mask) {
                    return Err(err(format!(
                        "nodecon: address and mask must be of the same family at {}",
                        l.here(s)
                    )));
                }
                nodecons.push((addr, mask, l.context(a[3])?));
            }
            Kw::IbPkeyCon => {
                let prefix_text = String::from_utf8_lossy(l.atom_bytes(a[1])?).into_owned();
                let prefix: std::net::Ipv6Addr = prefix_text.parse().map_err(|_| {
                    err(format!("ibpkeycon: invalid subnet prefix at {}", l.here(s)))
                })?;
                let num = |n: u32| -> Result<u32, Fail> {
                    let txt = String::from_utf8_lossy(l.atom_bytes(n)?);
                    let v = match txt.strip_prefix("0x") {
                        Some(h) => u32::from_str_radix(h, 16).ok(),
                        None => txt.parse::<u32>().ok(),
                    };
                    v.filter(|&p| p <= 0xffff)
                        .ok_or_else(|| err(format!("Invalid pkey at {}", l.here(s))))
                };
                let (lo, hi) = if t.is_list(a[2]) {
                    let k = t.kids(a[2]);
                    if k.len() != 2 {
                        return Err(err(format!("Invalid pkey range at {}", l.here(s))));
                    }
                    (num(k[0])?, num(k[1])?)
                } else {
                    let p = num(a[2])?;
                    (p, p)
                };
                ibpkeycons.push((prefix_text.into_bytes(), prefix, lo, hi, l.context(a[3])?));
            }
            Kw::PirqCon | Kw::IomemCon | Kw::IoportCon | Kw::PciDeviceCon | Kw::DeviceTreeCon => {
                let first = if l.t.is_list(a[1]) {
                    let k = l.t.kids(a[1]);
                    let mut parts = Vec::with_capacity(k.len());
                    for &x in k {
                        parts.push(l.atom_bytes(x)?);
                    }
                    Err(parts)
                } else {
                    Ok(l.atom_bytes(a[1])?)
                };
                let key = crate::xencon::key(
                    st.kw,
                    first.as_ref().map(|b| &**b).map_err(|v| &v[..]),
                    &l.here(s),
                )?;
                let c = l.context(a[2])?;
                xencons.push(crate::xencon::XenCon {
                    kw: st.kw,
                    key,
                    context: [c.user, c.role, c.ty, c.range.0.sens, c.range.1.sens],
                    ctx: c,
                    at: l.here(s),
                });
            }
            Kw::IbEndportCon => {
                let dev = l.atom_bytes(a[1])?.to_vec();
                let port = int
                    .str(l.atom_sym(a[2])?)
                    .parse::<u32>()
                    .ok()
                    .filter(|&p| (1..=255).contains(&p))
                    .ok_or_else(|| err(format!("Invalid port at {}", l.here(s))))?;
                ibendportcons.push((dev, port, l.context(a[3])?));
            }
            Kw::SelinuxUser => {
                let u = l.user_decl(a[2])?;
                selinuxusers.push((l.atom_sym(a[1])?, u, l.range(a[3])?));
            }
            Kw::SelinuxUserDefault => {
                let u = l.user_decl(a[1])?;
                seuser_default = Some((u, l.range(a[2])?));
            }
            Kw::UserPrefix => {
                let u = l.user_decl(a[1])?;
                userprefixes.push((u, l.atom_sym(a[2])?));
            }
            Kw::DefaultUser | Kw::DefaultRole | Kw::DefaultType | Kw::DefaultRange => {
                use arbiter_policy::symbols::{DefaultRange as DR, DefaultSide as DS};
                let class_nodes: Vec<u32> = if t.is_list(a[1]) {
                    t.kids(a[1]).to_vec()
                } else {
                    vec![a[1]]
                };
                let side = match t.sym(a[2]).and_then(Kw::of) {
                    Some(Kw::Source) => Some(DS::Source),
                    Some(Kw::Target) => Some(DS::Target),
                    Some(Kw::Glblub) if st.kw == Kw::DefaultRange => None,
                    _ => {
                        return Err(err(format!(
                            "Bad {} declaration at {}",
                            st.kw.text(),
                            l.here(s)
                        )))
                    }
                };
                let range = if st.kw == Kw::DefaultRange {
                    Some(
                        match (side, a.get(3).and_then(|&x| t.sym(x)).and_then(Kw::of)) {
                            (None, None) => DR::Glblub,
                            (Some(DS::Source), Some(Kw::Low)) => DR::SourceLow,
                            (Some(DS::Source), Some(Kw::High)) => DR::SourceHigh,
                            (Some(DS::Source), Some(Kw::LowHigh)) => DR::SourceLowHigh,
                            (Some(DS::Target), Some(Kw::Low)) => DR::TargetLow,
                            (Some(DS::Target), Some(Kw::High)) => DR::TargetHigh,
                            (Some(DS::Target), Some(Kw::LowHigh)) => DR::TargetLowHigh,
                            _ => {
                                return Err(err(format!(
                                    "Bad defaultrange declaration at {}",
                                    l.here(s)
                                )))
                            }
                        },
                    )
                } else {
                    None
                };
                for cn in class_nodes {
                    let ci = l.class_of(cn)? as usize;
                    let c = &mut classes[ci];
                    let clash = |what: &str, c: &Class| {
                        err(format!(
                            "{what} default labeling for class {} already specified",
                            c.name
                        ))
                    };
                    match (st.kw, range) {
                        (Kw::DefaultRange, Some(r)) => {
                            if c.default_range == DR::None {
                                c.default_range = r
                            } else if c.default_range != r {
                                let mut f = clash("Range", c);
                                f.messages.extend(binary_failed(&l, s));
                                return Err(f);
                            }
                        }
                        (kw, _) => {
                            let side = side.unwrap_or_default();
                            let (slot, what) = match kw {
                                Kw::DefaultUser => (&mut c.default_user, "User"),
                                Kw::DefaultRole => (&mut c.default_role, "Role"),
                                _ => (&mut c.default_type, "Type"),
                            };
                            if *slot == DS::None {
                                *slot = side
                            } else if *slot != side {
                                let name = c.name.clone();
                                let mut m = vec![format!(
                                    "{what} default labeling for class {name} already specified"
                                )];
                                m.extend(binary_failed(&l, s));
                                return Err(Fail::bad(m));
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }

    // Verification (libsepol's cil_verify): users have levels and ranges, ranges are
    // well-formed, contexts agree with user roles, role types and user ranges. Every
    // named context is verified, used or not; the first failure in statement order is
    // reported, with the lines secilc adds when verification fails.
    const VERIFY_FAILED: &str = "Failed to verify cil database\nFailed to verify cil database\nPost process failed\nFailed to compile cildb: -1";
    for i in 0..l.live.len() {
        let s = l.live[i];
        if ast.stmts[s as usize].kw == Kw::Context {
            l.cur_stmt.set(s);
            l.context(l.args(s)[2])?;
        }
    }
    for (ui, &d) in l.users.iter().enumerate() {
        let s = ast.decls[d as usize].stmt;
        if user_level[ui].is_none() {
            return Err(err(format!(
                "User {} does not have a default level\nInvalid user at {}\n{VERIFY_FAILED}",
                l.name(d),
                l.here(s)
            )));
        }
        match &user_range[ui] {
            None => {
                return Err(err(format!(
                    "User {} does not have a level range\nInvalid user at {}\n{VERIFY_FAILED}",
                    l.name(d),
                    l.here(s)
                )))
            }
            Some(rg) => verify_range(&l, rg, &sens_cats).map_err(|m| {
                err(format!(
                    "{m}\nInvalid user at {}\n{VERIFY_FAILED}",
                    l.here(s)
                ))
            })?,
        }
    }
    let mut ctx_log = l.ctx_log.take();
    ctx_log.sort_by_key(|&(s, _)| s);
    for (s, c) in ctx_log {
        let kw = ast.stmts[s as usize].kw;
        let what = if kw == Kw::Context {
            "named context"
        } else {
            kw.text()
        };
        let fail = |m: String| {
            err(format!(
                "{m}\nInvalid context\nInvalid {what} at {}\n{VERIFY_FAILED}",
                l.here(s)
            ))
        };
        let rv = l.role_val[c.role as usize];
        if !user_roles[c.user as usize].contains(&rv) {
            return Err(fail(format!(
                "Role {} is invalid for user {}",
                l.name(l.roles[c.role as usize]),
                l.name(l.users[c.user as usize])
            )));
        }
        if !role_types[c.role as usize].get(c.ty as usize) {
            return Err(fail(format!(
                "Type {} is invalid for role {}",
                l.name(l.types[c.ty as usize]),
                l.name(l.roles[c.role as usize])
            )));
        }
        verify_range(&l, &c.range, &sens_cats).map_err(fail)?;
        if let Some((ul, uh)) = &user_range[c.user as usize] {
            if c.range.0.sens < ul.sens || c.range.1.sens > uh.sens {
                return Err(fail(format!(
                    "Range is invalid for user {}",
                    l.name(l.users[c.user as usize])
                )));
            }
        }
    }

    // The statements of booleanif branches, by their list node (tunableif bodies are
    // moved, so statements are not in node order).
    // Rules per (booleanif, branch as written), in walk order: a macro call's body sits
    // at the call's place in the branch.
    let mut cond_rules: FxHashMap<(u32, u32), Vec<u32>> = FxHashMap::default();
    for (i, st) in ast.stmts.iter().enumerate() {
        if st.cond != NONE && st.kw != Kw::Call {
            cond_rules
                .entry((st.cond, st.branch))
                .or_default()
                .push(i as u32);
        }
    }

    // No chain of bounds may loop (libsepol verifies this before building anything).
    hierarchy.verify(t, ast, names, &|d| l.name(d))?;

    // Pass 3: booleanifs, av rules, roleallow.
    let mut cond_of_stmt: FxHashMap<u32, usize> = FxHashMap::default();
    let bool_value = |l: &L<'_>, n: u32| -> Result<u32, Fail> {
        let d = l.look(Ns::Bools, n)?;
        Ok(l.dint[d as usize] + 1)
    };
    for &s in &l.live.clone() {
        let st = ast.stmts[s as usize];
        let a = l.args(s);
        match st.kw {
            Kw::TunableIf if !opts.preserve_tunables => {}
            Kw::BooleanIf | Kw::TunableIf => {
                // Expression to RPN.
                let mut expr = vec![];
                cond_rpn(&l, a[1], &mut expr, &bool_value)?;
                let mut depth: i32 = -1;
                for e in &expr {
                    match e {
                        CondExpr::Bool(_) => {
                            if depth == 9 {
                                return Err(err(
                                    "Conditional expression exceeded max allowable depth".into(),
                                ));
                            }
                            depth += 1
                        }
                        CondExpr::Not if depth < 0 => {
                            return Err(err("Invalid conditional expression".into()))
                        }
                        CondExpr::Not => {}
                        _ if depth < 1 => return Err(err("Invalid conditional expression".into())),
                        _ => depth -= 1,
                    }
                }
                if depth != 0 {
                    return Err(err("Invalid conditional expression".into()));
                }
                let mut swapped = false;
                if expr.last() == Some(&CondExpr::Not) {
                    expr.pop();
                    swapped = true;
                }
                let mut bools: Vec<u32> = vec![];
                let mut nbools = 0;
                for e in &expr {
                    if let CondExpr::Bool(b) = e {
                        let v = b.value();
                        if nbools > 5 || !bools.contains(&v) {
                            if nbools < 5 {
                                bools.push(v);
                            }
                            nbools += 1;
                        }
                    }
                }
                let mut pre = 0u32;
                if nbools <= 5 {
                    for test in 0..(1u32 << nbools) {
                        let val = |b: u32| {
                            let j = bools.iter().position(|&x| x == b).unwrap_or(0);
                            test & (1 << j) != 0
                        };
                        if eval_cond(&expr, &val) == Some(true) {
                            pre |= 1 << test;
                        }
                    }
                }
                let found = conds.iter().position(|c| {
                    c.nbools == nbools
                        && if nbools <= 5 {
                            c.bools.iter().all(|b| bools.contains(b)) && c.pre == pre
                        } else {
                            c.expr == expr
                        }
                });
                let idx = match found {
                    Some(i) => i,
                    None => {
                        conds.push(CondBuild {
                            nbools,
                            bools,
                            pre,
                            expr,
                            true_list: vec![],
                            false_list: vec![],
                        });
                        conds.len() - 1
                    }
                };
                cond_of_stmt.insert(s, idx);
                // libsepol keeps only the last (true ...) and (false ...) block.
                let mut last_true = None;
                let mut last_false = None;
                for &b in &t.kids(st.src)[2..] {
                    if t.sym(t.kids(b)[0]) == Some(Kw::True.sym()) {
                        last_true = Some(b)
                    } else {
                        last_false = Some(b)
                    }
                }
                let mut branches = vec![];
                let (tb, fb) = if swapped {
                    (last_false, last_true)
                } else {
                    (last_true, last_false)
                };
                if let Some(b) = tb {
                    branches.push((b, true));
                }
                if let Some(b) = fb {
                    branches.push((b, false));
                }
                for (b, br) in branches {
                    let rules = cond_rules.get(&(s, b)).map_or(&[][..], |v| v.as_slice());
                    for &rs in rules {
                        let kw = ast.stmts[rs as usize].kw;
                        if kw == Kw::TypeTransition && l.args(rs).len() == 6 {
                            // libsepol's __cil_cond_to_policydb refuses named transitions.
                            return Err(err(format!(
                                "typetransition with file name not allowed within a booleanif block.\nInvalid typetransition statement at {}",
                                l.here(rs)
                            )));
                        }
                        let mut cb = std::mem::replace(
                            &mut conds[idx],
                            CondBuild {
                                nbools: 0,
                                bools: vec![],
                                pre: 0,
                                expr: vec![],
                                true_list: vec![],
                                false_list: vec![],
                            },
                        );
                        let r = match kw {
                            Kw::TypeTransition | Kw::TypeChange | Kw::TypeMember => type_rule(
                                &mut l,
                                rs,
                                &mut avtab,
                                &mut avindex,
                                &mut ftrans,
                                &mut ftindex,
                                Some((&mut cb, br)),
                            ),
                            _ => av_rule(&mut l, rs, None, Some((&mut cb, br))),
                        };
                        conds[idx] = cb;
                        r?;
                    }
                }
            }
            Kw::AllowX | Kw::AuditAllowX | Kw::DontAuditX if st.cond == NONE => {
                if st.kw == Kw::DontAuditX && opts.disable_dontaudit {
                    continue;
                }
                av_rulex(&mut l, s, &mut xside, &mut xindex)?;
            }
            Kw::Allow | Kw::AuditAllow | Kw::DontAudit if st.cond == NONE => {
                if st.kw == Kw::DontAudit && opts.disable_dontaudit {
                    continue;
                }
                av_rule(&mut l, s, Some((&mut avtab, &mut avindex)), None)?;
            }
            Kw::RoleAllow => {
                let ra = l.role_vals(a[1])?;
                let rb = l.role_vals(a[2])?;
                for &x in &ra {
                    for &y in &rb {
                        role_allow.push(RoleAllow {
                            role: RoleId::new(x).expect("role"),
                            new_role: RoleId::new(y).expect("role"),
                        });
                    }
                }
            }
            _ => {}
        }
    }
    // The rule indexes are done with: freed before the tables are ordered and copied.
    drop(avindex);
    drop(xindex);
    // Extended permissions: flushed from their side table (libsepol's avrulex table: 1024
    // buckets by a key hash that includes the kind, insertion order within a bucket).
    let mut xorder: Vec<usize> = (0..xside.len()).collect();
    xorder.sort_by_key(|&i| (avrulex_bucket(&xside[i].0), i));
    let mut xperms_vec: Vec<arbiter_policy::avtab::Xperms> = vec![];
    for i in xorder {
        let (key, bits) = &xside[i];
        let list = xperms_list(bits);
        // Each insert for the same key lands before the previous one.
        for x in list.into_iter().rev() {
            let idx = xperms_vec.len() as u32;
            xperms_vec.push(x);
            avtab.push(AvtabEntry {
                key: *key,
                datum: AvtabDatum::Xperms(idx),
            });
        }
    }
    if !avtab.iter().any(|e| !e.key.kind.is_type_rule()) {
        return Err(err("Policy must include at least one avrule".into()));
    }
    avtab_order(&mut avtab);
    // Number extended permissions in table order, as a reader of the file would.
    let mut renumbered = Vec::with_capacity(xperms_vec.len());
    for e in avtab.iter_mut() {
        if let AvtabDatum::Xperms(i) = e.datum {
            e.datum = AvtabDatum::Xperms(renumbered.len() as u32);
            renumbered.push(xperms_vec[i as usize]);
        }
    }
    let xperms_vec = renumbered;
    role_trans.reverse();
    role_allow.reverse();

    // Role and user bitmaps.
    for (ri, b) in role_types.iter().enumerate() {
        let v = l.role_val[ri];
        if v == 1 {
            continue;
        }
        rdatums[v as usize - 1].types = Ebitmap::from_bits(b.iter().map(|i| l.type_val[i] - 1));
    }
    for (ui, rs) in user_roles.iter().enumerate() {
        udatums[ui].roles = Ebitmap::from_bits(rs.iter().filter(|&&v| v != 1).map(|v| v - 1));
    }
    for (i, c) in sens_cats.iter().enumerate() {
        sdatums[i].level.cats = Ebitmap::from_bits(c.iter().map(|x| x as u32));
    }
    for (i, c) in classes.iter_mut().enumerate() {
        c.constraints = std::mem::take(&mut constraints[i]).into_boxed_slice();
        c.validatetrans = std::mem::take(&mut validatetrans[i]).into_boxed_slice();
    }
    for (c, p) in role_bounds {
        let cv = l.role_val[c as usize];
        rdatums[cv as usize - 1].bounds = RoleId::new(l.role_val[p as usize]);
    }
    for (c, p) in user_bounds {
        udatums[c as usize].bounds = UserId::new(p + 1);
    }
    for (a, b) in type_bounds {
        if let (TRef::Type(x), TRef::Type(y)) = (a, b) {
            tdatums[l.type_val[x as usize] as usize - 1].bounds = Some(tid(l.type_val[y as usize]));
        }
    }

    // Conditional list: newest node first, lists with type rules moved to the front.
    let mut cond_nodes = vec![];
    let mut cond_avtab = Avtab::default();
    let bool_state = |v: u32| bdatums[v as usize - 1].state;
    for cb in conds.into_iter().rev() {
        let state = eval_cond(&cb.expr, &bool_state).unwrap_or(false);
        let mut push = |mut list: Vec<AvtabEntry>| -> std::ops::Range<u32> {
            list.reverse();
            let start = cond_avtab.entries.len() as u32;
            cond_avtab.entries.extend(cond_optimize(list));
            start..cond_avtab.entries.len() as u32
        };
        let true_list = push(cb.true_list);
        let false_list = push(cb.false_list);
        cond_nodes.push(CondNode {
            cur_state: state,
            expr: cb.expr.into_boxed_slice(),
            true_list,
            false_list,
        });
    }

    // Initial SIDs in sidorder.
    let mut initial_sids = vec![];
    for (i, &sd) in sids.iter().enumerate() {
        if let Some(c) = sidctx.get(&sd) {
            initial_sids.push(InitialSid {
                sid: i as u32 + 1,
                context: l.sepol_context(c)?,
            });
        }
    }
    // Context rules, sorted as libsepol does.
    let fc_cmp = |a: &FileCon, b: &FileCon| fc_order(fc_data(&a.0), a, fc_data(&b.0), b);
    // The same comparison with each path's (meta, stem, length) computed once, not per
    // comparison.
    let fc_keys: Vec<(bool, usize, usize)> = filecons.iter().map(|f| fc_data(&f.0)).collect();
    let perm = crate::msort::order(filecons.len(), &|i, j| {
        fc_order(fc_keys[i], &filecons[i], fc_keys[j], &filecons[j])
    });
    crate::msort::permute(&mut filecons, &perm);
    dedup_rules(&mut filecons, &fc_cmp, "filecon", opts.verbose, |x| {
        Some(l.here(x.3))
    })?;
    let port_cmp = |a: &(u32, u32, u32, Ctx), b: &(u32, u32, u32, Ctx)| {
        let d = (a.2 as i32 - a.1 as i32) - (b.2 as i32 - b.1 as i32);
        d.cmp(&0).then(a.1.cmp(&b.1)).then(a.0.cmp(&b.0))
    };
    msort(&mut portcons, &port_cmp);
    dedup_rules(&mut portcons, &port_cmp, "portcon", opts.verbose, |_| None)?;
    let genfs_cmp = |a: &(Vec<u8>, Vec<u8>, u32, Ctx), b: &(Vec<u8>, Vec<u8>, u32, Ctx)| {
        a.0.cmp(&b.0).then(a.1.cmp(&b.1))
    };
    msort(&mut genfscons, &genfs_cmp);
    dedup_rules(&mut genfscons, &genfs_cmp, "genfscon", opts.verbose, |_| {
        None
    })?;
    let fsuse_cmp =
        |a: &(u32, Vec<u8>, Ctx), b: &(u32, Vec<u8>, Ctx)| a.0.cmp(&b.0).then(a.1.cmp(&b.1));
    msort(&mut fsuses, &fsuse_cmp);
    dedup_rules(&mut fsuses, &fsuse_cmp, "fsuse", opts.verbose, |_| None)?;

    let netif_cmp = |a: &(Vec<u8>, Ctx, Ctx), b: &(Vec<u8>, Ctx, Ctx)| a.0.cmp(&b.0);
    msort(&mut netifcons, &netif_cmp);
    dedup_rules(&mut netifcons, &netif_cmp, "netifcon", opts.verbose, |_| {
        None
    })?;
    let ip_bytes = |x: &std::net::IpAddr| -> Vec<u8> {
        match x {
            std::net::IpAddr::V4(v) => v.octets().to_vec(),
            std::net::IpAddr::V6(v) => v.octets().to_vec(),
        }
    };
    let node_cmp = |a: &(std::net::IpAddr, std::net::IpAddr, Ctx),
                    b: &(std::net::IpAddr, std::net::IpAddr, Ctx)| {
        match (a.0.is_ipv4(), b.0.is_ipv4()) {
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        ip_bytes(&b.1)
            .cmp(&ip_bytes(&a.1))
            .then(ip_bytes(&a.0).cmp(&ip_bytes(&b.0)))
    };
    msort(&mut nodecons, &node_cmp);
    dedup_rules(&mut nodecons, &node_cmp, "nodecon", opts.verbose, |_| None)?;
    type Pk = (Vec<u8>, std::net::Ipv6Addr, u32, u32, Ctx);
    let pkey_cmp = |a: &Pk, b: &Pk| {
        let d = (a.3 as i32 - a.2 as i32) - (b.3 as i32 - b.2 as i32);
        a.0.cmp(&b.0).then(d.cmp(&0)).then(a.2.cmp(&b.2))
    };
    msort(&mut ibpkeycons, &pkey_cmp);
    dedup_rules(
        &mut ibpkeycons,
        &pkey_cmp,
        "ibpkeycon",
        opts.verbose,
        |_| None,
    )?;
    let endport_cmp =
        |a: &(Vec<u8>, u32, Ctx), b: &(Vec<u8>, u32, Ctx)| a.0.cmp(&b.0).then(a.1.cmp(&b.1));
    msort(&mut ibendportcons, &endport_cmp);
    dedup_rules(
        &mut ibendportcons,
        &endport_cmp,
        "ibendportcon",
        opts.verbose,
        |_| None,
    )?;
    crate::xencon::check_duplicates(&xencons, opts.verbose, opts.multiple_decls)?;
    let xen = if opts.target == crate::Target::Xen {
        Some(crate::xencon::lower(xencons, opts.multiple_decls, |c| {
            l.sepol_context(c)
        })?)
    } else {
        None
    };
    let mut netifs = vec![];
    for (name, c1, c2) in &netifcons {
        netifs.push(arbiter_policy::ocontext::NetifCon {
            name: String::from_utf8_lossy(name).into(),
            if_context: l.sepol_context(c1)?,
            msg_context: l.sepol_context(c2)?,
        });
    }
    let (mut nodes, mut nodes6) = (vec![], vec![]);
    for (addr, mask, c) in &nodecons {
        match (addr, mask) {
            (std::net::IpAddr::V4(a4), std::net::IpAddr::V4(m4)) => {
                nodes.push(arbiter_policy::ocontext::NodeCon {
                    addr: a4.octets(),
                    mask: m4.octets(),
                    context: l.sepol_context(c)?,
                })
            }
            (std::net::IpAddr::V6(a6), std::net::IpAddr::V6(m6)) => {
                nodes6.push(arbiter_policy::ocontext::Node6Con {
                    addr: a6.octets(),
                    mask: m6.octets(),
                    context: l.sepol_context(c)?,
                })
            }
            _ => {}
        }
    }
    let mut ibpkeys = vec![];
    for (_, prefix, lo, hi, c) in &ibpkeycons {
        let o = prefix.octets();
        let mut sp = [0u8; 8];
        sp.copy_from_slice(&o[..8]);
        ibpkeys.push(arbiter_policy::ocontext::IbPkeyCon {
            subnet_prefix: sp,
            low: *lo as u16,
            high: *hi as u16,
            context: l.sepol_context(c)?,
        });
    }
    let mut ibendports = vec![];
    for (dev, port, c) in &ibendportcons {
        ibendports.push(arbiter_policy::ocontext::IbEndportCon {
            device: String::from_utf8_lossy(dev).into(),
            port: *port as u8,
            context: l.sepol_context(c)?,
        });
    }
    let proto_num = |p: u32| match p {
        1 => 17,
        2 => 6,
        3 => 33,
        _ => 132,
    };
    let mut ports = vec![];
    for (p, lo, hi, c) in &portcons {
        ports.push(PortCon {
            protocol: proto_num(*p),
            low: *lo,
            high: *hi,
            context: l.sepol_context(c)?,
        });
    }
    let mut fs_use = vec![];
    for (ty, fs, c) in &fsuses {
        fs_use.push(FsUse {
            behavior: match ty {
                1 => FsUseBehavior::Xattr,
                2 => FsUseBehavior::Trans,
                _ => FsUseBehavior::Task,
            },
            fstype: String::from_utf8_lossy(fs).into(),
            context: l.sepol_context(c)?,
        });
    }
    let class_named = |n: &str| {
        classes
            .iter()
            .position(|c| &*c.name == n)
            .map(|i| i as u32 + 1)
    };
    let mut genfs = vec![];
    for (fs, path, ft, c) in &genfscons {
        let class = match ft {
            0 => 0,
            1 => class_named("file").unwrap_or(0),
            2 => class_named("dir").unwrap_or(0),
            3 => class_named("chr_file").unwrap_or(0),
            4 => class_named("blk_file").unwrap_or(0),
            5 => class_named("sock_file").unwrap_or(0),
            6 => class_named("fifo_file").unwrap_or(0),
            _ => class_named("lnk_file").unwrap_or(0),
        };
        genfs.push(GenfsCon {
            fstype: String::from_utf8_lossy(fs).into(),
            path: String::from_utf8_lossy(path).into(),
            class,
            context: l.sepol_context(c)?,
        });
    }
    // Users: roles/ranges set; check every user has level and range (non-MLS too).
    let mut policy = Policy {
        version: opts.policy_version,
        mls: l.mls,
        handle_unknown: opts
            .handle_unknown
            .or(handle_unknown)
            .unwrap_or(HandleUnknown::Deny),
        policycaps: Ebitmap::from_bits(policycaps),
        permissive: Ebitmap::from_bits(permissive),
        neveraudit: Ebitmap::default(),
        commons,
        classes,
        roles: rdatums,
        types: tdatums,
        type_aliases,
        users: udatums,
        bools: bdatums,
        sensitivities: if l.mls { sdatums } else { vec![] },
        sensitivity_aliases: if l.mls { sens_aliases } else { vec![] },
        categories: if l.mls { cdatums } else { vec![] },
        category_aliases: if l.mls { cat_aliases } else { vec![] },
        avtab: Avtab {
            entries: avtab,
            xperms: xperms_vec,
        },
        cond_nodes,
        cond_avtab,
        role_trans,
        role_allow,
        filename_trans: ftrans,
        ocontexts: OContexts {
            initial_sids,
            ports,
            fs_use,
            netifs,
            nodes,
            nodes6,
            ibpkeys,
            ibendports,
            ..Default::default()
        },
        genfs,
        range_trans,
        type_attr_map: vec![],
    };
    if let Some(xen) = xen {
        crate::xencon::make_xen(&mut policy, xen);
    }
    policy.filename_trans.sort_by(|a, b| {
        (a.target, a.class, a.name.as_bytes()).cmp(&(b.target, b.class, b.name.as_bytes()))
    });
    // type_attr_map: each type maps to itself and its kept attributes.
    let mut tam: Vec<Vec<u32>> = (0..policy.types.len() as u32).map(|i| vec![i]).collect();
    for (ai, &v) in l.attr_val.iter().enumerate() {
        if v == 0 {
            continue;
        }
        if let Some(m) = &l.attr_members[ai] {
            for ti in m.iter() {
                tam[l.type_val[ti] as usize - 1].push(v - 1);
            }
        }
    }
    policy.type_attr_map = tam.into_iter().map(Ebitmap::from_bits).collect();

    // secilc's neverallow and bounds checks (without -N) on the finished policy.
    if !opts.disable_neverallow {
        let object_r = l.role_val.iter().position(|&v| v == 1);
        let object_r_types = object_r.map_or_else(Ebitmap::default, |ri| {
            Ebitmap::from_bits(role_types[ri].iter().map(|i| l.type_val[i] - 1))
        });
        let mut nevers = Vec::with_capacity(neverallows.len());
        for &s in neverallows.iter().rev() {
            nevers.push(ast_rule(&mut l, s)?);
        }
        let input = crate::check::Input {
            policy: &policy,
            tree: t,
            ast,
            names,
            type_val: &l.type_val.clone(),
            object_r_types,
            verbose: opts.verbose > 0,
        };
        let mut rules = |extended: bool| -> Result<Vec<crate::check::AstRule>, Fail> {
            let want = if extended { Kw::AllowX } else { Kw::Allow };
            let stmts: Vec<u32> = l
                .live
                .iter()
                .copied()
                .filter(|&s| ast.stmts[s as usize].kw == want)
                .collect();
            stmts.into_iter().map(|s| ast_rule(&mut l, s)).collect()
        };
        crate::check::run(&input, &nevers, &mut rules)?;
    }

    // Text outputs.
    let mut fc = Vec::new();
    for (path, ft, ctx, _) in &filecons {
        fc.extend_from_slice(path);
        fc.extend_from_slice(match ft {
            1 => b"\t--",
            2 => b"\t-d",
            3 => b"\t-c",
            4 => b"\t-b",
            5 => b"\t-s",
            6 => b"\t-p",
            7 => b"\t-l",
            _ => b"",
        });
        match ctx {
            Some(c) => {
                fc.push(b'\t');
                fc.extend_from_slice(ast_name(&l, l.users[c.user as usize]).as_bytes());
                fc.push(b':');
                fc.extend_from_slice(ast_name(&l, l.roles[c.role as usize]).as_bytes());
                fc.push(b':');
                fc.extend_from_slice(ast_name(&l, l.types[c.ty as usize]).as_bytes());
                if l.mls {
                    fc.push(b':');
                    level_text(&l, &c.range.0, &mut fc);
                    if c.range.0 != c.range.1 {
                        fc.push(b'-');
                        level_text(&l, &c.range.1, &mut fc);
                    }
                }
            }
            None => fc.extend_from_slice(b"\t<<none>>"),
        }
        fc.push(b'\n');
    }
    let mut seusers = Vec::new();
    let seuser_line = |name: &[u8], u: u32, rg: &(Lvl, Lvl), out: &mut Vec<u8>| {
        out.extend_from_slice(name);
        out.push(b':');
        out.extend_from_slice(l.name(u).as_bytes());
        if l.mls {
            out.push(b':');
            level_text(&l, &rg.0, out);
            out.push(b'-');
            level_text(&l, &rg.1, out);
        }
        out.push(b'\n');
    };
    for (name, u, rg) in selinuxusers.iter().rev() {
        seuser_line(int.bytes(*name), *u, rg, &mut seusers);
    }
    if let Some((u, rg)) = &seuser_default {
        seuser_line(b"__default__", *u, rg, &mut seusers);
    }
    let mut users_extra = Vec::new();
    for (u, p) in &userprefixes {
        users_extra.extend_from_slice(b"user ");
        users_extra.extend_from_slice(l.name(*u).as_bytes());
        users_extra.extend_from_slice(b" prefix ");
        users_extra.extend_from_slice(int.bytes(*p));
        users_extra.extend_from_slice(b";\n");
    }
    Ok(Lowered {
        policy,
        file_contexts: fc,
        seusers,
        users_extra,
    })
}

/// An av rule statement as the checks see it (`crate::check::AstRule`).
fn ast_rule(l: &mut L<'_>, s: u32) -> Result<crate::check::AstRule, Fail> {
    use crate::check::TypeRef;
    let st = l.ast.stmts[s as usize];
    let a = l.args(s);
    let operand = |l: &mut L<'_>, n: u32| -> Result<(Option<TypeRef>, String), Fail> {
        Ok(match l.tref(n)? {
            TRef::Type(i) => (Some(TypeRef::Type(i)), l.name(l.types[i as usize])),
            TRef::Attr(x) => {
                let m = l.members(x)?;
                (Some(TypeRef::Attr(x, m)), l.name(l.attrs[x as usize]))
            }
            TRef::SelfT => (None, Kw::SelfKw.text().into()),
        })
    };
    let (src, src_name) = operand(l, a[1])?;
    let (tgt, tgt_name) = operand(l, a[2])?;
    let src = src.ok_or_else(|| err(format!("self is not a valid source at {}", l.here(s))))?;
    let x = matches!(
        st.kw,
        Kw::AllowX | Kw::AuditAllowX | Kw::DontAuditX | Kw::NeverAllowX
    );
    let (perms, ioctls, perm_text) = if x {
        let (ci, nums) = permx_value(l, a[3])?;
        let px = if l.t.is_list(a[3]) {
            a[3]
        } else {
            let d = l.look(Ns::PermissionX, a[3])?;
            l.args(l.ast.decls[d as usize].stmt)[2]
        };
        let k = l.t.kids(px);
        let expr = node_text(l, k[2]);
        let expr = if l.t.is_list(k[2]) {
            expr
        } else {
            format!("({expr})")
        };
        let text = format!("(ioctl {} {expr})", node_text(l, k[1]));
        let cd = l.classes[ci as usize];
        let bit = l.perm_bit(cd, ci, Kw::Ioctl.sym())?;
        (vec![(ci, bit)], Some((ci, nums)), text)
    } else {
        (l.classperms(a[3])?, None, node_text(l, a[3]))
    };
    Ok(crate::check::AstRule {
        stmt: s,
        src,
        tgt,
        perms,
        ioctls,
        text: format!("({} {src_name} {tgt_name} {perm_text})", st.kw.text()),
    })
}

/// The lines secilc adds when a statement fails while the binary policy is built.
fn binary_failed(l: &L<'_>, s: u32) -> [String; 3] {
    [
        format!("Binary policy creation failed at {}", l.here(s)),
        "Failed to generate binary".into(),
        "Failed to build policydb".into(),
    ]
}

/// A statement as CIL text (atoms and lists), for messages.
fn node_text(l: &L<'_>, n: u32) -> String {
    let mut out = String::new();
    let mut stack: Vec<(u32, usize)> = vec![(n, 0)];
    while let Some((node, i)) = stack.pop() {
        if !l.t.is_list(node) {
            out.push_str(&l.int.str(l.sym(node)));
            continue;
        }
        let k = l.t.kids(node);
        if i == 0 {
            out.push('(');
        }
        if i < k.len() {
            if i > 0 {
                out.push(' ');
            }
            stack.push((node, i + 1));
            stack.push((k[i], 0));
        } else {
            out.push(')');
        }
    }
    out
}

/// `__cil_verify_levelrange`: low sensitivity not above high, low categories within high,
/// every category allowed for its sensitivity.
fn verify_range(l: &L<'_>, rg: &(Lvl, Lvl), sens_cats: &[Bits]) -> Result<(), String> {
    let (lo, hi) = rg;
    if lo.sens > hi.sens {
        return Err(format!(
            "Sensitivity {} does not dominate {}",
            l.name(l.sens[hi.sens as usize]),
            l.name(l.sens[lo.sens as usize])
        ));
    }
    for c in &lo.cats {
        if !hi.cats.contains(c) {
            return Err(format!(
                "Failed to find category {} in category list\nLow level category set must be a subset of the high level category set",
                l.name(l.cats[*c as usize])
            ));
        }
    }
    for (lv, which) in [(lo, "Low"), (hi, "High")] {
        for c in &lv.cats {
            if !sens_cats[lv.sens as usize].get(*c as usize) {
                return Err(format!(
                    "Category {} cannot be used with sensitivity {}\n{which} level sensitivity and categories are not associated",
                    l.name(l.cats[*c as usize]),
                    l.name(l.sens[lv.sens as usize])
                ));
            }
        }
    }
    Ok(())
}

fn ast_name(l: &L<'_>, d: u32) -> String {
    l.name(d)
}

/// Collapses equal keys of a sorted context-rule list, keeping the first. libsepol 3.4
/// only reports duplicates when its log level is at least "warning" (`-v`), and then as
/// an error; at the default level they are dropped silently.
fn dedup_rules<T>(
    v: &mut Vec<T>,
    cmp: &impl Fn(&T, &T) -> Ordering,
    kind: &str,
    verbose: u8,
    loc: impl Fn(&T) -> Option<String>,
) -> Result<(), Fail> {
    if verbose > 0 {
        let mut i = 0;
        while i < v.len() {
            let mut j = i + 1;
            while j < v.len() && cmp(&v[i], &v[j]) == Ordering::Equal {
                j += 1;
            }
            if j - i > 1 {
                let mut m = vec![format!("Found conflicting {kind} rules")];
                m.extend(v[i..j].iter().filter_map(&loc).map(|l| format!("  at {l}")));
                m.push(format!("Problems processing {kind} rules"));
                m.push("Failed post db handling".into());
                m.push("Post process failed".into());
                m.push("Failed to compile cildb: -1".into());
                return Err(Fail::bad(m));
            }
            i = j;
        }
    }
    v.dedup_by(|b, a| cmp(a, b) == Ordering::Equal);
    Ok(())
}

/// libsepol's category-list compressor (`__cil_level_to_string`).
fn level_text(l: &L<'_>, lv: &Lvl, out: &mut Vec<u8>) {
    out.extend_from_slice(l.name(l.sens[lv.sens as usize]).as_bytes());
    if lv.cats.is_empty() {
        return;
    }
    out.push(b':');
    let cn = |c: u32| l.name(l.cats[c as usize]);
    let (mut first, mut last): (i64, i64) = (-1, -1);
    let (mut s1, mut s2) = (String::new(), String::new());
    for (i, &c) in lv.cats.iter().enumerate() {
        let c64 = c as i64;
        if first == -1 {
            s1 = cn(c);
            first = c64;
            last = c64;
        } else if c64 == last + 1 {
            last += 1;
            s2 = cn(c);
        } else {
            let t = if first == last {
                format!("{},{}", s1, cn(c))
            } else if last == first + 1 {
                format!("{},{},{}", s1, s2, cn(c))
            } else {
                format!("{}.{},{}", s1, s2, cn(c))
            };
            out.extend_from_slice(t.as_bytes());
            first = -1;
            last = -1;
            if i + 1 < lv.cats.len() {
                out.push(b',');
            }
        }
    }
    if first != -1 {
        let t = if first == last {
            s1
        } else if last == first + 1 {
            format!("{s1},{s2}")
        } else {
            format!("{s1}.{s2}")
        };
        out.extend_from_slice(t.as_bytes());
    }
}

/// (has meta character, stem length, string length) of a filecon path.
/// A `filecon` as lowered: path, file type, context (none for `<<none>>`), statement.
type FileCon = (Vec<u8>, u32, Option<Ctx>, u32);

/// libsepol's `cil_post_filecon_compare` given each side's [`fc_data`].
fn fc_order(
    fa: (bool, usize, usize),
    a: &FileCon,
    fb: (bool, usize, usize),
    b: &FileCon,
) -> Ordering {
    if fa.0 && !fb.0 {
        return Ordering::Less;
    }
    if fb.0 && !fa.0 {
        return Ordering::Greater;
    }
    fa.1.cmp(&fb.1)
        .then(fa.2.cmp(&fb.2))
        .then(a.1.cmp(&b.1))
        .then(a.0.cmp(&b.0))
}

fn fc_data(p: &[u8]) -> (bool, usize, usize) {
    let (mut meta, mut stem, mut len) = (false, 0, 0);
    let mut c = 0;
    while c < p.len() {
        match p[c] {
            b'.' | b'^' | b'$' | b'?' | b'*' | b'+' | b'|' | b'[' | b'(' | b'{' => meta = true,
            b'\\' => {
                c += 1;
                if c >= p.len() {
                    if !meta {
                        stem += 1;
                    }
                    len += 1;
                    return (meta, stem, len);
                }
                if !meta {
                    stem += 1;
                }
            }
            _ => {
                if !meta {
                    stem += 1;
                }
            }
        }
        len += 1;
        c += 1;
    }
    (meta, stem, len)
}

/// libsepol's `cond_optimize`: the list is stored newest first; type rules after the head
/// move to the front (each in turn, so they end up reversed).
fn cond_optimize(list: Vec<AvtabEntry>) -> Vec<AvtabEntry> {
    if list.is_empty() {
        return list;
    }
    let mut front: Vec<AvtabEntry> = vec![];
    let mut rest: Vec<AvtabEntry> = vec![list[0]];
    for e in &list[1..] {
        if e.key.kind.is_type_rule() {
            front.push(*e);
        } else {
            rest.push(*e);
        }
    }
    front.reverse();
    front.extend(rest);
    front
}

fn cond_rpn(
    l: &L<'_>,
    n: u32,
    out: &mut Vec<CondExpr>,
    bv: &dyn Fn(&L<'_>, u32) -> Result<u32, Fail>,
) -> Result<(), Fail> {
    let t = l.t;
    let bool_id = |v: u32| arbiter_policy::BoolId::new(v as _).expect("bool");
    if !t.is_list(n) {
        out.push(CondExpr::Bool(bool_id(bv(l, n)?)));
        return Ok(());
    }
    let k = t.kids(n);
    if k.is_empty() {
        return Err(err("Invalid conditional expression".into()));
    }
    let op = t.sym(k[0]).and_then(Kw::of);
    let opx = match op {
        Some(Kw::Not) => Some(CondExpr::Not),
        Some(Kw::And) => Some(CondExpr::And),
        Some(Kw::Or) => Some(CondExpr::Or),
        Some(Kw::Xor) => Some(CondExpr::Xor),
        Some(Kw::Eq) => Some(CondExpr::Eq),
        Some(Kw::Neq) => Some(CondExpr::Neq),
        _ => None,
    };
    match opx {
        Some(CondExpr::Not) => {
            if k.len() != 2 {
                return Err(err("Invalid conditional expression".into()));
            }
            cond_rpn(l, k[1], out, bv)?;
            out.push(CondExpr::Not);
        }
        Some(o) => {
            if k.len() != 3 {
                return Err(err("Invalid conditional expression".into()));
            }
            cond_rpn(l, k[1], out, bv)?;
            cond_rpn(l, k[2], out, bv)?;
            out.push(o);
        }
        None => {
            cond_rpn(l, k[0], out, bv)?;
            for &x in &k[1..] {
                cond_rpn(l, x, out, bv)?;
                out.push(CondExpr::Or);
            }
        }
    }
    Ok(())
}

fn constraint_expr(l: &mut L<'_>, n: u32) -> Result<Vec<ConstraintExpr>, Fail> {
    let t = l.t;
    let k = t.kids(n);
    let op = k.first().and_then(|&x| t.sym(x)).and_then(Kw::of);
    let mut out = vec![];
    match op {
        Some(Kw::Not) => {
            out = constraint_expr(l, k[1])?;
            out.push(ConstraintExpr::Not);
        }
        Some(o @ (Kw::And | Kw::Or)) => {
            out = constraint_expr(l, k[1])?;
            out.extend(constraint_expr(l, k[2])?);
            out.push(if o == Kw::And {
                ConstraintExpr::And
            } else {
                ConstraintExpr::Or
            });
        }
        Some(o) => {
            let cop = match o {
                Kw::Eq => ConstraintOp::Eq,
                Kw::Neq => ConstraintOp::Neq,
                Kw::Dom => ConstraintOp::Dom,
                Kw::Domby => ConstraintOp::Domby,
                _ => ConstraintOp::Incomp,
            };
            let left = t.sym(k[1]).and_then(Kw::of);
            let right = t.sym(k[2]).and_then(Kw::of);
            let a = match left {
                Some(Kw::U1) => attr::USER,
                Some(Kw::U2) => attr::USER | attr::TARGET,
                Some(Kw::U3) => attr::USER | attr::XTARGET,
                Some(Kw::R1) => attr::ROLE,
                Some(Kw::R2) => attr::ROLE | attr::TARGET,
                Some(Kw::R3) => attr::ROLE | attr::XTARGET,
                Some(Kw::T1) => attr::TYPE,
                Some(Kw::T2) => attr::TYPE | attr::TARGET,
                Some(Kw::T3) => attr::TYPE | attr::XTARGET,
                Some(Kw::L1) => match right {
                    Some(Kw::L2) => attr::L1L2,
                    Some(Kw::H1) => attr::L1H1,
                    _ => attr::L1H2,
                },
                Some(Kw::L2) => attr::L2H2,
                Some(Kw::H1) => match right {
                    Some(Kw::L2) => attr::H1L2,
                    _ => attr::H1H2,
                },
                _ => return Err(err("Invalid constraint expression".into())),
            };
            let operand = matches!(
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
                        | Kw::L1
                        | Kw::L2
                        | Kw::H1
                        | Kw::H2
                )
            );
            if operand {
                out.push(ConstraintExpr::Attr { attr: a, op: cop });
            } else {
                let items: Vec<u32> = if t.is_list(k[2]) {
                    t.kids(k[2]).to_vec()
                } else {
                    vec![k[2]]
                };
                let mut names: Vec<u32> = vec![];
                let mut tnames: Vec<u32> = vec![];
                for x in items {
                    match left {
                        Some(Kw::U1 | Kw::U2 | Kw::U3) => {
                            for ui in l.user_set(x)?.iter() {
                                names.push(ui as u32);
                            }
                        }
                        Some(Kw::R1 | Kw::R2 | Kw::R3) => {
                            for v in l.role_vals(x)? {
                                names.push(v - 1)
                            }
                        }
                        _ => {
                            let r = l.tref(x)?;
                            match r {
                                TRef::Type(i) => tnames.push(l.type_val[i as usize] - 1),
                                TRef::Attr(a) if l.attr_val[a as usize] != 0 => {
                                    tnames.push(l.attr_val[a as usize] - 1)
                                }
                                _ => {}
                            }
                            for v in l.expand_all(r)? {
                                names.push(v - 1)
                            }
                        }
                    }
                }
                // The source-level type set exists in the format from version 29.
                let type_names = (l.opts.policy_version >= 29).then(|| {
                    Box::new(TypeSet {
                        types: Ebitmap::from_bits(tnames),
                        negset: Ebitmap::default(),
                        flags: 0,
                    })
                });
                out.push(ConstraintExpr::Names {
                    attr: a,
                    op: cop,
                    names: Ebitmap::from_bits(names),
                    type_names,
                });
            }
        }
        None => return Err(err("Invalid constraint expression".into())),
    }
    Ok(out)
}

/// libsepol's `avrulex_hash` bucket (1024 buckets whatever the table's size).
fn avrulex_bucket(key: &AvtabKey) -> u32 {
    arbiter_policy::avtab::libsepol_murmur(&[
        u32::from(key.class.value()),
        u32::from(key.target.value()),
        u32::from(key.source.value()),
        u32::from(key.kind.bits()),
    ]) & 1023
}

/// `__cil_permx_bitmap_to_sepol_xperms_list`: runs of ioctl numbers cut at function 0xff
/// or a gap; whole drivers go to one driver entry (last), the rest to per-driver function
/// entries in ascending driver order.
pub(crate) fn xperms_list(bits: &Bits) -> Vec<arbiter_policy::avtab::Xperms> {
    use arbiter_policy::avtab::{Xperms, XpermsKind};
    let set_range = |x: &mut Xperms, lo: u32, hi: u32| {
        for b in lo..=hi {
            x.perms[(b / 32) as usize] |= 1 << (b % 32);
        }
    };
    let mut out = vec![];
    let mut partial: Option<Xperms> = None;
    let mut complete: Option<Xperms> = None;
    let mut low = 0u32;
    let mut start = true;
    for i in bits.iter() {
        let i = i as u32;
        if start {
            low = i;
            start = false;
        }
        if i & 0xff != 0xff && bits.get(i as usize + 1) {
            continue;
        }
        let high = i;
        start = true;
        if low & 0xff == 0 && high & 0xff == 0xff {
            let c = complete.get_or_insert(Xperms {
                kind: XpermsKind::IoctlDriver,
                driver: 0,
                perms: [0; 8],
            });
            set_range(c, low >> 8, low >> 8);
        } else {
            if partial
                .as_ref()
                .is_some_and(|p| p.driver as u32 != low >> 8)
            {
                out.extend(partial.take());
            }
            let p = partial.get_or_insert(Xperms {
                kind: XpermsKind::IoctlFunction,
                driver: (low >> 8) as u8,
                perms: [0; 8],
            });
            set_range(p, low & 0xff, high & 0xff);
        }
    }
    out.extend(partial);
    out.extend(complete);
    out
}

/// An `allowx`-family rule into the side table (union of ioctl numbers per key).
fn av_rulex(
    l: &mut L<'_>,
    s: u32,
    xside: &mut Vec<(AvtabKey, Bits)>,
    xindex: &mut FxHashMap<AvtabKey, usize>,
) -> Result<(), Fail> {
    let st = l.ast.stmts[s as usize];
    let a = l.args(s);
    let kind = match st.kw {
        Kw::AllowX => AvtabKind::XpermsAllowed,
        Kw::AuditAllowX => AvtabKind::XpermsAuditAllow,
        _ => AvtabKind::XpermsDontAudit,
    };
    let (ci, nums) = permx_value(l, a[3])?;
    let src = l.tref(a[1])?;
    let tgt = l.tref(a[2])?;
    let (srcs, selfy) = if tgt == TRef::SelfT {
        (l.expand_all(src)?, true)
    } else {
        (l.expand_av(src)?, false)
    };
    let tgts = if selfy { vec![] } else { l.expand_av(tgt)? };
    for &sv in &srcs {
        let tl: &[u32] = if selfy {
            std::slice::from_ref(&sv)
        } else {
            &tgts
        };
        for &tv in tl {
            let key = AvtabKey {
                source: TypeId::new(sv as u16).expect("type"),
                target: TypeId::new(tv as u16).expect("type"),
                class: ClassId::new(ci as u16 + 1).expect("class"),
                kind,
            };
            match xindex.get(&key) {
                Some(&i) => xside[i].1.or(&nums),
                None => {
                    xindex.insert(key, xside.len());
                    xside.push((key, nums.clone()));
                }
            }
        }
    }
    Ok(())
}

/// A permissionx: its class position and the set of 16-bit ioctl numbers.
fn permx_value(l: &L<'_>, n: u32) -> Result<(u32, Bits), Fail> {
    let n = if l.t.is_list(n) {
        n
    } else {
        let d = l.look(Ns::PermissionX, n)?;
        l.args(l.ast.decls[d as usize].stmt)[2]
    };
    let k = l.t.kids(n);
    let ci = l.class_of(k[1])?;
    Ok((ci, ioctl_expr(l, k[2])?))
}

fn ioctl_num(l: &L<'_>, n: u32) -> Result<u32, Fail> {
    let txt = String::from_utf8_lossy(l.atom_bytes(n)?);
    let v = match txt.strip_prefix("0x").or_else(|| txt.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => txt.parse::<u32>().ok(),
    };
    v.filter(|&v| v <= 0xffff)
        .ok_or_else(|| err(format!("Invalid ioctl number {txt}")))
}

fn ioctl_expr(l: &L<'_>, n: u32) -> Result<Bits, Fail> {
    const N: usize = 1 << 16;
    if !l.t.is_list(n) {
        let mut b = Bits::new(N);
        b.set(ioctl_num(l, n)? as usize);
        return Ok(b);
    }
    let k = l.t.kids(n);
    let op = k.first().and_then(|&x| l.t.sym(x)).and_then(Kw::of);
    match op {
        Some(Kw::All) => Ok(Bits::all(N)),
        Some(Kw::Range) if k.len() == 3 => {
            let (a, b) = (ioctl_num(l, k[1])?, ioctl_num(l, k[2])?);
            let mut r = Bits::new(N);
            for i in a..=b {
                r.set(i as usize);
            }
            Ok(r)
        }
        Some(Kw::Not) if k.len() == 2 => {
            let mut b = ioctl_expr(l, k[1])?;
            b.not(N);
            Ok(b)
        }
        Some(o @ (Kw::And | Kw::Or | Kw::Xor)) if k.len() == 3 => {
            let mut a = ioctl_expr(l, k[1])?;
            let b = ioctl_expr(l, k[2])?;
            match o {
                Kw::And => a.and(&b),
                Kw::Or => a.or(&b),
                _ => a.xor(&b),
            }
            Ok(a)
        }
        _ => {
            let mut acc = Bits::new(N);
            for &x in k {
                acc.or(&ioctl_expr(l, x)?);
            }
            Ok(acc)
        }
    }
}

/// An avtab index as the rule index stores it; past `u32::MAX` entries the build fails.
fn index_u32(i: usize) -> Result<u32, Fail> {
    u32::try_from(i).map_err(|_| err("Too many access vector table entries".into()))
}

type UnTab<'x> = (&'x mut Vec<AvtabEntry>, &'x mut FxHashMap<AvtabKey, u32>);

fn av_rule(
    l: &mut L<'_>,
    s: u32,
    uncond: Option<UnTab<'_>>,
    cond: Option<(&mut CondBuild, bool)>,
) -> Result<(), Fail> {
    let st = l.ast.stmts[s as usize];
    if st.kw == Kw::DontAudit && l.opts.disable_dontaudit {
        return Ok(());
    }
    let a = l.args(s);
    let src = l.tref(a[1])?;
    let tgt = l.tref(a[2])?;
    let mut cps = std::mem::take(&mut l.cp_buf);
    cps.clear();
    l.classperms_into(a[3], 0, &mut cps)?;
    let kind = kind_bits(st.kw);
    let mut srcs = std::mem::take(&mut l.src_buf);
    let mut tgts = std::mem::take(&mut l.tgt_buf);
    let selfy = tgt == TRef::SelfT;
    if selfy {
        l.expand_all_into(src, &mut srcs)?;
        tgts.clear();
    } else {
        l.expand_av_into(src, &mut srcs)?;
        l.expand_av_into(tgt, &mut tgts)?;
    }
    let mut uncond = uncond;
    let mut cond = cond;
    for &sv in &srcs {
        let tl: &[u32] = if selfy {
            std::slice::from_ref(&sv)
        } else {
            &tgts
        };
        for &tv in tl {
            for &(ci, bits) in &cps {
                if bits == 0 {
                    continue;
                }
                let key = AvtabKey {
                    source: TypeId::new(sv as u16).expect("type"),
                    target: TypeId::new(tv as u16).expect("type"),
                    class: ClassId::new(ci as u16 + 1).expect("class"),
                    kind,
                };
                let data = if kind == AvtabKind::AuditDeny {
                    !bits
                } else {
                    bits
                };
                if let Some((tab, idx)) = uncond.as_mut() {
                    if let Some(&i) = idx.get(&key) {
                        if let AvtabDatum::Perms(p) = &mut tab[i as usize].datum {
                            if kind == AvtabKind::AuditDeny {
                                *p &= data
                            } else {
                                *p |= data
                            }
                        }
                    } else {
                        idx.insert(key, index_u32(tab.len())?);
                        tab.push(AvtabEntry {
                            key,
                            datum: AvtabDatum::Perms(data),
                        });
                    }
                } else if let Some((cb, br)) = cond.as_mut() {
                    let list = if *br {
                        &mut cb.true_list
                    } else {
                        &mut cb.false_list
                    };
                    list.push(AvtabEntry {
                        key,
                        datum: AvtabDatum::Perms(data),
                    });
                }
            }
        }
    }
    l.cp_buf = cps;
    l.src_buf = srcs;
    l.tgt_buf = tgts;
    Ok(())
}

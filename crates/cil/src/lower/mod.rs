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

mod avrules;
mod classperms;
mod conditionals;
mod constraints;
mod contexts;
mod messages;
mod mls;
mod names;
mod orders;
mod sets;
mod text;
pub(crate) mod xperms;

use avrules::*;
use conditionals::*;
use constraints::*;
use contexts::*;
use messages::*;
use mls::*;
use orders::*;
use xperms::*;

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
    /// Per (class position, permission name): its bit, as [`L::perm_bit_slow`] finds it
    /// (class permissions first, then the common's), 0 for none; filled once the classes
    /// are ordered, so the 180,000 permission lists of a distribution policy cost two
    /// array reads a name. Indexed `ci * perm_names + perm_id[name]`.
    perm_bits: Vec<u32>,
    /// Per symbol: its index among the permission names of the ordered classes
    /// (`u32::MAX` for other symbols).
    perm_id: Vec<u32>,
    /// How many distinct permission names the ordered classes have.
    perm_names: u32,
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
        perm_bits: vec![],
        perm_id: vec![],
        perm_names: 0,
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
    let mut class_bits: Vec<Vec<(Sym, u32)>> = Vec::with_capacity(l.classes.len());
    l.perm_id = vec![u32::MAX; int.len()];
    for (ci, &cd) in l.classes.iter().enumerate() {
        let own = ast.perm_lists.get(&cd).map_or(&[][..], |v| v.as_slice());
        let common = l.class_common[ci].and_then(|c| ast.perm_lists.get(&c));
        let ncommon = common.map_or(0, |c| c.len());
        let mut bits = vec![];
        // Over 32: refused below ("Too many permissions"); the slow path meanwhile.
        if ncommon + own.len() <= 32 {
            let own_bits = own.iter().enumerate().map(|(i, &p)| (p, ncommon + i));
            let common_bits = common
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(i, &p)| (p, i));
            for (p, bit) in own_bits.chain(common_bits) {
                if l.perm_id[p as usize] == u32::MAX {
                    l.perm_id[p as usize] = l.perm_names;
                    l.perm_names += 1;
                }
                bits.push((p, 1u32 << bit));
            }
        }
        class_bits.push(bits);
    }
    l.perm_bits = vec![0; l.classes.len() * l.perm_names as usize];
    for (ci, bits) in class_bits.iter().enumerate() {
        // Reversed: the first entry of a name (the class's own before the common's)
        // is the one that stays.
        for &(p, bit) in bits.iter().rev() {
            let at = ci * l.perm_names as usize + l.perm_id[p as usize] as usize;
            l.perm_bits[at] = bit;
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
    let mut cr = contexts::ContextRules::default();
    let mut xencons: Vec<crate::xencon::XenCon<Ctx>> = vec![];
    let mut sidctx: FxHashMap<u32, Ctx> = FxHashMap::default();
    let mut selinuxusers: Vec<text::SeUser> = vec![];
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
                cr.filecons.push((path, ft, ctx, s));
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
                cr.portcons.push((proto, lo, hi, l.context(a[3])?));
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
                cr.genfscons
                    .push((fs, path, ft, l.context(a[a.len() - 1])?));
            }
            Kw::FsUse => {
                let ty = match t.sym(a[1]).and_then(Kw::of) {
                    Some(Kw::Xattr) => 1u32,
                    Some(Kw::Trans) => 2,
                    Some(Kw::Task) => 3,
                    _ => return Err(err(format!("Invalid fsuse type at {}", l.here(s)))),
                };
                let fs = l.atom_bytes(a[2])?.to_vec();
                cr.fsuses.push((ty, fs, l.context(a[3])?));
            }
            Kw::NetifCon => {
                let name = l.atom_bytes(a[1])?.to_vec();
                cr.netifcons
                    .push((name, l.context(a[2])?, l.context(a[3])?));
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
                cr.nodecons.push((addr, mask, l.context(a[3])?));
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
                cr.ibpkeycons
                    .push((prefix_text.into_bytes(), prefix, lo, hi, l.context(a[3])?));
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
                cr.ibendportcons.push((dev, port, l.context(a[3])?));
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
    contexts::sort_and_dedup(&l, &mut cr)?;
    crate::xencon::check_duplicates(&xencons, opts.verbose, opts.multiple_decls)?;
    let xen = if opts.target == crate::Target::Xen {
        Some(crate::xencon::lower(xencons, opts.multiple_decls, |c| {
            l.sepol_context(c)
        })?)
    } else {
        None
    };
    let co = contexts::to_policy(&l, &cr, &classes)?;
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
            ports: co.ports,
            fs_use: co.fs_use,
            netifs: co.netifs,
            nodes: co.nodes,
            nodes6: co.nodes6,
            ibpkeys: co.ibpkeys,
            ibendports: co.ibendports,
            ..Default::default()
        },
        genfs: co.genfs,
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

    let (fc, seusers, users_extra) = text::outputs(
        &l,
        &cr.filecons,
        &selinuxusers,
        seuser_default.as_ref(),
        &userprefixes,
    );
    Ok(Lowered {
        policy,
        file_contexts: fc,
        seusers,
        users_extra,
    })
}

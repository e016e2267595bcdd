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

mod assemble;
mod attributes;
mod avindex;
mod avrules;
mod classperms;
mod conditionals;
mod constraints;
mod contexts;
mod declarations;
mod messages;
mod mls;
mod names;
mod orders;
mod parts;
mod rules;
mod sets;
mod statements;
mod symbols;
mod text;
mod typerules;
mod verify;
pub(crate) mod xperms;

use avindex::AvIndex;
use avrules::*;
use conditionals::*;
use constraints::*;
use contexts::*;
use messages::*;
use mls::*;
use orders::*;
use parts::Parts;
use typerules::type_rule;
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
    /// The live statements (not inside a disabled optional), which every pass walks in
    /// order: a bit per statement, where a list of their indexes took 1.1 MB of a
    /// distribution policy's build at its memory peak.
    live: Bits,
    /// The live statements but the unconditional `allow`, `auditallow` and `dontaudit`
    /// rules (two in three statements of a distribution policy), for the passes that
    /// have nothing to do with them: each skipped statement cost such a pass about 40
    /// instructions (the bit, the statement, the dispatch).
    live_rest: Bits,
    /// The other live statements: the unconditional `allow`, `auditallow` and
    /// `dontaudit` rules, walked apart by the passes that handle them (see
    /// [`first_failure`] for the order of their messages).
    live_av: Bits,
    /// The statements inside a booleanif or tunableif but calls, live or not (a few
    /// thousand), for [`rules::cond_rules_by_branch`].
    in_cond: Bits,
    /// How many unconditional av and type rule statements there are, live or not (the
    /// size the avtab is reserved for).
    uncond_rules: usize,
    /// Per decl: internal index (types, attributes, roles, role attributes, users, bools,
    /// classes' order position, sens/cat order position).
    dint: Vec<u32>,
    types: Vec<u32>,
    attrs: Vec<u32>,
    attr_members: Vec<Option<Bits>>,
    /// Per attribute: its member count once asked ([`L::member_count`]), else `u32::MAX`.
    attr_count: Vec<u32>,
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
    /// The av rules' permission lists the resolver checked (its
    /// [`crate::resolve::PermHandOver`]), read by [`L::handed_perms`]; freed once the
    /// rules are entered.
    handed: crate::resolve::PermHandOver,
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

/// With `ARBITER_CIL_TIMES` set, each lowering phase's wall time and the peak RSS so far
/// on stderr (the compile's own phases print alike), to say where lowering spends.
struct Laps(Option<std::time::Instant>);

impl Laps {
    fn new() -> Self {
        Laps(std::env::var_os("ARBITER_CIL_TIMES").map(|_| std::time::Instant::now()))
    }

    fn mark(&mut self, phase: &str) {
        if let Some(clock) = &mut self.0 {
            eprintln!(
                "cil lower {phase}: {:?} (peak RSS so far: {})",
                clock.elapsed(),
                crate::peak_rss()
            );
            *clock = std::time::Instant::now();
        }
    }
}

/// The message of a pass that walks the unconditional av rules ([`L::live_av`]) apart
/// from the other statements ([`L::live_rest`]): `av` is the av rules' first failure
/// and the statement it is at, `rest` the others' walk, which stops before statement
/// `stop`, the av rules' failure (`u32::MAX` without one). The message is the one of
/// the first statement in walk order that fails, as when one walk did both: a pass
/// does this only where neither kind's work depends on the other's.
fn first_failure(
    av: Option<(u32, Fail)>,
    rest: impl FnOnce(u32) -> Result<(), Fail>,
) -> Result<(), Fail> {
    let stop = av.as_ref().map_or(u32::MAX, |&(s, _)| s);
    rest(stop)?;
    match av {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

/// A type value as the policy's type id.
fn tid(v: u32) -> TypeId {
    TypeId::new(v as u16).expect("type values start at 1")
}

/// A class position as the policy's class id.
fn cid(c: u32) -> ClassId {
    ClassId::new(c as u16 + 1).expect("class")
}

/// Lowers the resolved statements, phase by phase: declarations and orders, attributes,
/// symbol values, the unconditional statements, verification, the rules, assembly.
pub fn lower(
    t: &Tree,
    int: &Interner,
    ast: &Ast,
    r: &Resolver<'_>,
    names: &[String],
    opts: &Options,
) -> Result<Lowered, Fail> {
    let mut lap = Laps::new();
    let mut l = L::new(t, int, ast, r, names, opts);
    let mut p = Parts::default();
    let orders = declarations::collect(&mut l, &mut p)?;
    declarations::order_symbols(&mut l, &mut p, orders)?;
    // The resolver's pairs as lowering reads them: class positions, not declarations.
    l.handed.lower_classes(&l.dint);
    declarations::permission_table(&mut l);
    lap.mark("declarations");
    attributes::mark_uses(&mut l)?;
    attributes::mark_neverallow_sources(&mut l);
    attributes::expand(&mut l)?;
    p.keep = attributes::kept(&l);
    lap.mark("attributes");
    symbols::type_values(&mut l, &mut p)?;
    symbols::role_values(&mut l, &mut p)?;
    symbols::type_aliases(&mut l, &mut p)?;
    symbols::classes_and_commons(&l, &mut p)?;
    symbols::users_bools_levels(&l, &mut p);
    p.reserve_rule_tables(l.uncond_rules);
    lap.mark("symbols");
    statements::lower_all(&mut l, &mut p)?;
    lap.mark("statements");
    verify::users_and_contexts(&mut l, &p)?;
    lap.mark("verify");
    let cond_rules = rules::cond_rules_by_branch(&l);
    // No chain of bounds may loop (libsepol verifies this before building anything).
    p.hierarchy.verify(t, ast, names, &|d| l.name(d))?;
    rules::lower_all(&mut l, &mut p, &cond_rules)?;
    lap.mark("rules");
    let lowered = assemble::finish(l, p);
    lap.mark("assemble");
    lowered
}

impl<'a> L<'a> {
    /// The lowering state before any phase: every table empty but the per-declaration
    /// indexes, and the live statements in walk order.
    fn new(
        t: &'a Tree,
        int: &'a Interner,
        ast: &'a Ast,
        r: &'a Resolver<'a>,
        names: &'a [String],
        opts: &'a Options,
    ) -> Self {
        // One walk over every statement for the sets the passes walk, a word of each
        // set at a time.
        let n = ast.stmts.len();
        let (mut live, mut live_rest) = (Bits::new(n), Bits::new(n));
        let (mut live_av, mut in_cond) = (Bits::new(n), Bits::new(n));
        let mut uncond_rules = 0;
        for (w, chunk) in ast.stmts.chunks(64).enumerate() {
            let (mut lw, mut rw, mut aw, mut cw) = (0u64, 0u64, 0u64, 0u64);
            for (j, st) in chunk.iter().enumerate() {
                let bit = 1u64 << j;
                let av = matches!(st.kw, Kw::Allow | Kw::AuditAllow | Kw::DontAudit);
                if st.cond == NONE {
                    uncond_rules += usize::from(st.kw.is_te_rule());
                } else if st.kw != Kw::Call {
                    cw |= bit;
                }
                if st.opt == NONE || r.live_opt[st.opt as usize] {
                    lw |= bit;
                    if av && st.cond == NONE {
                        aw |= bit;
                    } else {
                        rw |= bit;
                    }
                }
            }
            (live.0[w], live_rest.0[w]) = (lw, rw);
            (live_av.0[w], in_cond.0[w]) = (aw, cw);
        }
        let nd = ast.decls.len();
        L {
            t,
            int,
            ast,
            r,
            names,
            opts,
            live,
            live_rest,
            live_av,
            in_cond,
            uncond_rules,
            dint: vec![NONE; nd],
            types: vec![],
            attrs: vec![],
            attr_members: vec![],
            attr_count: vec![],
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
            handed: r.take_handed_perms(),
            attr_depth: 0,
            cur_stmt: std::cell::Cell::new(0),
            ctx_log: std::cell::RefCell::new(vec![]),
            tref_memo: vec![],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::first_failure;
    use crate::{compile, Fail, Options, Source};

    const BASE: &[u8] = include_bytes!("../../tests/corpus/base.cil");

    /// The first message of compiling `case` after the corpus's base policy.
    fn first_message(case: &str) -> String {
        let sources = [
            Source {
                name: "base.cil".into(),
                text: BASE.to_vec(),
            },
            Source {
                name: "case.cil".into(),
                text: case.as_bytes().to_vec(),
            },
        ];
        match compile(&sources, &Options::default()) {
            Ok(_) => panic!("{case} compiled"),
            Err(e) => e.messages[0].clone(),
        }
    }

    #[test]
    fn first_failure_is_the_earlier_statements() {
        let fail = |m: &str| Fail::bad(vec![m.into()]);
        let msg = |r: Result<(), Fail>| r.err().map(|e| e.messages[0].clone());
        // The other statements' walk stops before the av rule's failure.
        let walked = std::cell::Cell::new(0);
        let r = first_failure(Some((5, fail("av"))), |stop| {
            walked.set(stop);
            Ok(())
        });
        assert_eq!((msg(r), walked.get()), (Some("av".into()), 5));
        // A failure of the other walk (before the av rule's, since it stopped there)
        // comes first.
        let r = first_failure(Some((5, fail("av"))), |_| Err(fail("rest")));
        assert_eq!(msg(r), Some("rest".into()));
        // No av rule failed: the whole walk, its own result.
        let r = first_failure(None, |stop| {
            assert_eq!(stop, u32::MAX);
            Err(fail("rest"))
        });
        assert_eq!(msg(r), Some("rest".into()));
        assert!(first_failure(None, |_| Ok(())).is_ok());
    }

    #[test]
    fn an_av_rule_failing_before_another_statement_is_reported() {
        // The av rules are walked apart from the attribute statements; the message is
        // still the one of the statement written first.
        let case = "(typealias lonely_t)\n(allow lonely_t file_t (file (read)))\n\
                    (typeattributeset file_t (file_t))\n";
        assert_eq!(
            first_message(case),
            "Alias lonely_t was not bound to a type"
        );
    }

    #[test]
    fn a_statement_failing_before_an_av_rule_is_reported() {
        let case = "(typealias lonely_t)\n(typeattributeset file_t (file_t))\n\
                    (allow lonely_t file_t (file (read)))\n";
        assert_eq!(
            first_message(case),
            "Attribute type not an attribute at case.cil:2"
        );
    }
}

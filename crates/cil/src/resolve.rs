//! Name resolution and the `optional` fixpoint.
//!
//! Every name a statement uses must name a declaration that is live: declared outside any
//! optional, or inside optionals that are all enabled. A statement outside optionals with an
//! unresolvable name is fatal (libsepol: exit 254); inside, its innermost optional is
//! disabled, which removes the optional's declarations, and resolution repeats until nothing
//! more is disabled (cil.md §5.3: the fixpoint equals libsepol's reset-and-retry loop).

use crate::ast::{Ast, DeclKind, Ns, NONE};
use crate::intern::{Interner, Sym};
use crate::kw::{declaration_kws, Kw};
use crate::parse::Tree;
use crate::Fail;

mod handover;
mod memo;
pub use handover::PermHandOver;
use memo::{ListMemo, Outcome};

/// The outcome of checking one statement. Small and `Copy` (no owned message), so the
/// `Result` every check returns travels in registers: the resolver checks 300,000
/// statements of a distribution policy and each of their arguments, nearly all `Ok`.
#[derive(Copy, Clone, Debug)]
pub enum Miss {
    /// A name is not declared (or only in disabled optionals).
    Missing,
    /// The statement is malformed: a message for the user.
    Bad(&'static str),
    /// A statement keyword the compiler does not implement.
    Unsupported(Kw),
}

impl Miss {
    /// The user's message of a [`Miss::Bad`] or [`Miss::Unsupported`].
    fn message(self) -> String {
        match self {
            Miss::Missing => String::new(),
            Miss::Bad(m) => m.to_string(),
            Miss::Unsupported(kw) => format!(
                "{} statements are not supported by arbiter's CIL compiler yet",
                kw.text()
            ),
        }
    }
}

type R = Result<(), Miss>;

/// Resolution state: which optionals are enabled.
pub struct Resolver<'a> {
    pub tree: &'a Tree,
    pub ast: &'a Ast,
    /// Per optional: enabled (and all its ancestors enabled). Changed only by
    /// [`Self::recompute_live`], which also empties what depends on it (class rows,
    /// the memo of permission lists).
    pub live_opt: Vec<bool>,
    pub disabled: Vec<bool>,
    /// `-P`: tunableif statements are booleanifs.
    pub tunables_are_bools: bool,
    /// Set by [`Self::lookup`] when a name resolved to a declaration inside an optional:
    /// only such statements can fail in a later round, when that optional is disabled.
    volatile: std::cell::Cell<bool>,
    /// Every (class, common or class map declaration, permission name) the input declares.
    perms: PermTable,
    /// Per declaration: the optional its statement sits in ([`NONE`] outside optionals),
    /// so a lookup reads one array instead of the declaration and then its statement.
    decl_opt: Vec<u32>,
    /// Per class declaration: the permission names a list after it may use, built for
    /// every class when liveness is (re)computed (see [`ClassRows`]).
    class_rows: ClassRows,
    /// Set when a check met what libsepol logs at `CIL_ERR` even inside an optional (a
    /// permission its class lacks) or a class whose permissions depend on optionals:
    /// then `crate::optional_log` replays libsepol's schedule for those lines.
    pub err_hint: std::cell::Cell<bool>,
    /// The av rules' permission lists as checked, for lowering (see [`PermHandOver`]),
    /// which takes them once the fixpoint is reached ([`Self::take_handed_perms`]), and
    /// the round's memo of written lists.
    handing: std::cell::RefCell<Handing>,
}

/// What checking the av rules' permission lists keeps: the values handed to lowering,
/// and each distinct written list's outcome in the current round ([`ListMemo`]).
#[derive(Default)]
struct Handing {
    lists: PermHandOver,
    memo: ListMemo,
}

/// Per class (or class map) declaration, one byte row over the permission names: for
/// each of its own permissions and those of the common it inherits, the permission's
/// bit in the class's access vector (as lowering numbers them: the common's first),
/// and a mark for the expression operators. A permission list then costs one load a
/// name, where it cost two row look-ups, a `classcommon` look-up and a keyword test
/// (200,000 lists in a distribution policy, on about 130 classes), and yields the
/// list's access vector as well. Which common a class inherits depends on which
/// optionals are live, so the rows are built again whenever liveness is recomputed,
/// for every class and class map declaration at once (a few hundred rows of a few
/// hundred bytes): a list then reads its class's row with no check that it exists
/// and no borrow of a cache.
#[derive(Default)]
struct ClassRows {
    /// Per declaration: `row << 1 | volatile` for a class or class map, `u32::MAX` for
    /// the others; `volatile` records that building the row resolved a name declared in
    /// an optional (the statements using the row must be rechecked in later rounds).
    of_decl: Vec<u32>,
    /// The rows, [`PermTable::names`] bytes each: [`NOT_IN_CLASS`], a bit's index + 1,
    /// [`NO_BIT`] or [`OPERATOR`].
    vals: Vec<u8>,
}

/// In a class row: the name is not one of the class's permissions.
const NOT_IN_CLASS: u8 = 0;
/// In a class row: a permission with no bit to hand over (a class map's, or one of a
/// class past 32 permissions, which lowering refuses).
const NO_BIT: u8 = 0xFE;
/// In a class row: an expression operator (`and or xor not all`).
const OPERATOR: u8 = 0xFF;

/// One numbering of every permission name and the operators, over which
/// [`ClassRows`] are laid out.
struct PermTable {
    /// Per symbol: its index among the permission names (`u32::MAX` for other symbols).
    id: Vec<u32>,
    /// How many names are numbered.
    names: usize,
    /// The expression operators a permission list may hold (`and or xor not all`).
    operators: [Sym; 5],
}

impl PermTable {
    fn new(int: &Interner, ast: &Ast) -> Self {
        let mut id = vec![u32::MAX; int.len()];
        let mut names = 0u32;
        // The operators first: a class row sets their bits, so an operator in a
        // permission list passes the same bit test as a permission name.
        let operators = [Kw::And, Kw::Or, Kw::Xor, Kw::Not, Kw::All].map(Kw::sym);
        for list in std::iter::once(&operators[..]).chain(ast.perm_lists.values().map(|l| &l[..])) {
            for &p in list {
                if let Some(slot) = id.get_mut(p as usize) {
                    if *slot == u32::MAX {
                        *slot = names;
                        names += 1;
                    }
                }
            }
        }
        PermTable {
            id,
            names: names as usize,
            operators,
        }
    }

    /// Symbol `s`'s entry in class row `row`.
    #[inline]
    fn in_row(&self, row: &[u8], s: Sym) -> u8 {
        match self.id.get(s as usize) {
            Some(&i) => row.get(i as usize).copied().unwrap_or(NOT_IN_CLASS),
            None => NOT_IN_CLASS,
        }
    }
}

impl<'a> Resolver<'a> {
    pub fn new(tree: &'a Tree, int: &'a Interner, ast: &'a Ast) -> Self {
        let n = ast.optionals.len();
        let mut r = Resolver {
            tree,
            ast,
            live_opt: vec![true; n],
            disabled: vec![false; n],
            tunables_are_bools: false,
            volatile: std::cell::Cell::new(false),
            perms: PermTable::new(int, ast),
            decl_opt: ast
                .decls
                .iter()
                .map(|d| ast.stmts[d.stmt as usize].opt)
                .collect(),
            class_rows: Default::default(),
            err_hint: Default::default(),
            handing: std::cell::RefCell::new(Handing {
                lists: PermHandOver::new(ast.stmts.len()),
                memo: ListMemo::default(),
            }),
        };
        r.build_class_rows();
        r
    }

    /// Whether statement `s` survives (not inside a disabled optional).
    #[inline]
    pub fn stmt_live(&self, s: u32) -> bool {
        let o = self.ast.stmts[s as usize].opt;
        o == NONE || self.live_opt[o as usize]
    }

    /// The live declaration of `sym` in `ns`. Always inlined: the resolver makes about
    /// 500,000 look-ups on a distribution policy, each a few loads, so the call's own
    /// cost weighed.
    #[inline(always)]
    pub fn lookup(&self, ns: Ns, sym: Sym) -> Option<u32> {
        let d = self.ast.find(ns, sym)?;
        let o = self.decl_opt[d as usize];
        if o == NONE {
            return Some(d);
        }
        self.volatile.set(true);
        self.live_opt[o as usize].then_some(d)
    }

    pub fn recompute_live(&mut self) {
        for i in 0..self.ast.optionals.len() {
            let p = self.ast.optionals[i].parent;
            self.live_opt[i] = !self.disabled[i] && (p == NONE || self.live_opt[p as usize]);
        }
        // Which common a class inherits may change with liveness, and so may a
        // permission list's outcome.
        self.build_class_rows();
        self.handing.get_mut().memo.clear();
    }

    /// Runs the fixpoint. Errors: the statement outside optionals that cannot resolve.
    pub fn run(&mut self, names: &[String]) -> Result<(), Fail> {
        // Statements to check: all at first, then only those that resolved a name declared
        // in an optional (the others cannot change).
        let mut todo: Vec<u32> = (0..self.ast.stmts.len() as u32).collect();
        loop {
            let mut changed = false;
            let mut again = Vec::new();
            for &i in &todo {
                let st = self.ast.stmts[i as usize];
                if st.opt != NONE && !self.live_opt[st.opt as usize] {
                    continue;
                }
                self.volatile.set(false);
                // The av rules (two statements in three) through their own inlined check.
                let r = if matches!(
                    st.kw,
                    Kw::Allow | Kw::AuditAllow | Kw::DontAudit | Kw::NeverAllow
                ) {
                    self.check_av_rule(i, st.node)
                } else {
                    self.check(i)
                };
                if self.volatile.get() {
                    again.push(i);
                }
                match r {
                    Ok(()) => {}
                    Err(Miss::Missing) => {
                        if st.opt == NONE {
                            return Err(Fail {
                                messages: vec![
                                    format!(
                                        "Failed to resolve {} statement at {}",
                                        st.kw.text(),
                                        crate::ast::loc(self.tree, names, st.file, st.node)
                                    ),
                                    "Failed to resolve AST".into(),
                                    "Failed to compile cildb: -2".into(),
                                ],
                                status: 254,
                            });
                        }
                        if !self.disabled[st.opt as usize] {
                            self.disabled[st.opt as usize] = true;
                            changed = true;
                        }
                    }
                    Err(bad) => {
                        return Err(Fail::bad(vec![
                            bad.message(),
                            format!(
                                "Failed to resolve {} statement at {}",
                                st.kw.text(),
                                crate::ast::loc(self.tree, names, st.file, st.node)
                            ),
                            "Failed to resolve AST".into(),
                            "Failed to compile cildb: -1".into(),
                        ]));
                    }
                }
            }
            if !changed {
                return Ok(());
            }
            todo = again;
            self.recompute_live();
        }
    }

    fn atom(&self, n: u32) -> Result<Sym, Miss> {
        if self.tree.is_list(n) {
            return Err(Miss::Bad("Invalid syntax: expected a name"));
        }
        self.tree
            .sym(n)
            .ok_or(Miss::Bad("Invalid syntax: expected a name"))
    }

    fn name(&self, ns: Ns, n: u32) -> R {
        let s = self.atom(n)?;
        self.lookup(ns, s).map(|_| ()).ok_or(Miss::Missing)
    }

    /// [`Self::name`], inlined: for [`Self::check_av_rule`], where the call and its
    /// result through memory were about a quarter of each of 400,000 look-ups.
    #[inline(always)]
    fn name_inline(&self, ns: Ns, n: u32) -> R {
        let s = self.atom(n)?;
        self.lookup(ns, s).map(|_| ()).ok_or(Miss::Missing)
    }

    /// [`Self::check`] of an `allow`, `auditallow`, `dontaudit` or `neverallow`
    /// statement `s` (list node `node`), inlined into the fixpoint's loop.
    #[inline(always)]
    fn check_av_rule(&self, s: u32, node: u32) -> R {
        let k = self.tree.kids(node);
        let [_, src, tgt, perms] = *k else {
            return Err(Miss::Bad("Invalid syntax"));
        };
        self.name_inline(Ns::Types, src)?;
        if self.tree.sym(tgt) != Some(Kw::SelfKw.sym()) {
            self.name_inline(Ns::Types, tgt)?;
        }
        self.rule_classperms_inline(s, perms)
    }

    fn type_or_self(&self, n: u32) -> R {
        if self.tree.sym(n) == Some(Kw::SelfKw.sym()) {
            return Ok(());
        }
        self.name(Ns::Types, n)
    }

    /// Calls `f` on every atom of `n` (an atom or a nested list) in written order,
    /// stopping at the first error. A flat list (nearly every expression) is read in
    /// place, in one pass; from its first nested list on, through an explicit stack (no
    /// recursion over input nesting).
    fn each_atom(&self, n: u32, mut f: impl FnMut(Sym) -> R) -> R {
        if let Some(s) = self.tree.sym(n) {
            return f(s);
        }
        let kids = self.tree.kids(n);
        for (j, &k) in kids.iter().enumerate() {
            if let Some(s) = self.tree.sym(k) {
                f(s)?;
                continue;
            }
            // A nested list: the rest through the stack.
            let mut stack = kids[j..].to_vec();
            stack.reverse();
            while let Some(n) = stack.pop() {
                if let Some(s) = self.tree.sym(n) {
                    f(s)?;
                } else {
                    stack.extend(self.tree.kids(n).iter().rev());
                }
            }
            break;
        }
        Ok(())
    }

    /// A set expression over `ns` (`typeattributeset`, `roleattributeset`, ...): a name or a
    /// list whose atoms other than operators are names.
    fn expr(&self, ns: Ns, n: u32) -> R {
        self.each_atom(n, |s| {
            let operator = matches!(
                Kw::of(s),
                Some(Kw::And | Kw::Or | Kw::Xor | Kw::Not | Kw::All | Kw::Range)
            );
            if operator
                || (ns == Ns::Types && s == Kw::SelfKw.sym())
                || self.lookup(ns, s).is_some()
            {
                Ok(())
            } else {
                Err(Miss::Missing)
            }
        })
    }

    fn bool_expr(&self, n: u32) -> R {
        self.each_atom(n, |s| {
            let operator = matches!(
                Kw::of(s),
                Some(Kw::And | Kw::Or | Kw::Xor | Kw::Not | Kw::Eq | Kw::Neq)
            );
            if operator || self.lookup(Ns::Bools, s).is_some() {
                Ok(())
            } else {
                Err(Miss::Missing)
            }
        })
    }

    /// `(class (perm ...))`, a list of those, or a classpermission name.
    fn classperms(&self, n: u32) -> R {
        self.classperms_value(n).map(|_| ())
    }

    /// An av rule's permission list (statement `s`, node `n`), checked, and its value
    /// handed to lowering when it has one. A flat `(class (perm ...))` list is checked
    /// once per round and found again in the [`ListMemo`] (1,400 distinct lists among
    /// 190,000 rules of a distribution policy): that path is inlined into
    /// [`Self::check_av_rule`], the rest is [`Self::rule_classperms`].
    #[inline(always)]
    fn rule_classperms_inline(&self, s: u32, n: u32) -> R {
        if let Some((class, perms)) = self.written_list(n) {
            let mut handing = self.handing.borrow_mut();
            let Handing { lists, memo } = &mut *handing;
            if let Some(Ok(o)) = memo.find(class, perms) {
                return self.replay(o, s, lists);
            }
        }
        self.rule_classperms(s, n)
    }

    /// [`Self::rule_classperms_inline`] out of line, and its path for a list the memo
    /// does not hold (yet).
    #[inline(never)]
    fn rule_classperms(&self, s: u32, n: u32) -> R {
        let mut handing = self.handing.borrow_mut();
        let Handing { lists, memo } = &mut *handing;
        if let Some((class, perms)) = self.written_list(n) {
            match memo.find(class, perms) {
                Some(Ok(o)) => return self.replay(o, s, lists),
                Some(Err(at)) => {
                    if let Some(o) = self.check_list(n, lists) {
                        memo.insert(at, class, perms, o);
                        return self.replay(o, s, lists);
                    }
                }
                None => {}
            }
        }
        let v = self.classperms_value(n);
        match v {
            Ok(Some((class, bits))) => lists.set(s, class, bits),
            _ => lists.clear(s),
        }
        v.map(|_| ())
    }

    /// A permission list `(class (elements))` as its class element and its elements, if
    /// it has that shape (elements may still be nested lists).
    #[inline(always)]
    fn written_list(&self, n: u32) -> Option<(u32, &[u32])> {
        if !self.tree.is_list(n) {
            return None;
        }
        let [c, p] = *self.tree.kids(n) else {
            return None;
        };
        if self.tree.is_list(c) || !self.tree.is_list(p) {
            return None;
        }
        Some((c, self.tree.kids(p)))
    }

    /// Checks a flat permission list the memo does not hold, as the memo keeps it: its
    /// value entered in the hand-over, the flags the check set, whether it resolved.
    /// The flags are left as they were (the outcome's replay sets them). `None` for a
    /// malformed list, which is not kept ([`Self::rule_classperms`] checks it again and
    /// reports it).
    #[inline(never)]
    fn check_list(&self, n: u32, lists: &mut PermHandOver) -> Option<Outcome> {
        let volatile = self.volatile.replace(false);
        let hint = self.err_hint.replace(false);
        let v = self.classperms_value(n);
        let (now_volatile, now_hint) = (self.volatile.get(), self.err_hint.get());
        self.volatile.set(volatile);
        self.err_hint.set(hint);
        let (missing, id) = match v {
            Ok(Some((class, bits))) => (false, lists.enter(class, bits)),
            Ok(None) => (false, 0),
            Err(Miss::Missing) => (true, 0),
            Err(_) => return None,
        };
        Some(Outcome::new(missing, now_volatile, now_hint, id))
    }

    /// A memo's outcome applied to statement `s`, as checking its list would have: the
    /// flags, the hand-over, the result.
    #[inline(always)]
    fn replay(&self, o: Outcome, s: u32, lists: &mut PermHandOver) -> R {
        if o.volatile() {
            self.volatile.set(true);
        }
        if o.hint() {
            self.err_hint.set(true);
        }
        lists.set_id(s, o.id());
        if o.missing() {
            Err(Miss::Missing)
        } else {
            Ok(())
        }
    }

    /// The av rules' permission lists as the resolution's last round found them, per
    /// statement ([`PermHandOver::get`]: an av rule whose list is a flat list of a
    /// class's permission names, nearly all of them). Taken once, by lowering, which
    /// frees them when its rules are entered; a second call finds none.
    pub fn take_handed_perms(&self) -> PermHandOver {
        std::mem::take(&mut self.handing.borrow_mut().lists)
    }

    /// [`Self::classperms`], with the list's (class declaration, access vector) when it
    /// is a flat list of a class's permission names. Always inlined: in
    /// [`Self::rule_classperms`] (200,000 lists) its result then stays in registers
    /// instead of going through memory, and the call's own cost goes.
    #[inline(always)]
    fn classperms_value(&self, n: u32) -> Result<Option<(u32, u32)>, Miss> {
        if !self.tree.is_list(n) {
            return self.name(Ns::ClassPermissions, n).map(|()| None);
        }
        let k = self.tree.kids(n);
        if k.len() != 2 || !self.tree.is_list(k[1]) {
            return Err(Miss::Bad("Invalid syntax"));
        }
        let c = self.atom(k[0])?;
        let cd = self.lookup(Ns::Classes, c).ok_or(Miss::Missing)?;
        let row = self.class_row(cd);
        // A flat list (nearly all of them) as one loop of loads; a nested expression
        // through `each_atom`.
        // `over` ORs each entry less one: below 32 exactly when every name is a
        // permission with a bit (entries 1..=32); shifts of other entries are masked and
        // their `bits` unused.
        let (mut over, mut bits) = (0u8, 0u32);
        let names = self.tree.kids(k[1]);
        for &p in names {
            match self.tree.sym(p) {
                Some(s) => {
                    let v = self.perms.in_row(row, s).wrapping_sub(1);
                    over |= v;
                    bits |= 1u32.wrapping_shl(u32::from(v));
                }
                None => return self.nested_perms(k[1], row).map(|()| None),
            }
        }
        if over < 32 {
            return Ok(Some((cd, bits)));
        }
        // Some name is not a permission with a bit: unknown, or an operator, or a
        // permission of a class map (checked, nothing handed over).
        let known = names
            .iter()
            .all(|&p| self.tree.sym(p).map(|s| self.perms.in_row(row, s)) != Some(NOT_IN_CLASS));
        if known {
            Ok(None)
        } else {
            self.err_hint.set(true);
            Err(Miss::Missing)
        }
    }

    /// The permission expression `n` against class row `row`, nested lists included.
    fn nested_perms(&self, n: u32, row: &[u8]) -> R {
        self.each_atom(n, |s| {
            if self.perms.in_row(row, s) != NOT_IN_CLASS {
                Ok(())
            } else {
                self.err_hint.set(true);
                Err(Miss::Missing)
            }
        })
    }

    /// Class declaration `cd`'s row ([`ClassRows`]). Marks the statement volatile when
    /// building the row did (the class's common is declared in an optional), on every
    /// use, as the look-ups it replaces would, and notes the class for
    /// [`Self::err_hint`].
    #[inline]
    fn class_row(&self, cd: u32) -> &[u8] {
        let names = self.perms.names;
        let e = self.class_rows.of_decl[cd as usize];
        if e & 1 != 0 {
            self.volatile.set(true);
            self.err_hint.set(true);
        }
        &self.class_rows.vals[(e >> 1) as usize * names..][..names]
    }

    /// Builds every class and class map declaration's row for the current liveness.
    fn build_class_rows(&mut self) {
        let names = self.perms.names;
        let was_volatile = self.volatile.get();
        let mut rows = std::mem::take(&mut self.class_rows);
        rows.of_decl.clear();
        rows.of_decl.resize(self.ast.decls.len(), u32::MAX);
        rows.vals.clear();
        for (cd, decl) in self.ast.decls.iter().enumerate() {
            if decl.kind.ns() != Ns::Classes {
                continue;
            }
            let cd = cd as u32;
            self.volatile.set(false);
            let common = self.class_common(cd);
            let own = self.ast.perm_lists.get(&cd).map_or(&[][..], |l| &l[..]);
            let inherited = common
                .and_then(|c| self.ast.perm_lists.get(&c))
                .map_or(&[][..], |l| &l[..]);
            // Bits as lowering numbers them (`lower::declarations::permission_table`):
            // the common's permissions first, then the class's own; a name in both is
            // the class's own. A class map's names, or a class past 32 permissions, have
            // none.
            let has_bits = decl.kind == DeclKind::Class && own.len() + inherited.len() <= 32;
            let start = rows.vals.len();
            rows.vals.resize(start + names, NOT_IN_CLASS);
            let row = &mut rows.vals[start..];
            let numbered = own
                .iter()
                .enumerate()
                .map(|(i, &p)| (p, inherited.len() + i))
                .chain(inherited.iter().enumerate().map(|(i, &p)| (p, i)));
            for (p, bit) in numbered {
                if let Some(slot) = self
                    .perms
                    .id
                    .get(p as usize)
                    .and_then(|&i| row.get_mut(i as usize))
                {
                    if *slot == NOT_IN_CLASS {
                        *slot = if has_bits { bit as u8 + 1 } else { NO_BIT };
                    }
                }
            }
            for s in self.perms.operators {
                if let Some(slot) = self
                    .perms
                    .id
                    .get(s as usize)
                    .and_then(|&i| row.get_mut(i as usize))
                {
                    *slot = OPERATOR;
                }
            }
            let r = (start / names.max(1)) as u32;
            rows.of_decl[cd as usize] = r << 1 | self.volatile.get() as u32;
        }
        self.volatile.set(was_volatile);
        self.class_rows = rows;
    }

    /// The common a class inherits (`classcommon`), if any live statement says so. A
    /// `classcommon` inside an optional marks the check volatile, as a name declared
    /// there would: its class's row, and every list checked against it, change when the
    /// optional is disabled.
    pub fn class_common(&self, class: u32) -> Option<u32> {
        let name = self.ast.decls[class as usize].name;
        self.ast
            .class_common
            .get(&name)
            .and_then(|&(st, common_sym)| {
                if self.ast.stmts[st as usize].opt != NONE {
                    self.volatile.set(true);
                }
                if self.stmt_live(st) {
                    self.lookup(Ns::Commons, common_sym)
                } else {
                    None
                }
            })
    }

    fn level(&self, n: u32) -> R {
        if !self.tree.is_list(n) {
            return self.name(Ns::Levels, n);
        }
        let k = self.tree.kids(n);
        if k.is_empty() || k.len() > 2 {
            return Err(Miss::Bad("Invalid syntax"));
        }
        self.name(Ns::Sens, k[0])?;
        if k.len() == 2 {
            self.catset(k[1])?;
        }
        Ok(())
    }

    fn catset(&self, n: u32) -> R {
        self.expr(Ns::Cats, n)
    }

    fn range(&self, n: u32) -> R {
        if !self.tree.is_list(n) {
            return self.name(Ns::LevelRanges, n);
        }
        let k = self.tree.kids(n);
        if k.len() != 2 {
            return Err(Miss::Bad("Invalid syntax"));
        }
        self.level(k[0])?;
        self.level(k[1])
    }

    fn context(&self, n: u32) -> R {
        if !self.tree.is_list(n) {
            return self.name(Ns::Contexts, n);
        }
        let k = self.tree.kids(n);
        if k.len() != 4 {
            return Err(Miss::Bad("Invalid syntax"));
        }
        self.name(Ns::Users, k[0])?;
        self.name(Ns::Roles, k[1])?;
        self.name(Ns::Types, k[2])?;
        self.range(k[3])
    }

    /// A `permissionx` name or `(ioctl CLASS EXPR)`.
    fn permx(&self, n: u32) -> R {
        if !self.tree.is_list(n) {
            return self.name(Ns::PermissionX, n);
        }
        let k = self.tree.kids(n);
        if k.len() != 3 || self.tree.sym(k[0]) != Some(Kw::Ioctl.sym()) {
            return Err(Miss::Bad("Invalid permissionx: only ioctl is supported"));
        }
        self.name(Ns::Classes, k[1])
    }

    /// An `ipaddr` name or an anonymous `(address)`.
    fn ipaddr(&self, n: u32) -> R {
        if self.tree.is_list(n) {
            let k = self.tree.kids(n);
            if k.len() != 1 || self.tree.is_list(k[0]) {
                return Err(Miss::Bad("Invalid syntax"));
            }
            return Ok(());
        }
        self.name(Ns::IpAddrs, n)
    }

    fn constraint_expr(&self, n: u32) -> R {
        let mut stack = vec![n];
        while let Some(n) = stack.pop() {
            let k = self.tree.kids(n);
            let op = k.first().and_then(|&x| self.tree.sym(x)).and_then(Kw::of);
            match op {
                Some(Kw::And | Kw::Or) if k.len() == 3 => {
                    stack.push(k[1]);
                    stack.push(k[2]);
                }
                Some(Kw::Not) if k.len() == 2 => stack.push(k[1]),
                Some(Kw::Eq | Kw::Neq | Kw::Dom | Kw::Domby | Kw::Incomp) if k.len() == 3 => {
                    let left = self.tree.sym(k[1]).and_then(Kw::of);
                    let ns = match left {
                        Some(Kw::U1 | Kw::U2 | Kw::U3) => Ns::Users,
                        Some(Kw::R1 | Kw::R2 | Kw::R3) => Ns::Roles,
                        Some(Kw::T1 | Kw::T2 | Kw::T3) => Ns::Types,
                        Some(Kw::L1 | Kw::L2 | Kw::H1 | Kw::H2) => continue,
                        _ => return Err(Miss::Bad("Invalid constraint operand")),
                    };
                    let right = self.tree.sym(k[2]).and_then(Kw::of);
                    if matches!(right, Some(Kw::U1 | Kw::R1 | Kw::T1)) {
                        return Err(Miss::Bad(
                            "u1, r1, and t1 are not allowed on the right side",
                        ));
                    }
                    if matches!(right, Some(Kw::U3 | Kw::R3 | Kw::T3)) {
                        return Err(Miss::Bad(
                            "u3, r3, and t3 are not allowed on the right side",
                        ));
                    }
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
                    if self.tree.is_list(k[2]) {
                        for &x in self.tree.kids(k[2]) {
                            self.name(ns, x)?;
                        }
                    } else {
                        self.name(ns, k[2])?;
                    }
                }
                _ => return Err(Miss::Bad("Invalid constraint expression")),
            }
        }
        Ok(())
    }

    /// Checks every name statement `s` uses.
    pub fn check(&self, s: u32) -> R {
        let st = self.ast.stmts[s as usize];
        let k = self.tree.kids(st.node);
        let a = |i: usize| k.get(i).copied().ok_or(Miss::Bad("Invalid syntax"));
        let n = k.len();
        match st.kw {
            Kw::Allow | Kw::AuditAllow | Kw::DontAudit | Kw::NeverAllow => {
                if n != 4 {
                    return Err(Miss::Bad("Invalid syntax"));
                }
                self.name(Ns::Types, a(1)?)?;
                self.type_or_self(a(2)?)?;
                self.rule_classperms(s, a(3)?)
            }
            Kw::AllowX | Kw::AuditAllowX | Kw::DontAuditX | Kw::NeverAllowX => {
                if n != 4 {
                    return Err(Miss::Bad("Invalid syntax"));
                }
                self.name(Ns::Types, a(1)?)?;
                self.type_or_self(a(2)?)?;
                self.permx(a(3)?)
            }
            Kw::PermissionX => self.permx(a(2)?),
            Kw::TypeTransition | Kw::TypeChange | Kw::TypeMember => {
                let ok = n == 5 || (n == 6 && st.kw == Kw::TypeTransition);
                if !ok {
                    return Err(Miss::Bad("Invalid syntax"));
                }
                self.name(Ns::Types, a(1)?)?;
                self.type_or_self(a(2)?)?;
                self.name(Ns::Classes, a(3)?)?;
                self.name(Ns::Types, a(n - 1)?)
            }
            Kw::TypeAttributeSet => {
                self.name(Ns::Types, a(1)?)?;
                self.expr(Ns::Types, a(2)?)
            }
            Kw::TypeAliasActual | Kw::TypeBounds => {
                self.name(Ns::Types, a(1)?)?;
                self.name(Ns::Types, a(2)?)
            }
            Kw::TypePermissive => self.name(Ns::Types, a(1)?),
            Kw::ExpandTypeAttribute => {
                if n != 3 {
                    return Err(Miss::Bad("Invalid syntax"));
                }
                self.expr(Ns::Types, a(1)?)
            }
            Kw::RoleType => {
                self.name(Ns::Roles, a(1)?)?;
                self.name(Ns::Types, a(2)?)
            }
            Kw::RoleAttributeSet => {
                self.name(Ns::Roles, a(1)?)?;
                self.expr(Ns::Roles, a(2)?)
            }
            Kw::RoleAllow | Kw::RoleBounds => {
                self.name(Ns::Roles, a(1)?)?;
                self.name(Ns::Roles, a(2)?)
            }
            Kw::RoleTransition => {
                self.name(Ns::Roles, a(1)?)?;
                self.name(Ns::Types, a(2)?)?;
                self.name(Ns::Classes, a(3)?)?;
                self.name(Ns::Roles, a(4)?)
            }
            Kw::UserRole => {
                self.name(Ns::Users, a(1)?)?;
                self.name(Ns::Roles, a(2)?)
            }
            Kw::UserLevel => {
                self.name(Ns::Users, a(1)?)?;
                self.level(a(2)?)
            }
            Kw::UserRange => {
                self.name(Ns::Users, a(1)?)?;
                self.range(a(2)?)
            }
            Kw::UserBounds => {
                self.name(Ns::Users, a(1)?)?;
                self.name(Ns::Users, a(2)?)
            }
            Kw::UserPrefix => {
                if n != 3 {
                    return Err(Miss::Bad("Invalid syntax"));
                }
                self.name(Ns::Users, a(1)?)
            }
            Kw::UserAttributeSet => {
                self.name(Ns::Users, a(1)?)?;
                self.expr(Ns::Users, a(2)?)
            }
            Kw::SelinuxUser => {
                self.name(Ns::Users, a(2)?)?;
                self.range(a(3)?)
            }
            Kw::SelinuxUserDefault => {
                self.name(Ns::Users, a(1)?)?;
                self.range(a(2)?)
            }
            Kw::ClassCommon => {
                self.name(Ns::Classes, a(1)?)?;
                self.name(Ns::Commons, a(2)?)
            }
            Kw::ClassOrder | Kw::SidOrder | Kw::SensitivityOrder | Kw::CategoryOrder => {
                let ns = Ns::of_order(st.kw).unwrap_or(Ns::Cats);
                let l = a(1)?;
                for &x in self.tree.kids(l) {
                    let sy = self.atom(x)?;
                    if ns == Ns::Classes && sy == Kw::Unordered.sym() {
                        continue;
                    }
                    self.name(ns, x)?;
                }
                Ok(())
            }
            Kw::ClassMapping => {
                if n != 4 {
                    return Err(Miss::Bad("Invalid syntax"));
                }
                let m = self.atom(a(1)?)?;
                let md = self.lookup(Ns::Classes, m).ok_or(Miss::Missing)?;
                let p = self.atom(a(2)?)?;
                if self.ast.perm_index(md, p).is_none() {
                    return Err(Miss::Missing);
                }
                self.classperms(a(3)?)
            }
            Kw::ClassPermissionSet => {
                self.name(Ns::ClassPermissions, a(1)?)?;
                self.classperms(a(2)?)
            }
            Kw::SidContext => {
                self.name(Ns::Sids, a(1)?)?;
                self.context(a(2)?)
            }
            Kw::SensitivityCategory => {
                self.name(Ns::Sens, a(1)?)?;
                self.catset(a(2)?)
            }
            Kw::SensitivityAliasActual => {
                self.name(Ns::Sens, a(1)?)?;
                self.name(Ns::Sens, a(2)?)
            }
            Kw::CategoryAliasActual => {
                self.name(Ns::Cats, a(1)?)?;
                self.name(Ns::Cats, a(2)?)
            }
            Kw::CategorySet => self.catset(a(2)?),
            Kw::Level => self.level(a(2)?),
            Kw::LevelRange => self.range(a(2)?),
            Kw::Context => self.context(a(2)?),
            Kw::BooleanIf => self.bool_expr(a(1)?),
            // Decided while building the statement list (without -P); with -P a booleanif.
            Kw::TunableIf if self.tunables_are_bools => self.bool_expr(a(1)?),
            Kw::TunableIf => Ok(()),
            Kw::RangeTransition => {
                if n != 5 {
                    return Err(Miss::Bad("Invalid syntax"));
                }
                self.name(Ns::Types, a(1)?)?;
                self.type_or_self(a(2)?)?;
                self.name(Ns::Classes, a(3)?)?;
                self.range(a(4)?)
            }
            Kw::Constrain | Kw::MlsConstrain => {
                self.classperms(a(1)?)?;
                self.constraint_expr(a(2)?)
            }
            Kw::ValidateTrans | Kw::MlsValidateTrans => {
                self.name(Ns::Classes, a(1)?)?;
                self.constraint_expr(a(2)?)
            }
            Kw::FileCon => {
                if n != 4 {
                    return Err(Miss::Bad("Invalid syntax"));
                }
                let c = a(3)?;
                if self.tree.is_list(c) && self.tree.kids(c).is_empty() {
                    return Ok(());
                }
                self.context(c)
            }
            Kw::PortCon | Kw::FsUse => {
                if n != 4 {
                    return Err(Miss::Bad("Invalid syntax"));
                }
                self.context(a(3)?)
            }
            Kw::GenfsCon => {
                if n != 4 && n != 5 {
                    return Err(Miss::Bad("Invalid syntax"));
                }
                self.context(a(n - 1)?)
            }
            Kw::NetifCon => {
                if n != 4 {
                    return Err(Miss::Bad("Invalid syntax"));
                }
                self.context(a(2)?)?;
                self.context(a(3)?)
            }
            Kw::NodeCon => {
                if n != 4 {
                    return Err(Miss::Bad("Invalid syntax"));
                }
                self.ipaddr(a(1)?)?;
                self.ipaddr(a(2)?)?;
                self.context(a(3)?)
            }
            Kw::PirqCon | Kw::IomemCon | Kw::IoportCon | Kw::PciDeviceCon | Kw::DeviceTreeCon => {
                if n != 3 {
                    return Err(Miss::Bad("Invalid syntax"));
                }
                self.context(a(2)?)
            }
            Kw::IbPkeyCon | Kw::IbEndportCon => {
                if n != 4 {
                    return Err(Miss::Bad("Invalid syntax"));
                }
                self.context(a(3)?)
            }
            Kw::DefaultUser | Kw::DefaultRole | Kw::DefaultType | Kw::DefaultRange => {
                let ok = match st.kw {
                    Kw::DefaultRange => n == 3 || n == 4,
                    _ => n == 3,
                };
                if !ok {
                    return Err(Miss::Bad("Invalid syntax"));
                }
                let c = a(1)?;
                if self.tree.is_list(c) {
                    for &x in self.tree.kids(c) {
                        self.name(Ns::Classes, x)?;
                    }
                    Ok(())
                } else {
                    self.name(Ns::Classes, c)
                }
            }
            declaration_kws!() => Ok(()),
            Kw::BlockInherit if self.ast.unresolved_stmts.binary_search(&s).is_ok() => {
                Err(Miss::Missing)
            }
            Kw::BlockInherit => Ok(()),
            // libsepol resolves every named argument at the call, used or not.
            Kw::Call => {
                let Some(&c) = self.ast.call_of_stmt.get(&s) else {
                    if self.ast.unresolved_stmts.binary_search(&s).is_ok() {
                        return Err(Miss::Missing);
                    }
                    return Err(Miss::Bad("Invalid syntax"));
                };
                let call = &self.ast.calls[c as usize];
                for (&v, &(ns, _)) in call.resolved.iter().zip(call.params.iter()) {
                    if let (Some(ns), Some(sym)) = (ns, self.tree.sym(v)) {
                        if self.lookup(ns, sym).is_none() {
                            return Err(Miss::Missing);
                        }
                    }
                }
                Ok(())
            }
            Kw::HandleUnknown | Kw::Mls => {
                let v = self.tree.sym(a(1)?);
                let ok = n == 2
                    && match st.kw {
                        Kw::Mls => v == Some(Kw::True.sym()) || v == Some(Kw::False.sym()),
                        _ => {
                            v == Some(Kw::Allow.sym())
                                || v == Some(Kw::Deny.sym())
                                || v == Some(Kw::Reject.sym())
                        }
                    };
                if ok {
                    Ok(())
                } else {
                    Err(Miss::Bad("Invalid syntax"))
                }
            }
            other => Err(Miss::Unsupported(other)),
        }
    }
}

//! Name resolution and the `optional` fixpoint.
//!
//! Every name a statement uses must name a declaration that is live: declared outside any
//! optional, or inside optionals that are all enabled. A statement outside optionals with an
//! unresolvable name is fatal (libsepol: exit 254); inside, its innermost optional is
//! disabled, which removes the optional's declarations, and resolution repeats until nothing
//! more is disabled (cil.md §5.3: the fixpoint equals libsepol's reset-and-retry loop).

use crate::ast::{Ast, Ns, NONE};
use crate::intern::{Interner, Sym};
use crate::kw::Kw;
use crate::parse::Tree;
use crate::Fail;

/// The outcome of checking one statement.
pub enum Miss {
    /// A name is not declared (or only in disabled optionals).
    Missing,
    /// The statement is malformed: a message for the user.
    Bad(String),
}

type R = Result<(), Miss>;

/// Resolution state: which optionals are enabled.
pub struct Resolver<'a> {
    pub tree: &'a Tree,
    pub ast: &'a Ast,
    /// Per optional: enabled (and all its ancestors enabled).
    pub live_opt: Vec<bool>,
    pub disabled: Vec<bool>,
    /// `-P`: tunableif statements are booleanifs.
    pub tunables_are_bools: bool,
    /// Set by [`Self::lookup`] when a name resolved to a declaration inside an optional:
    /// only such statements can fail in a later round, when that optional is disabled.
    volatile: std::cell::Cell<bool>,
    /// Every (class, common or class map declaration, permission name) the input declares.
    perms: PermTable,
}

/// The permissions each class, common and class map declares, as one bit row per
/// declaration: a permission list costs two row look-ups, then two array reads a name
/// (180,000 lists in a distribution policy).
struct PermTable {
    /// Per symbol: its index among the permission names (`u32::MAX` for other symbols).
    id: Vec<u32>,
    /// Per declaration with a permission list: its row.
    row: crate::intern::FxHashMap<u32, u32>,
    /// The rows, `words` words each: bit `id` set when the declaration has that name.
    bits: Vec<u64>,
    words: usize,
}

impl PermTable {
    fn new(int: &Interner, ast: &Ast) -> Self {
        let mut id = vec![u32::MAX; int.len()];
        let mut names = 0u32;
        for list in ast.perm_lists.values() {
            for &p in list {
                if let Some(slot) = id.get_mut(p as usize) {
                    if *slot == u32::MAX {
                        *slot = names;
                        names += 1;
                    }
                }
            }
        }
        let words = (names as usize).div_ceil(64);
        let mut row = crate::intern::FxHashMap::default();
        let mut bits = vec![0u64; words * ast.perm_lists.len()];
        for (r, (&d, list)) in ast.perm_lists.iter().enumerate() {
            row.insert(d, r as u32);
            for &p in list {
                if let Some(&i) = id.get(p as usize) {
                    bits[r * words + i as usize / 64] |= 1 << (i % 64);
                }
            }
        }
        PermTable {
            id,
            row,
            bits,
            words,
        }
    }

    fn row(&self, d: u32) -> Option<u32> {
        self.row.get(&d).copied()
    }

    /// Whether the declaration of row `r` has permission `s`.
    #[inline]
    fn has(&self, r: Option<u32>, s: Sym) -> bool {
        let (Some(r), Some(&i)) = (r, self.id.get(s as usize)) else {
            return false;
        };
        i != u32::MAX && self.bits[r as usize * self.words + i as usize / 64] & 1 << (i % 64) != 0
    }
}

impl<'a> Resolver<'a> {
    pub fn new(tree: &'a Tree, int: &'a Interner, ast: &'a Ast) -> Self {
        let n = ast.optionals.len();
        Resolver {
            tree,
            ast,
            live_opt: vec![true; n],
            disabled: vec![false; n],
            tunables_are_bools: false,
            volatile: std::cell::Cell::new(false),
            perms: PermTable::new(int, ast),
        }
    }

    /// Whether statement `s` survives (not inside a disabled optional).
    #[inline]
    pub fn stmt_live(&self, s: u32) -> bool {
        let o = self.ast.stmts[s as usize].opt;
        o == NONE || self.live_opt[o as usize]
    }

    /// The live declaration of `sym` in `ns`.
    #[inline]
    pub fn lookup(&self, ns: Ns, sym: Sym) -> Option<u32> {
        let d = self.ast.find(ns, sym)?;
        let st = self.ast.decls[d as usize].stmt;
        if self.ast.stmts[st as usize].opt != NONE {
            self.volatile.set(true);
        }
        self.stmt_live(st).then_some(d)
    }

    pub fn recompute_live(&mut self) {
        for i in 0..self.ast.optionals.len() {
            let p = self.ast.optionals[i].parent;
            self.live_opt[i] = !self.disabled[i] && (p == NONE || self.live_opt[p as usize]);
        }
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
                let r = self.check(i);
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
                    Err(Miss::Bad(m)) => {
                        return Err(Fail::bad(vec![
                            m,
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

    fn arg(&self, st: u32, i: usize) -> Result<u32, Miss> {
        let node = self.ast.stmts[st as usize].node;
        self.tree
            .kids(node)
            .get(i)
            .copied()
            .ok_or_else(|| Miss::Bad("Invalid syntax".into()))
    }

    fn nargs(&self, st: u32) -> usize {
        self.tree.kids(self.ast.stmts[st as usize].node).len()
    }

    fn atom(&self, n: u32) -> Result<Sym, Miss> {
        if self.tree.is_list(n) {
            return Err(Miss::Bad("Invalid syntax: expected a name".into()));
        }
        self.tree
            .sym(n)
            .ok_or_else(|| Miss::Bad("Invalid syntax: expected a name".into()))
    }

    fn name(&self, ns: Ns, n: u32) -> R {
        let s = self.atom(n)?;
        self.lookup(ns, s).map(|_| ()).ok_or(Miss::Missing)
    }

    fn type_or_self(&self, n: u32) -> R {
        if self.tree.sym(n) == Some(Kw::SelfKw.sym()) {
            return Ok(());
        }
        self.name(Ns::Types, n)
    }

    /// A set expression over `ns` (`typeattributeset`, `roleattributeset`, ...): a name or a
    /// list whose atoms other than operators are names.
    fn expr(&self, ns: Ns, n: u32) -> R {
        let mut stack = vec![n];
        while let Some(n) = stack.pop() {
            if self.tree.is_list(n) {
                stack.extend_from_slice(self.tree.kids(n));
                continue;
            }
            let Some(s) = self.tree.sym(n) else {
                continue;
            };
            if matches!(
                Kw::of(s),
                Some(Kw::And | Kw::Or | Kw::Xor | Kw::Not | Kw::All | Kw::Range)
            ) {
                continue;
            }
            if ns == Ns::Types && s == Kw::SelfKw.sym() {
                continue;
            }
            if self.lookup(ns, s).is_none() {
                return Err(Miss::Missing);
            }
        }
        Ok(())
    }

    fn bool_expr(&self, n: u32) -> R {
        let mut stack = vec![n];
        while let Some(n) = stack.pop() {
            if self.tree.is_list(n) {
                stack.extend_from_slice(self.tree.kids(n));
                continue;
            }
            let Some(s) = self.tree.sym(n) else {
                continue;
            };
            if matches!(
                Kw::of(s),
                Some(Kw::And | Kw::Or | Kw::Xor | Kw::Not | Kw::Eq | Kw::Neq)
            ) {
                continue;
            }
            if self.lookup(Ns::Bools, s).is_none() {
                return Err(Miss::Missing);
            }
        }
        Ok(())
    }

    /// `(class (perm ...))`, a list of those, or a classpermission name.
    fn classperms(&self, n: u32) -> R {
        if !self.tree.is_list(n) {
            return self.name(Ns::ClassPermissions, n);
        }
        let k = self.tree.kids(n);
        if k.len() != 2 || !self.tree.is_list(k[1]) {
            return Err(Miss::Bad("Invalid syntax".into()));
        }
        let c = self.atom(k[0])?;
        let cd = self.lookup(Ns::Classes, c).ok_or(Miss::Missing)?;
        let common = self.class_common(cd);
        let (own_row, common_row) = (self.perms.row(cd), common.and_then(|c| self.perms.row(c)));
        let known = |n: u32| -> bool {
            let Some(s) = self.tree.sym(n) else {
                return true;
            };
            self.perms.has(own_row, s)
                || self.perms.has(common_row, s)
                || matches!(
                    Kw::of(s),
                    Some(Kw::And | Kw::Or | Kw::Xor | Kw::Not | Kw::All)
                )
        };
        // Most permission lists are flat: checked in place; nested expressions through
        // an explicit stack (no recursion over input nesting).
        let perms = self.tree.kids(k[1]);
        if perms.iter().all(|&p| !self.tree.is_list(p)) {
            return if perms.iter().all(|&p| known(p)) {
                Ok(())
            } else {
                Err(Miss::Missing)
            };
        }
        let mut stack = vec![k[1]];
        while let Some(n) = stack.pop() {
            if self.tree.is_list(n) {
                stack.extend_from_slice(self.tree.kids(n));
                continue;
            }
            if !known(n) {
                return Err(Miss::Missing);
            }
        }
        Ok(())
    }

    /// The common a class inherits (`classcommon`), if any live statement says so.
    pub fn class_common(&self, class: u32) -> Option<u32> {
        let name = self.ast.decls[class as usize].name;
        self.ast
            .class_common
            .get(&name)
            .and_then(|&(st, common_sym)| {
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
            return Err(Miss::Bad("Invalid syntax".into()));
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
            return Err(Miss::Bad("Invalid syntax".into()));
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
            return Err(Miss::Bad("Invalid syntax".into()));
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
            return Err(Miss::Bad(
                "Invalid permissionx: only ioctl is supported".into(),
            ));
        }
        self.name(Ns::Classes, k[1])
    }

    /// An `ipaddr` name or an anonymous `(address)`.
    fn ipaddr(&self, n: u32) -> R {
        if self.tree.is_list(n) {
            let k = self.tree.kids(n);
            if k.len() != 1 || self.tree.is_list(k[0]) {
                return Err(Miss::Bad("Invalid syntax".into()));
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
                        _ => return Err(Miss::Bad("Invalid constraint operand".into())),
                    };
                    let right = self.tree.sym(k[2]).and_then(Kw::of);
                    if matches!(right, Some(Kw::U1 | Kw::R1 | Kw::T1)) {
                        return Err(Miss::Bad(
                            "u1, r1, and t1 are not allowed on the right side".into(),
                        ));
                    }
                    if matches!(right, Some(Kw::U3 | Kw::R3 | Kw::T3)) {
                        return Err(Miss::Bad(
                            "u3, r3, and t3 are not allowed on the right side".into(),
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
                _ => return Err(Miss::Bad("Invalid constraint expression".into())),
            }
        }
        Ok(())
    }

    /// Checks every name statement `s` uses.
    pub fn check(&self, s: u32) -> R {
        let st = self.ast.stmts[s as usize];
        let a = |i| self.arg(s, i);
        let n = self.nargs(s);
        match st.kw {
            Kw::Allow | Kw::AuditAllow | Kw::DontAudit | Kw::NeverAllow => {
                if n != 4 {
                    return Err(Miss::Bad("Invalid syntax".into()));
                }
                self.name(Ns::Types, a(1)?)?;
                self.type_or_self(a(2)?)?;
                self.classperms(a(3)?)
            }
            Kw::AllowX | Kw::AuditAllowX | Kw::DontAuditX | Kw::NeverAllowX => {
                if n != 4 {
                    return Err(Miss::Bad("Invalid syntax".into()));
                }
                self.name(Ns::Types, a(1)?)?;
                self.type_or_self(a(2)?)?;
                self.permx(a(3)?)
            }
            Kw::PermissionX => self.permx(a(2)?),
            Kw::TypeTransition | Kw::TypeChange | Kw::TypeMember => {
                let ok = n == 5 || (n == 6 && st.kw == Kw::TypeTransition);
                if !ok {
                    return Err(Miss::Bad("Invalid syntax".into()));
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
                    return Err(Miss::Bad("Invalid syntax".into()));
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
                    return Err(Miss::Bad("Invalid syntax".into()));
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
                    return Err(Miss::Bad("Invalid syntax".into()));
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
                    return Err(Miss::Bad("Invalid syntax".into()));
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
                    return Err(Miss::Bad("Invalid syntax".into()));
                }
                let c = a(3)?;
                if self.tree.is_list(c) && self.tree.kids(c).is_empty() {
                    return Ok(());
                }
                self.context(c)
            }
            Kw::PortCon | Kw::FsUse => {
                if n != 4 {
                    return Err(Miss::Bad("Invalid syntax".into()));
                }
                self.context(a(3)?)
            }
            Kw::GenfsCon => {
                if n != 4 && n != 5 {
                    return Err(Miss::Bad("Invalid syntax".into()));
                }
                self.context(a(n - 1)?)
            }
            Kw::NetifCon => {
                if n != 4 {
                    return Err(Miss::Bad("Invalid syntax".into()));
                }
                self.context(a(2)?)?;
                self.context(a(3)?)
            }
            Kw::NodeCon => {
                if n != 4 {
                    return Err(Miss::Bad("Invalid syntax".into()));
                }
                self.ipaddr(a(1)?)?;
                self.ipaddr(a(2)?)?;
                self.context(a(3)?)
            }
            Kw::PirqCon | Kw::IomemCon | Kw::IoportCon | Kw::PciDeviceCon | Kw::DeviceTreeCon => {
                if n != 3 {
                    return Err(Miss::Bad("Invalid syntax".into()));
                }
                self.context(a(2)?)
            }
            Kw::IbPkeyCon | Kw::IbEndportCon => {
                if n != 4 {
                    return Err(Miss::Bad("Invalid syntax".into()));
                }
                self.context(a(3)?)
            }
            Kw::DefaultUser | Kw::DefaultRole | Kw::DefaultType | Kw::DefaultRange => {
                let ok = match st.kw {
                    Kw::DefaultRange => n == 3 || n == 4,
                    _ => n == 3,
                };
                if !ok {
                    return Err(Miss::Bad("Invalid syntax".into()));
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
            Kw::Type
            | Kw::TypeAttribute
            | Kw::TypeAlias
            | Kw::Role
            | Kw::RoleAttribute
            | Kw::User
            | Kw::UserAttribute
            | Kw::Common
            | Kw::Class
            | Kw::ClassMap
            | Kw::ClassPermission
            | Kw::Boolean
            | Kw::Tunable
            | Kw::Sensitivity
            | Kw::SensitivityAlias
            | Kw::Category
            | Kw::CategoryAlias
            | Kw::Sid
            | Kw::PolicyCap
            | Kw::IpAddr
            | Kw::Optional
            | Kw::Block
            | Kw::BlockAbstract
            | Kw::In
            | Kw::Macro => Ok(()),
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
                    return Err(Miss::Bad("Invalid syntax".into()));
                };
                let call = &self.ast.calls[c as usize];
                for (&v, &(ns, _)) in call.resolved.iter().zip(&call.params) {
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
                    Err(Miss::Bad("Invalid syntax".into()))
                }
            }
            other => Err(Miss::Bad(format!(
                "{} statements are not supported by arbiter's CIL compiler yet",
                other.text()
            ))),
        }
    }
}

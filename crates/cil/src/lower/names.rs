//! Name lookups of the lowering: statement arguments, declarations a name resolves to,
//! type references.

use super::*;

/// The mark of an attribute in [`L::tref_memo`] (a type is stored as its index + 1).
const TREF_ATTR: u32 = 1 << 31;

impl<'a> L<'a> {
    pub(super) fn here(&self, s: u32) -> String {
        let st = self.ast.stmts[s as usize];
        crate::ast::loc(self.t, self.names, st.file, st.node)
    }

    pub(super) fn args(&self, s: u32) -> &'a [u32] {
        self.t.kids(self.ast.stmts[s as usize].node)
    }

    /// The symbol of an atom; a list gives a symbol no declaration has, so lookups fail
    /// cleanly on malformed statements.
    pub(super) fn sym(&self, n: u32) -> Sym {
        self.t.sym(n).unwrap_or(NOSYM)
    }

    /// The bytes of an atom argument (a path, a protocol, a number ...).
    pub(super) fn atom_bytes(&self, n: u32) -> Result<&'a [u8], Fail> {
        match self.t.sym(n) {
            Some(s) => Ok(self.int.bytes(s)),
            None => Err(err(format!(
                "Invalid syntax: expected a name or value, not a list, at {}",
                self.here(self.cur_stmt.get())
            ))),
        }
    }

    pub(super) fn atom_sym(&self, n: u32) -> Result<Sym, Fail> {
        self.t.sym(n).ok_or_else(|| {
            err(format!(
                "Invalid syntax: expected a name or value, not a list, at {}",
                self.here(self.cur_stmt.get())
            ))
        })
    }

    pub(super) fn look(&self, ns: Ns, n: u32) -> Result<u32, Fail> {
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

    pub(super) fn kind(&self, d: u32) -> DeclKind {
        self.ast.decls[d as usize].kind
    }

    pub(super) fn name(&self, d: u32) -> String {
        self.int.str(self.ast.decls[d as usize].name).into_owned()
    }

    /// A declaration's name as written, for the text outputs: no copy (names are
    /// checked identifiers, ASCII, so the bytes are what [`L::name`] would give).
    pub(super) fn name_bytes(&self, d: u32) -> &'a [u8] {
        self.int.bytes(self.ast.decls[d as usize].name)
    }

    /// A name in the types namespace, resolved: from the memo when it was looked up
    /// before (inlined: every rule statement asks twice), else [`L::tref_first`].
    #[inline]
    pub(super) fn tref(&self, n: u32) -> Result<TRef, Fail> {
        if let Some(v) = self.t.sym(n).and_then(|s| self.tref_memo.get(s as usize)) {
            match v.get() {
                0 => {}
                v if v & TREF_ATTR != 0 => return Ok(TRef::Attr(v & !TREF_ATTR)),
                v => return Ok(TRef::Type(v - 1)),
            }
        }
        self.tref_first(n)
    }

    /// The type index of a name the [`L::tref`] memo holds as a type; `None` for
    /// anything else (an attribute, `self`, a name not looked up yet).
    #[inline(always)]
    pub(super) fn memo_type(&self, n: u32) -> Option<u32> {
        let v = self.tref_memo.get(self.t.sym(n)? as usize)?.get();
        (v != 0 && v & TREF_ATTR == 0).then(|| v - 1)
    }

    /// The one value an av rule side stands for, from the [`L::tref`] memo: a type's, or
    /// a kept attribute's whose member count is known and at least -X
    /// ([`L::attr_kept_whole`]); `None` for anything else (an attribute to expand or
    /// not counted yet, `self`, a name not looked up yet).
    #[inline(always)]
    pub(super) fn memo_one_value(&self, n: u32) -> Option<u32> {
        let v = self.tref_memo.get(self.t.sym(n)? as usize)?.get();
        if v == 0 {
            return None;
        }
        if v & TREF_ATTR == 0 {
            return Some(self.type_val[v as usize - 1]);
        }
        let x = (v & !TREF_ATTR) as usize;
        let (val, count) = (self.attr_val[x], self.attr_count[x]);
        (val != 0 && count != u32::MAX && count >= self.opts.expand_size).then_some(val)
    }

    /// [`L::tref`] of a name not in the memo (`self` never is): looked up and memoised.
    #[inline(never)]
    fn tref_first(&self, n: u32) -> Result<TRef, Fail> {
        if self.t.sym(n) == Some(Kw::SelfKw.sym()) {
            return Ok(TRef::SelfT);
        }
        const ATTR: u32 = TREF_ATTR;
        let memo = self.t.sym(n).and_then(|s| self.tref_memo.get(s as usize));
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
    pub(super) fn tref_lookup(&self, n: u32) -> Result<TRef, Fail> {
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
}

//! Set expressions: attribute, role-attribute and user-attribute members, and the
//! expansion of a type reference to type values.

use super::*;

impl<'a> L<'a> {
    /// Members of attribute `a` (internal type indices), evaluated on first use.
    pub(super) fn members(&mut self, a: u32) -> Result<Bits, Fail> {
        self.ensure_members(a)?;
        Ok(self.attr_members[a as usize].clone().unwrap_or_default())
    }

    /// How many types attribute `a` has, counted once (every av rule naming a kept
    /// attribute asks, and copying the set to count it cost an allocation a rule).
    pub(super) fn member_count(&mut self, a: u32) -> Result<u32, Fail> {
        let c = self.attr_count[a as usize];
        if c != u32::MAX {
            return Ok(c);
        }
        self.ensure_members(a)?;
        let c = self.attr_members[a as usize]
            .as_ref()
            .map_or(0, |b| b.count() as u32);
        self.attr_count[a as usize] = c;
        Ok(c)
    }

    /// Evaluates attribute `a`'s members once (kept in `attr_members`), without a copy.
    pub(super) fn ensure_members(&mut self, a: u32) -> Result<(), Fail> {
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
    pub(super) fn type_expr_or(&mut self, n: u32, acc: &mut Bits) -> Result<(), Fail> {
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

    pub(super) fn type_expr(&mut self, n: u32) -> Result<Bits, Fail> {
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

    pub(super) fn role_members(&mut self, a: u32) -> Result<Bits, Fail> {
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

    pub(super) fn role_expr(&mut self, n: u32) -> Result<Bits, Fail> {
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
    pub(super) fn user_decl(&self, n: u32) -> Result<u32, Fail> {
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
    pub(super) fn user_set(&mut self, n: u32) -> Result<Bits, Fail> {
        let d = self.look(Ns::Users, n)?;
        if self.kind(d) == DeclKind::UserAttribute {
            return self.uattr_members(self.dint[d as usize]);
        }
        let mut b = Bits::new(self.users.len());
        b.set(self.dint[d as usize] as usize);
        Ok(b)
    }

    pub(super) fn uattr_members(&mut self, a: u32) -> Result<Bits, Fail> {
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

    pub(super) fn user_expr(&mut self, n: u32) -> Result<Bits, Fail> {
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
    pub(super) fn role_vals(&mut self, n: u32) -> Result<Vec<u32>, Fail> {
        let b = self.role_expr(n)?;
        Ok(b.iter().map(|i| self.role_val[i]).collect())
    }

    /// Sepol values a type name stands for when fully expanded.
    pub(super) fn expand_all(&mut self, r: TRef) -> Result<Vec<u32>, Fail> {
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
    pub(super) fn expand_all_into(&mut self, r: TRef, out: &mut Vec<u32>) -> Result<(), Fail> {
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

    /// Whether an av rule keeps attribute `a` as one value rather than expanding it: kept
    /// in the policy, and with at least -X members (`__cil_should_expand_attribute`).
    #[inline]
    pub(super) fn attr_kept_whole(&mut self, a: u32) -> Result<bool, Fail> {
        Ok(self.attr_val[a as usize] != 0 && self.member_count(a)? >= self.opts.expand_size)
    }

    /// [`Self::expand_av`] into a reused buffer.
    pub(super) fn expand_av_into(&mut self, r: TRef, out: &mut Vec<u32>) -> Result<(), Fail> {
        if let TRef::Attr(a) = r {
            // A kept attribute with fewer members than -X is still expanded
            // (`__cil_should_expand_attribute`): an empty one gives no rule at all.
            if self.attr_kept_whole(a)? {
                out.clear();
                out.push(self.attr_val[a as usize]);
                return Ok(());
            }
        }
        self.expand_all_into(r, out)
    }

    /// Sepol values for an av rule side: kept attributes stay, others expand.
    pub(super) fn expand_av(&mut self, r: TRef) -> Result<Vec<u32>, Fail> {
        let mut out = Vec::new();
        self.expand_av_into(r, &mut out)?;
        Ok(out)
    }
}

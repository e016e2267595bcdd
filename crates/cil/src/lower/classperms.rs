//! Classes and permissions: class permission lists, class maps and permission
//! expressions to (class, access vector) pairs.

use super::*;

impl<'a> L<'a> {
    pub(super) fn class_of(&self, n: u32) -> Result<u32, Fail> {
        let d = self.look(Ns::Classes, n)?;
        Ok(self.dint[d as usize])
    }

    /// `(class (perms))` → list of (class position, perm bits).
    pub(super) fn classperms(&mut self, n: u32) -> Result<Vec<(u32, u32)>, Fail> {
        let mut out = vec![];
        self.classperms_into(n, 0, &mut out)?;
        Ok(out)
    }

    /// The (class position, access vector) of av rule statement `s`'s permission list,
    /// as the resolver found it while checking the list ([`Resolver::take_handed_perms`]):
    /// `None` when it handed none over (an expression, a class map, a classpermission
    /// name), and lowering resolves the list itself.
    #[inline]
    pub(super) fn handed_perms(&self, s: u32) -> Option<(u32, u32)> {
        // The pairs hold class positions since `declarations::order_symbols`.
        self.handed.get(s)
    }

    /// Expands class permissions: `(class (perms))`, a `classpermission` name (its sets in
    /// order), or `(classmap (mapperms))` (each map permission's mappings in order).
    pub(super) fn classperms_into(
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

    pub(super) fn perm_bit(&self, cd: u32, ci: u32, s: Sym) -> Result<u32, Fail> {
        self.perm_bit_in(self.perm_row(cd, ci), cd, ci, s)
    }

    /// Class position `ci`'s row of [`L::perm_bits`] when `cd` is that class (a class map
    /// or a bad position has none): read once per permission list, not once per name.
    fn perm_row(&self, cd: u32, ci: u32) -> Option<&[u32]> {
        if self.classes.get(ci as usize) != Some(&cd) {
            return None;
        }
        let n = self.perm_names as usize;
        self.perm_bits.get(ci as usize * n..(ci as usize + 1) * n)
    }

    /// A permission's bit from the class's row, else found the slow way.
    #[inline]
    fn perm_bit_in(&self, row: Option<&[u32]>, cd: u32, ci: u32, s: Sym) -> Result<u32, Fail> {
        match row.and_then(|r| r.get(*self.perm_id.get(s as usize)? as usize)) {
            Some(&b) if b != 0 => Ok(b),
            _ => self.perm_bit_slow(cd, ci, s),
        }
    }

    /// A permission's bit found in the class's and its common's lists (the error for a
    /// name in neither).
    pub(super) fn perm_bit_slow(&self, cd: u32, ci: u32, s: Sym) -> Result<u32, Fail> {
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

    pub(super) fn all_perms(&self, cd: u32, ci: u32) -> u32 {
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

    pub(super) fn perm_expr(&self, cd: u32, ci: u32, n: u32) -> Result<u32, Fail> {
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
                let row = self.perm_row(cd, ci);
                let mut acc = 0;
                for &x in k {
                    acc |= match self.t.sym(x) {
                        Some(s) => self.perm_bit_in(row, cd, ci, s)?,
                        None => self.perm_expr(cd, ci, x)?,
                    };
                }
                Ok(acc)
            }
        }
    }
}

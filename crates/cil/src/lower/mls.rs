//! MLS: category sets, levels and ranges, their verification and their text form.

use super::*;

impl<'a> L<'a> {
    pub(super) fn catset(&self, n: u32) -> Result<Bits, Fail> {
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

    pub(super) fn cat_actual(&self, d: u32) -> u32 {
        if self.kind(d) == DeclKind::CatAlias {
            self.alias_actual.get(&d).copied().unwrap_or(d)
        } else {
            d
        }
    }

    pub(super) fn sens_actual(&self, d: u32) -> u32 {
        if self.kind(d) == DeclKind::SensAlias {
            self.alias_actual.get(&d).copied().unwrap_or(d)
        } else {
            d
        }
    }

    pub(super) fn level(&self, n: u32) -> Result<Lvl, Fail> {
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

    pub(super) fn range(&self, n: u32) -> Result<(Lvl, Lvl), Fail> {
        if !self.t.is_list(n) {
            let d = self.look(Ns::LevelRanges, n)?;
            let s = self.ast.decls[d as usize].stmt;
            return self.range(self.args(s)[2]);
        }
        let k = self.t.kids(n);
        Ok((self.level(k[0])?, self.level(k[1])?))
    }

    pub(super) fn mls_level(&self, l: &Lvl) -> MlsLevel {
        if !self.mls {
            return MlsLevel::default();
        }
        MlsLevel {
            sens: l.sens + 1,
            cats: Ebitmap::from_bits(l.cats.iter().copied()),
        }
    }

    pub(super) fn mls_range(&self, r: &(Lvl, Lvl)) -> MlsRange {
        MlsRange {
            low: self.mls_level(&r.0),
            high: self.mls_level(&r.1),
        }
    }
}

/// `__cil_verify_levelrange`: low sensitivity not above high, low categories within high,
/// every category allowed for its sensitivity.
pub(super) fn verify_range(l: &L<'_>, rg: &(Lvl, Lvl), sens_cats: &[Bits]) -> Result<(), String> {
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

/// libsepol's category-list compressor (`__cil_level_to_string`), written straight into
/// `out` (a `file_contexts` line is built for each of thousands of `filecon`s).
pub(super) fn level_text(l: &L<'_>, lv: &Lvl, out: &mut Vec<u8>) {
    out.extend_from_slice(l.name_bytes(l.sens[lv.sens as usize]));
    if lv.cats.is_empty() {
        return;
    }
    out.push(b':');
    let cn = |c: u32| l.name_bytes(l.cats[c as usize]);
    // A run's first and last category so far: "s1" alone, "s1,s2" for two, "s1.s2" for
    // more.
    let run = |s1: &[u8], s2: &[u8], first: i64, last: i64, out: &mut Vec<u8>| {
        out.extend_from_slice(s1);
        if last != first {
            out.push(if last == first + 1 { b',' } else { b'.' });
            out.extend_from_slice(s2);
        }
    };
    let (mut first, mut last): (i64, i64) = (-1, -1);
    let (mut s1, mut s2): (&[u8], &[u8]) = (b"", b"");
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
            // libsepol writes the category that ends a run after it and starts no new
            // run with it.
            run(s1, s2, first, last, out);
            out.push(b',');
            out.extend_from_slice(cn(c));
            first = -1;
            last = -1;
            if i + 1 < lv.cats.len() {
                out.push(b',');
            }
        }
    }
    if first != -1 {
        run(s1, s2, first, last, out);
    }
}

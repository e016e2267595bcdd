//! Declarations met by the walk: each enters the global table or its block's table,
//! re-declarations fail here; classes and commons also record their permission lists.

use super::*;
use DeclKind as D;

impl<'a> Walker<'a> {
    /// Handles `at` if it is a declaration (or `classcommon`); `false` for any other
    /// statement.
    pub(super) fn declaration(&mut self, at: &At<'a>) -> Result<bool, Fail> {
        let (tree, kids) = (self.tree, at.kids);
        let simple = match at.kw {
            Kw::Type => Some(D::Type),
            Kw::TypeAttribute => Some(D::TypeAttribute),
            Kw::TypeAlias => Some(D::TypeAlias),
            // object_r is libsepol's built-in role 1; declaring it is allowed.
            Kw::Role => Some(D::Role),
            Kw::RoleAttribute => Some(D::RoleAttribute),
            Kw::User => Some(D::User),
            Kw::UserAttribute => Some(D::UserAttribute),
            Kw::Sensitivity => Some(D::Sens),
            Kw::SensitivityAlias => Some(D::SensAlias),
            Kw::Category => Some(D::Cat),
            Kw::CategoryAlias => Some(D::CatAlias),
            Kw::Sid => Some(D::Sid),
            Kw::PolicyCap => Some(D::PolicyCap),
            Kw::ClassPermission => Some(D::ClassPermission),
            _ => None,
        };
        if let Some(kind) = simple {
            self.expect_len(at, 2, 2)?;
            let name = self.name_at(at, 1)?;
            self.declare(at, kind, name)?;
            return Ok(true);
        }
        match at.kw {
            Kw::Boolean | Kw::Tunable => {
                self.expect_len(at, 3, 3)?;
                let name = self.name_at(at, 1)?;
                let v = tree.sym(kids[2]);
                if v != Some(Kw::True.sym()) && v != Some(Kw::False.sym()) {
                    // libsepol's line has no newline: the next one continues it.
                    let mut f = self.bad(at, "");
                    f.messages.remove(0);
                    f.messages[0].insert_str(0, "Value must be either 'true' or 'false'");
                    return Err(f);
                }
                // `-P`: tunables are booleans.
                let kind = if at.kw == Kw::Tunable && !self.opts.preserve_tunables {
                    D::Tunable
                } else {
                    D::Bool
                };
                self.declare(at, kind, name)?;
            }
            Kw::Common | Kw::Class | Kw::ClassMap => self.class(at)?,
            Kw::ClassCommon => {
                self.expect_len(at, 3, 3)?;
                let c = self.name_at(at, 1)?;
                let m = self.name_at(at, 2)?;
                self.ast.class_common.entry(c).or_insert((at.si, m));
            }
            Kw::CategorySet => {
                self.expect_len(at, 3, 3)?;
                let name = self.name_at(at, 1)?;
                self.declare(at, D::CatSet, name)?;
            }
            Kw::Level | Kw::LevelRange | Kw::Context | Kw::IpAddr | Kw::PermissionX => {
                self.expect_len(at, 3, 3)?;
                let name = self.name_at(at, 1)?;
                let kind = match at.kw {
                    Kw::Level => D::Level,
                    Kw::LevelRange => D::LevelRange,
                    Kw::Context => D::Context,
                    Kw::IpAddr => D::IpAddr,
                    _ => D::PermissionX,
                };
                self.declare(at, kind, name)?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `common`, `class`, `classmap`: the declaration and its permission list.
    fn class(&mut self, at: &At<'a>) -> Result<(), Fail> {
        let (tree, int, kids) = (self.tree, self.int, at.kids);
        self.expect_len(at, 3, 3)?;
        let name = self.name_at(at, 1)?;
        if !tree.is_list(kids[2]) {
            return Err(self.bad(at, "Invalid syntax"));
        }
        let kind = match at.kw {
            Kw::Common => D::Common,
            Kw::Class => D::Class,
            _ => D::ClassMap,
        };
        let id = self.declare(at, kind, name)?;
        let mut list = Vec::new();
        for &p in tree.kids(kids[2]) {
            let ps = match tree.sym(p) {
                Some(s) if verify_name(int, s, false) => s,
                _ => return Err(self.bad(at, "Invalid permission name")),
            };
            if list.contains(&ps) {
                return Err(self.bad(at, &format!("Re-declaration of permission {}", int.str(ps))));
            }
            list.push(ps);
        }
        if list.len() > 32 && at.kw != Kw::ClassMap {
            return Err(self.bad(at, "Too many permissions in class"));
        }
        self.ast.perm_lists.insert(id, list);
        Ok(())
    }

    /// Fails unless the statement has between `min` and `max` elements.
    pub(super) fn expect_len(&self, at: &At, min: usize, max: usize) -> Result<(), Fail> {
        if at.kids.len() < min || at.kids.len() > max {
            Err(self.bad(at, "Invalid syntax"))
        } else {
            Ok(())
        }
    }

    /// The name at element `i`: an atom that is a valid name.
    pub(super) fn name_at(&self, at: &At, i: usize) -> Result<Sym, Fail> {
        let (tree, int) = (self.tree, self.int);
        let s = at
            .kids
            .get(i)
            .and_then(|&k| (!tree.is_list(k)).then(|| tree.sym(k)).flatten())
            .ok_or_else(|| self.bad(at, "Invalid syntax"))?;
        if !verify_name(int, s, self.opts.qualified_names) {
            let mut lines = crate::ast::invalid_name_lines(int, s, self.opts.qualified_names);
            lines.extend(self.bad(at, "").messages.into_iter().skip(1));
            return Err(Fail::bad(lines));
        }
        Ok(s)
    }

    /// Declares `name` as a `kind` in the table of the statement's scope. With `-m`,
    /// a type or attribute declared again is the first declaration.
    fn declare(&mut self, at: &At, kind: DeclKind, name: Sym) -> Result<u32, Fail> {
        let int = self.int;
        if reserved_name(kind, name) {
            return Err(Fail::bad(vec![
                format!("Name {} is a reserved word", int.str(name)),
                "Invalid name".into(),
                format!("Bad {} declaration at {}", at.kw.text(), self.here(&at.it)),
                "Failed to build AST".into(),
                "Failed to compile cildb: -1".into(),
            ]));
        }
        let ast = &mut self.ast;
        let id = ast.decls.len() as u32;
        let table = match at.it.scope {
            NONE => NONE,
            sc if ast.scopes[sc as usize].prefix.is_empty() => NONE,
            sc => ast.scopes[sc as usize].table,
        };
        let prev = if table == NONE {
            ast.find(kind.ns(), name)
        } else {
            ast.find_scoped(table, kind.ns(), name)
        };
        if let Some(prev) = prev {
            let p = ast.decls[prev as usize];
            let same_ok = self.opts.multiple_decls
                && p.kind == kind
                && matches!(kind, DeclKind::Type | DeclKind::TypeAttribute);
            if same_ok {
                return Ok(prev);
            }
            let here = self.here(&at.it);
            return Err(Fail::bad(vec![
                format!("Re-declaration of {} {}", kind.word(), int.str(name)),
                format!("Previous declaration of {} at {here}", p.kind.word()),
                format!("Bad {} declaration at {here}", at.kw.text()),
                "Failed to build AST".into(),
            ]));
        }
        let slot = if table != NONE {
            ast.pending.push((id, table));
            ast.scoped.entry((table, name)).or_insert(NONE)
        } else {
            &mut ast.by_sym[name as usize]
        };
        let next = std::mem::replace(slot, id);
        ast.decls.push(Decl {
            kind,
            name,
            stmt: at.si,
            next,
        });
        Ok(id)
    }
}

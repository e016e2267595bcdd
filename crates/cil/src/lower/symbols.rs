//! The policy's symbols in libsepol's value order: types and kept attributes, roles
//! (`object_r` first), type aliases, classes and their commons, users, booleans,
//! sensitivities and categories.

use super::*;

/// Sepol type values: types and kept attributes in walk order.
pub(super) fn type_values(l: &mut L<'_>, p: &mut Parts) -> Result<(), Fail> {
    let ast = l.ast;
    let na = l.attrs.len();
    l.type_val = vec![0; l.types.len()];
    l.attr_val = vec![0; na];
    // At most one datum per type and attribute (pushed one by one, the vector was
    // copied at each doubling).
    p.tdatums = Vec::with_capacity(l.types.len() + na);
    for &(_, d) in &p.live_decls {
        match ast.decls[d as usize].kind {
            DeclKind::Type => {
                p.tdatums.push(TypeDatum {
                    name: l.name(d).into(),
                    flavor: TypeFlavor::Type,
                    bounds: None,
                });
                l.type_val[l.dint[d as usize] as usize] = p.tdatums.len() as u32;
            }
            DeclKind::TypeAttribute if p.keep[l.dint[d as usize] as usize] => {
                p.tdatums.push(TypeDatum {
                    name: l.name(d).into(),
                    flavor: TypeFlavor::Attribute,
                    bounds: None,
                });
                l.attr_val[l.dint[d as usize] as usize] = p.tdatums.len() as u32;
            }
            _ => {}
        }
    }
    if p.tdatums.len() > u16::MAX as usize {
        return Err(err("too many types".into()));
    }
    Ok(())
}

/// Role values: `object_r` is 1, the others follow in declaration order.
pub(super) fn role_values(l: &mut L<'_>, p: &mut Parts) -> Result<(), Fail> {
    let ast = l.ast;
    l.role_val = vec![0; l.roles.len()];
    p.rdatums = vec![Role {
        name: "object_r".into(),
        bounds: None,
        dominates: Ebitmap::default(),
        types: Ebitmap::default(),
    }];
    for (i, &d) in l.roles.clone().iter().enumerate() {
        if ast.decls[d as usize].name == Kw::ObjectR.sym() {
            l.role_val[i] = 1;
        } else {
            p.rdatums.push(Role {
                name: l.name(d).into(),
                bounds: None,
                dominates: Ebitmap::from_bits([p.rdatums.len() as u32]),
                types: Ebitmap::default(),
            });
            l.role_val[i] = p.rdatums.len() as u32;
        }
    }
    for i in 0..l.rattrs.len() {
        l.role_members(i as u32)?;
    }
    Ok(())
}

/// Type aliases in walk order, each naming its actual type's value.
pub(super) fn type_aliases(l: &mut L<'_>, p: &mut Parts) -> Result<(), Fail> {
    let (t, ast) = (l.t, l.ast);
    p.type_aliases = vec![];
    for &(s, d) in &p.live_decls {
        if ast.decls[d as usize].kind == DeclKind::TypeAlias {
            let n = t.kids(ast.stmts[s as usize].node)[1];
            if let TRef::Type(i) = l.tref(n)? {
                p.type_aliases.push(TypeAlias {
                    name: l.name(d).into(),
                    target: tid(l.type_val[i as usize]),
                });
            } else {
                return Err(err(format!("Alias {} must refer to a type", l.name(d))));
            }
        }
    }
    Ok(())
}

/// Classes in class order, each common numbered when its first class is.
pub(super) fn classes_and_commons(l: &L<'_>, p: &mut Parts) -> Result<(), Fail> {
    let (int, ast) = (l.int, l.ast);
    let mut common_val: FxHashMap<u32, u32> = FxHashMap::default();
    p.commons = vec![];
    p.classes = vec![];
    for (ci, &cd) in l.classes.clone().iter().enumerate() {
        let cm = l.class_common[ci];
        let mut ncommon = 0;
        let common = match cm {
            Some(c) => {
                let perms = &ast.perm_lists[&c];
                ncommon = perms.len() as u32;
                let v = *common_val.entry(c).or_insert_with(|| {
                    p.commons.push(Common {
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
                    p.commons.len() as u32
                });
                arbiter_policy::CommonId::new(v as u8 as _)
            }
            None => None,
        };
        let own = &ast.perm_lists[&cd];
        if ncommon + own.len() as u32 > 32 {
            return Err(err(format!("Too many permissions in class {}", l.name(cd))));
        }
        p.classes.push(Class {
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
    Ok(())
}

/// Users, booleans (with their declared state), sensitivities and categories in value
/// order, and the empty tables the statements fill.
pub(super) fn users_bools_levels(l: &L<'_>, p: &mut Parts) {
    let (t, ast) = (l.t, l.ast);
    p.udatums = l
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
    p.user_roles = vec![vec![]; l.users.len()];
    p.role_types = vec![Bits::new(l.types.len()); l.roles.len()];
    // Booleans.
    p.bdatums = l
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
    p.sdatums = l
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
    p.sens_cats = vec![Bits::new(l.cats.len()); l.sens.len()];
    p.cdatums = l
        .cats
        .iter()
        .map(|&d| Category {
            name: l.name(d).into(),
        })
        .collect();
    p.user_level = vec![None; l.users.len()];
    p.user_range = vec![None; l.users.len()];
    p.constraints = vec![vec![]; p.classes.len()];
    p.validatetrans = vec![vec![]; p.classes.len()];
}

//! The second walk of lowering, over the unconditional statements in walk order: policy
//! capabilities, aliases, bounds, role and user statements, type, role and range
//! transitions, constraints, object contexts, `selinuxuser*` and `default*` statements.

use super::*;

/// Lowers every live unconditional statement but the av rules (those come in
/// [`super::rules`], once every context has been verified).
pub(super) fn lower_all<'a>(l: &mut L<'a>, p: &mut Parts<'a>) -> Result<(), Fail> {
    let ast = l.ast;
    // Over a copy of the live set (38 KB), as the pass mutates `l`; the unconditional
    // av rules are not lowered here.
    let live = l.live_rest.clone();
    // The lists of file and port contexts and the context log reserved at their size:
    // grown push by push, their elements (80 to 120 bytes) were copied by `realloc` at
    // each doubling.
    let (mut filecons, mut portcons, mut genfscons, mut contexts) = (0, 0, 0, 0);
    for s in live.iter() {
        match ast.stmts[s].kw {
            Kw::FileCon => filecons += 1,
            Kw::PortCon => portcons += 1,
            Kw::GenfsCon => {
                genfscons += 1;
                contexts += 1;
            }
            Kw::SidContext | Kw::FsUse | Kw::NodeCon | Kw::Context => contexts += 1,
            Kw::NetifCon => contexts += 2,
            _ => {}
        }
    }
    p.cr.filecons.reserve(filecons);
    p.cr.portcons.reserve(portcons);
    p.cr.genfscons.reserve(genfscons);
    l.ctx_log.get_mut().reserve(filecons + portcons + contexts);
    for s in live.iter() {
        let s = s as u32;
        l.cur_stmt.set(s);
        let st = ast.stmts[s as usize];
        if st.cond != NONE && st.kw != Kw::Context {
            continue;
        }
        match st.kw {
            // Verified once every statement is lowered ([`super::verify`]).
            Kw::Context => p.named_contexts.push(s),
            Kw::PolicyCap
            | Kw::SensitivityAlias
            | Kw::CategoryAlias
            | Kw::SensitivityCategory
            | Kw::TypePermissive => symbol_statement(l, p, s)?,
            Kw::TypeBounds | Kw::RoleBounds | Kw::UserBounds => bounds(l, p, s)?,
            Kw::NeverAllow | Kw::NeverAllowX if !l.opts.disable_neverallow => p.neverallows.push(s),
            Kw::RoleType | Kw::UserRole | Kw::UserLevel | Kw::UserRange => {
                role_user_statement(l, p, s)?
            }
            Kw::TypeTransition
            | Kw::TypeChange
            | Kw::TypeMember
            | Kw::RoleTransition
            | Kw::Constrain
            | Kw::MlsConstrain
            | Kw::ValidateTrans
            | Kw::MlsValidateTrans
            | Kw::RangeTransition => transition_statement(l, p, s)?,
            Kw::SidContext | Kw::FileCon | Kw::PortCon | Kw::GenfsCon | Kw::FsUse => {
                file_context_statement(l, p, s)?
            }
            Kw::NetifCon
            | Kw::NodeCon
            | Kw::IbPkeyCon
            | Kw::PirqCon
            | Kw::IomemCon
            | Kw::IoportCon
            | Kw::PciDeviceCon
            | Kw::DeviceTreeCon
            | Kw::IbEndportCon => device_context_statement(l, p, s)?,
            Kw::SelinuxUser | Kw::SelinuxUserDefault | Kw::UserPrefix => seuser_statement(l, p, s)?,
            Kw::DefaultUser | Kw::DefaultRole | Kw::DefaultType | Kw::DefaultRange => {
                default_labels(l, p, s)?
            }
            _ => {}
        }
    }
    // The statement later messages name when they have none of their own (`L::look`) is
    // the last live one, as when this pass walked the av rules as well.
    if let Some(last) = l.live.last() {
        l.cur_stmt.set(last as u32);
    }
    Ok(())
}

/// `policycap`, sensitivity and category aliases, `sensitivitycategory`, `typepermissive`.
fn symbol_statement(l: &mut L<'_>, p: &mut Parts, s: u32) -> Result<(), Fail> {
    let ast = l.ast;
    let st = ast.stmts[s as usize];
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
            p.policycaps.push(cap);
        }
        Kw::SensitivityAlias | Kw::CategoryAlias => {
            let d = p
                .decl_of(s)
                .ok_or_else(|| err(format!("Alias declared nowhere at {}", l.here(s))))?;
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
                p.sens_aliases.push(m)
            } else {
                p.cat_aliases.push(m)
            }
        }
        Kw::SensitivityCategory => {
            let sd = l.sens_actual(l.look(Ns::Sens, a[1])?);
            let b = l.catset(a[2])?;
            p.sens_cats[l.dint[sd as usize] as usize].or(&b);
        }
        Kw::TypePermissive => {
            if let TRef::Type(i) = l.tref(a[1])? {
                p.permissive.push(l.type_val[i as usize]);
            }
        }
        _ => {}
    }
    Ok(())
}

/// `typebounds`, `rolebounds`, `userbounds`: bound in the hierarchy (checked for loops before the rules) and recorded for the datums.
fn bounds(l: &mut L<'_>, p: &mut Parts, s: u32) -> Result<(), Fail> {
    let (t, ast) = (l.t, l.ast);
    let st = ast.stmts[s as usize];
    let a = l.args(s);
    match st.kw {
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
            let parent = side(l, a[1])?;
            let child = side(l, a[2])?;
            let (pd, cd) = (parent.decl, child.decl);
            p.hierarchy
                .bind((t, ast, l.names), kind, s, parent, child)?;
            match kind {
                Kind::Type => p.type_bounds.push((l.tref(a[2])?, l.tref(a[1])?)),
                Kind::Role => p
                    .role_bounds
                    .push((l.dint[cd as usize], l.dint[pd as usize])),
                Kind::User => p
                    .user_bounds
                    .push((l.dint[cd as usize], l.dint[pd as usize])),
            }
        }
        _ => {}
    }
    Ok(())
}

/// `roletype`, `userrole`, `userlevel`, `userrange`.
fn role_user_statement(l: &mut L<'_>, p: &mut Parts, s: u32) -> Result<(), Fail> {
    let ast = l.ast;
    let st = ast.stmts[s as usize];
    let a = l.args(s);
    match st.kw {
        Kw::RoleType => {
            // Nearly every `roletype` names one role and one type: its bit is set in
            // place, where the general path built two sets (roles and types, an
            // allocation each) to or them together. Same lookups in the same order, so
            // the same first failure.
            if !l.t.is_list(a[1]) {
                let d = l.look(Ns::Roles, a[1])?;
                if l.kind(d) != DeclKind::RoleAttribute {
                    let ri = l.dint[d as usize] as usize;
                    match l.tref(a[2])? {
                        TRef::Type(i) => p.role_types[ri].set(i as usize),
                        TRef::Attr(x) => {
                            l.ensure_members(x)?;
                            if let Some(m) = &l.attr_members[x as usize] {
                                p.role_types[ri].or(m);
                            }
                        }
                        TRef::SelfT => {}
                    }
                    return Ok(());
                }
            }
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
                p.role_types[ri].or(&types);
            }
        }
        Kw::UserRole => {
            let us = l.user_set(a[1])?;
            let rv = l.role_vals(a[2])?;
            for ui in us.iter() {
                p.user_roles[ui].extend(rv.iter().copied());
            }
        }
        Kw::UserLevel => {
            let u = l.user_decl(a[1])?;
            let lv = l.level(a[2])?;
            p.udatums[l.dint[u as usize] as usize].default_level = l.mls_level(&lv);
            p.user_level[l.dint[u as usize] as usize] = Some(lv);
        }
        Kw::UserRange => {
            let u = l.user_decl(a[1])?;
            let rg = l.range(a[2])?;
            p.udatums[l.dint[u as usize] as usize].range = l.mls_range(&rg);
            p.user_range[l.dint[u as usize] as usize] = Some(rg);
        }
        _ => {}
    }
    Ok(())
}

/// Type rules, `roletransition`, constraints and validatetrans, `rangetransition`.
fn transition_statement(l: &mut L<'_>, p: &mut Parts, s: u32) -> Result<(), Fail> {
    let ast = l.ast;
    let st = ast.stmts[s as usize];
    let a = l.args(s);
    match st.kw {
        Kw::TypeTransition | Kw::TypeChange | Kw::TypeMember => {
            type_rule(l, p, s, None)?;
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
                    match p.rtseen.get(&(rv, tv, ci)) {
                        Some(&o) if o == nv => continue,
                        Some(_) => {
                            return Err(err(format!(
                                "Conflicting role transition at {}",
                                l.here(s)
                            )))
                        }
                        None => {}
                    }
                    p.rtseen.insert((rv, tv, ci), nv);
                    p.role_trans.push(RoleTrans {
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
                return Ok(());
            }
            let expr = constraint_expr(l, a[2])?;
            if matches!(st.kw, Kw::Constrain | Kw::MlsConstrain) {
                for (ci, bits) in l.classperms(a[1])? {
                    if bits == 0 {
                        continue;
                    }
                    p.constraints[ci as usize].insert(
                        0,
                        Constraint {
                            perms: bits,
                            expr: expr.clone().into_boxed_slice(),
                        },
                    );
                }
            } else {
                let ci = l.class_of(a[1])?;
                p.validatetrans[ci as usize].insert(
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
                return Ok(());
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
                    if let Some(&i) = p.rtrindex.get(&(sv, tv, ci)) {
                        if p.range_trans[i].range != range {
                            return Err(err(format!(
                                "Conflicting range transition at {}",
                                l.here(s)
                            )));
                        }
                        continue;
                    }
                    p.rtrindex.insert((sv, tv, ci), p.range_trans.len());
                    p.range_trans.push(RangeTrans {
                        source: tid(sv),
                        target: tid(tv),
                        class: cid(ci),
                        range: range.clone(),
                    });
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// `sidcontext`, `filecon`, `portcon`, `genfscon`, `fsuse`.
fn file_context_statement<'a>(l: &mut L<'a>, p: &mut Parts<'a>, s: u32) -> Result<(), Fail> {
    let (t, ast) = (l.t, l.ast);
    let st = ast.stmts[s as usize];
    let a = l.args(s);
    match st.kw {
        Kw::SidContext => {
            let sd = l.look(Ns::Sids, a[1])?;
            p.sidctx.insert(sd, l.context(a[2])?);
        }
        Kw::FileCon => {
            let path = l.atom_bytes(a[1])?;
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
            p.cr.filecons.push((path, ft, ctx, s));
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
            p.cr.portcons.push((proto, lo, hi, l.context(a[3])?));
        }
        Kw::GenfsCon => {
            let fs = l.atom_bytes(a[1])?;
            let path = l.atom_bytes(a[2])?;
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
            p.cr.genfscons
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
            p.cr.fsuses.push((ty, fs, l.context(a[3])?));
        }
        _ => {}
    }
    Ok(())
}

/// `netifcon`, `nodecon`, the InfiniBand contexts and the Xen device contexts.
fn device_context_statement(l: &mut L<'_>, p: &mut Parts, s: u32) -> Result<(), Fail> {
    let (t, int, ast) = (l.t, l.int, l.ast);
    let st = ast.stmts[s as usize];
    let a = l.args(s);
    match st.kw {
        Kw::NetifCon => {
            let name = l.atom_bytes(a[1])?.to_vec();
            p.cr.netifcons
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
            p.cr.nodecons.push((addr, mask, l.context(a[3])?));
        }
        Kw::IbPkeyCon => {
            let prefix_text = String::from_utf8_lossy(l.atom_bytes(a[1])?).into_owned();
            let prefix: std::net::Ipv6Addr = prefix_text
                .parse()
                .map_err(|_| err(format!("ibpkeycon: invalid subnet prefix at {}", l.here(s))))?;
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
            p.cr.ibpkeycons
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
            p.xencons.push(crate::xencon::XenCon {
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
            p.cr.ibendportcons.push((dev, port, l.context(a[3])?));
        }
        _ => {}
    }
    Ok(())
}

/// `selinuxuser`, `selinuxuserdefault`, `userprefix`: the seusers and users_extra outputs.
fn seuser_statement(l: &mut L<'_>, p: &mut Parts, s: u32) -> Result<(), Fail> {
    let ast = l.ast;
    let st = ast.stmts[s as usize];
    let a = l.args(s);
    match st.kw {
        Kw::SelinuxUser => {
            let u = l.user_decl(a[2])?;
            p.selinuxusers.push((l.atom_sym(a[1])?, u, l.range(a[3])?));
        }
        Kw::SelinuxUserDefault => {
            let u = l.user_decl(a[1])?;
            p.seuser_default = Some((u, l.range(a[2])?));
        }
        Kw::UserPrefix => {
            let u = l.user_decl(a[1])?;
            p.userprefixes.push((u, l.atom_sym(a[2])?));
        }
        _ => {}
    }
    Ok(())
}

/// `defaultuser`, `defaultrole`, `defaulttype`, `defaultrange` on each class named; a class given two different defaults is an error.
fn default_labels(l: &mut L<'_>, p: &mut Parts, s: u32) -> Result<(), Fail> {
    let (t, ast) = (l.t, l.ast);
    let st = ast.stmts[s as usize];
    let a = l.args(s);
    match st.kw {
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
                let c = &mut p.classes[ci];
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
                            f.messages.extend(binary_failed(l, s));
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
                            m.extend(binary_failed(l, s));
                            return Err(Fail::bad(m));
                        }
                    }
                }
            }
        }
        _ => {}
    }
    Ok(())
}

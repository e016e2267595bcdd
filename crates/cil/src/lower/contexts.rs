//! Security contexts and the object-context statements' ordering (libsepol's
//! compare functions for `filecon` and the rest).

use super::*;

impl<'a> L<'a> {
    pub(super) fn context(&self, n: u32) -> Result<Ctx, Fail> {
        if !self.t.is_list(n) {
            let d = self.look(Ns::Contexts, n)?;
            let s = self.ast.decls[d as usize].stmt;
            // A named context is verified where it is declared (`Invalid named context`).
            let user = self.cur_stmt.replace(s);
            let c = self.context(self.args(s)[2]);
            self.cur_stmt.set(user);
            return c;
        }
        let k = self.t.kids(n);
        let u = self.user_decl(k[0])?;
        let r = self.look(Ns::Roles, k[1])?;
        if self.kind(r) != DeclKind::Role {
            return Err(err(format!(
                "Role attribute {} used in a context at {}",
                self.name(r),
                self.here(self.cur_stmt.get())
            )));
        }
        let ty = match self.tref(k[2])? {
            TRef::Type(i) => i,
            _ => {
                return Err(err(format!(
                    "Type in a context must be a type at {}",
                    self.here(self.cur_stmt.get())
                )))
            }
        };
        let c = Ctx {
            user: self.dint[u as usize],
            role: self.dint[r as usize],
            ty,
            range: self.range(k[3])?,
        };
        self.ctx_log
            .borrow_mut()
            .push((self.cur_stmt.get(), c.clone()));
        Ok(c)
    }

    /// An `ipaddr` name or an anonymous `(address)`: IPv6 when it holds a colon.
    pub(super) fn ipaddr(&self, n: u32) -> Result<std::net::IpAddr, Fail> {
        let text_node = if self.t.is_list(n) {
            self.t.kids(n)[0]
        } else {
            let d = self.look(Ns::IpAddrs, n)?;
            self.args(self.ast.decls[d as usize].stmt)[2]
        };
        let txt = String::from_utf8_lossy(self.atom_bytes(text_node)?);
        let parsed = if txt.contains(':') {
            txt.parse::<std::net::Ipv6Addr>()
                .map(std::net::IpAddr::V6)
                .ok()
        } else {
            txt.parse::<std::net::Ipv4Addr>()
                .map(std::net::IpAddr::V4)
                .ok()
        };
        parsed.ok_or_else(|| err(format!("Invalid IP address {txt}")))
    }

    pub(super) fn sepol_context(&self, c: &Ctx) -> Result<Context, Fail> {
        let bad = || err("context value out of range".into());
        Ok(Context {
            user: UserId::new(c.user + 1).ok_or_else(bad)?,
            role: RoleId::new(self.role_val[c.role as usize]).ok_or_else(bad)?,
            ty: TypeId::new(self.type_val[c.ty as usize] as u16).ok_or_else(bad)?,
            range: self.mls_range(&c.range),
        })
    }
}

/// Collapses equal keys of a sorted context-rule list, keeping the first. libsepol 3.4
/// only reports duplicates when its log level is at least "warning" (`-v`), and then as
/// an error; at the default level they are dropped silently.
pub(super) fn dedup_rules<T>(
    v: &mut Vec<T>,
    cmp: &impl Fn(&T, &T) -> Ordering,
    kind: &str,
    verbose: u8,
    loc: impl Fn(&T) -> Option<String>,
) -> Result<(), Fail> {
    if verbose > 0 {
        let mut i = 0;
        while i < v.len() {
            let mut j = i + 1;
            while j < v.len() && cmp(&v[i], &v[j]) == Ordering::Equal {
                j += 1;
            }
            if j - i > 1 {
                let mut m = vec![format!("Found conflicting {kind} rules")];
                m.extend(v[i..j].iter().filter_map(&loc).map(|l| format!("  at {l}")));
                m.push(format!("Problems processing {kind} rules"));
                m.push("Failed post db handling".into());
                m.push("Post process failed".into());
                m.push("Failed to compile cildb: -1".into());
                return Err(Fail::bad(m));
            }
            i = j;
        }
    }
    v.dedup_by(|b, a| cmp(a, b) == Ordering::Equal);
    Ok(())
}

/// (has meta character, stem length, string length) of a filecon path.
/// A `filecon` as lowered: path, file type, context (none for `<<none>>`), statement.
/// The path is the interner's text (a copy was an allocation per `filecon`).
pub(super) type FileCon<'a> = (&'a [u8], u32, Option<Ctx>, u32);

/// libsepol's `cil_post_filecon_compare` given each side's [`fc_data`].
pub(super) fn fc_order(
    fa: (bool, usize, usize),
    a: &FileCon<'_>,
    fb: (bool, usize, usize),
    b: &FileCon<'_>,
) -> Ordering {
    if fa.0 && !fb.0 {
        return Ordering::Less;
    }
    if fb.0 && !fa.0 {
        return Ordering::Greater;
    }
    fa.1.cmp(&fb.1)
        .then(fa.2.cmp(&fb.2))
        .then(a.1.cmp(&b.1))
        .then(a.0.cmp(b.0))
}

pub(super) fn fc_data(p: &[u8]) -> (bool, usize, usize) {
    let (mut meta, mut stem, mut len) = (false, 0, 0);
    let mut c = 0;
    while c < p.len() {
        match p[c] {
            b'.' | b'^' | b'$' | b'?' | b'*' | b'+' | b'|' | b'[' | b'(' | b'{' => meta = true,
            b'\\' => {
                c += 1;
                if c >= p.len() {
                    if !meta {
                        stem += 1;
                    }
                    len += 1;
                    return (meta, stem, len);
                }
                if !meta {
                    stem += 1;
                }
            }
            _ => {
                if !meta {
                    stem += 1;
                }
            }
        }
        len += 1;
        c += 1;
    }
    (meta, stem, len)
}

/// The object-context statements of the input as lowered, in statement order until
/// [`sort_and_dedup`] orders them.
#[derive(Default)]
pub(super) struct ContextRules<'a> {
    pub(super) filecons: Vec<FileCon<'a>>,
    /// (protocol, low, high, context).
    pub(super) portcons: Vec<(u32, u32, u32, Ctx)>,
    /// (file system, path, file type, context), the names the interner's text.
    pub(super) genfscons: Vec<(&'a [u8], &'a [u8], u32, Ctx)>,
    /// (behaviour, file system, context).
    pub(super) fsuses: Vec<(u32, Vec<u8>, Ctx)>,
    pub(super) netifcons: Vec<(Vec<u8>, Ctx, Ctx)>,
    pub(super) nodecons: Vec<(std::net::IpAddr, std::net::IpAddr, Ctx)>,
    pub(super) ibpkeycons: Vec<(Vec<u8>, std::net::Ipv6Addr, u32, u32, Ctx)>,
    pub(super) ibendportcons: Vec<(Vec<u8>, u32, Ctx)>,
}

/// The object contexts in the policy's form.
pub(super) struct PolicyContexts {
    pub(super) ports: Vec<PortCon>,
    pub(super) fs_use: Vec<FsUse>,
    pub(super) netifs: Vec<arbiter_policy::ocontext::NetifCon>,
    pub(super) nodes: Vec<arbiter_policy::ocontext::NodeCon>,
    pub(super) nodes6: Vec<arbiter_policy::ocontext::Node6Con>,
    pub(super) ibpkeys: Vec<arbiter_policy::ocontext::IbPkeyCon>,
    pub(super) ibendports: Vec<arbiter_policy::ocontext::IbEndportCon>,
    pub(super) genfs: Vec<GenfsCon>,
}

/// The positions of `keyed` (each path's [`fc_data`] beside it) in the order glibc's merge
/// sort leaves them under [`fc_order`].
#[inline]
fn filecon_order(keyed: &[((bool, usize, usize), FileCon<'_>)]) -> Vec<u32> {
    // `fc_order` is lexicographic on (meta, stem, length, file type, path): a total
    // preorder, under which every stable sort leaves one order, glibc's merge sort's
    // among them. The standard library's stable sort (which takes runs as they are)
    // orders the positions, not the rules.
    // When every stem and length fits in 28 bits (any real path), (meta, stem, length,
    // file type, under 128) is packed into one word that compares as `fc_order`'s first four keys.
    const WIDE: usize = 1 << 28;
    if keyed.iter().all(|(k, f)| k.2 < WIDE && f.1 < 128) {
        let mut packed: Vec<(u64, u32)> = keyed
            .iter()
            .enumerate()
            .map(|(i, ((meta, stem, len), f))| {
                let word = (u64::from(!meta) << 63)
                    | ((*stem as u64) << 35)
                    | ((*len as u64) << 7)
                    | u64::from(f.1);
                (word, i as u32)
            })
            .collect();
        packed.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| keyed[a.1 as usize].1 .0.cmp(keyed[b.1 as usize].1 .0))
        });
        packed.into_iter().map(|(_, i)| i).collect()
    } else {
        let mut perm: Vec<u32> = (0..keyed.len() as u32).collect();
        perm.sort_by(|&i, &j| {
            let (a, b) = (&keyed[i as usize], &keyed[j as usize]);
            fc_order(a.0, &a.1, b.0, &b.1)
        });
        perm
    }
}

/// A `portcon`'s (protocol, low, high, context) as the key libsepol's compare orders by:
/// (width, low port, protocol).
fn port_key<C>(&(proto, lo, hi, _): &(u32, u32, u32, C)) -> (i32, u32, u32) {
    (hi as i32 - lo as i32, lo, proto)
}

/// Sorts each list with libsepol's compare function (a stable merge sort, as libsepol's
/// `qsort` replacement is) and drops duplicates as secilc does.
pub(super) fn sort_and_dedup(l: &L<'_>, cr: &mut ContextRules<'_>) -> Result<(), Fail> {
    // Each path's (meta, stem, length) computed once and carried beside it through the
    // sort and the duplicate check, not per comparison.
    let mut keyed: Vec<((bool, usize, usize), FileCon<'_>)> = std::mem::take(&mut cr.filecons)
        .into_iter()
        .map(|f| (fc_data(f.0), f))
        .collect();
    let perm = filecon_order(&keyed);
    crate::msort::permute(&mut keyed, &perm);
    let fc_cmp = |a: &((bool, usize, usize), FileCon<'_>),
                  b: &((bool, usize, usize), FileCon<'_>)| {
        fc_order(a.0, &a.1, b.0, &b.1)
    };
    dedup_rules(&mut keyed, &fc_cmp, "filecon", l.opts.verbose, |x| {
        Some(l.here(x.1 .3))
    })?;
    cr.filecons = keyed.into_iter().map(|(_, f)| f).collect();
    let port_cmp = |a: &(u32, u32, u32, Ctx), b: &(u32, u32, u32, Ctx)| {
        let d = (a.2 as i32 - a.1 as i32) - (b.2 as i32 - b.1 as i32);
        d.cmp(&0).then(a.1.cmp(&b.1)).then(a.0.cmp(&b.0))
    };
    // Lexicographic on (width, low port, protocol), a total preorder: the standard
    // library's stable sort leaves glibc's merge sort's order.
    cr.portcons.sort_by_key(port_key);
    dedup_rules(
        &mut cr.portcons,
        &port_cmp,
        "portcon",
        l.opts.verbose,
        |_| None,
    )?;
    let genfs_cmp = |a: &(&[u8], &[u8], u32, Ctx), b: &(&[u8], &[u8], u32, Ctx)| {
        a.0.cmp(b.0).then(a.1.cmp(b.1))
    };
    msort(&mut cr.genfscons, &genfs_cmp);
    dedup_rules(
        &mut cr.genfscons,
        &genfs_cmp,
        "genfscon",
        l.opts.verbose,
        |_| None,
    )?;
    let fsuse_cmp =
        |a: &(u32, Vec<u8>, Ctx), b: &(u32, Vec<u8>, Ctx)| a.0.cmp(&b.0).then(a.1.cmp(&b.1));
    msort(&mut cr.fsuses, &fsuse_cmp);
    dedup_rules(&mut cr.fsuses, &fsuse_cmp, "fsuse", l.opts.verbose, |_| {
        None
    })?;

    let netif_cmp = |a: &(Vec<u8>, Ctx, Ctx), b: &(Vec<u8>, Ctx, Ctx)| a.0.cmp(&b.0);
    msort(&mut cr.netifcons, &netif_cmp);
    dedup_rules(
        &mut cr.netifcons,
        &netif_cmp,
        "netifcon",
        l.opts.verbose,
        |_| None,
    )?;
    let ip_bytes = |x: &std::net::IpAddr| -> Vec<u8> {
        match x {
            std::net::IpAddr::V4(v) => v.octets().to_vec(),
            std::net::IpAddr::V6(v) => v.octets().to_vec(),
        }
    };
    let node_cmp = |a: &(std::net::IpAddr, std::net::IpAddr, Ctx),
                    b: &(std::net::IpAddr, std::net::IpAddr, Ctx)| {
        match (a.0.is_ipv4(), b.0.is_ipv4()) {
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        ip_bytes(&b.1)
            .cmp(&ip_bytes(&a.1))
            .then(ip_bytes(&a.0).cmp(&ip_bytes(&b.0)))
    };
    msort(&mut cr.nodecons, &node_cmp);
    dedup_rules(
        &mut cr.nodecons,
        &node_cmp,
        "nodecon",
        l.opts.verbose,
        |_| None,
    )?;
    type Pk = (Vec<u8>, std::net::Ipv6Addr, u32, u32, Ctx);
    let pkey_cmp = |a: &Pk, b: &Pk| {
        let d = (a.3 as i32 - a.2 as i32) - (b.3 as i32 - b.2 as i32);
        a.0.cmp(&b.0).then(d.cmp(&0)).then(a.2.cmp(&b.2))
    };
    msort(&mut cr.ibpkeycons, &pkey_cmp);
    dedup_rules(
        &mut cr.ibpkeycons,
        &pkey_cmp,
        "ibpkeycon",
        l.opts.verbose,
        |_| None,
    )?;
    let endport_cmp =
        |a: &(Vec<u8>, u32, Ctx), b: &(Vec<u8>, u32, Ctx)| a.0.cmp(&b.0).then(a.1.cmp(&b.1));
    msort(&mut cr.ibendportcons, &endport_cmp);
    dedup_rules(
        &mut cr.ibendportcons,
        &endport_cmp,
        "ibendportcon",
        l.opts.verbose,
        |_| None,
    )?;
    Ok(())
}

/// The sorted lists in the policy's form (`genfscon` file types to class values).
pub(super) fn to_policy(
    l: &L<'_>,
    cr: &ContextRules,
    classes: &[Class],
) -> Result<PolicyContexts, Fail> {
    let mut netifs = vec![];
    for (name, c1, c2) in &cr.netifcons {
        netifs.push(arbiter_policy::ocontext::NetifCon {
            name: String::from_utf8_lossy(name).into(),
            if_context: l.sepol_context(c1)?,
            msg_context: l.sepol_context(c2)?,
        });
    }
    let (mut nodes, mut nodes6) = (vec![], vec![]);
    for (addr, mask, c) in &cr.nodecons {
        match (addr, mask) {
            (std::net::IpAddr::V4(a4), std::net::IpAddr::V4(m4)) => {
                nodes.push(arbiter_policy::ocontext::NodeCon {
                    addr: a4.octets(),
                    mask: m4.octets(),
                    context: l.sepol_context(c)?,
                })
            }
            (std::net::IpAddr::V6(a6), std::net::IpAddr::V6(m6)) => {
                nodes6.push(arbiter_policy::ocontext::Node6Con {
                    addr: a6.octets(),
                    mask: m6.octets(),
                    context: l.sepol_context(c)?,
                })
            }
            _ => {}
        }
    }
    let mut ibpkeys = vec![];
    for (_, prefix, lo, hi, c) in &cr.ibpkeycons {
        let o = prefix.octets();
        let mut sp = [0u8; 8];
        sp.copy_from_slice(&o[..8]);
        ibpkeys.push(arbiter_policy::ocontext::IbPkeyCon {
            subnet_prefix: sp,
            low: *lo as u16,
            high: *hi as u16,
            context: l.sepol_context(c)?,
        });
    }
    let mut ibendports = vec![];
    for (dev, port, c) in &cr.ibendportcons {
        ibendports.push(arbiter_policy::ocontext::IbEndportCon {
            device: String::from_utf8_lossy(dev).into(),
            port: *port as u8,
            context: l.sepol_context(c)?,
        });
    }
    let proto_num = |p: u32| match p {
        1 => 17,
        2 => 6,
        3 => 33,
        _ => 132,
    };
    let mut ports = Vec::with_capacity(cr.portcons.len());
    for (p, lo, hi, c) in &cr.portcons {
        ports.push(PortCon {
            protocol: proto_num(*p),
            low: *lo,
            high: *hi,
            context: l.sepol_context(c)?,
        });
    }
    let mut fs_use = vec![];
    for (ty, fs, c) in &cr.fsuses {
        fs_use.push(FsUse {
            behavior: match ty {
                1 => FsUseBehavior::Xattr,
                2 => FsUseBehavior::Trans,
                _ => FsUseBehavior::Task,
            },
            fstype: String::from_utf8_lossy(fs).into(),
            context: l.sepol_context(c)?,
        });
    }
    let class_named = |n: &str| {
        classes
            .iter()
            .position(|c| &*c.name == n)
            .map(|i| i as u32 + 1)
    };
    let mut genfs = Vec::with_capacity(cr.genfscons.len());
    for (fs, path, ft, c) in &cr.genfscons {
        let class = match ft {
            0 => 0,
            1 => class_named("file").unwrap_or(0),
            2 => class_named("dir").unwrap_or(0),
            3 => class_named("chr_file").unwrap_or(0),
            4 => class_named("blk_file").unwrap_or(0),
            5 => class_named("sock_file").unwrap_or(0),
            6 => class_named("fifo_file").unwrap_or(0),
            _ => class_named("lnk_file").unwrap_or(0),
        };
        genfs.push(GenfsCon {
            fstype: String::from_utf8_lossy(fs).into(),
            path: String::from_utf8_lossy(path).into(),
            class,
            context: l.sepol_context(c)?,
        });
    }
    Ok(PolicyContexts {
        ports,
        fs_use,
        netifs,
        nodes,
        nodes6,
        ibpkeys,
        ibendports,
        genfs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small linear congruential generator: the same inputs every run.
    fn lcg(state: &mut u64) -> u64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *state >> 33
    }

    #[test]
    fn filecon_order_is_glibc_merge_sort_order() {
        // Paths from a few stems with and without meta characters, many repeated (equal
        // keys keep their input order), every file type.
        let pieces: [&[u8]; 8] = [
            b"/usr", b"/bin", b"/(.*)?", b"/lib", b"x", b"[0-9]+", b"/a", b"",
        ];
        let mut st = 7u64;
        for n in [0usize, 1, 2, 3, 17, 64, 255, 1000] {
            let paths: Vec<Vec<u8>> = (0..n)
                .map(|_| {
                    let mut path = vec![];
                    for _ in 0..lcg(&mut st) % 4 {
                        path.extend_from_slice(pieces[lcg(&mut st) as usize % pieces.len()]);
                    }
                    path
                })
                .collect();
            let keyed: Vec<((bool, usize, usize), FileCon<'_>)> = (0..n)
                .map(|i| {
                    let f: FileCon<'_> = (&paths[i], (lcg(&mut st) % 8) as u32, None, i as u32);
                    (fc_data(f.0), f)
                })
                .collect();
            let want = crate::msort::order(keyed.len(), &|i, j| {
                fc_order(keyed[i].0, &keyed[i].1, keyed[j].0, &keyed[j].1)
            });
            assert_eq!(filecon_order(&keyed), want, "{n} paths");
        }
    }

    #[test]
    fn portcon_key_order_is_glibc_merge_sort_order() {
        let mut st = 11u64;
        for n in [0usize, 1, 5, 100, 700] {
            let v: Vec<(u32, u32, u32, u32)> = (0..n)
                .map(|i| {
                    let lo = (lcg(&mut st) % 40) as u32 * 1000;
                    let hi = lo + [0, 0, 1, 10, 1000][lcg(&mut st) as usize % 5];
                    (1 + (lcg(&mut st) % 4) as u32, lo, hi, i as u32)
                })
                .collect();
            let mut want = v.clone();
            crate::msort::msort(
                &mut want,
                &|a: &(u32, u32, u32, u32), b: &(u32, u32, u32, u32)| {
                    let d = (a.2 as i32 - a.1 as i32) - (b.2 as i32 - b.1 as i32);
                    d.cmp(&0).then(a.1.cmp(&b.1)).then(a.0.cmp(&b.0))
                },
            );
            let mut got = v;
            got.sort_by_key(port_key);
            assert_eq!(got, want, "{n} ports");
        }
    }
}

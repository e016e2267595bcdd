//! Extended permissions (`allowx` and friends): ioctl sets, libsepol's side table and
//! its flush to the avtab's xperms lists.

use super::*;

/// libsepol's `avrulex_hash` bucket (1024 buckets whatever the table's size).
pub(super) fn avrulex_bucket(key: &AvtabKey) -> u32 {
    arbiter_policy::avtab::libsepol_murmur(&[
        u32::from(key.class.value()),
        u32::from(key.target.value()),
        u32::from(key.source.value()),
        u32::from(key.kind.bits()),
    ]) & 1023
}

/// `__cil_permx_bitmap_to_sepol_xperms_list`: runs of ioctl numbers cut at function 0xff
/// or a gap; whole drivers go to one driver entry (last), the rest to per-driver function
/// entries in ascending driver order.
pub(crate) fn xperms_list(bits: &Bits) -> Vec<arbiter_policy::avtab::Xperms> {
    use arbiter_policy::avtab::{Xperms, XpermsKind};
    let set_range = |x: &mut Xperms, lo: u32, hi: u32| {
        for b in lo..=hi {
            x.perms[(b / 32) as usize] |= 1 << (b % 32);
        }
    };
    let mut out = vec![];
    let mut partial: Option<Xperms> = None;
    let mut complete: Option<Xperms> = None;
    let mut low = 0u32;
    let mut start = true;
    for i in bits.iter() {
        let i = i as u32;
        if start {
            low = i;
            start = false;
        }
        if i & 0xff != 0xff && bits.get(i as usize + 1) {
            continue;
        }
        let high = i;
        start = true;
        if low & 0xff == 0 && high & 0xff == 0xff {
            let c = complete.get_or_insert(Xperms {
                kind: XpermsKind::IoctlDriver,
                driver: 0,
                perms: [0; 8],
            });
            set_range(c, low >> 8, low >> 8);
        } else {
            if partial
                .as_ref()
                .is_some_and(|p| p.driver as u32 != low >> 8)
            {
                out.extend(partial.take());
            }
            let p = partial.get_or_insert(Xperms {
                kind: XpermsKind::IoctlFunction,
                driver: (low >> 8) as u8,
                perms: [0; 8],
            });
            set_range(p, low & 0xff, high & 0xff);
        }
    }
    out.extend(partial);
    out.extend(complete);
    out
}

/// An `allowx`-family rule into the side table (union of ioctl numbers per key).
pub(super) fn av_rulex(
    l: &mut L<'_>,
    s: u32,
    xside: &mut Vec<(AvtabKey, Bits)>,
    xindex: &mut FxHashMap<AvtabKey, usize>,
) -> Result<(), Fail> {
    let st = l.ast.stmts[s as usize];
    let a = l.args(s);
    let kind = match st.kw {
        Kw::AllowX => AvtabKind::XpermsAllowed,
        Kw::AuditAllowX => AvtabKind::XpermsAuditAllow,
        _ => AvtabKind::XpermsDontAudit,
    };
    let (ci, nums) = permx_value(l, a[3])?;
    let src = l.tref(a[1])?;
    let tgt = l.tref(a[2])?;
    let (srcs, selfy) = if tgt == TRef::SelfT {
        (l.expand_all(src)?, true)
    } else {
        (l.expand_av(src)?, false)
    };
    let tgts = if selfy { vec![] } else { l.expand_av(tgt)? };
    for &sv in &srcs {
        let tl: &[u32] = if selfy {
            std::slice::from_ref(&sv)
        } else {
            &tgts
        };
        for &tv in tl {
            let key = AvtabKey {
                source: TypeId::new(sv as u16).expect("type"),
                target: TypeId::new(tv as u16).expect("type"),
                class: ClassId::new(ci as u16 + 1).expect("class"),
                kind,
            };
            match xindex.get(&key) {
                Some(&i) => xside[i].1.or(&nums),
                None => {
                    xindex.insert(key, xside.len());
                    xside.push((key, nums.clone()));
                }
            }
        }
    }
    Ok(())
}

/// A permissionx: its class position and the set of 16-bit ioctl numbers.
pub(super) fn permx_value(l: &L<'_>, n: u32) -> Result<(u32, Bits), Fail> {
    let n = if l.t.is_list(n) {
        n
    } else {
        let d = l.look(Ns::PermissionX, n)?;
        l.args(l.ast.decls[d as usize].stmt)[2]
    };
    let k = l.t.kids(n);
    let ci = l.class_of(k[1])?;
    Ok((ci, ioctl_expr(l, k[2])?))
}

pub(super) fn ioctl_num(l: &L<'_>, n: u32) -> Result<u32, Fail> {
    let txt = String::from_utf8_lossy(l.atom_bytes(n)?);
    let v = match txt.strip_prefix("0x").or_else(|| txt.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => txt.parse::<u32>().ok(),
    };
    v.filter(|&v| v <= 0xffff)
        .ok_or_else(|| err(format!("Invalid ioctl number {txt}")))
}

pub(super) fn ioctl_expr(l: &L<'_>, n: u32) -> Result<Bits, Fail> {
    const N: usize = 1 << 16;
    if !l.t.is_list(n) {
        let mut b = Bits::new(N);
        b.set(ioctl_num(l, n)? as usize);
        return Ok(b);
    }
    let k = l.t.kids(n);
    let op = k.first().and_then(|&x| l.t.sym(x)).and_then(Kw::of);
    match op {
        Some(Kw::All) => Ok(Bits::all(N)),
        Some(Kw::Range) if k.len() == 3 => {
            let (a, b) = (ioctl_num(l, k[1])?, ioctl_num(l, k[2])?);
            let mut r = Bits::new(N);
            for i in a..=b {
                r.set(i as usize);
            }
            Ok(r)
        }
        Some(Kw::Not) if k.len() == 2 => {
            let mut b = ioctl_expr(l, k[1])?;
            b.not(N);
            Ok(b)
        }
        Some(o @ (Kw::And | Kw::Or | Kw::Xor)) if k.len() == 3 => {
            let mut a = ioctl_expr(l, k[1])?;
            let b = ioctl_expr(l, k[2])?;
            match o {
                Kw::And => a.and(&b),
                Kw::Or => a.or(&b),
                _ => a.xor(&b),
            }
            Ok(a)
        }
        _ => {
            let mut acc = Bits::new(N);
            for &x in k {
                acc.or(&ioctl_expr(l, x)?);
            }
            Ok(acc)
        }
    }
}

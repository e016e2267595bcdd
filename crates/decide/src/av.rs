//! Access vector computation: the kernel's `context_struct_compute_av` and
//! `security_compute_xperms_decision`, over the bucketed index.
//!
//! Order of work, as in the kernel: TE rules (unconditional, then enabled conditional ones)
//! over the type→attribute map; constraints remove permissions whose expression fails; a
//! process transition that changes role needs a `role allow`; a bounded source type is
//! cut down to what its bound would be allowed.

use crate::decision::{AccessVector, AvDecision, AvdFlags, XpermBase, XpermsDecision, XpermsUsed};
use crate::index::{
    bit_has, AvKind, AvRule, FLAG_BOUNDED, FLAG_NEVERAUDIT, FLAG_PERMISSIVE, FLAG_UNPLANNED,
};
use crate::state::Snapshot;
use arbiter_policy::avtab::{AvtabKind, XpermsKind};
use arbiter_policy::mls::Context;
use arbiter_policy::ClassId;

/// Bounds form a forest checked acyclic at load; this is a second line of defence.
const MAX_BOUNDS_DEPTH: u32 = 32;

/// The full decision for a pair of contexts and a class: `security_compute_av` minus the
/// SID lookups (the class must exist in the policy: callers resolve names and apply
/// handle_unknown first).
pub fn compute_av(snap: &Snapshot, s: &Context, t: &Context, class: ClassId) -> AvDecision {
    let mut d = context_av(snap, s, t, class, 0);
    d.seqno = snap.seqno;
    let f = snap.index().type_flags(s.ty);
    if f & FLAG_PERMISSIVE != 0 {
        d.flags |= AvdFlags::PERMISSIVE;
    }
    if f & FLAG_NEVERAUDIT != 0 {
        // The kernel (6.16, format 35) audits nothing for a neveraudit source.
        d.flags |= AvdFlags::NEVERAUDIT;
        d.auditallow = AccessVector::NONE;
        d.auditdeny = AccessVector::NONE;
    }
    d
}

/// TE rules only: allowed / auditallow / auditdeny from the access vector tables.
#[inline]
pub fn te_av(snap: &Snapshot, s: &Context, t: &Context, class: ClassId) -> (u32, u32, u32) {
    let idx = snap.index();
    if idx.type_flags(s.ty) & FLAG_UNPLANNED != 0 {
        return te_av_buckets(snap, s, t, class);
    }
    let plan = idx.av_plan(s.ty, class);
    let mut acc = [0u32, 0, u32::MAX];
    let mut apply = |r: &AvRule| match r.kind {
        AvKind::Allowed => acc[0] |= r.perms,
        AvKind::AuditAllow => acc[1] |= r.perms,
        AvKind::AuditDeny => acc[2] &= r.perms,
    };
    if !plan.shared.is_empty() {
        let row = idx.shared_row(t.ty);
        for r in plan.shared {
            if bit_has(row, r.target) && snap.cond_enabled(r.cond) {
                apply(r);
            }
        }
    }
    for r in idx.solo_rules(&plan, t.ty) {
        if snap.cond_enabled(r.cond) {
            apply(r);
        }
    }
    (acc[0], acc[1], acc[2])
}

/// TE rules by walking the source type's attributes' buckets: the reference the plans are
/// tested against, and the path for types the plan budget left out.
pub fn te_av_buckets(snap: &Snapshot, s: &Context, t: &Context, class: ClassId) -> (u32, u32, u32) {
    let idx = snap.index();
    let (mut allowed, mut auditallow, mut auditdeny) = (0u32, 0u32, u32::MAX);
    for &sa in idx.attrs_of(s.ty) {
        for r in idx.av_bucket(sa, class) {
            if !idx.has_value(t.ty, r.target) || !snap.cond_enabled(r.cond) {
                continue;
            }
            match r.kind {
                AvKind::Allowed => allowed |= r.perms,
                AvKind::AuditAllow => auditallow |= r.perms,
                AvKind::AuditDeny => auditdeny &= r.perms,
            }
        }
    }
    (allowed, auditallow, auditdeny)
}

fn context_av(snap: &Snapshot, s: &Context, t: &Context, class: ClassId, depth: u32) -> AvDecision {
    let p = &*snap.policy;
    let idx = snap.index();
    if class.index() >= p.classes.len() {
        return AvDecision::deny_all(snap.seqno);
    }
    let (mut allowed, auditallow, auditdeny) = te_av(snap, s, t, class);

    for c in idx.constraints(class) {
        if c.perms & allowed != 0 && !c.eval(p, s, t) {
            allowed &= !c.perms;
        }
    }

    if Some(class) == idx.process_class
        && allowed & idx.process_trans_perms != 0
        && s.role != t.role
        && !idx.role_allow.contains(&(s.role, t.role))
    {
        allowed &= !idx.process_trans_perms;
    }

    let bounded = idx.type_flags(s.ty) & FLAG_BOUNDED != 0;
    if let Some(bound) = bounded
        .then(|| p.types.get(s.ty.index()).and_then(|d| d.bounds))
        .flatten()
    {
        if depth >= MAX_BOUNDS_DEPTH {
            allowed = 0;
        } else {
            let lo_s = Context {
                ty: bound,
                ..s.clone()
            };
            let lo_t = match p.types.get(t.ty.index()).and_then(|d| d.bounds) {
                Some(tb) => Context {
                    ty: tb,
                    ..t.clone()
                },
                None => t.clone(),
            };
            let lo = context_av(snap, &lo_s, &lo_t, class, depth + 1);
            allowed &= lo.allowed.0;
        }
    }

    AvDecision {
        allowed: AccessVector(allowed),
        auditallow: AccessVector(auditallow),
        auditdeny: AccessVector(auditdeny),
        seqno: snap.seqno,
        flags: AvdFlags::NONE,
    }
}

/// The drivers that have extended-permission rules for a query, per base: the kernel's
/// `services_compute_xperms_drivers`. A driver outside this set is governed by the plain
/// `ioctl` / `nlmsg` permission alone.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct XpermDrivers {
    pub ioctl: [u32; 8],
    pub nlmsg: [u32; 8],
}

impl XpermDrivers {
    pub fn has(&self, base: XpermBase, driver: u8) -> bool {
        let set = match base {
            XpermBase::Ioctl => &self.ioctl,
            XpermBase::Nlmsg => &self.nlmsg,
        };
        set[driver as usize / 32] & (1 << (driver % 32)) != 0
    }
}

fn set_xbit(set: &mut [u32; 8], b: u8) {
    set[b as usize / 32] |= 1 << (b % 32);
}

/// Visits every enabled extended-permission rule that applies to (s, t, class).
fn for_each_xp_rule(
    snap: &Snapshot,
    s: &Context,
    t: &Context,
    class: ClassId,
    mut f: impl FnMut(AvtabKind, &arbiter_policy::avtab::Xperms),
) {
    let idx = snap.index();
    for &sa in idx.attrs_of(s.ty) {
        for r in idx.xp_bucket(sa, class) {
            if idx.has_value(t.ty, r.target) && snap.cond_enabled(r.cond) {
                f(r.kind, &r.xperms);
            }
        }
    }
}

/// The drivers with extended-permission rules (of any kind) for this query.
pub fn xperm_drivers(snap: &Snapshot, s: &Context, t: &Context, class: ClassId) -> XpermDrivers {
    let mut d = XpermDrivers::default();
    for_each_xp_rule(snap, s, t, class, |_, x| match x.kind {
        XpermsKind::IoctlDriver => {
            for (w, p) in d.ioctl.iter_mut().zip(x.perms.iter()) {
                *w |= p;
            }
        }
        XpermsKind::IoctlFunction => set_xbit(&mut d.ioctl, x.driver),
        XpermsKind::Nlmsg => set_xbit(&mut d.nlmsg, x.driver),
        // A kind the kernel does not know contributes nothing (it BUG()s on it).
        _ => {}
    });
    d
}

/// The extended-permission decision for one driver, as `security_compute_xperms_decision`.
pub fn compute_xperms(
    snap: &Snapshot,
    s: &Context,
    t: &Context,
    class: ClassId,
    base: XpermBase,
    driver: u8,
) -> XpermsDecision {
    let mut d = XpermsDecision {
        driver,
        ..Default::default()
    };
    for_each_xp_rule(snap, s, t, class, |kind, x| {
        let whole_driver = match (base, x.kind) {
            (XpermBase::Ioctl, XpermsKind::IoctlFunction)
            | (XpermBase::Nlmsg, XpermsKind::Nlmsg) => {
                if x.driver != driver {
                    return;
                }
                false
            }
            (XpermBase::Ioctl, XpermsKind::IoctlDriver) => {
                if x.perms[driver as usize / 32] & (1 << (driver % 32)) == 0 {
                    return;
                }
                true
            }
            _ => return,
        };
        let (used, set) = match kind {
            AvtabKind::XpermsAllowed => (XpermsUsed::ALLOWED, &mut d.allowed),
            AvtabKind::XpermsAuditAllow => (XpermsUsed::AUDITALLOW, &mut d.auditallow),
            AvtabKind::XpermsDontAudit => (XpermsUsed::DONTAUDIT, &mut d.dontaudit),
            _ => return,
        };
        d.used |= used;
        if whole_driver {
            *set = [u32::MAX; 8];
        } else {
            for (w, p) in set.iter_mut().zip(x.perms.iter()) {
                *w |= p;
            }
        }
    });
    d
}

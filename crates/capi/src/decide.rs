//! Uncached decisions from the server: access vectors (`security_compute_av_flags`),
//! `selinux_check_access`, and labels (`security_compute_create_name`,
//! `security_compute_relabel`, `security_compute_member`).

use crate::error::{status, Failure, Outcome};
use crate::names::{class, sid};
use crate::ptr::{self, text};
use crate::server::ArbServer;
use crate::{ArbClass, ArbSid};
use arbiter_decide::{AvDecision, LabelKind, SecurityServer};
use std::ffi::{c_char, c_int};

/// `struct arb_av_decision`: the kernel's `struct av_decision` without `decided` (always
/// all bits). `seqno` is the server's sequence number (low 32 bits) the decision was made
/// under; `flags` holds `ARB_AVD_FLAGS_PERMISSIVE` (0x1) for a permissive source domain.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ArbAvDecision {
    /// Granted permissions.
    pub allowed: u32,
    /// Permissions audited when granted (`auditallow`).
    pub auditallow: u32,
    /// Permissions audited when denied (a clear bit is `dontaudit`).
    pub auditdeny: u32,
    /// Sequence number of the policy state.
    pub seqno: u32,
    /// `ARB_AVD_FLAGS_*`.
    pub flags: u32,
}

impl From<&AvDecision> for ArbAvDecision {
    #[inline]
    fn from(d: &AvDecision) -> Self {
        let flags = d.flags.0;
        // `flags` and the low half of `seqno` are adjacent in both structs, so LLVM reads
        // them with one 8-byte load; on the cache's hit path they were just written by two
        // separate stores, which that load cannot forward from. The fence (no instruction)
        // keeps the loads apart: 11.7 -> 10.1 ns per arb_avc_has_perm on one hot triple.
        std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
        ArbAvDecision {
            allowed: d.allowed.0,
            auditallow: d.auditallow.0,
            auditdeny: d.auditdeny.0,
            seqno: d.seqno as u32,
            flags,
        }
    }
}

/// The decision for (`s`, `t`, `c`), uncached (`security_compute_av_flags`).
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_compute_av(
    srv: *mut ArbServer,
    s: ArbSid,
    t: ArbSid,
    c: ArbClass,
    out: *mut ArbAvDecision,
) -> c_int {
    status(|| {
        // SAFETY: crate contract on `srv`.
        let srv = unsafe { ArbServer::get(srv)? };
        let out = ptr::out_ptr(out, "out")?;
        let d = srv.compute_av(sid(s)?, sid(t)?, class(c)?)?;
        // SAFETY: checked by out_ptr, writable by the caller's contract.
        unsafe { ptr::store(out, ArbAvDecision::from(&d)) };
        Ok(())
    })
}

/// `selinux_check_access` over the server: 0 if `scon` may `perm` a `tclass` object
/// labeled `tcon` (or the source domain is permissive), -1 with `EACCES` if not. A class
/// or permission the policy does not define gives 0 when the policy allows unknown ones
/// (`arb_deny_unknown` is 0), else -1 with `EINVAL`; so does a bad context.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_check_access(
    srv: *mut ArbServer,
    scon: *const c_char,
    tcon: *const c_char,
    tclass: *const c_char,
    perm: *const c_char,
) -> c_int {
    status(|| {
        // SAFETY: crate contract on every argument.
        let (srv, scon, tcon, tclass, perm) = unsafe {
            (
                ArbServer::get(srv)?,
                text(scon, "scon")?,
                text(tcon, "tcon")?,
                text(tclass, "tclass")?,
                text(perm, "perm")?,
            )
        };
        check_access(srv, scon, tcon, tclass, perm)
    })
}

fn check_access(
    srv: &SecurityServer,
    scon: &str,
    tcon: &str,
    tclass: &str,
    perm: &str,
) -> Outcome<()> {
    let ssid = srv.context_to_sid(scon)?;
    let tsid = srv.context_to_sid(tcon)?;
    let unknown = |what: String| -> Outcome<()> {
        match srv.policy().handle_unknown {
            arbiter_policy::HandleUnknown::Allow => Ok(()),
            _ => Err(Failure::invalid(what)),
        }
    };
    if srv.known_class(tclass).is_err() {
        return unknown(format!("unknown class {tclass:?}"));
    }
    let perms = srv.perm_set(tclass, &[perm])?;
    if perms.unknown().next().is_some() {
        return unknown(format!("unknown permission {perm:?} for class {tclass:?}"));
    }
    let verdict = srv.check(ssid, tsid, &perms)?;
    if verdict.allowed() || verdict.permissive() {
        return Ok(());
    }
    Err(Failure::new(
        libc::EACCES,
        format!("denied {{ {perm} }} for scontext={scon} tcontext={tcon} tclass={tclass}"),
    ))
}

/// Computes a label as a SID through `out`.
///
/// # Safety
/// Crate contract on `srv` and `out`.
unsafe fn label(
    srv: *mut ArbServer,
    (s, t, c): (ArbSid, ArbSid, ArbClass),
    kind: LabelKind,
    name: Option<&str>,
    out: *mut ArbSid,
) -> Outcome<()> {
    // SAFETY: forwarded contract.
    let srv = unsafe { ArbServer::get(srv)? };
    let out = ptr::out_ptr(out, "out")?;
    let d = srv.compute_label(sid(s)?, sid(t)?, class(c)?, kind, name)?;
    // SAFETY: checked by out_ptr, writable by the caller's contract.
    unsafe { ptr::store(out, d.sid.get()) };
    Ok(())
}

/// The SID of a new object of class `c` created by `s` in `t`
/// (`security_compute_create_name`): `type_transition` rules, with filename transitions
/// when `name` is not NULL.
///
/// # Safety
/// See the crate's safety contract (`name` may be NULL).
#[no_mangle]
pub unsafe extern "C" fn arb_compute_create(
    srv: *mut ArbServer,
    s: ArbSid,
    t: ArbSid,
    c: ArbClass,
    name: *const c_char,
    out: *mut ArbSid,
) -> c_int {
    status(|| {
        let name = match name.is_null() {
            true => None,
            // SAFETY: non-NULL, NUL-terminated by the crate contract.
            false => Some(unsafe { text(name, "name")? }),
        };
        // SAFETY: crate contract on `srv` and `out`.
        unsafe { label(srv, (s, t, c), LabelKind::Create, name, out) }
    })
}

/// The SID for relabeling object `t` of class `c` by `s` (`security_compute_relabel`,
/// `type_change` rules).
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_compute_relabel(
    srv: *mut ArbServer,
    s: ArbSid,
    t: ArbSid,
    c: ArbClass,
    out: *mut ArbSid,
) -> c_int {
    // SAFETY: crate contract on `srv` and `out`.
    status(|| unsafe { label(srv, (s, t, c), LabelKind::Relabel, None, out) })
}

/// The SID of a member object of class `c` for `s` in `t` (`security_compute_member`,
/// `type_member` rules).
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_compute_member(
    srv: *mut ArbServer,
    s: ArbSid,
    t: ArbSid,
    c: ArbClass,
    out: *mut ArbSid,
) -> c_int {
    // SAFETY: crate contract on `srv` and `out`.
    status(|| unsafe { label(srv, (s, t, c), LabelKind::Member, None, out) })
}

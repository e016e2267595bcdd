//! The cache handle (`avc.h`): `avc_open`, `avc_has_perm[_noaudit]`,
//! `avc_compute_create`, `avc_cache_stats`, `avc_reset`, enforcing mode, and the audit
//! callback (libselinux's `SELINUX_CB_LOG` for `SELINUX_AVC` records).
//!
//! The hit path of `arb_avc_has_perm` is the cache's own (loads only, no lock) plus
//! argument checks; the caller's `audit_extra` text is read only when a record is due.

use crate::decide::ArbAvDecision;
use crate::error::{guard, status, Failure, Outcome};
use crate::names::{class, sid};
use crate::ptr::{self, handle, text};
use crate::server::ArbServer;
use crate::{ArbClass, ArbPerms, ArbSid};
use arbiter_avc::{AuditField, Avc, AvcConfig, HashKind, AVC_DEF_CACHE_THRESHOLD};
use arbiter_decide::{AccessVector, AvDecision, DecideError, SecurityServer, Sid};
use arbiter_policy::ClassId;
use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::sync::{Arc, PoisonError, RwLock};

/// `void (*)(void *arg, const char *record)`: receives each audit record's text.
pub type ArbAuditCallback = Option<unsafe extern "C" fn(arg: *mut c_void, record: *const c_char)>;

/// The registered callback and its argument.
#[derive(Copy, Clone)]
struct Sink {
    cb: unsafe extern "C" fn(*mut c_void, *const c_char),
    arg: *mut c_void,
}

// SAFETY: the pointer is only handed back to the caller's callback; the header documents
// that the callback is called from any thread checking through the cache, so the caller
// guarantees `arg` may be used from all of them.
unsafe impl Send for Sink {}
// SAFETY: as for Send; the library never dereferences `arg`.
unsafe impl Sync for Sink {}

/// `arb_avc`: a cache in front of one server, shared by every thread.
pub struct ArbAvc {
    avc: Avc<Arc<SecurityServer>>,
    /// Read only when a record is produced (never on an unaudited hit).
    sink: Arc<RwLock<Option<Sink>>>,
}

impl ArbAvc {
    /// # Safety
    /// `p` is NULL or a live `arb_avc` (crate contract).
    unsafe fn get<'a>(p: *const ArbAvc) -> Outcome<&'a ArbAvc> {
        // SAFETY: forwarded contract.
        unsafe { handle(p, "avc") }
    }
}

fn deliver(sink: &RwLock<Option<Sink>>, text: &str) {
    let current = *sink.read().unwrap_or_else(PoisonError::into_inner);
    if let Some(s) = current {
        let record = CString::new(text.replace('\0', "")).unwrap_or_default();
        // SAFETY: `cb` was registered by the caller with this signature and `arg` is
        // valid for it from any thread until replaced (header contract); `record` lives
        // until the call returns.
        unsafe { (s.cb)(s.arg, record.as_ptr()) };
    }
}

/// Opens a cache in front of `srv` (`avc_open`) for at most `threshold` entries in `slots`
/// buckets (a power of two, at least threshold / 4); 0 picks the default for either
/// (512 entries; one bucket per entry). The cache starts enforcing, with no audit
/// callback; it keeps the server alive until `arb_avc_free`.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_avc_open(
    srv: *mut ArbServer,
    slots: c_uint,
    threshold: c_uint,
    out: *mut *mut ArbAvc,
) -> c_int {
    status(|| {
        // SAFETY: crate contract on `srv`.
        let server = unsafe { handle(srv, "server")? }.server.clone();
        let out = ptr::out_ptr(out, "out")?;
        let threshold = match threshold {
            0 => AVC_DEF_CACHE_THRESHOLD,
            n => n as usize,
        };
        let slots = match slots {
            0 => AvcConfig::default_slots(threshold),
            n => n as usize,
        };
        let config =
            AvcConfig::for_threshold(threshold).with_layout(threshold, slots, HashKind::Arbiter);
        let avc = Avc::new(server, config)?;
        let sink: Arc<RwLock<Option<Sink>>> = Arc::new(RwLock::new(None));
        let hook_sink = sink.clone();
        avc.set_audit_hook(move |r| deliver(&hook_sink, &r.text));
        let h = Box::new(ArbAvc { avc, sink });
        // SAFETY: checked by out_ptr, writable by the caller's contract.
        unsafe { ptr::store(out, Box::into_raw(h)) };
        Ok(())
    })
}

/// Releases a cache (NULL is ignored).
///
/// # Safety
/// `avc` is NULL or a live handle not used by any other thread during or after the call.
#[no_mangle]
pub unsafe extern "C" fn arb_avc_free(avc: *mut ArbAvc) {
    guard((), || {
        if !avc.is_null() {
            // SAFETY: created by Box::into_raw in arb_avc_open, and by the contract not
            // freed before nor used concurrently.
            drop(unsafe { Box::from_raw(avc) });
        }
        Ok(())
    })
}

/// The caller's `key=value ...` text as one field printed verbatim (split at the first
/// `=` because a field prints as ` key=value`).
fn extra_field(extra: &str) -> Outcome<AuditField<'_>> {
    match extra.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok(AuditField::raw(k, v)),
        _ => Err(Failure::invalid(format!(
            "audit_extra {extra:?} is not key=value text"
        ))),
    }
}

/// Whether the kernel's `avc_audit_required` can select anything for this check (the
/// cache makes the exact choice): a denied bit not silenced by `dontaudit`, a failure, or
/// a granted bit under `auditallow`. Lets an unaudited check skip reading `audit_extra`.
#[inline(always)]
fn may_audit(requested: AccessVector, d: &AvDecision, failed: bool) -> bool {
    let denied = requested.without(d.allowed);
    if !denied.is_empty() {
        !(denied & d.auditdeny).is_empty()
    } else {
        failed || !(requested & d.auditallow).is_empty()
    }
}

/// The shared body of the two checks; `audit_extra` is `Some` for the audited one.
///
/// A grant is answered from [`Avc::compute_av`] (the cache's hit path); only a denial goes
/// further. `Avc::has_perm_noaudit` would give the same answer, but returning its
/// `Result<AvDecision, Denied>` by value measured 12.5–14.5 ns per hit against 5.3 ns for
/// `compute_av`'s (`bench/run.sh`), most of the 15 ns budget of a C hit.
///
/// # Safety
/// Crate contract on `avc`, `out` and `audit_extra`.
#[inline(always)]
unsafe fn has_perm(
    avc: *mut ArbAvc,
    (s, t, c): (ArbSid, ArbSid, ArbClass),
    requested: ArbPerms,
    out: *mut ArbAvDecision,
    audit_extra: Option<*const c_char>,
) -> Outcome<()> {
    // SAFETY: forwarded contract.
    let h = unsafe { ArbAvc::get(avc)? };
    let (ssid, tsid, class) = (sid(s)?, sid(t)?, class(c)?);
    let requested = AccessVector(requested);
    let key = (ssid, tsid, class);
    let r = h.avc.compute_av(ssid, tsid, class);
    if let Ok(d) = &r {
        if d.allowed.contains(requested) && !requested.is_empty() {
            // The hit path: finish from the reference, so that the decision is not copied
            // into a (decision, result) pair first (perf showed that copy's 16-byte load
            // stalling on the narrower stores just made: 19.1 -> 17.2 ns per call).
            // SAFETY: forwarded contract.
            return unsafe { finish(h, key, requested, d, Ok(()), out, audit_extra) };
        }
    }
    let (d, result) = match r {
        Ok(d) => denial(h, key, requested, d),
        Err(e) => source_failed(h, e),
    };
    // SAFETY: forwarded contract.
    unsafe { finish(h, key, requested, &d, result, out, audit_extra) }
}

/// Stores the decision, audits if a record is due, returns the check's result.
///
/// # Safety
/// Crate contract on `out` and `audit_extra`.
#[inline(always)]
unsafe fn finish(
    h: &ArbAvc,
    (ssid, tsid, class): (Sid, Sid, ClassId),
    requested: AccessVector,
    d: &AvDecision,
    result: Outcome<()>,
    out: *mut ArbAvDecision,
    audit_extra: Option<*const c_char>,
) -> Outcome<()> {
    if !out.is_null() {
        // SAFETY: non-NULL, writable by the caller's contract.
        unsafe { ptr::store(out, ArbAvDecision::from(d)) };
    }
    if let Some(extra) = audit_extra {
        let failed = result.is_err();
        if may_audit(requested, d, failed) {
            // SAFETY: forwarded contract.
            unsafe { audit(h, (ssid, tsid, class), requested, d, failed, extra)? };
        }
    }
    result
}

/// Sends the record the cache decides on, with the caller's `audit_extra` field.
///
/// # Safety
/// `extra` is NULL or a NUL-terminated string (crate contract).
#[cold]
#[inline(never)]
unsafe fn audit(
    h: &ArbAvc,
    (ssid, tsid, class): (Sid, Sid, ClassId),
    requested: AccessVector,
    d: &AvDecision,
    failed: bool,
    extra: *const c_char,
) -> Outcome<()> {
    let field;
    let fields: &[AuditField<'_>] = if extra.is_null() {
        &[]
    } else {
        // SAFETY: non-NULL, NUL-terminated by the caller's contract.
        field = extra_field(unsafe { text(extra, "audit_extra")? })?;
        std::slice::from_ref(&field)
    };
    h.avc.audit(ssid, tsid, class, requested, d, failed, fields);
    Ok(())
}

/// The kernel's `avc_denied` for a decision that does not grant everything requested:
/// enforced denials fail here; permissive ones (mode or domain) go to the cache, which
/// records the grant so that the denial is audited once.
#[cold]
#[inline(never)]
fn denial(
    h: &ArbAvc,
    (ssid, tsid, class): (Sid, Sid, ClassId),
    requested: AccessVector,
    d: AvDecision,
) -> (AvDecision, Outcome<()>) {
    if requested.is_empty() || (h.avc.enforcing() && !d.is_permissive()) {
        return (d, Err(access_denied(requested, d.allowed)));
    }
    match h.avc.has_perm_noaudit(ssid, tsid, class, requested) {
        Ok(d) => (d, Ok(())),
        Err(denied) => {
            let f = match denied.error {
                Some(e) => Failure::from(*e),
                None => access_denied(requested, denied.decision.allowed),
            };
            (denied.decision, Err(f))
        }
    }
}

/// The server could not decide: fail closed, with the decision the kernel audits then.
#[cold]
#[inline(never)]
fn source_failed(h: &ArbAvc, e: DecideError) -> (AvDecision, Outcome<()>) {
    let seqno = h.avc.source().seqno();
    (AvDecision::deny_all(seqno), Err(Failure::from(e)))
}

fn access_denied(requested: AccessVector, allowed: AccessVector) -> Failure {
    Failure::new(
        libc::EACCES,
        format!(
            "permission denied: requested {:#x}, denied {:#x}",
            requested.0,
            requested.without(allowed).0
        ),
    )
}

/// `avc_has_perm`: 0 if every `requested` permission is granted, or denied but not
/// enforced (permissive mode or permissive domain); -1 with `EACCES` if denied, `EINVAL`
/// for a bad argument. `*out` (may be NULL) receives the decision either way. A record is
/// sent to the audit callback for an audited denial or an `auditallow`ed grant;
/// `audit_extra` (may be NULL) is `key=value` text placed after `for` in it, read only
/// when a record is due.
///
/// # Safety
/// See the crate's safety contract (`out` and `audit_extra` may be NULL).
#[no_mangle]
pub unsafe extern "C" fn arb_avc_has_perm(
    avc: *mut ArbAvc,
    s: ArbSid,
    t: ArbSid,
    c: ArbClass,
    requested: ArbPerms,
    out: *mut ArbAvDecision,
    audit_extra: *const c_char,
) -> c_int {
    // SAFETY: crate contract on every argument.
    status(|| unsafe { has_perm(avc, (s, t, c), requested, out, Some(audit_extra)) })
}

/// `avc_has_perm_noaudit`: `arb_avc_has_perm` without the audit record.
///
/// # Safety
/// See the crate's safety contract (`out` may be NULL).
#[no_mangle]
pub unsafe extern "C" fn arb_avc_has_perm_noaudit(
    avc: *mut ArbAvc,
    s: ArbSid,
    t: ArbSid,
    c: ArbClass,
    requested: ArbPerms,
    out: *mut ArbAvDecision,
) -> c_int {
    // SAFETY: crate contract on every argument.
    status(|| unsafe { has_perm(avc, (s, t, c), requested, out, None) })
}

/// `avc_compute_create`: the SID of a new object of class `c` created by `s` in `t`,
/// cached.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_avc_compute_create(
    avc: *mut ArbAvc,
    s: ArbSid,
    t: ArbSid,
    c: ArbClass,
    out: *mut ArbSid,
) -> c_int {
    status(|| {
        // SAFETY: crate contract on `avc`.
        let h = unsafe { ArbAvc::get(avc)? };
        let out = ptr::out_ptr(out, "out")?;
        let new = h.avc.compute_create(sid(s)?, sid(t)?, class(c)?)?;
        // SAFETY: checked by out_ptr, writable by the caller's contract.
        unsafe { ptr::store(out, new.get()) };
        Ok(())
    })
}

/// Sets the audit callback (NULL `cb` removes it). It is called from whichever thread's
/// check produces a record, possibly from several at once, with the record's text
/// (`avc:  denied  { read } for  pid=1 scontext=… tcontext=… tclass=file permissive=0`)
/// valid during the call; `arg` must be usable from all those threads until replaced.
/// The callback must not unwind (C++ exceptions, longjmp).
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_avc_set_audit_callback(
    avc: *mut ArbAvc,
    cb: ArbAuditCallback,
    arg: *mut c_void,
) {
    guard((), || {
        // SAFETY: crate contract on `avc`.
        let h = unsafe { ArbAvc::get(avc)? };
        let mut slot = h.sink.write().unwrap_or_else(PoisonError::into_inner);
        *slot = cb.map(|cb| Sink { cb, arg });
        Ok(())
    })
}

/// `struct arb_avc_cache_stats`: libselinux's `avc_cache_stats` counters (summed over
/// threads), plus the label and extended-permission tables.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ArbCacheStats {
    /// Access-vector lookups.
    pub entry_lookups: u64,
    /// Lookups answered from the cache.
    pub entry_hits: u64,
    /// Lookups that went to the server.
    pub entry_misses: u64,
    /// Entries evicted to make room (all tables).
    pub entry_discards: u64,
    /// Entries inserted (all tables).
    pub entry_allocations: u64,
    /// Entries dropped: evictions plus entries invalidated by a reset or policy change.
    pub entry_frees: u64,
    /// Label (`arb_avc_compute_create`) lookups.
    pub create_lookups: u64,
    /// Label lookups that went to the server.
    pub create_misses: u64,
}

/// `avc_cache_stats`: the cache's counters into `*out`.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_avc_cache_stats(avc: *mut ArbAvc, out: *mut ArbCacheStats) -> c_int {
    status(|| {
        // SAFETY: crate contract on `avc`.
        let h = unsafe { ArbAvc::get(avc)? };
        let out = ptr::out_ptr(out, "out")?;
        let s = h.avc.stats();
        let stats = ArbCacheStats {
            entry_lookups: s.lookups,
            entry_hits: s.hits,
            entry_misses: s.misses,
            entry_discards: s.reclaims,
            entry_allocations: s.allocations,
            entry_frees: s.frees,
            create_lookups: s.create_lookups,
            create_misses: s.create_misses,
        };
        // SAFETY: checked by out_ptr, writable by the caller's contract.
        unsafe { ptr::store(out, stats) };
        Ok(())
    })
}

/// `avc_reset`: drops every cached entry (readers never wait).
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_avc_reset(avc: *mut ArbAvc) -> c_int {
    status(|| {
        // SAFETY: crate contract on `avc`.
        unsafe { ArbAvc::get(avc)? }.avc.reset();
        Ok(())
    })
}

/// `security_setenforce` for this cache: nonzero enforces denials, 0 is permissive mode
/// (denials pass and are audited once). Switching to enforcing drops the permissive
/// grants.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_avc_setenforce(avc: *mut ArbAvc, value: c_int) -> c_int {
    status(|| {
        // SAFETY: crate contract on `avc`.
        unsafe { ArbAvc::get(avc)? }.avc.set_enforcing(value != 0);
        Ok(())
    })
}

/// `security_getenforce` for this cache: 1 enforcing, 0 permissive, -1 on error.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_avc_getenforce(avc: *mut ArbAvc) -> c_int {
    guard(-1, || {
        // SAFETY: crate contract on `avc`.
        Ok(unsafe { ArbAvc::get(avc)? }.avc.enforcing() as c_int)
    })
}

#[cfg(test)]
mod tests {
    use super::{extra_field, may_audit};
    use arbiter_avc::AuditField;
    use arbiter_decide::{AccessVector, AvDecision};

    #[test]
    fn only_audit_relevant_checks_read_audit_extra() {
        let d = |allowed, auditallow, auditdeny| AvDecision {
            allowed: AccessVector(allowed),
            auditallow: AccessVector(auditallow),
            auditdeny: AccessVector(auditdeny),
            ..AvDecision::deny_all(1)
        };
        // Granted, no auditallow: nothing, although auditdeny has every bit.
        assert!(!may_audit(AccessVector(1), &d(1, 0, !0), false));
        // Granted under auditallow.
        assert!(may_audit(AccessVector(1), &d(1, 1, !0), false));
        // Denied and audited; denied but dontaudit'ed.
        assert!(may_audit(AccessVector(2), &d(1, 0, !0), true));
        assert!(!may_audit(AccessVector(2), &d(1, 0, !2), true));
        // Nothing requested, refused: audited as a failure.
        assert!(may_audit(AccessVector(0), &d(1, 0, !0), true));
    }

    #[test]
    fn audit_extra_splits_at_the_first_equals_sign() {
        let f = extra_field("pid=42 comm=\"cat\"").unwrap();
        assert_eq!(f, AuditField::raw("pid", "42 comm=\"cat\""));
    }

    #[test]
    fn audit_extra_without_key_is_rejected() {
        assert_eq!(extra_field("no fields").unwrap_err().errno, libc::EINVAL);
        assert_eq!(extra_field("=x").unwrap_err().errno, libc::EINVAL);
    }
}

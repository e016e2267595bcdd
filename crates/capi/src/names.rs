//! Strings ↔ numbers: contexts and SIDs (`avc_context_to_sid`, `avc_sid_to_context`,
//! `security_check_context`, `freecon`), classes and permissions
//! (`string_to_security_class`, `string_to_av_perm`, `security_class_to_string`,
//! `security_av_string`).

use crate::error::{guard, status, Failure, Outcome};
use crate::ptr::{self, text};
use crate::server::ArbServer;
use crate::{ArbClass, ArbPerms, ArbSid};
use arbiter_decide::{parse_context, Sid};
use arbiter_policy::ClassId;
use std::ffi::{c_char, c_int};

/// A SID argument (0 is never a SID).
pub(crate) fn sid(value: ArbSid) -> Outcome<Sid> {
    Sid::new(value).ok_or_else(|| Failure::invalid("SID 0 is not a SID"))
}

/// A class argument (0 is never a class; values past the policy's are rejected by the
/// server).
pub(crate) fn class(value: ArbClass) -> Outcome<ClassId> {
    ClassId::new(value).ok_or_else(|| Failure::invalid("class 0 is not a class"))
}

/// The SID of a context (`avc_context_to_sid`): issued on first use, the same number for
/// the same context afterwards. `EINVAL` for a malformed or invalid context.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_context_to_sid(
    srv: *mut ArbServer,
    ctx: *const c_char,
    out: *mut ArbSid,
) -> c_int {
    status(|| {
        // SAFETY: crate contract on `srv` and `ctx`.
        let (srv, ctx) = unsafe { (ArbServer::get(srv)?, text(ctx, "context")?) };
        let out = ptr::out_ptr(out, "out")?;
        let s = srv.context_to_sid(ctx)?;
        // SAFETY: checked by out_ptr, writable by the caller's contract.
        unsafe { ptr::store(out, s.get()) };
        Ok(())
    })
}

/// The context of a SID (`avc_sid_to_context`); `*ctx` receives a string to release with
/// `arb_freecon`.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_sid_to_context(
    srv: *mut ArbServer,
    sid: ArbSid,
    ctx: *mut *mut c_char,
) -> c_int {
    status(|| {
        // SAFETY: crate contract on `srv`.
        let srv = unsafe { ArbServer::get(srv)? };
        let out = ptr::out_ptr(ctx, "ctx")?;
        let text = srv.sid_to_context(self::sid(sid)?)?;
        let copy = ptr::malloc_string(&text)?;
        // SAFETY: checked by out_ptr, writable by the caller's contract.
        unsafe { ptr::store(out, copy) };
        Ok(())
    })
}

/// Releases a string returned by this library (`freecon`); NULL is ignored.
///
/// # Safety
/// `ctx` is NULL or a string this library returned, not yet released.
#[no_mangle]
pub unsafe extern "C" fn arb_freecon(ctx: *mut c_char) {
    // SAFETY: forwarded contract: NULL or a live malloc'ed string of ours.
    unsafe { ptr::free_string(ctx) }
}

/// Releases a string list returned by this library (`freeconary`); NULL is ignored.
///
/// # Safety
/// `list` is NULL or a list this library returned, not yet released.
#[no_mangle]
pub unsafe extern "C" fn arb_freeconary(list: *mut *mut c_char) {
    // SAFETY: forwarded contract: NULL or a live NULL-terminated malloc'ed list of ours.
    unsafe { ptr::free_string_array(list) }
}

/// `security_check_context`: 0 if the policy defines `ctx`, else -1 with `EINVAL`. Issues
/// no SID.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_check_context(srv: *mut ArbServer, ctx: *const c_char) -> c_int {
    status(|| {
        // SAFETY: crate contract on `srv` and `ctx`.
        let (srv, ctx) = unsafe { (ArbServer::get(srv)?, text(ctx, "context")?) };
        let snap = srv.snapshot();
        parse_context(&snap.policy, snap.names(), ctx)?;
        Ok(())
    })
}

/// The value of a class (`string_to_security_class`); 0 with `EINVAL` if the policy does
/// not define it.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_string_to_class(srv: *mut ArbServer, name: *const c_char) -> ArbClass {
    guard(0, || {
        // SAFETY: crate contract on `srv` and `name`.
        let (srv, name) = unsafe { (ArbServer::get(srv)?, text(name, "name")?) };
        Ok(srv.known_class(name)?.value())
    })
}

/// The bit of permission `name` in class `c` (`string_to_av_perm`); 0 with `EINVAL` if the
/// class does not define it.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_string_to_perm(
    srv: *mut ArbServer,
    c: ArbClass,
    name: *const c_char,
) -> ArbPerms {
    guard(0, || {
        // SAFETY: crate contract on `srv` and `name`.
        let (srv, name) = unsafe { (ArbServer::get(srv)?, text(name, "name")?) };
        let class = class(c)?;
        let snap = srv.snapshot();
        let names = snap.names();
        let class_name = names
            .class_name(class)
            .ok_or_else(|| Failure::invalid(format!("unknown class value {c}")))?;
        names.perm(class, name).ok_or_else(|| {
            Failure::invalid(format!(
                "unknown permission {name:?} in class {class_name:?}"
            ))
        })
    })
}

/// The name of class `c` (`security_class_to_string`); `*name` receives a string to
/// release with `arb_freecon`.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_class_to_string(
    srv: *mut ArbServer,
    c: ArbClass,
    name: *mut *mut c_char,
) -> c_int {
    status(|| {
        // SAFETY: crate contract on `srv`.
        let srv = unsafe { ArbServer::get(srv)? };
        let out = ptr::out_ptr(name, "name")?;
        let text = srv
            .class_name(class(c)?)
            .ok_or_else(|| Failure::invalid(format!("unknown class value {c}")))?;
        let copy = ptr::malloc_string(&text)?;
        // SAFETY: checked by out_ptr, writable by the caller's contract.
        unsafe { ptr::store(out, copy) };
        Ok(())
    })
}

/// `security_av_string`: the permissions of `av` in class `c` as `"{ read write }"`
/// (bits the class does not name as `0x…`; `"null"` for none); `*out` receives a string to
/// release with `arb_freecon`.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_av_string(
    srv: *mut ArbServer,
    c: ArbClass,
    av: ArbPerms,
    out: *mut *mut c_char,
) -> c_int {
    status(|| {
        // SAFETY: crate contract on `srv`.
        let srv = unsafe { ArbServer::get(srv)? };
        let out = ptr::out_ptr(out, "out")?;
        let class = class(c)?;
        let snap = srv.snapshot();
        let names = snap.names();
        names
            .class_name(class)
            .ok_or_else(|| Failure::invalid(format!("unknown class value {c}")))?;
        let text = av_string(av, |bit| names.perm_name(class, bit));
        let copy = ptr::malloc_string(&text)?;
        // SAFETY: checked by out_ptr, writable by the caller's contract.
        unsafe { ptr::store(out, copy) };
        Ok(())
    })
}

fn av_string<'n>(av: u32, name: impl Fn(u32) -> Option<&'n str>) -> String {
    if av == 0 {
        return "null".into();
    }
    let mut s = String::from("{");
    let mut unnamed = 0u32;
    for bit in 0..32 {
        if av & (1 << bit) != 0 {
            match name(bit) {
                Some(n) => {
                    s.push(' ');
                    s.push_str(n);
                }
                None => unnamed |= 1 << bit,
            }
        }
    }
    if unnamed != 0 {
        s.push_str(&format!(" 0x{unnamed:x}"));
    }
    s.push_str(" }");
    s
}

#[cfg(test)]
mod tests {
    use super::av_string;

    #[test]
    fn av_string_lists_named_bits_then_unnamed_hex() {
        let names = |bit| ["read", "write"].get(bit as usize).copied();
        assert_eq!(av_string(0, names), "null");
        assert_eq!(av_string(0b11, names), "{ read write }");
        assert_eq!(av_string(0b101, names), "{ read 0x4 }");
    }
}

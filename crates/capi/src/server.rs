//! The server handle: opening, reloading and freeing, the policy's properties, booleans
//! (`security_load_policy`, `security_policyvers`, `security_deny_unknown`,
//! `security_{set,get}_boolean*`, `security_commit_booleans`).

use crate::error::{guard, status, Failure, Outcome};
use crate::ptr::{self, handle, text};
use arbiter_decide::SecurityServer;
use arbiter_policy::{HandleUnknown, ValidPolicy, BUILTIN_POLICY};
use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

/// `arb_server`: one reloadable security server, shared by every thread and cache.
pub struct ArbServer {
    pub(crate) server: Arc<SecurityServer>,
}

impl ArbServer {
    /// The server behind a handle argument.
    ///
    /// # Safety
    /// `p` is NULL or a live `arb_server` (crate contract).
    pub(crate) unsafe fn get<'a>(p: *const ArbServer) -> Outcome<&'a SecurityServer> {
        // SAFETY: forwarded contract.
        unsafe { handle(p, "server") }.map(|h| &*h.server)
    }
}

/// Hands a new server to C through `out`.
///
/// # Safety
/// `out` is NULL or writable (crate contract).
unsafe fn give(out: *mut *mut ArbServer, load: impl FnOnce() -> Outcome<ValidPolicy>) -> c_int {
    status(|| {
        let out = ptr::out_ptr(out, "out")?;
        let policy = load()?;
        let h = Box::new(ArbServer {
            server: Arc::new(SecurityServer::new(policy)),
        });
        // SAFETY: checked by out_ptr, writable by the caller's contract.
        unsafe { ptr::store(out, Box::into_raw(h)) };
        Ok(())
    })
}

/// Opens the binary policy at `path` (any format version 15–35) and builds a server for
/// it; `*out` receives the handle, to be released with `arb_server_free`.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_server_open(path: *const c_char, out: *mut *mut ArbServer) -> c_int {
    // SAFETY: crate contract on `path` and `out`.
    unsafe { give(out, || Ok(ValidPolicy::open(text(path, "path")?)?)) }
}

/// Like `arb_server_open`, from a policy image in memory (copied; `buf` may be freed after
/// the call).
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_server_from_bytes(
    buf: *const c_void,
    len: usize,
    out: *mut *mut ArbServer,
) -> c_int {
    // SAFETY: crate contract on `buf`, `len` and `out`.
    unsafe {
        give(out, || {
            Ok(ValidPolicy::from_bytes(ptr::bytes(buf, len, "buf")?)?)
        })
    }
}

/// A server over arbiter's small built-in demonstration policy.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_server_builtin(out: *mut *mut ArbServer) -> c_int {
    // SAFETY: crate contract on `out`.
    unsafe { give(out, || Ok(ValidPolicy::from_bytes(BUILTIN_POLICY)?)) }
}

/// Releases a server handle (NULL is ignored). Caches opened on it keep working.
///
/// # Safety
/// `srv` is NULL or a live handle not used by any other thread during or after the call.
#[no_mangle]
pub unsafe extern "C" fn arb_server_free(srv: *mut ArbServer) {
    guard((), || {
        if !srv.is_null() {
            // SAFETY: created by Box::into_raw in `give`, and by the contract not freed
            // before nor used concurrently.
            drop(unsafe { Box::from_raw(srv) });
        }
        Ok(())
    })
}

fn reload(srv: &SecurityServer, policy: ValidPolicy) -> Outcome<()> {
    srv.load_policy(policy)?;
    Ok(())
}

/// Replaces the server's policy with the one at `path` (`security_load_policy`): SIDs
/// keep their meaning, boolean values carry over by name, the sequence number grows by
/// one, checks in flight finish on the old policy. On failure the old policy stays.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_load_policy(srv: *mut ArbServer, path: *const c_char) -> c_int {
    status(|| {
        // SAFETY: crate contract on `srv` and `path`.
        let (srv, path) = unsafe { (ArbServer::get(srv)?, text(path, "path")?) };
        reload(srv, ValidPolicy::open(path)?)
    })
}

/// Like `arb_load_policy`, from a policy image in memory.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_load_policy_bytes(
    srv: *mut ArbServer,
    buf: *const c_void,
    len: usize,
) -> c_int {
    status(|| {
        // SAFETY: crate contract on `srv`, `buf` and `len`.
        let (srv, buf) = unsafe { (ArbServer::get(srv)?, ptr::bytes(buf, len, "buf")?) };
        reload(srv, ValidPolicy::from_bytes(buf)?)
    })
}

/// The server's sequence number: 1 after opening, +1 per reload or boolean commit; 0
/// (with errno) for a NULL handle.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_server_seqno(srv: *mut ArbServer) -> u64 {
    // SAFETY: crate contract on `srv`.
    guard(0, || Ok(unsafe { ArbServer::get(srv)? }.seqno()))
}

/// The loaded policy's format version (`security_policyvers`), or -1.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_policyvers(srv: *mut ArbServer) -> c_int {
    guard(-1, || {
        // SAFETY: crate contract on `srv`.
        Ok(unsafe { ArbServer::get(srv)? }.policy().version as c_int)
    })
}

/// 1 if the policy is MLS (`is_selinux_mls_enabled`), 0 if not, -1 on error.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_mls_enabled(srv: *mut ArbServer) -> c_int {
    guard(-1, || {
        // SAFETY: crate contract on `srv`.
        Ok(unsafe { ArbServer::get(srv)? }.policy().mls as c_int)
    })
}

/// `security_deny_unknown`: 1 if the policy denies (or rejects) classes and permissions it
/// does not define, 0 if it allows them, -1 on error.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_deny_unknown(srv: *mut ArbServer) -> c_int {
    guard(-1, || {
        // SAFETY: crate contract on `srv`.
        let hu = unsafe { ArbServer::get(srv)? }.policy().handle_unknown;
        Ok((hu != HandleUnknown::Allow) as c_int)
    })
}

/// Sets a boolean's pending value (`security_set_boolean`); nothing changes for checks
/// until `arb_commit_booleans`. `ENOENT` for an unknown name.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_set_boolean(
    srv: *mut ArbServer,
    name: *const c_char,
    value: c_int,
) -> c_int {
    status(|| {
        // SAFETY: crate contract on `srv` and `name`.
        let (srv, name) = unsafe { (ArbServer::get(srv)?, text(name, "name")?) };
        Ok(srv.set_boolean(name, value != 0)?)
    })
}

/// Publishes the pending boolean values (`security_commit_booleans`): the sequence number
/// grows by one and caches drop their entries on their next lookup.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_commit_booleans(srv: *mut ArbServer) -> c_int {
    status(|| {
        // SAFETY: crate contract on `srv`.
        unsafe { ArbServer::get(srv)? }.commit_booleans();
        Ok(())
    })
}

fn boolean_value(values: Vec<(String, bool)>, name: &str) -> Outcome<c_int> {
    values
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v as c_int)
        .ok_or_else(|| Failure::new(libc::ENOENT, format!("unknown boolean {name:?}")))
}

/// A boolean's committed value (`security_get_boolean_active`): 1, 0, or -1 (`ENOENT` for
/// an unknown name).
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_get_boolean_active(srv: *mut ArbServer, name: *const c_char) -> c_int {
    guard(-1, || {
        // SAFETY: crate contract on `srv` and `name`.
        let (srv, name) = unsafe { (ArbServer::get(srv)?, text(name, "name")?) };
        boolean_value(srv.booleans(), name)
    })
}

/// A boolean's pending value (`security_get_boolean_pending`): 1, 0, or -1.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_get_boolean_pending(
    srv: *mut ArbServer,
    name: *const c_char,
) -> c_int {
    guard(-1, || {
        // SAFETY: crate contract on `srv` and `name`.
        let (srv, name) = unsafe { (ArbServer::get(srv)?, text(name, "name")?) };
        boolean_value(srv.pending_booleans(), name)
    })
}

/// The policy's boolean names in policy order (`security_get_boolean_names`): `*names`
/// receives a NULL-terminated array (free with `arb_freeconary`), `*len` its length.
///
/// # Safety
/// See the crate's safety contract.
#[no_mangle]
pub unsafe extern "C" fn arb_get_boolean_names(
    srv: *mut ArbServer,
    names: *mut *mut *mut c_char,
    len: *mut c_int,
) -> c_int {
    status(|| {
        // SAFETY: crate contract on `srv`.
        let srv = unsafe { ArbServer::get(srv)? };
        let (names, len) = (ptr::out_ptr(names, "names")?, ptr::out_ptr(len, "len")?);
        let bools = srv.booleans();
        let n = c_int::try_from(bools.len())
            .map_err(|_| Failure::new(libc::EOVERFLOW, "too many booleans"))?;
        let array = ptr::malloc_string_array(bools.iter().map(|(name, _)| name.as_str()))?;
        // SAFETY: both checked by out_ptr, writable by the caller's contract.
        unsafe {
            ptr::store(names, array);
            ptr::store(len, n);
        }
        Ok(())
    })
}

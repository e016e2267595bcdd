//! # sepol-oracle
//!
//! Safe bindings to **libsepol** (the 3.4 release shipped by Debian), used
//! only by arbiter's tests and benchmarks as the *differential oracle*: every
//! decision returned here is computed by libsepol's own services layer
//! (`sepol_compute_av_reason[_buffer]`, `sepol_context_to_sid`,
//! `sepol_transition_sid`, `sepol_member_sid`, `sepol_change_sid`,
//! `sepol_validate_transition_reason_buffer`), so arbiter can be checked
//! against it answer for answer.
//!
//! ```no_run
//! use sepol_oracle::Oracle;
//! # fn main() -> sepol_oracle::Result<()> {
//! let mut o = Oracle::load("/etc/selinux/default/policy/policy.33")?;
//! let init = o.context_to_sid("system_u:system_r:init_t:s0")?;
//! let etc = o.context_to_sid("system_u:object_r:etc_t:s0")?;
//! let file = o.class_value("file").expect("class file");
//! let read = o.av_bit("file", "read").expect("file:read");
//! assert_ne!(o.compute_av(init, etc, file, read)?.allowed & read, 0);
//! o.set_bool("httpd_can_network_connect_db", true)?;
//! o.commit_bools()?;
//! # Ok(()) }
//! ```
//!
//! ## Global state
//!
//! libsepol's services layer keeps the active policydb and SID table in
//! process-global variables (`sepol_set_policydb` / `sepol_set_sidtab`).
//! Therefore:
//!
//! * at most one [`Oracle`] exists in the process at a time.
//!   [`Oracle::load`] **blocks** until any other thread's `Oracle` is
//!   dropped; [`Oracle::try_load`] returns `-EBUSY` instead.  Loading a second
//!   oracle on a thread that already owns one returns `-EDEADLK` (it could
//!   never be satisfied);
//! * `Oracle` is neither `Send` nor `Sync`;
//! * every call into libsepol (including [`policydb_read_only`]) is
//!   serialised behind one process-wide mutex, because libsepol's message
//!   handle is global too.
//!
//! ## Messages
//!
//! libsepol normally prints diagnostics on stderr/stdout.  This crate routes
//! them into the error message of the failing call instead, and echoes them
//! to stderr only when `ARBITER_ORACLE_VERBOSE` is set (to anything but `0`
//! or empty) when the first libsepol call of the process is made.
//!
//! ## Numbering
//!
//! Classes are numbered as in the policy (`1..=class_count()`), and a
//! permission's *value* is its bit index + 1 in the access vector (the
//! kernel's numbering), inherited common permissions included: commons take
//! the low values, class-specific permissions follow.  Hence
//! `1 << (perm_value - 1)` is the bit to put in `requested`.  No kernel-style
//! class/permission mapping is done: unknown classes are errors (`-EINVAL`)
//! whatever `handle_unknown` says, and undefined permission bits are simply
//! never allowed.
//!
//! ## Linking
//!
//! The crate links `libsepol.a` statically (internal symbols such as
//! `policydb_read`, `policydb_load_isids` and `evaluate_conds` are hidden in
//! `libsepol.so`).  If only the shared library is available it still builds,
//! but [`Oracle::load`] returns `-ENOSYS`; see [`is_statically_linked`].

//!
//! Everything is behind the `libsepol` feature (off by default), so that
//! `cargo build --workspace` and `cargo test` of the engine crates work on a
//! machine without `libsepol-dev`; `scripts/test.sh` enables it and fails loudly
//! when libsepol is missing.
#![cfg(feature = "libsepol")]
#![warn(missing_docs)]

mod ffi;

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::fmt;
use std::marker::PhantomData;
use std::path::Path;
use std::ptr::{self, NonNull};
use std::sync::{Condvar, Mutex, MutexGuard, Once, PoisonError};
use std::thread::{self, ThreadId};

// errno values used for errors raised on the Rust side (Linux numbering,
// which is what libsepol's negative return codes use too).
const ENOENT: i32 = 2;
const EIO: i32 = 5;
const EBUSY: i32 = 16;
const EINVAL: i32 = 22;
const EDEADLK: i32 = 35;

/// `AvDecision::flags` bit: the source type is permissive
/// (the kernel's `AVD_FLAGS_PERMISSIVE`).
pub const AVD_FLAGS_PERMISSIVE: u32 = 0x0001;

/// Reason bit from [`Oracle::compute_av_reason`]: a requested permission
/// was missing from the TE rules (`SEPOL_COMPUTEAV_TE`).
pub const REASON_TE: u32 = 0x1;
/// Reason bit: removed by a constraint / mlsconstraint (`SEPOL_COMPUTEAV_CONS`).
pub const REASON_CONS: u32 = 0x2;
/// Reason bit: process transition denied by a missing role allow
/// (`SEPOL_COMPUTEAV_RBAC`).
pub const REASON_RBAC: u32 = 0x4;
/// Reason bit: masked by a typebounds check (`SEPOL_COMPUTEAV_BOUNDS`).
pub const REASON_BOUNDS: u32 = 0x8;

/// An error from libsepol (or from this wrapper's argument checks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// libsepol's return code (`-1` = `STATUS_ERR`, or a negative errno such
    /// as `-EINVAL`, `-ENOMEM`, `-EACCES`); negative errno for errors raised
    /// by this crate (`-ENOENT` unknown name, `-EBUSY`, `-EDEADLK`, `-EIO`).
    pub code: i32,
    /// Human-readable description, including the messages libsepol emitted
    /// while failing.
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for Error {}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, Error>;

fn rust_err(code: i32, message: impl Into<String>) -> Error {
    Error {
        code: -code.abs(),
        message: message.into(),
    }
}

/// The outcome of an access computation, as libsepol reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct AvDecision {
    /// Permissions granted.
    pub allowed: u32,
    /// Permissions decided (libsepol always reports `0xffffffff`).
    pub decided: u32,
    /// Permissions to audit when granted.
    pub auditallow: u32,
    /// Permissions to audit when denied (a clear bit = `dontaudit`).
    pub auditdeny: u32,
    /// libsepol's `latest_granting`.  libsepol 3.4 never increments it: it
    /// is always 0, also after boolean changes (the kernel bumps it).
    pub seqno: u32,
    /// [`AVD_FLAGS_PERMISSIVE`] if the source type is permissive.  libsepol
    /// 3.4's `struct sepol_av_decision` has no flags field; the shim sets
    /// this bit from the policy's permissive map exactly as the kernel's
    /// `security_compute_av` does.
    pub flags: u32,
}

impl From<ffi::RawAvd> for AvDecision {
    fn from(r: ffi::RawAvd) -> Self {
        AvDecision {
            allowed: r.allowed,
            decided: r.decided,
            auditallow: r.auditallow,
            auditdeny: r.auditdeny,
            seqno: r.seqno,
            flags: r.flags,
        }
    }
}

/// The policy's `handle_unknown` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandleUnknown {
    /// `deny_unknown` (0).
    Deny,
    /// `reject_unknown` (2).
    Reject,
    /// `allow_unknown` (4).
    Allow,
    /// Some other raw value.
    Other(u32),
}

// ---------------------------------------------------------------------------
// Global serialisation
// ---------------------------------------------------------------------------

/// Serialises every call into libsepol / the shim.
static FFI_LOCK: Mutex<()> = Mutex::new(());
/// Owner of the single oracle slot (services-layer globals).
static SLOT: Mutex<Option<ThreadId>> = Mutex::new(None);
static SLOT_FREED: Condvar = Condvar::new();
static LOGGING: Once = Once::new();

/// Holding this means: no other thread is inside libsepol, and libsepol's
/// message buffer has been cleared for this call.
struct FfiGuard {
    _g: MutexGuard<'static, ()>,
}

fn ffi_lock() -> FfiGuard {
    let g = FFI_LOCK.lock().unwrap_or_else(PoisonError::into_inner);
    LOGGING.call_once(|| {
        let verbose =
            std::env::var_os("ARBITER_ORACLE_VERBOSE").is_some_and(|v| !v.is_empty() && v != "0");
        // SAFETY: FFI_LOCK is held; oracle_init_logging only creates a
        // sepol handle and stores callbacks.  Failure (ENOMEM) just leaves
        // libsepol's default printing in place, which is harmless.
        unsafe {
            ffi::oracle_init_logging(c_int::from(verbose));
        }
    });
    // SAFETY: FFI_LOCK is held, so nobody else touches the message buffer.
    unsafe { ffi::oracle_clear_error() };
    FfiGuard { _g: g }
}

impl FfiGuard {
    /// Builds an error from a libsepol return code plus whatever libsepol
    /// said since this guard was taken.
    fn err(&self, code: i32, what: &str) -> Error {
        // SAFETY: the buffer is a NUL-terminated static char array in the
        // shim, only written under FFI_LOCK, which `self` holds.
        let said = unsafe { CStr::from_ptr(ffi::oracle_last_error()) }
            .to_string_lossy()
            .into_owned();
        let message = if said.is_empty() {
            what.to_string()
        } else {
            format!("{what}: {said}")
        };
        Error { code, message }
    }
}

/// Copies a C string owned by libsepol into a `String`.
///
/// # Safety
/// `p` must be null or point to a NUL-terminated string valid for the call.
unsafe fn opt_string(p: *const c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        // SAFETY: non-null and NUL-terminated per this function's contract.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }
}

/// Takes ownership of a malloc'd C string from libsepol, frees it.
///
/// # Safety
/// `p` must be null or a `malloc`'d NUL-terminated string not used afterwards.
unsafe fn take_string(p: *mut c_char) -> Option<String> {
    // SAFETY: forwarded contract.
    let s = unsafe { opt_string(p) };
    if !p.is_null() {
        // SAFETY: p was allocated with malloc by libsepol and is not reused.
        unsafe { ffi::oracle_free_string(p) };
    }
    s
}

/// The slot that makes an `Oracle` the only one in the process.
struct SlotGuard {
    _not_send: PhantomData<*const ()>,
}

impl SlotGuard {
    fn acquire(block: bool) -> Result<SlotGuard> {
        let me = thread::current().id();
        let mut owner = SLOT.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            match *owner {
                None => {
                    *owner = Some(me);
                    return Ok(SlotGuard {
                        _not_send: PhantomData,
                    });
                }
                Some(t) if t == me => {
                    return Err(rust_err(
                        EDEADLK,
                        "an sepol_oracle::Oracle is already alive on this thread \
                         (libsepol's services layer is global: drop it first)",
                    ))
                }
                Some(_) if !block => {
                    return Err(rust_err(
                        EBUSY,
                        "another thread holds the sepol_oracle::Oracle \
                         (libsepol's services layer is global)",
                    ))
                }
                Some(_) => {
                    owner = SLOT_FREED
                        .wait(owner)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
        }
    }
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        let mut owner = SLOT.lock().unwrap_or_else(PoisonError::into_inner);
        *owner = None;
        SLOT_FREED.notify_one();
    }
}

fn c_string(s: &str, what: &str) -> Result<CString> {
    CString::new(s).map_err(|_| rust_err(EINVAL, format!("{what} contains a NUL byte: {s:?}")))
}

// ---------------------------------------------------------------------------
// The oracle
// ---------------------------------------------------------------------------

/// A binary policy loaded into libsepol and installed as its services
/// layer's active policy (see the crate docs for the one-at-a-time rule).
///
/// Not `Send` (nor `Sync`): it stands for libsepol's process-global state.
/// ```compile_fail
/// fn send<T: Send>() {}
/// send::<sepol_oracle::Oracle>();
/// ```
/// ```compile_fail
/// fn sync<T: Sync>() {}
/// sync::<sepol_oracle::Oracle>();
/// ```
pub struct Oracle {
    raw: NonNull<ffi::RawOracle>,
    /// Staged boolean changes: (bool value, new state).
    pending: Vec<(u32, bool)>,
    policyvers: u32,
    mls: bool,
    handle_unknown: u32,
    nclasses: u32,
    nbools: u32,
    // Declared after `raw`: released after Drop::drop has freed the policy.
    _slot: SlotGuard,
    _not_send_sync: PhantomData<*const ()>,
}

/// Which SID computation `oracle_compute_sid` performs.
#[derive(Clone, Copy)]
enum SidKind {
    Transition = 0,
    Member = 1,
    Change = 2,
}

impl Oracle {
    /// Reads the binary policy at `path` and installs it, **blocking** while
    /// another thread's `Oracle` is alive.
    ///
    /// Runs `policydb_init` + `policydb_read` (which in 3.4 also validates
    /// the policy), loads the initial SIDs into a fresh sidtab with
    /// `policydb_load_isids`, then `sepol_set_policydb` + `sepol_set_sidtab`.
    pub fn load(path: impl AsRef<Path>) -> Result<Oracle> {
        let bytes = read_file(path.as_ref())?;
        Self::load_bytes(&bytes)
    }

    /// Like [`Oracle::load`] but returns `-EBUSY` instead of waiting when
    /// another thread's `Oracle` is alive.
    pub fn try_load(path: impl AsRef<Path>) -> Result<Oracle> {
        let bytes = read_file(path.as_ref())?;
        Self::try_load_bytes(&bytes)
    }

    /// [`Oracle::load`] from an in-memory policy image (blocking).
    pub fn load_bytes(policy: &[u8]) -> Result<Oracle> {
        Self::load_with(policy, true)
    }

    /// [`Oracle::try_load`] from an in-memory policy image.
    pub fn try_load_bytes(policy: &[u8]) -> Result<Oracle> {
        Self::load_with(policy, false)
    }

    fn load_with(policy: &[u8], block: bool) -> Result<Oracle> {
        let slot = SlotGuard::acquire(block)?;
        let g = ffi_lock();
        let mut raw: *mut ffi::RawOracle = ptr::null_mut();
        // SAFETY: `policy` is a live slice of `len` bytes that libsepol only
        // reads (PF_USE_MEMORY copies out of it and keeps no pointer past
        // policydb_read); `raw` is a valid out-pointer; FFI_LOCK is held and
        // we own the oracle slot, so replacing the services globals is ours.
        let rc = unsafe { ffi::oracle_load(policy.as_ptr().cast(), policy.len(), &mut raw) };
        let raw = match NonNull::new(raw) {
            Some(raw) if rc == 0 => raw,
            _ => return Err(g.err(rc, "libsepol could not load the policy")),
        };
        let (mut policyvers, mut mls, mut hu, mut nclasses, mut nbools) = (0, 0, 0, 0, 0);
        // SAFETY: `raw` was just returned by oracle_load and is live; the
        // out-pointers are valid locals.
        unsafe {
            ffi::oracle_info(
                raw.as_ptr(),
                &mut policyvers,
                &mut mls,
                &mut hu,
                &mut nclasses,
                &mut nbools,
            )
        };
        drop(g);
        Ok(Oracle {
            raw,
            pending: Vec::new(),
            policyvers,
            mls: mls != 0,
            handle_unknown: hu,
            nclasses,
            nbools,
            _slot: slot,
            _not_send_sync: PhantomData,
        })
    }

    fn raw(&self) -> *const ffi::RawOracle {
        self.raw.as_ptr()
    }

    /// Policy version of the loaded image (e.g. 33).
    pub fn policy_version(&self) -> u32 {
        self.policyvers
    }

    /// Whether the policy has MLS enabled.
    pub fn mls_enabled(&self) -> bool {
        self.mls
    }

    /// The policy's `handle_unknown` setting.  Informational only:
    /// libsepol's services layer does not apply it (unknown classes are
    /// errors, undefined permission bits are never allowed).
    pub fn handle_unknown(&self) -> HandleUnknown {
        match self.handle_unknown {
            0 => HandleUnknown::Deny,
            2 => HandleUnknown::Reject,
            4 => HandleUnknown::Allow,
            v => HandleUnknown::Other(v),
        }
    }

    // --- SIDs and contexts ------------------------------------------------

    /// `sepol_context_to_sid`: validates the context against the policy and
    /// returns its SID, allocating the next free SID for a context not seen
    /// before (initial SIDs keep their policy numbers; a context equal to an
    /// initial SID's context maps to the lowest such initial SID).
    pub fn context_to_sid(&self, context: &str) -> Result<u32> {
        // libsepol's failure message prints the context with %s, so hand it
        // a NUL-terminated copy even though the length is passed explicitly.
        let mut buf = Vec::with_capacity(context.len() + 1);
        buf.extend_from_slice(context.as_bytes());
        buf.push(0);
        let g = ffi_lock();
        let mut sid = 0u32;
        // SAFETY: `buf` holds context.len() bytes plus a NUL terminator and
        // outlives the call; `sid` is a valid out-pointer; FFI_LOCK held and
        // this oracle is the installed policy.
        let rc =
            unsafe { ffi::oracle_context_to_sid(buf.as_ptr().cast(), context.len(), &mut sid) };
        if rc != 0 {
            return Err(g.err(rc, &format!("invalid context {context:?}")));
        }
        Ok(sid)
    }

    /// `sepol_sid_to_context`.  Note: like the kernel, libsepol maps an
    /// unknown SID to the `unlabeled` initial SID rather than failing; use
    /// [`Oracle::sid_exists`] to tell.
    pub fn sid_to_context(&self, sid: u32) -> Result<String> {
        let g = ffi_lock();
        let mut out: *mut c_char = ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: valid out-pointers; FFI_LOCK held; this oracle installed.
        let rc = unsafe { ffi::oracle_sid_to_context(sid, &mut out, &mut len) };
        // SAFETY: on any return `out` is null or a malloc'd NUL-terminated
        // string from libsepol's context_to_string, owned by us now.
        let s = unsafe { take_string(out) };
        match (rc, s) {
            (0, Some(s)) => Ok(s),
            (0, None) => Err(g.err(-EINVAL, &format!("SID {sid} has no context"))),
            (rc, _) => Err(g.err(rc, &format!("cannot convert SID {sid} to a context"))),
        }
    }

    /// Whether `sid` is really present in the SID table (libsepol silently
    /// substitutes the unlabeled SID for unknown ones).
    pub fn sid_exists(&self, sid: u32) -> bool {
        let _g = ffi_lock();
        // SAFETY: self.raw is live; the call only reads the sidtab.
        unsafe { ffi::oracle_sid_exists(self.raw(), sid) != 0 }
    }

    /// Number of SIDs in the table (initial SIDs included).
    pub fn sid_count(&self) -> u32 {
        let _g = ffi_lock();
        // SAFETY: self.raw is live; read-only.
        unsafe { ffi::oracle_sid_count(self.raw()) }
    }

    /// The policy's initial SIDs as `(sid, context)`, in policy order.  The
    /// binary policy does not store initial SID *names* (the kernel has its
    /// own table), only their numbers and contexts.
    pub fn initial_sids(&self) -> Vec<(u32, String)> {
        let sids: Vec<u32> = {
            let _g = ffi_lock();
            // SAFETY: self.raw is live; read-only.
            let n = unsafe { ffi::oracle_isid_count(self.raw()) };
            (0..n)
                .filter_map(|i| {
                    let mut sid = 0u32;
                    // SAFETY: self.raw live, i < n (re-checked in C), valid
                    // out-pointer.
                    let rc = unsafe { ffi::oracle_isid_at(self.raw(), i, &mut sid) };
                    (rc == 0).then_some(sid)
                })
                .collect()
        };
        sids.into_iter()
            .filter_map(|sid| Some((sid, self.sid_to_context(sid).ok()?)))
            .collect()
    }

    // --- names and values -------------------------------------------------

    /// Number of classes (`class_value`s run `1..=class_count()`).
    pub fn class_count(&self) -> u16 {
        self.nclasses.min(u32::from(u16::MAX)) as u16
    }

    /// Value of the class called `name`.
    pub fn class_value(&self, name: &str) -> Option<u16> {
        let name = CString::new(name).ok()?;
        let _g = ffi_lock();
        let mut v = 0u16;
        // SAFETY: self.raw live; `name` NUL-terminated; `v` valid out-ptr.
        let rc = unsafe { ffi::oracle_class_value(self.raw(), name.as_ptr(), &mut v) };
        (rc == 0).then_some(v)
    }

    /// Name of class `value`.
    pub fn class_name(&self, value: u16) -> Option<String> {
        let _g = ffi_lock();
        // SAFETY: self.raw live; the shim bounds-checks `value` and returns
        // null or a policydb-owned NUL-terminated name, copied at once.
        unsafe { opt_string(ffi::oracle_class_name(self.raw(), u32::from(value))) }
    }

    /// Value (bit index + 1) of permission `perm` in class `class`, looking
    /// at the class's own permissions first, then its common's.
    pub fn perm_value(&self, class: &str, perm: &str) -> Option<u32> {
        let tclass = self.class_value(class)?;
        self.perm_value_in(tclass, perm)
    }

    /// [`Oracle::perm_value`] with the class given by value.
    pub fn perm_value_in(&self, tclass: u16, perm: &str) -> Option<u32> {
        let perm = CString::new(perm).ok()?;
        let _g = ffi_lock();
        let mut v = 0u32;
        // SAFETY: self.raw live; class bounds-checked in C; `perm` is
        // NUL-terminated; `v` valid out-pointer.
        let rc =
            unsafe { ffi::oracle_perm_value(self.raw(), u32::from(tclass), perm.as_ptr(), &mut v) };
        (rc == 0).then_some(v)
    }

    /// Access-vector bit (`1 << (perm_value - 1)`) for `class`/`perm`.
    pub fn av_bit(&self, class: &str, perm: &str) -> Option<u32> {
        let v = self.perm_value(class, perm)?;
        1u32.checked_shl(v.checked_sub(1)?)
    }

    /// Access vector with the bits of all `perms` of `class` set; `None` if
    /// the class or any permission is unknown.
    pub fn av_bits(&self, class: &str, perms: &[&str]) -> Option<u32> {
        perms
            .iter()
            .try_fold(0u32, |acc, p| Some(acc | self.av_bit(class, p)?))
    }

    /// Name of the permission with `value` in class `tclass`.
    pub fn perm_name(&self, tclass: u16, value: u32) -> Option<String> {
        let _g = ffi_lock();
        // SAFETY: self.raw live; bounds checked in C; result null or a
        // policydb-owned NUL-terminated name, copied at once.
        unsafe { opt_string(ffi::oracle_perm_name(self.raw(), u32::from(tclass), value)) }
    }

    /// Highest permission value defined for `tclass` (own or common), 0 for
    /// an unknown class.
    pub fn perm_count(&self, tclass: u16) -> u32 {
        let _g = ffi_lock();
        // SAFETY: self.raw live; bounds checked in C.
        unsafe { ffi::oracle_class_nperms(self.raw(), u32::from(tclass)) }
    }

    /// Names of the permissions in `allowed` for class `tclass`, in bit
    /// order (unnamed bits are shown as `0x...`).
    pub fn av_to_names(&self, tclass: u16, av: u32) -> Vec<String> {
        (0..32)
            .filter(|b| av & (1u32 << b) != 0)
            .map(|b| {
                self.perm_name(tclass, b + 1)
                    .unwrap_or_else(|| format!("{:#x}", 1u32 << b))
            })
            .collect()
    }

    // --- decisions --------------------------------------------------------

    fn av(
        &self,
        ssid: u32,
        tsid: u32,
        tclass: u16,
        requested: u32,
        want_text: c_int,
    ) -> Result<(AvDecision, u32, Option<String>)> {
        let g = ffi_lock();
        let mut avd = ffi::RawAvd::default();
        let mut reason = 0u32;
        let mut text: *mut c_char = ptr::null_mut();
        // SAFETY: self.raw live and installed; all out-pointers valid;
        // FFI_LOCK held.
        let rc = unsafe {
            ffi::oracle_compute_av(
                self.raw(),
                ssid,
                tsid,
                u32::from(tclass),
                requested,
                &mut avd,
                &mut reason,
                want_text,
                &mut text,
            )
        };
        // SAFETY: `text` is null or a malloc'd string from libsepol's
        // reason buffer, now ours.
        let text = unsafe { take_string(text) };
        if rc != 0 {
            return Err(g.err(
                rc,
                &format!("compute_av(ssid={ssid}, tsid={tsid}, tclass={tclass}) failed"),
            ));
        }
        Ok((avd.into(), reason, text))
    }

    /// `sepol_compute_av` (via `sepol_compute_av_reason`).  `tclass` is a
    /// policy class value; `requested` only affects the reason bits.
    pub fn compute_av(
        &self,
        ssid: u32,
        tsid: u32,
        tclass: u16,
        requested: u32,
    ) -> Result<AvDecision> {
        self.av(ssid, tsid, tclass, requested, 0).map(|(d, _, _)| d)
    }

    /// `sepol_compute_av_reason_buffer` (present in 3.4): the decision, the
    /// reason bitmask (`REASON_*`, explaining which stage removed a
    /// *requested* permission), and libsepol's text rendering of the
    /// constraints that denied something (None when no constraint was
    /// evaluated, e.g. when TE already denies everything they cover).
    pub fn compute_av_reason(
        &self,
        ssid: u32,
        tsid: u32,
        tclass: u16,
        requested: u32,
    ) -> Result<(AvDecision, u32, Option<String>)> {
        self.av(ssid, tsid, tclass, requested, 1)
    }

    /// [`Oracle::compute_av_reason`] with libsepol's `SHOW_GRANTED` flag:
    /// the text also lists constraints that were satisfied.
    pub fn compute_av_reason_all(
        &self,
        ssid: u32,
        tsid: u32,
        tclass: u16,
        requested: u32,
    ) -> Result<(AvDecision, u32, Option<String>)> {
        self.av(ssid, tsid, tclass, requested, 2)
    }

    fn compute_sid(&self, kind: SidKind, ssid: u32, tsid: u32, tclass: u16) -> Result<u32> {
        let g = ffi_lock();
        let mut out = 0u32;
        // SAFETY: valid out-pointer; FFI_LOCK held; this oracle installed.
        let rc = unsafe {
            ffi::oracle_compute_sid(kind as c_int, ssid, tsid, u32::from(tclass), &mut out)
        };
        if rc != 0 {
            let name = match kind {
                SidKind::Transition => "transition_sid",
                SidKind::Member => "member_sid",
                SidKind::Change => "change_sid",
            };
            return Err(g.err(
                rc,
                &format!("{name}(ssid={ssid}, tsid={tsid}, tclass={tclass}) failed"),
            ));
        }
        Ok(out)
    }

    /// `sepol_transition_sid` (type_transition / role_transition /
    /// range_transition / default_* rules).  An invalid resulting context is
    /// `-EACCES` (libsepol runs in "enforcing" mode).  Unlike the
    /// kernel, libsepol 3.4 has no filename transitions here.
    pub fn transition_sid(&self, ssid: u32, tsid: u32, tclass: u16) -> Result<u32> {
        self.compute_sid(SidKind::Transition, ssid, tsid, tclass)
    }

    /// `sepol_member_sid` (type_member rules).
    pub fn member_sid(&self, ssid: u32, tsid: u32, tclass: u16) -> Result<u32> {
        self.compute_sid(SidKind::Member, ssid, tsid, tclass)
    }

    /// `sepol_change_sid` (type_change rules).
    pub fn change_sid(&self, ssid: u32, tsid: u32, tclass: u16) -> Result<u32> {
        self.compute_sid(SidKind::Change, ssid, tsid, tclass)
    }

    fn vt(
        &self,
        oldsid: u32,
        newsid: u32,
        tasksid: u32,
        tclass: u16,
        want_text: c_int,
    ) -> Result<(bool, Option<String>)> {
        let g = ffi_lock();
        let mut text: *mut c_char = ptr::null_mut();
        // SAFETY: valid out-pointer; FFI_LOCK held; this oracle installed.
        let rc = unsafe {
            ffi::oracle_validate_transition(
                oldsid,
                newsid,
                tasksid,
                u32::from(tclass),
                want_text,
                &mut text,
            )
        };
        // SAFETY: null or a malloc'd string from libsepol, now ours.
        let text = unsafe { take_string(text) };
        const EPERM: i32 = 1;
        match rc {
            0 => Ok((true, text)),
            rc if rc == -EPERM => Ok((false, text)),
            rc => Err(g.err(
                rc,
                &format!("validate_transition(old={oldsid}, new={newsid}, task={tasksid}, tclass={tclass}) failed"),
            )),
        }
    }

    /// Whether the (mls)validatetrans rules of `tclass` allow relabeling an
    /// object from `oldsid` to `newsid` by `tasksid`.  libsepol 3.4 has no
    /// plain `sepol_validate_transition`; this uses
    /// `sepol_validate_transition_reason_buffer` (0 = allowed, `-EPERM` =
    /// denied).
    pub fn validate_transition(
        &self,
        oldsid: u32,
        newsid: u32,
        tasksid: u32,
        tclass: u16,
    ) -> Result<bool> {
        self.vt(oldsid, newsid, tasksid, tclass, 0)
            .map(|(ok, _)| ok)
    }

    /// [`Oracle::validate_transition`] plus libsepol's text for the rules
    /// that failed (`show_granted`: also those that passed).
    pub fn validate_transition_reason(
        &self,
        oldsid: u32,
        newsid: u32,
        tasksid: u32,
        tclass: u16,
        show_granted: bool,
    ) -> Result<(bool, Option<String>)> {
        self.vt(
            oldsid,
            newsid,
            tasksid,
            tclass,
            if show_granted { 2 } else { 1 },
        )
    }

    // --- booleans -----------------------------------------------------------

    /// All boolean names, in value order (value = index + 1).
    pub fn bool_names(&self) -> Vec<String> {
        let _g = ffi_lock();
        (0..self.nbools)
            // SAFETY: self.raw live; idx < nprim (checked again in C); the
            // name is policydb-owned and copied at once.
            .filter_map(|i| unsafe { opt_string(ffi::oracle_bool_name(self.raw(), i)) })
            .collect()
    }

    fn bool_value(&self, name: &str) -> Result<u32> {
        let cname = c_string(name, "boolean name")?;
        let _g = ffi_lock();
        let mut v = 0u32;
        // SAFETY: self.raw live; NUL-terminated name; valid out-pointer.
        let rc = unsafe { ffi::oracle_bool_index(self.raw(), cname.as_ptr(), &mut v) };
        if rc != 0 {
            return Err(rust_err(ENOENT, format!("unknown boolean {name:?}")));
        }
        Ok(v)
    }

    /// The *committed* (active) value of boolean `name`; staged
    /// [`Oracle::set_bool`] changes are not visible until
    /// [`Oracle::commit_bools`].
    pub fn bool_get(&self, name: &str) -> Result<bool> {
        let v = self.bool_value(name)?;
        let _g = ffi_lock();
        // SAFETY: self.raw live; v was validated, re-checked in C.
        let rc = unsafe { ffi::oracle_bool_get(self.raw(), v) };
        if rc < 0 {
            return Err(rust_err(ENOENT, format!("unknown boolean {name:?}")));
        }
        Ok(rc != 0)
    }

    /// Stages a new value for boolean `name` (unknown names fail now).
    /// Nothing changes until [`Oracle::commit_bools`], mirroring a write to
    /// `/sys/fs/selinux/booleans/NAME` followed by `commit_pending_bools`.
    pub fn set_bool(&mut self, name: &str, value: bool) -> Result<()> {
        let v = self.bool_value(name)?;
        self.pending.retain(|(b, _)| *b != v);
        self.pending.push((v, value));
        Ok(())
    }

    /// Applies all staged boolean values (sets each `cond_bool_datum`'s
    /// state) and re-evaluates every conditional node with libsepol's
    /// `evaluate_conds`, which flips `AVTAB_ENABLED` on the conditional
    /// rules exactly as the kernel's `security_set_bools` /
    /// `evaluate_cond_nodes` does.  Decisions made afterwards honour the
    /// new values.  (libsepol does not bump `seqno`.)
    pub fn commit_bools(&mut self) -> Result<()> {
        let values: Vec<u32> = self.pending.iter().map(|(v, _)| *v).collect();
        let states: Vec<c_int> = self.pending.iter().map(|(_, s)| c_int::from(*s)).collect();
        let g = ffi_lock();
        // SAFETY: self.raw live and exclusively borrowed (&mut self); both
        // arrays have values.len() elements; FFI_LOCK held.
        let rc = unsafe {
            ffi::oracle_commit_bools(
                self.raw.as_ptr(),
                values.as_ptr(),
                states.as_ptr(),
                values.len(),
            )
        };
        if rc != 0 {
            return Err(g.err(rc, "evaluating conditional rules failed"));
        }
        self.pending.clear();
        Ok(())
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        let _g = ffi_lock();
        // SAFETY: self.raw came from oracle_load and is freed exactly once,
        // here; oracle_free first points the services layer at an empty
        // placeholder policy so nothing keeps a dangling pointer.
        unsafe { ffi::oracle_free(self.raw.as_ptr()) };
        // `_slot` is released after this, when the fields drop.
    }
}

impl fmt::Debug for Oracle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Oracle")
            .field("policy_version", &self.policyvers)
            .field("mls", &self.mls)
            .field("handle_unknown", &self.handle_unknown())
            .field("classes", &self.nclasses)
            .field("booleans", &self.nbools)
            .finish_non_exhaustive()
    }
}

fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| {
        rust_err(
            e.raw_os_error().unwrap_or(EIO),
            format!("cannot read {}: {e}", path.display()),
        )
    })
}

// ---------------------------------------------------------------------------
// Load benchmark helpers
// ---------------------------------------------------------------------------

/// A policydb produced by `policydb_init` + `policydb_read` alone (no SID
/// table, not installed anywhere).  Dropping it runs `policydb_destroy`.
/// Independent of [`Oracle`]; any number may exist.
pub struct LoadedPolicydb {
    raw: NonNull<c_void>,
    _not_send_sync: PhantomData<*const ()>,
}

/// Runs only `policydb_init` + `policydb_read` over `bytes` (a
/// `PF_USE_MEMORY` policy_file) — the work to compare against arbiter's
/// reader.  `policydb_read` in 3.4 includes `validate_policydb`.
pub fn policydb_read_only(bytes: &[u8]) -> Result<LoadedPolicydb> {
    let g = ffi_lock();
    let mut raw: *mut c_void = ptr::null_mut();
    // SAFETY: `bytes` is live for the call and only read; `raw` is a valid
    // out-pointer; FFI_LOCK held.
    let rc = unsafe { ffi::oracle_read_only(bytes.as_ptr().cast(), bytes.len(), &mut raw) };
    match NonNull::new(raw) {
        Some(raw) if rc == 0 => Ok(LoadedPolicydb {
            raw,
            _not_send_sync: PhantomData,
        }),
        _ => Err(g.err(rc, "policydb_read failed")),
    }
}

impl LoadedPolicydb {
    fn info(&self) -> [u32; 4] {
        let mut v = [0u32; 4];
        let _g = ffi_lock();
        let [a, b, c, d] = &mut v;
        // SAFETY: self.raw is a live policydb from oracle_read_only; the
        // out-pointers are distinct valid locals.
        unsafe { ffi::oracle_read_only_info(self.raw.as_ptr(), a, b, c, d) };
        v
    }
    /// Policy version.
    pub fn policy_version(&self) -> u32 {
        self.info()[0]
    }
    /// Number of classes.
    pub fn class_count(&self) -> u32 {
        self.info()[1]
    }
    /// Number of types (attributes included).
    pub fn type_count(&self) -> u32 {
        self.info()[2]
    }
    /// Number of booleans.
    pub fn bool_count(&self) -> u32 {
        self.info()[3]
    }
}

impl Drop for LoadedPolicydb {
    fn drop(&mut self) {
        let _g = ffi_lock();
        // SAFETY: self.raw came from oracle_read_only and is destroyed and
        // freed exactly once, here.
        unsafe { ffi::oracle_read_only_free(self.raw.as_ptr()) };
    }
}

impl fmt::Debug for LoadedPolicydb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadedPolicydb")
            .field("policy_version", &self.policy_version())
            .finish_non_exhaustive()
    }
}

/// Bytes of heap currently allocated through glibc malloc:
/// `mallinfo2().uordblks + mallinfo2().hblkhd` (in-use arena chunks, all
/// arenas, plus mmapped chunks).  Rust's default global allocator is glibc
/// malloc, so the same figure measures arbiter's and libsepol's loads.
pub fn heap_in_use() -> usize {
    // SAFETY: mallinfo2 has no preconditions; no libsepol state involved.
    unsafe { ffi::oracle_heap_in_use() }
}

/// Whether libsepol was linked statically (full oracle) rather than through
/// `libsepol.so` (only [`policydb_read_only`] and [`heap_in_use`] work).
pub fn is_statically_linked() -> bool {
    // SAFETY: pure function returning a compile-time constant.
    unsafe { ffi::oracle_is_static() != 0 }
}

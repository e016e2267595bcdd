//! `libarbiter`: arbiter's security server and access vector cache for C programs, with
//! libselinux's names and habits (`selinux.h`, `avc.h`) over a policy file instead of the
//! running kernel. The C declarations are in `include/arbiter.h` (kept in sync with this
//! crate by `tests/header.rs`); `cargo build --release -p arbiter-capi` builds
//! `libarbiter.so` and `libarbiter.a`, and `install.sh PREFIX` installs them with the
//! header and an `arbiter.pc` for pkg-config.
//!
//! # Conventions (as libselinux)
//!
//! * Functions return `0` on success and `-1` with `errno` set on failure; functions that
//!   return a value (`arb_string_to_class`, ...) return `0` with `errno` set. The message
//!   of the failing call is in `arb_last_error()` (per thread).
//! * Strings returned through `char **` come from `malloc`: free them with `arb_freecon`
//!   (or `free`); lists with `arb_freeconary`.
//! * Every function may be called from any thread at once on the same handles. Freeing a
//!   handle must not race with its use. An `arb_avc` keeps its server alive: the two may be
//!   freed in either order.
//! * A Rust panic never unwinds into C: it is caught and reported as `EIO`.
//!
//! # Safety
//!
//! C cannot express these, so every exported function requires them of its caller:
//! a handle argument is NULL or a live handle from this library's matching constructor;
//! a `const char *` is NULL or a NUL-terminated string; a buffer is NULL or `len` readable
//! bytes; an out-parameter is NULL or writable memory of its type. NULL is always rejected
//! with `EINVAL` (except where documented as allowed); non-UTF-8 strings too.
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

mod avc;
mod decide;
mod error;
mod names;
mod ptr;
mod server;

// The exported functions and their types, all at the root (as in the header).
pub use avc::*;
pub use decide::*;
pub use names::*;
pub use server::*;

use std::ffi::c_char;

/// A security identifier (`security_id_t`'s number): issued by `arb_context_to_sid`,
/// never 0.
pub type ArbSid = u32;
/// A class value of the loaded policy (`security_class_t`); 0 is no class.
pub type ArbClass = u16;
/// An access vector (`access_vector_t`): bit `i` is the permission with value `i + 1`.
pub type ArbPerms = u32;

/// The message of this thread's last failing call (`""` if none failed yet). Valid until
/// the next failing call on the same thread.
#[no_mangle]
pub extern "C" fn arb_last_error() -> *const c_char {
    error::last_error()
}

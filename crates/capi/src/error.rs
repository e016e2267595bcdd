//! How failures reach C: `-1` (or `0` / `NULL` where the function returns a value), `errno`,
//! and a message in a thread-local buffer read with `arb_last_error()`.
//!
//! Every exported function runs its body through [`guard`], which also catches panics so
//! that none ever unwinds into C; a panic is reported as `EIO` with its message.

use arbiter_avc::ConfigError;
use arbiter_decide::DecideError;
use arbiter_policy::PolicyError;
use std::cell::RefCell;
use std::ffi::{c_char, c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A failed call: the `errno` value and the message for `arb_last_error()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) errno: c_int,
    pub(crate) message: String,
}

/// Result of an exported function's body.
pub(crate) type Outcome<T> = Result<T, Failure>;

impl Failure {
    /// An invalid argument (`EINVAL`): NULL, not UTF-8, unknown name, out of range.
    pub(crate) fn invalid(message: impl Into<String>) -> Failure {
        Failure::new(libc::EINVAL, message)
    }

    pub(crate) fn new(errno: c_int, message: impl Into<String>) -> Failure {
        Failure {
            errno,
            message: message.into(),
        }
    }
}

impl From<DecideError> for Failure {
    fn from(e: DecideError) -> Failure {
        let errno = match e {
            DecideError::UnknownBoolean(_) => libc::ENOENT,
            DecideError::SidTableFull => libc::ENOMEM,
            DecideError::Unsupported(_) => libc::ENOSYS,
            DecideError::InitialSidCollision(_) => libc::EBUSY,
            _ => libc::EINVAL,
        };
        Failure::new(errno, e.to_string())
    }
}

impl From<PolicyError> for Failure {
    fn from(e: PolicyError) -> Failure {
        let errno = match &e {
            PolicyError::Io { source, .. } => source.raw_os_error().unwrap_or(libc::EIO),
            _ => libc::EINVAL,
        };
        Failure::new(errno, e.to_string())
    }
}

impl From<ConfigError> for Failure {
    fn from(e: ConfigError) -> Failure {
        Failure::invalid(e.to_string())
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Records `f` as this thread's last error and sets `errno`.
#[cold]
#[inline(never)]
pub(crate) fn report(f: &Failure) {
    // Messages come from Rust strings; an interior NUL (only possible through a caller's
    // name echoed back) is cut there rather than dropping the whole message.
    let text = f.message.split('\0').next().unwrap_or_default();
    let c = CString::new(text).unwrap_or_default();
    LAST_ERROR.with(|cell| *cell.borrow_mut() = c);
    set_errno(f.errno);
}

fn set_errno(value: c_int) {
    // SAFETY: `__errno_location` returns this thread's errno slot, valid for the thread's
    // lifetime; writing an int to it is how C sets errno.
    unsafe { *libc::__errno_location() = value };
}

/// This thread's last message (empty before the first failure). The pointer stays valid
/// until the next failing call on this thread.
pub(crate) fn last_error() -> *const c_char {
    LAST_ERROR.with(|cell| cell.borrow().as_ptr())
}

/// Runs an exported function's body: a failure is reported (errno + message) and turned
/// into `on_error`; a panic is caught and reported as `EIO`.
#[inline(always)]
pub(crate) fn guard<T>(on_error: T, body: impl FnOnce() -> Outcome<T>) -> T {
    // AssertUnwindSafe: after a panic nothing of the body's state is used again; the
    // engine's own shared structures never leave a half-written state behind a panic
    // (its locks recover from poisoning, publication is a single atomic store).
    // The failure is reported inside, so that what crosses `catch_unwind` is small
    // (`Option<T>`) rather than the whole `Outcome`.
    let caught = catch_unwind(AssertUnwindSafe(|| match body() {
        Ok(v) => Some(v),
        Err(f) => {
            report(&f);
            None
        }
    }));
    match caught {
        Ok(Some(v)) => v,
        Ok(None) => on_error,
        Err(panic) => {
            report_panic(panic);
            on_error
        }
    }
}

#[cold]
#[inline(never)]
fn report_panic(panic: Box<dyn std::any::Any + Send>) {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    report(&Failure::new(libc::EIO, format!("internal error: {what}")));
}

/// [`guard`] for the `0` / `-1` convention.
pub(crate) fn status(body: impl FnOnce() -> Outcome<()>) -> c_int {
    guard(-1, || body().map(|()| 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn errno() -> c_int {
        std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
    }

    fn message() -> String {
        // SAFETY: last_error points to this thread's live, NUL-terminated buffer.
        unsafe { CStr::from_ptr(last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_panic_becomes_eio_and_a_message_not_an_unwind() {
        let r = guard(-1, || -> Outcome<c_int> { panic!("boom in the engine") });
        assert_eq!(r, -1);
        assert_eq!(errno(), libc::EIO);
        assert_eq!(message(), "internal error: boom in the engine");
    }

    #[test]
    fn a_failure_sets_errno_and_the_thread_message() {
        let r = status(|| Err(Failure::new(libc::ENOENT, "unknown boolean \"x\"")));
        assert_eq!(r, -1);
        assert_eq!(errno(), libc::ENOENT);
        assert_eq!(message(), "unknown boolean \"x\"");
        // Success leaves the last message in place (as errno).
        assert_eq!(status(|| Ok(())), 0);
        assert_eq!(message(), "unknown boolean \"x\"");
    }

    #[test]
    fn an_interior_nul_cuts_the_message() {
        report(&Failure::invalid("name \"a\0b\""));
        assert_eq!(message(), "name \"a");
    }
}

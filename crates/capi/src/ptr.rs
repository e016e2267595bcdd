//! The only place raw pointers from C are read or written. Each helper checks for NULL
//! (and, for strings, UTF-8) and turns a bad argument into an `EINVAL` failure; what it
//! cannot check — that a non-NULL pointer is valid — is the caller's contract (crate docs).

use crate::error::{Failure, Outcome};
use std::ffi::{c_char, c_void, CStr};

/// A shared reference to a handle the library created.
///
/// # Safety
/// `p` is NULL or a pointer returned by this library's constructor for `T` and not yet freed.
pub(crate) unsafe fn handle<'a, T>(p: *const T, what: &str) -> Outcome<&'a T> {
    if p.is_null() {
        return Err(Failure::invalid(format!("{what} is NULL")));
    }
    // SAFETY: non-NULL, and by the caller's contract a live, library-created `T` that the
    // library only ever shares immutably (handles are `Sync`).
    Ok(unsafe { &*p })
}

/// A NUL-terminated UTF-8 string argument.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string valid for reads for `'a`.
pub(crate) unsafe fn text<'a>(p: *const c_char, what: &str) -> Outcome<&'a str> {
    if p.is_null() {
        return Err(Failure::invalid(format!("{what} is NULL")));
    }
    // SAFETY: non-NULL and NUL-terminated by the caller's contract.
    let c = unsafe { CStr::from_ptr(p) };
    c.to_str()
        .map_err(|e| Failure::invalid(format!("{what} is not valid UTF-8 ({e})")))
}

/// A byte buffer argument (`len` 0 with a NULL `p` is the empty buffer).
///
/// # Safety
/// `p` is NULL or points to `len` readable bytes valid for `'a`.
pub(crate) unsafe fn bytes<'a>(p: *const c_void, len: usize, what: &str) -> Outcome<&'a [u8]> {
    if p.is_null() {
        return match len {
            0 => Ok(&[]),
            _ => Err(Failure::invalid(format!("{what} is NULL"))),
        };
    }
    if len > isize::MAX as usize {
        return Err(Failure::invalid(format!("{what}: length {len} too large")));
    }
    // SAFETY: non-NULL, `len` readable bytes by the caller's contract, len <= isize::MAX.
    Ok(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) })
}

/// Checks an out-parameter before any work is done, so that a NULL one fails early.
pub(crate) fn out_ptr<T>(p: *mut T, what: &str) -> Outcome<*mut T> {
    if p.is_null() {
        Err(Failure::invalid(format!("{what} is NULL")))
    } else {
        Ok(p)
    }
}

/// Stores `v` through a checked out-parameter.
///
/// # Safety
/// `p` came from [`out_ptr`] and points to writable, properly aligned memory for a `T`.
#[inline]
pub(crate) unsafe fn store<T>(p: *mut T, v: T) {
    // SAFETY: non-NULL (out_ptr), writable and aligned by the caller's contract; `T` is a
    // plain C value (integer, pointer or repr(C) struct of integers) with no drop glue
    // whose previous content could need dropping.
    unsafe { p.write(v) }
}

/// A copy of `s` in memory from `malloc`, so C may release it with `free` as well as with
/// `arb_freecon` (libselinux's `freecon` is `free`). An interior NUL cuts the string there.
pub(crate) fn malloc_string(s: &str) -> Outcome<*mut c_char> {
    let s = s.split('\0').next().unwrap_or_default();
    // SAFETY: malloc has no preconditions; the result is checked for NULL below.
    let p = unsafe { libc::malloc(s.len() + 1) }.cast::<u8>();
    if p.is_null() {
        return Err(Failure::new(libc::ENOMEM, "out of memory"));
    }
    // SAFETY: `p` is a fresh allocation of len + 1 bytes, disjoint from `s`.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), p, s.len());
        p.add(s.len()).write(0);
    }
    Ok(p.cast())
}

/// A NULL-terminated `malloc`ed array of `malloc`ed strings (libselinux's `char **` lists,
/// released with `arb_freeconary`).
pub(crate) fn malloc_string_array<'s>(
    items: impl ExactSizeIterator<Item = &'s str>,
) -> Outcome<*mut *mut c_char> {
    let n = items.len();
    let size = (n + 1)
        .checked_mul(std::mem::size_of::<*mut c_char>())
        .ok_or_else(|| Failure::new(libc::ENOMEM, "out of memory"))?;
    // SAFETY: malloc has no preconditions; the result is checked for NULL below.
    let array = unsafe { libc::malloc(size) }.cast::<*mut c_char>();
    if array.is_null() {
        return Err(Failure::new(libc::ENOMEM, "out of memory"));
    }
    for (i, s) in items.enumerate() {
        let copy = match malloc_string(s) {
            Ok(p) => p,
            Err(f) => {
                // SAFETY: entries 0..i were written below and the array is NULL-terminated
                // at i, the layout free_string_array expects.
                unsafe {
                    array.add(i).write(std::ptr::null_mut());
                    free_string_array(array);
                }
                return Err(f);
            }
        };
        // SAFETY: i < n, inside the n + 1 allocated slots.
        unsafe { array.add(i).write(copy) };
    }
    // SAFETY: slot n is the last of the n + 1 allocated slots.
    unsafe { array.add(n).write(std::ptr::null_mut()) };
    Ok(array)
}

/// Releases a string from [`malloc_string`] (NULL is ignored).
///
/// # Safety
/// `p` is NULL or a pointer from `malloc` not yet freed.
pub(crate) unsafe fn free_string(p: *mut c_char) {
    // SAFETY: NULL or a live malloc'ed pointer by the caller's contract; free(NULL) is a no-op.
    unsafe { libc::free(p.cast()) }
}

/// Releases an array from [`malloc_string_array`] (NULL is ignored).
///
/// # Safety
/// `array` is NULL or a live NULL-terminated array of `malloc`ed strings, itself `malloc`ed.
pub(crate) unsafe fn free_string_array(array: *mut *mut c_char) {
    if array.is_null() {
        return;
    }
    let mut i = 0;
    loop {
        // SAFETY: the array is NULL-terminated, so every index up to the terminator is
        // inside the allocation.
        let s = unsafe { array.add(i).read() };
        if s.is_null() {
            break;
        }
        // SAFETY: each entry is a live malloc'ed string (contract).
        unsafe { free_string(s) };
        i += 1;
    }
    // SAFETY: the array itself came from malloc (contract).
    unsafe { libc::free(array.cast()) }
}

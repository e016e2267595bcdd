//! The synchronisation primitives of the slot protocol, swappable for loom's.
//!
//! Everything the lock-free protocol touches (cell words, the published generation, the
//! enforcing flag, the writer mutexes) comes from here, so `RUSTFLAGS="--cfg loom"` test
//! builds run the very same code under loom's model checker. Statistics counters are not
//! part of the protocol and use `std` atomics directly.

#[cfg(all(loom, test))]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicU64};
#[cfg(all(loom, test))]
pub(crate) use loom::sync::{Mutex, MutexGuard};

#[cfg(not(all(loom, test)))]
pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicU64};
#[cfg(not(all(loom, test)))]
pub(crate) use std::sync::{Mutex, MutexGuard};

/// Locks `m`, ignoring poisoning: every critical section in this crate leaves the protected
/// state consistent at each step (a panic mid-way can at worst leave a cell cleared), so a
/// poisoned lock carries no broken invariant worth propagating.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Aligns `T` to two cache lines so that a frequently written value (a writer mutex) never
/// shares a line, or an adjacent-line prefetch pair, with values every reader loads.
#[repr(align(128))]
pub(crate) struct CachePadded<T>(pub(crate) T);

impl<T> std::ops::Deref for CachePadded<T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self.0
    }
}

//! Synchronisation primitives of the class maps, swappable for loom's.
//!
//! `RUSTFLAGS="--cfg loom"` test builds run the very same map code under loom's model
//! checker.

#[cfg(all(loom, test))]
pub(crate) use loom::sync::atomic::{AtomicU32, Ordering};
#[cfg(all(loom, test))]
pub(crate) use loom::sync::{Mutex, MutexGuard, RwLock};

#[cfg(not(all(loom, test)))]
pub(crate) use std::sync::atomic::{AtomicU32, Ordering};
#[cfg(not(all(loom, test)))]
pub(crate) use std::sync::{Mutex, MutexGuard, RwLock};

/// Locks `m`, ignoring poisoning: every critical section leaves the map consistent at each
/// step (a panic can at worst lose the insertion in progress).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

//! The one publication point of the security server: an atomically replaced `Arc` of the
//! current [`Snapshot`](crate::state::Snapshot) and per-thread handles that follow it.
//!
//! Who writes: only the server's writer (holding its reload lock) calls [`Cell::store`].
//! Who reads: anyone. [`Cell::load`] is `arc-swap`'s wait-free load: it borrows the current
//! `Arc` through a per-thread debt slot, so readers on different cores write no shared
//! cache line and never touch the reference count. A [`Handle`] (one per thread) keeps its
//! own `Arc` and on each use compares it with the published pointer — one atomic load —
//! taking the new one only after a store. Neither ever waits for a writer: a reload builds
//! its whole state before the single store that publishes it.
//!
//! Under `--cfg loom` the cell is a mutex-protected `Arc` with a version counter (loom cannot
//! model `arc-swap`'s internals): the models in [`crate::security`] then check the
//! server's own protocol — the order of the snapshot store, the sequence-number store and
//! the load identity — on that stand-in; `arc-swap`'s own correctness is its authors' and
//! its tests'.

use crate::sync::Arc;
use std::ops::Deref;

#[cfg(not(loom))]
mod imp {
    use super::*;
    use arc_swap::{ArcSwap, Cache};

    /// An atomically replaceable `Arc<T>`.
    pub(crate) struct Cell<T>(ArcSwap<T>);

    impl<T> Cell<T> {
        pub(crate) fn new(value: Arc<T>) -> Self {
            Cell(ArcSwap::new(value))
        }

        /// The current value, borrowed without touching its reference count.
        #[inline]
        pub(crate) fn load(&self) -> Guard<T> {
            Guard(self.0.load())
        }

        /// The current value as an owned `Arc`.
        pub(crate) fn load_full(&self) -> Arc<T> {
            self.0.load_full()
        }

        /// Publishes `value` (SeqCst inside `arc-swap`, so it is ordered before any later
        /// Release store of the publisher).
        pub(crate) fn store(&self, value: Arc<T>) {
            self.0.store(value);
        }

        pub(crate) fn handle(&self) -> Handle<'_, T> {
            Handle(Cache::new(&self.0))
        }
    }

    /// A borrowed current value.
    pub(crate) struct Guard<T>(arc_swap::Guard<Arc<T>>);

    impl<T> Deref for Guard<T> {
        type Target = Arc<T>;
        #[inline]
        fn deref(&self) -> &Arc<T> {
            &self.0
        }
    }

    /// A per-thread follower of a [`Cell`].
    pub(crate) struct Handle<'a, T>(Cache<&'a ArcSwap<T>, Arc<T>>);

    impl<T> Handle<'_, T> {
        /// The newest value: one atomic load when nothing changed.
        #[inline]
        pub(crate) fn load(&mut self) -> &Arc<T> {
            self.0.load()
        }
    }
}

#[cfg(loom)]
mod imp {
    use super::*;
    use loom::sync::atomic::{AtomicU64, Ordering};
    use loom::sync::Mutex;

    /// Stand-in for `arc-swap` under loom: a mutex-protected `Arc` and a version counter
    /// that handles poll.
    pub(crate) struct Cell<T> {
        value: Mutex<Arc<T>>,
        version: AtomicU64,
    }

    impl<T> Cell<T> {
        pub(crate) fn new(value: Arc<T>) -> Self {
            Cell {
                value: Mutex::new(value),
                version: AtomicU64::new(0),
            }
        }

        pub(crate) fn load(&self) -> Guard<T> {
            Guard(self.value.lock().unwrap().clone())
        }

        pub(crate) fn load_full(&self) -> Arc<T> {
            self.value.lock().unwrap().clone()
        }

        pub(crate) fn store(&self, value: Arc<T>) {
            *self.value.lock().unwrap() = value;
            self.version.fetch_add(1, Ordering::SeqCst);
        }

        pub(crate) fn handle(&self) -> Handle<'_, T> {
            let version = self.version.load(Ordering::SeqCst);
            Handle {
                cell: self,
                version,
                value: self.load_full(),
            }
        }
    }

    pub(crate) struct Guard<T>(Arc<T>);

    impl<T> Deref for Guard<T> {
        type Target = Arc<T>;
        fn deref(&self) -> &Arc<T> {
            &self.0
        }
    }

    pub(crate) struct Handle<'a, T> {
        cell: &'a Cell<T>,
        version: u64,
        value: Arc<T>,
    }

    impl<T> Handle<'_, T> {
        pub(crate) fn load(&mut self) -> &Arc<T> {
            let v = self.cell.version.load(Ordering::SeqCst);
            if v != self.version {
                self.version = v;
                self.value = self.cell.load_full();
            }
            &self.value
        }
    }
}

pub(crate) use imp::{Cell, Guard, Handle};

//! The security server's atomics and locks, swappable for loom's so that
//! `RUSTFLAGS="--cfg loom"` runs the publication protocol under the model checker. The
//! `Arc` that owns policy states is loom's there too: dropping the last reference to a
//! state frees its SID table, and loom must see the reference count's synchronisation to
//! know that no reader still looks at it.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, Mutex, MutexGuard};

/// Locks `m`, taking the guard even when a thread panicked while holding it: a poisoned
/// lock only means that panic happened, and what this crate's locks guard (pending
/// booleans, the SID table's writer state, a lazy slot's initialisation) is whole at every
/// step, so keep going. The one poison-tolerant lock of the crate, on `std`'s or loom's
/// mutex alike.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A slot filled once, on first use, by whichever reader needs it first: the per-type
/// rule plans of a decision index ([`crate::index`]).
///
/// Who writes: any reader that finds the slot empty. It builds the value *outside* any
/// lock (two readers racing on an empty slot each build one; both values are equal, the
/// first stored wins and the other is dropped), then stores it with
/// `OnceLock::get_or_init`, whose only critical section is that move. Who reads: anyone;
/// [`LazySlot::get`] is one Acquire load (inside `OnceLock`), which pairs with the
/// store's Release so the value's contents are visible once the slot reads as full. No
/// reader ever waits for another's build, and writers (reloads) never touch a published
/// index's slots.
///
/// Under `--cfg loom` the slot also keeps a loom `AtomicBool` that is set (Release) after
/// the store and read (Acquire) before the value, and a loom mutex around the store that
/// stands for `OnceLock`'s own initialisation synchronisation (a reader whose store loses
/// the race must see the winner's value, including any loom atomics inside it), so the
/// model explores every interleaving of readers finding the slot empty, building, and
/// storing; the `OnceLock` itself is std's, whose correctness is its authors'.
pub(crate) struct LazySlot<T> {
    value: std::sync::OnceLock<T>,
    #[cfg(loom)]
    filled: loom::sync::atomic::AtomicBool,
    #[cfg(loom)]
    init: loom::sync::Mutex<()>,
}

impl<T> LazySlot<T> {
    /// An empty slot.
    pub(crate) fn new() -> Self {
        LazySlot {
            value: std::sync::OnceLock::new(),
            #[cfg(loom)]
            filled: loom::sync::atomic::AtomicBool::new(false),
            #[cfg(loom)]
            init: loom::sync::Mutex::new(()),
        }
    }

    /// The value, if some reader has stored it.
    #[inline]
    pub(crate) fn get(&self) -> Option<&T> {
        #[cfg(loom)]
        if !self.filled.load(Ordering::Acquire) {
            return None;
        }
        self.value.get()
    }

    /// The value, built by `build` (without holding any lock) when the slot is empty.
    #[inline]
    pub(crate) fn get_or_build(&self, build: impl FnOnce() -> T) -> &T {
        match self.get() {
            Some(v) => v,
            None => self.fill(build),
        }
    }

    #[cold]
    #[inline(never)]
    fn fill(&self, build: impl FnOnce() -> T) -> &T {
        let value = build();
        #[cfg(loom)]
        let _init = lock(&self.init);
        let v = self.value.get_or_init(move || value);
        #[cfg(loom)]
        self.filled.store(true, Ordering::Release);
        v
    }
}

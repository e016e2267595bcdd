//! The same code on `std` atomics or `loom`'s model-checked ones.
#[cfg(loom)]
pub(super) use loom::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
#[cfg(loom)]
pub(super) use loom::sync::Mutex;
#[cfg(not(loom))]
pub(super) use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(super) use std::sync::Mutex;

use std::mem::MaybeUninit;

/// A load by a writer holding the writer lock, of an atomic that only writers store.
/// Every store to it happens-before the load (the lock orders writers), so no ordering
/// is needed: `Relaxed` on std. Under loom it is an unsynchronised load, which loom
/// checks for exactly that, and which — unlike a tracked load — does not hide from
/// loom's DPOR (it remembers only the *last* access per atomic) that the writer's next
/// store races with a reader's earlier load.
pub(super) trait WriterLoad {
    type Value;
    /// # Safety
    /// The caller holds the writer lock, and only writers store to `self`.
    unsafe fn writer_load(&self) -> Self::Value;
}

macro_rules! writer_load {
    ($atomic:ty, $value:ty $(, $g:ident)?) => {
        impl$(<$g>)? WriterLoad for $atomic {
            type Value = $value;
            #[inline]
            unsafe fn writer_load(&self) -> $value {
                #[cfg(not(loom))]
                return self.load(Ordering::Relaxed);
                #[cfg(loom)]
                // SAFETY: caller's contract: all stores happen-before this load.
                return unsafe { self.unsync_load() };
            }
        }
    };
}
writer_load!(AtomicUsize, usize);
writer_load!(AtomicU64, u64);
writer_load!(AtomicPtr<T>, *mut T, T);

/// A write-once cell: written by the one writer before it is published, then only read.
/// Under loom every access is checked against concurrent unsynchronised accesses.
pub(super) struct Slot<T> {
    #[cfg(not(loom))]
    cell: std::cell::UnsafeCell<MaybeUninit<T>>,
    #[cfg(loom)]
    cell: loom::cell::UnsafeCell<MaybeUninit<T>>,
}

impl<T> Slot<T> {
    pub(super) fn new() -> Self {
        Slot {
            #[cfg(not(loom))]
            cell: std::cell::UnsafeCell::new(MaybeUninit::uninit()),
            #[cfg(loom)]
            cell: loom::cell::UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// # Safety
    /// The slot was never written, the caller is its only writer, and no reader can
    /// reach it until a later Release store publishes it.
    pub(super) unsafe fn write(&self, value: T) {
        #[cfg(not(loom))]
        // SAFETY: no other access exists (caller's contract), so the exclusive write
        // through the cell's pointer does not alias any reference.
        unsafe {
            (*self.cell.get()).write(value);
        }
        #[cfg(loom)]
        self.cell.with_mut(|p| {
            // SAFETY: as above; loom checks the claim.
            unsafe { (*p).write(value) };
        });
    }

    /// # Safety
    /// The slot was written and its publication happens-before this call; it is never
    /// written again, so the shared reference may live as long as the slot.
    pub(super) unsafe fn get(&self) -> &T {
        #[cfg(not(loom))]
        // SAFETY: initialised and immutable from now on (caller's contract).
        unsafe {
            (*self.cell.get()).assume_init_ref()
        }
        #[cfg(loom)]
        // SAFETY: as above; loom checks that the write happens-before this read.
        self.cell.with(|p| unsafe { (*p).assume_init_ref() })
    }

    /// # Safety
    /// The slot was written, and no reference from [`Slot::get`] outlives this call.
    pub(super) unsafe fn drop_value(&mut self) {
        #[cfg(not(loom))]
        // SAFETY: initialised (caller's contract); `&mut self` excludes other accesses.
        unsafe {
            self.cell.get_mut().assume_init_drop()
        }
        #[cfg(loom)]
        // SAFETY: as above.
        self.cell.with_mut(|p| unsafe { (*p).assume_init_drop() })
    }
}

//! Add-only open-addressing hash index over arena entries.

use super::*;

#[cfg(not(loom))]
pub(super) const INITIAL_SLOTS: usize = 64;
#[cfg(loom)]
pub(super) const INITIAL_SLOTS: usize = 4;

pub(super) struct Table {
    /// 0 = empty; else `tag << 32 | (entry + 1)`.
    slots: Box<[AtomicU64]>,
    mask: usize,
}

impl Table {
    pub(super) fn new(size: usize) -> Box<Table> {
        debug_assert!(size.is_power_of_two());
        Box::new(Table {
            slots: (0..size).map(|_| AtomicU64::new(0)).collect(),
            mask: size - 1,
        })
    }

    /// Stores `value` in the first empty slot of its probe sequence.
    ///
    /// # Safety
    /// The caller holds the writer lock (or owns the unpublished table).
    pub(super) unsafe fn place(&self, tag: u32, value: u64) {
        let mut i = tag as usize & self.mask;
        // SAFETY: caller's contract; only writers store slots.
        while unsafe { self.slots[i].writer_load() } != 0 {
            i = (i + 1) & self.mask;
        }
        self.slots[i].store(value, Ordering::Release);
    }
}

/// Tag → entry index, add-only (see the module documentation).
pub(super) struct Index {
    table: AtomicPtr<Table>,
}

/// What only writers touch, under the lock.
pub(super) struct IndexWriter {
    used: usize,
    /// Boxed on purpose: readers may hold `&Table` into a retired table, so the `Table`
    /// itself must not move when this vector reallocates.
    #[allow(clippy::vec_box)]
    retired: Vec<Box<Table>>,
}

impl Index {
    pub(super) fn new() -> (Index, IndexWriter) {
        let index = Index {
            table: AtomicPtr::new(Box::into_raw(Table::new(INITIAL_SLOTS))),
        };
        let writer = IndexWriter {
            used: 0,
            retired: Vec::new(),
        };
        (index, writer)
    }

    /// The first entry with this tag for which `is_it` holds (lock-free reader).
    #[inline]
    pub(super) fn find(&self, tag: u32, is_it: impl FnMut(u32) -> bool) -> Option<u32> {
        // SAFETY: the pointer always names a live table: tables are freed only when the
        // Index is dropped; the Acquire load pairs with the Release store that published
        // it, so its slots are initialised.
        let table = unsafe { &*self.table.load(Ordering::Acquire) };
        Self::probe(table, tag, is_it, |slot| slot.load(Ordering::Acquire))
    }

    /// [`Index::find`] for a writer.
    ///
    /// # Safety
    /// The caller holds the writer lock.
    pub(super) unsafe fn find_locked(
        &self,
        tag: u32,
        is_it: impl FnMut(u32) -> bool,
    ) -> Option<u32> {
        // SAFETY: live (freed only on drop); caller holds the lock and only writers store
        // the pointer and the slots.
        let table = unsafe { &*self.table.writer_load() };
        // SAFETY: as above.
        Self::probe(table, tag, is_it, |slot| unsafe { slot.writer_load() })
    }

    #[inline]
    pub(super) fn probe(
        table: &Table,
        tag: u32,
        mut is_it: impl FnMut(u32) -> bool,
        load: impl Fn(&AtomicU64) -> u64,
    ) -> Option<u32> {
        let mut i = tag as usize & table.mask;
        loop {
            let v = load(&table.slots[i]);
            if v == 0 {
                return None;
            }
            if (v >> 32) as u32 == tag {
                let entry = (v as u32).wrapping_sub(1);
                if is_it(entry) {
                    return Some(entry);
                }
            }
            i = (i + 1) & table.mask;
        }
    }

    /// Adds `entry` under `tag`. The entry must be published already.
    ///
    /// # Safety
    /// The caller holds the writer lock, and `w` is this index's writer state.
    pub(super) unsafe fn insert(&self, w: &mut IndexWriter, tag: u32, entry: u32) {
        let value = (u64::from(tag) << 32) | u64::from(entry + 1);
        // SAFETY: we hold the lock; only writers store the pointer.
        let current = unsafe { self.table.writer_load() };
        // SAFETY: live (freed only on drop), and we are the only writer.
        let table = unsafe { &*current };
        if (w.used + 1) * 2 <= table.slots.len() {
            // SAFETY: lock held.
            unsafe { table.place(tag, value) };
        } else {
            let bigger = Table::new(table.slots.len() * 2);
            for slot in table.slots.iter() {
                // SAFETY: lock held; only writers store slots.
                let v = unsafe { slot.writer_load() };
                if v != 0 {
                    // SAFETY: `bigger` is ours alone until published below.
                    unsafe { bigger.place((v >> 32) as u32, v) };
                }
            }
            // SAFETY: as above.
            unsafe { bigger.place(tag, value) };
            self.table.store(Box::into_raw(bigger), Ordering::Release);
            // SAFETY: `current` came from Box::into_raw and is no longer published; readers
            // that loaded it before the swap may still read it, so it is kept (not freed)
            // until the Index is dropped.
            w.retired.push(unsafe { Box::from_raw(current) });
        }
        w.used += 1;
    }
}

impl Drop for Index {
    fn drop(&mut self) {
        // SAFETY: the current table came from Box::into_raw and `&mut self` excludes
        // readers; retired tables are freed by their owner (`IndexWriter`).
        drop(unsafe { Box::from_raw(self.table.load(Ordering::Relaxed)) });
    }
}

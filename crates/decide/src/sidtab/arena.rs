//! Add-only segmented storage whose entries never move.

use super::*;

#[cfg(not(loom))]
pub(super) const BASE: usize = 32;
/// Enough chunks for more than `u32::MAX` entries (32 * (2^28 - 1) > 2^32).
#[cfg(not(loom))]
pub(super) const NCHUNKS: usize = 28;
#[cfg(loom)]
pub(super) const BASE: usize = 2;
#[cfg(loom)]
pub(super) const NCHUNKS: usize = 6;

/// Chunk number and offset of entry `i`: chunk `k` holds entries
/// `BASE * (2^k - 1) .. BASE * (2^(k+1) - 1)`.
#[inline]
pub(super) fn locate(i: usize) -> (usize, usize) {
    let block = i / BASE + 1;
    let k = (usize::BITS - 1 - block.leading_zeros()) as usize;
    (k, i - BASE * ((1 << k) - 1))
}

/// Add-only storage whose entries never move (see the module documentation).
pub(super) struct Arena<T> {
    chunks: [AtomicPtr<Slot<T>>; NCHUNKS],
    /// Published entries: `0..len` are written and immutable.
    len: AtomicUsize,
    /// The arena owns `T`s (for auto traits and drop check).
    _owns: PhantomData<T>,
}

impl<T> Arena<T> {
    pub(super) fn new() -> Self {
        Arena {
            chunks: std::array::from_fn(|_| AtomicPtr::new(ptr::null_mut())),
            len: AtomicUsize::new(0),
            _owns: PhantomData,
        }
    }

    /// Appends `value` and publishes it; returns its index.
    ///
    /// # Safety
    /// The caller holds the table's writer lock (one writer at a time).
    pub(super) unsafe fn push(&self, value: T) -> usize {
        // SAFETY: we hold the lock (caller's contract), and only writers store `len`.
        let i = unsafe { self.len.writer_load() };
        let (k, off) = locate(i);
        assert!(k < NCHUNKS, "arena full"); // callers stop at u32::MAX entries, far below
                                            // SAFETY: as above; only writers store chunk pointers.
        let mut chunk = unsafe { self.chunks[k].writer_load() };
        if chunk.is_null() {
            let fresh: Box<[Slot<T>]> = (0..BASE << k).map(|_| Slot::new()).collect();
            chunk = Box::into_raw(fresh).cast::<Slot<T>>();
            self.chunks[k].store(chunk, Ordering::Release);
        }
        // SAFETY: `off < BASE << k`, the chunk's length; slot `i` was never written (the
        // length only grows, under the lock we hold) and no reader looks at index `i`
        // before the Release store of `len` below or of an index slot after it.
        unsafe { (*chunk.add(off)).write(value) };
        self.len.store(i + 1, Ordering::Release);
        i
    }

    /// Entry `i`, if published.
    #[inline]
    pub(super) fn get(&self, i: usize) -> Option<&T> {
        if i < self.len.load(Ordering::Acquire) {
            // SAFETY: `i < len`, loaded with Acquire: the entry's publication
            // happens-before this read.
            Some(unsafe { self.get_published(i) })
        } else {
            None
        }
    }

    /// Entry `i`, known to be published.
    ///
    /// # Safety
    /// The Release store that published entry `i` (of `len`, or of an index slot or table
    /// stored after it) happens-before this call.
    #[inline]
    pub(super) unsafe fn get_published(&self, i: usize) -> &T {
        let (k, off) = locate(i);
        // (Redundant with the caller's synchronisation, which already orders the chunk's
        // store before this; kept so the chunk is never the weak link.)
        let chunk = self.chunks[k].load(Ordering::Acquire);
        // Under loom a broken publication protocol shows as a clean failure, not a crash.
        #[cfg(loom)]
        assert!(
            !chunk.is_null(),
            "entry {i} read before its chunk was published"
        );
        debug_assert!(!chunk.is_null());
        // SAFETY: the chunk was stored before entry `i` was written, which happens-before
        // this call (caller's contract), so `chunk` is that chunk, live until drop; `off`
        // is within it; the slot is written and immutable.
        unsafe { (*chunk.add(off)).get() }
    }

    pub(super) fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    /// The length, read by a writer.
    ///
    /// # Safety
    /// The caller holds the writer lock.
    pub(super) unsafe fn writer_len(&self) -> usize {
        // SAFETY: caller's contract; only writers store `len`.
        unsafe { self.len.writer_load() }
    }
}

impl<T> Drop for Arena<T> {
    fn drop(&mut self) {
        // `&mut self`: every other access happened-before; Relaxed suffices.
        let len = self.len.load(Ordering::Relaxed);
        for k in 0..NCHUNKS {
            let chunk = self.chunks[k].load(Ordering::Relaxed);
            if chunk.is_null() {
                break; // chunks are allocated in order
            }
            let size = BASE << k;
            // SAFETY: `chunk` came from `Box::<[Slot<T>]>::into_raw` with `size` slots and
            // is freed only here.
            let mut slots = unsafe { Box::from_raw(ptr::slice_from_raw_parts_mut(chunk, size)) };
            let live = len.saturating_sub(BASE * ((1 << k) - 1)).min(size);
            for slot in &mut slots[..live] {
                // SAFETY: the first `live` slots of this chunk are below `len`, so written;
                // `&mut self` means no reference from `get` is still alive.
                unsafe { slot.drop_value() };
            }
        }
    }
}

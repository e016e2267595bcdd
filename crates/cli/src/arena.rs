//! The command line's global allocator: glibc's `malloc` for everything, except the small
//! blocks of the one thread that switched on the arena (`arbiter build` on CIL files, for
//! its compile), which come from size classes carved out of one reserved mapping.
//!
//! Why: a small build makes about 15,000 allocations of a few dozen bytes each (names,
//! bitmaps, vector growth) and frees most of them; glibc spends about 300 instructions on
//! each allocation and free (bins, consolidation of its fast bins, chunk headers), 3.5 M of
//! the 31.6 M instructions of `bench.cil`'s whole process. Here a block is a pointer bump or
//! the head of its class's free list, and a free pushes it back: no headers, no coalescing.
//! The price is that freed blocks are reused only by their own size class, which is why
//! the arena serves only blocks up to [`MAX_SMALL`] bytes (the texts, tables and large
//! vectors still come from glibc, which returns them to the system) and only the thread
//! that switched it on (the other threads of `build --store` and of the other commands
//! keep glibc's arenas).
//!
//! Ownership: [`enable`] hands the arena to the calling thread, once per process; only that
//! thread ever reads or writes the arena's state (the free lists and the bump pointer), so
//! the state needs no lock. A block of the arena freed on another thread (a value moved
//! there) is left unused, a small leak rather than a race. Whether a pointer is the arena's
//! is decided by its address alone, so blocks of either allocator may be freed anywhere.

#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The largest block the arena serves; larger ones come from glibc.
pub(crate) const MAX_SMALL: usize = 32 << 10;

/// The alignment of every arena block (class sizes are multiples of it); a layout that asks
/// for more comes from glibc.
const ALIGN: usize = 16;

/// Address space reserved for the arena (`MAP_NORESERVE`: only pages touched use memory).
/// When it is used up, further blocks come from glibc.
const RESERVE: usize = 1 << 30;

/// Size classes: sixteen-byte steps up to 1 KiB (classes 1–64), then four steps per
/// doubling up to [`MAX_SMALL`] (classes 65–84). Class 0 is unused.
const CLASSES: usize = 85;

/// The class of a block of `size` bytes (`1..=MAX_SMALL`) and that class's block size.
fn class_of(size: usize) -> (usize, usize) {
    if size <= 1024 {
        let c = size.max(1).div_ceil(ALIGN);
        return (c, c * ALIGN);
    }
    // size in (2^p, 2^(p+1)], p in 10..=14: four classes of 2^(p-2) bytes each.
    let p = (usize::BITS - 1 - (size - 1).leading_zeros()) as usize;
    let step = 1usize << (p - 2);
    let i = (size - 1 - (1 << p)) >> (p - 2);
    (65 + (p - 10) * 4 + i, (1 << p) + (i + 1) * step)
}

/// The arena's state, touched only by its owner thread.
struct State {
    /// First byte never handed out; everything from here to `end` is untouched (zero).
    next: usize,
    end: usize,
    /// Per class, the first free block (0: none); each free block's first word links to
    /// the next.
    free: [usize; CLASSES],
}

struct StateCell(UnsafeCell<State>);

// SAFETY: the state is read and written only by the thread whose `OWNER` flag is set, and
// `enable` sets that flag on one thread only (`ON` is claimed once); no other thread
// touches it.
unsafe impl Sync for StateCell {}

static STATE: StateCell = StateCell(UnsafeCell::new(State {
    next: 0,
    end: 0,
    free: [0; CLASSES],
}));

/// Claimed by the first `enable`; never released.
static ON: AtomicBool = AtomicBool::new(false);
/// The reserved range, `[BASE, END)`; both 0 until `enable` maps it. Written once, before
/// the first arena block exists; a thread that holds an arena block received it through
/// some synchronisation after the owner allocated it, so it sees these stores.
static BASE: AtomicUsize = AtomicUsize::new(0);
static END: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Whether this thread owns the arena (const-initialised, no destructor: usable from
    /// the allocator at any point of a thread's life).
    static OWNER: Cell<bool> = const { Cell::new(false) };
}

/// The command line's allocator (see the module's comment).
pub(crate) struct Alloc;

#[global_allocator]
static GLOBAL: Alloc = Alloc;

/// Hands the arena to the calling thread: from now on its blocks of up to [`MAX_SMALL`]
/// bytes come from size classes. Does nothing after the first call, or when the address
/// space cannot be reserved (glibc then serves everything, as before).
pub(crate) fn enable() {
    if ON.swap(true, Ordering::Relaxed) {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a fresh private anonymous mapping at an address of the kernel's choosing;
        // it overlaps nothing this process uses, and the result is checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                RESERVE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return;
        }
        let base = p as usize;
        // SAFETY: this thread just claimed `ON`, so no thread is the owner yet and nobody
        // else reads or writes the state.
        unsafe {
            let s = &mut *STATE.0.get();
            s.next = base;
            s.end = base + RESERVE;
        }
        BASE.store(base, Ordering::Release);
        END.store(base + RESERVE, Ordering::Release);
        OWNER.with(|o| o.set(true));
    }
}

/// Whether `ptr` is an arena block. `ON` first: the commands that never switch the arena
/// on pay one load and branch per free.
#[inline]
fn in_arena(ptr: *mut u8) -> bool {
    let p = ptr as usize;
    ON.load(Ordering::Relaxed)
        && p >= BASE.load(Ordering::Acquire)
        && p < END.load(Ordering::Acquire)
}

/// Whether this thread's block of `layout` comes from the arena.
#[inline]
fn served(layout: Layout) -> bool {
    ON.load(Ordering::Relaxed)
        && layout.size() <= MAX_SMALL
        && layout.align() <= ALIGN
        && OWNER.with(Cell::get)
}

impl Alloc {
    /// A block of `size` (`<= MAX_SMALL`) bytes from the arena and whether it is fresh
    /// (never handed out, hence zero); null when the reservation is used up.
    ///
    /// # Safety
    /// Only on the owner thread.
    unsafe fn take(size: usize) -> (*mut u8, bool) {
        let (c, bytes) = class_of(size);
        // SAFETY: the caller is the owner thread, the only one touching the state.
        let s = unsafe { &mut *STATE.0.get() };
        let head = s.free[c];
        if head != 0 {
            // SAFETY: `head` is a free block of class `c` whose first word was written by
            // `give` (blocks are at least sixteen bytes and sixteen-byte aligned).
            s.free[c] = unsafe { *(head as *const usize) };
            return (head as *mut u8, false);
        }
        if s.end - s.next < bytes {
            return (std::ptr::null_mut(), false);
        }
        let p = s.next;
        s.next += bytes;
        (p as *mut u8, true)
    }

    /// Grows the arena block at `ptr` from `old` to `new` class bytes where it stands, when
    /// it is the last block the bump pointer handed out and the reservation has room (a
    /// vector growing while nothing else is allocated: no copy). Never shrinks: the bytes
    /// past the bump pointer must stay untouched (zero).
    ///
    /// # Safety
    /// `ptr` must be an arena block of `old` class bytes that the caller owns.
    unsafe fn grow_last(ptr: *mut u8, old: usize, new: usize) -> bool {
        if !OWNER.with(Cell::get) {
            return false;
        }
        // SAFETY: this is the owner thread, the only one touching the state.
        let s = unsafe { &mut *STATE.0.get() };
        let p = ptr as usize;
        if p + old != s.next || s.end - p < new {
            return false;
        }
        s.next = p + new;
        true
    }

    /// Returns an arena block of `size` bytes to its class.
    ///
    /// # Safety
    /// Only on the owner thread, with a block `take` handed out for the same class and not
    /// returned since.
    unsafe fn give(ptr: *mut u8, size: usize) {
        let (c, _) = class_of(size);
        // SAFETY: the caller is the owner thread; the block is the caller's to give back,
        // at least one aligned word long.
        unsafe {
            let s = &mut *STATE.0.get();
            *(ptr as *mut usize) = s.free[c];
            s.free[c] = ptr as usize;
        }
    }
}

// SAFETY: every block is either glibc's (handed out and freed by `System`) or the arena's
// (in the reserved range, sixteen-byte aligned, at least as large as its layout, handed out
// once until given back); `dealloc` and `realloc` tell them apart by address.
unsafe impl GlobalAlloc for Alloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if served(layout) {
            // SAFETY: `served` checked that this is the owner thread.
            let (p, _) = unsafe { Self::take(layout.size()) };
            if !p.is_null() {
                return p;
            }
        }
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if served(layout) {
            // SAFETY: `served` checked that this is the owner thread.
            let (p, fresh) = unsafe { Self::take(layout.size()) };
            if !p.is_null() {
                if !fresh {
                    // SAFETY: the block is at least `layout.size()` bytes, now the caller's.
                    unsafe { p.write_bytes(0, layout.size()) };
                }
                return p;
            }
        }
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if in_arena(ptr) {
            if OWNER.with(Cell::get) {
                // SAFETY: an arena block freed by its owner thread with the layout it was
                // allocated with (the caller's contract), so of the same class.
                unsafe { Self::give(ptr, layout.size()) };
            }
            return;
        }
        // SAFETY: a glibc block, with the caller's layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !in_arena(ptr) {
            // SAFETY: a glibc block, with the caller's layout and size.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        if new_size <= MAX_SMALL {
            let (old_class, old_bytes) = class_of(layout.size());
            let (new_class, new_bytes) = class_of(new_size);
            if new_class == old_class {
                return ptr;
            }
            // SAFETY: `grow_last` checks that this is the owner thread.
            if new_class > old_class && unsafe { Self::grow_last(ptr, old_bytes, new_bytes) } {
                return ptr;
            }
        }
        // SAFETY: `new_size` with the old alignment is a valid layout (the caller's
        // contract for `realloc`).
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: a non-zero layout (the caller's contract).
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks are valid for the smaller of the two sizes and distinct
            // (the old one is still allocated); the old one is freed once copied.
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_cover_every_small_size_in_order() {
        let mut last = (0, 0);
        for size in 1..=MAX_SMALL {
            let (c, bytes) = class_of(size);
            assert!(bytes >= size, "size {size}: class {c} of {bytes} bytes");
            assert_eq!(bytes % ALIGN, 0, "size {size}");
            assert!(c < CLASSES, "size {size}: class {c}");
            assert!(
                c >= last.0 && (c > last.0 || bytes == last.1),
                "size {size}"
            );
            // At most a quarter (or fifteen bytes) wasted.
            assert!(
                bytes - size < ALIGN || (bytes - size) * 4 <= size,
                "size {size}"
            );
            last = (c, bytes);
        }
        assert_eq!(class_of(MAX_SMALL), (CLASSES - 1, MAX_SMALL));
    }

    /// The arena on this test's thread: blocks of every class written whole, freed in a
    /// mixed order and handed out again, zeroed blocks zero, vectors grown through the
    /// class boundary into glibc and back, and blocks freed on another thread.
    #[test]
    fn arena_blocks_are_distinct_aligned_zeroed_and_reused() {
        enable();
        assert!(OWNER.with(Cell::get), "the reservation failed");
        let mut blocks: Vec<(Vec<u8>, u8)> = Vec::new();
        for round in 0..3u8 {
            for size in (1..2048)
                .step_by(7)
                .chain((2048..=MAX_SMALL + 64).step_by(997))
            {
                let fill = (size as u8) ^ round;
                let v = vec![fill; size];
                assert_eq!(v.as_ptr() as usize % ALIGN, 0);
                blocks.push((v, fill));
            }
            // Free every other block, then check the rest were not overwritten.
            let mut i = 0;
            blocks.retain(|_| {
                i += 1;
                i % 2 == 0
            });
            for (v, fill) in &blocks {
                assert!(v.iter().all(|b| b == fill));
            }
            for size in [1usize, 17, 100, 1000, 5000, 30000] {
                let z = vec![0u8; size];
                assert!(z.iter().all(|&b| b == 0), "zeroed block of {size}");
            }
        }
        let mut grown: Vec<u32> = Vec::new();
        for i in 0..20_000u32 {
            grown.push(i);
        }
        assert!(grown.iter().enumerate().all(|(i, &v)| v == i as u32));
        grown.truncate(10);
        grown.shrink_to_fit();
        assert_eq!(grown, (0..10).collect::<Vec<u32>>());
        let moved = vec![7u8; 300];
        let back = std::thread::spawn(move || {
            let mut other = vec![1u8; 300];
            other.extend_from_slice(&moved);
            drop(moved);
            other
        })
        .join()
        .unwrap();
        assert_eq!(back.len(), 600);
        assert!(back[..300].iter().all(|&b| b == 1) && back[300..].iter().all(|&b| b == 7));
        for (v, fill) in &blocks {
            assert!(v.iter().all(|b| b == fill));
        }
    }
}

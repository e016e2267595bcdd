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

    // The arena can be switched on once per process, and `cargo test` runs this crate's
    // tests in one process on several threads: every test that needs the arena is a part
    // of `arena_under_one_owner`, which runs them in order on one thread that owns it.

    /// The one test that switches the arena on: its parts run in order on a dedicated
    /// thread, the arena's owner, whose exit (thread-local destructors allocating) is
    /// checked from here.
    #[test]
    fn arena_under_one_owner() {
        let (tx, rx) = std::sync::mpsc::channel::<ExitReport>();
        std::thread::Builder::new()
            .name("arena-owner".into())
            .spawn(move || {
                enable();
                assert!(OWNER.with(Cell::get), "the reservation failed");
                blocks_are_distinct_aligned_zeroed_and_reused();
                differential_on_the_owner(0x5EED_0001, 8_000);
                differential_on_the_owner(0x5EED_0002, 3_000);
                stress_with_threads();
                lifecycle();
                // The owner's own exit: its thread-local destructor allocates and frees.
                ON_EXIT.with(|e| *e.borrow_mut() = Some(OnExit::new(tx, 1 << 60)));
            })
            .unwrap()
            .join()
            .unwrap();
        let report = rx
            .recv()
            .expect("the owner's thread-local destructor never ran");
        report.check(true);
        assert!(rx.recv().is_err());
    }

    /// xorshift64*: the tests' seeded sequence.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.0 = x;
            x.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        /// A number in `0..n`.
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// Word `w` (bytes `8w..8w+8`) of block `id`'s pattern: distinct for every block
    /// and every offset.
    fn word(id: u64, w: usize) -> u64 {
        let x =
            id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (w as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93);
        x ^ (x >> 29)
    }

    /// Byte `i` of block `id`'s pattern.
    fn pat(id: u64, i: usize) -> u8 {
        (word(id, i / 8) >> (i % 8 * 8)) as u8
    }

    /// Writes block `id`'s pattern from byte `from` on (a word at a time: the tests run
    /// in debug builds too).
    fn fill(s: &mut [u8], id: u64, from: usize) {
        let head = from.next_multiple_of(8).min(s.len());
        for (i, b) in s.iter_mut().enumerate().take(head).skip(from) {
            *b = pat(id, i);
        }
        let tail = head + (s.len() - head) / 8 * 8;
        for (k, c) in s[head..tail].chunks_exact_mut(8).enumerate() {
            c.copy_from_slice(&word(id, head / 8 + k).to_le_bytes());
        }
        for (i, b) in s.iter_mut().enumerate().skip(tail) {
            *b = pat(id, i);
        }
    }

    fn check(s: &[u8], id: u64, what: &str) {
        let words = s.chunks_exact(8);
        let tail = s.len() - words.remainder().len();
        let same = words
            .enumerate()
            .all(|(k, c)| u64::from_le_bytes(c.try_into().unwrap()) == word(id, k))
            && (tail..s.len()).all(|i| s[i] == pat(id, i));
        if same {
            return;
        }
        let i = (0..s.len()).find(|&i| s[i] != pat(id, i)).unwrap();
        panic!(
            "{what}: block {id:#x} of {} bytes at {:p}: byte {i} is {:#04x}, not {:#04x}",
            s.len(),
            s.as_ptr(),
            s[i],
            pat(id, i)
        );
    }

    fn arena_ptr(p: *const u8) -> bool {
        in_arena(p as *mut u8)
    }

    /// The bump pointer (owner thread only).
    fn bump() -> usize {
        // SAFETY: called on the owner thread, the only one touching the state.
        unsafe { (*STATE.0.get()).next }
    }

    /// The arena on its owner thread: blocks of every class written whole, freed in a
    /// mixed order and handed out again, zeroed blocks zero, vectors grown through the
    /// class boundary into glibc and back, and blocks freed on another thread.
    fn blocks_are_distinct_aligned_zeroed_and_reused() {
        let mut blocks: Vec<(Vec<u8>, u8)> = Vec::new();
        for round in 0..3u8 {
            for size in (1..2048)
                .step_by(7)
                .chain((2048..=MAX_SMALL + 64).step_by(997))
            {
                let fill = (size as u8) ^ round;
                let v = vec![fill; size];
                assert_eq!(v.as_ptr() as usize % ALIGN, 0);
                assert_eq!(arena_ptr(v.as_ptr()), size <= MAX_SMALL, "size {size}");
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
        let moved_at = moved.as_ptr();
        let back = std::thread::spawn(move || {
            let mut other = vec![1u8; 300];
            other.extend_from_slice(&moved);
            drop(moved);
            other
        })
        .join()
        .unwrap();
        assert_eq!(back.len(), 600);
        // A block freed on another thread is left unused, never handed out again.
        let again = vec![9u8; 300];
        assert_ne!(
            again.as_ptr(),
            moved_at,
            "a block freed on another thread reused"
        );
        assert!(back[..300].iter().all(|&b| b == 1) && back[300..].iter().all(|&b| b == 7));
        for (v, fill) in &blocks {
            assert!(v.iter().all(|b| b == fill));
        }
    }

    /// A size drawn across every class, the class edges, [`MAX_SMALL`]'s edge and beyond.
    fn draw_size(r: &mut Rng) -> usize {
        match r.below(20) {
            0..=10 => 1 + r.below(1024),
            11..=14 => {
                let p = 10 + r.below(5);
                (1 << p) + 1 + r.below(1 << p)
            }
            15 | 16 => {
                let (_, bytes) = class_of(1 + r.below(MAX_SMALL));
                (bytes + r.below(3)).saturating_sub(1).max(1)
            }
            17 => MAX_SMALL - 2 + r.below(5),
            _ => MAX_SMALL + 1 + r.below(MAX_SMALL),
        }
    }

    /// The largest size below class `c` (`1..CLASSES`): the class holds sizes
    /// `class_floor(c) + 1 ..= class_of(..).1`.
    fn class_floor(c: usize) -> usize {
        if c <= 64 {
            return (c - 1) * ALIGN;
        }
        let (p, i) = (10 + (c - 65) / 4, (c - 65) % 4);
        (1 << p) + i * (1 << (p - 2))
    }

    #[test]
    fn class_floors_bound_the_classes() {
        for c in 1..CLASSES {
            let lo = class_floor(c);
            assert_eq!(class_of(lo + 1).0, c, "class {c}");
            if lo > 0 {
                assert_eq!(class_of(lo).0, c - 1, "class {c}");
            }
        }
    }

    /// Mostly the alignments `Vec` asks for; one in six beyond the arena's.
    fn draw_align(r: &mut Rng) -> usize {
        match r.below(12) {
            0..=9 => 1 << r.below(5),
            10 => 32 << r.below(3),
            _ => 4096,
        }
    }

    /// A live block of the differential test.
    struct Live {
        ptr: *mut u8,
        size: usize,
        align: usize,
        id: u64,
    }

    /// How far the block at `ptr` of `size` bytes may be written by the allocator's
    /// accounting: its class's bytes in the arena, its size elsewhere.
    fn extent(ptr: *mut u8, size: usize) -> (usize, usize) {
        let p = ptr as usize;
        if arena_ptr(ptr) {
            (p, p + class_of(size).1)
        } else {
            (p, p + size)
        }
    }

    /// The live blocks' extents, sorted, with room reserved so that keeping them makes no
    /// allocation between the operations under test.
    struct Extents(Vec<(usize, usize)>);

    impl Extents {
        /// A live extent that overlaps `a..b`.
        fn overlap(&self, (a, b): (usize, usize)) -> Option<(usize, usize)> {
            let i = self.0.partition_point(|&(x, _)| x < b);
            (i > 0 && self.0[i - 1].1 > a).then(|| self.0[i - 1])
        }

        fn insert(&mut self, (a, b): (usize, usize)) {
            let i = self.0.partition_point(|&(x, _)| x < a);
            if i > 0 {
                assert!(
                    self.0[i - 1].1 <= a,
                    "{a:#x}..{b:#x} overlaps {:x?}",
                    self.0[i - 1]
                );
            }
            if i < self.0.len() {
                assert!(b <= self.0[i].0, "{a:#x}..{b:#x} overlaps {:x?}", self.0[i]);
            }
            assert!(self.0.len() < self.0.capacity());
            self.0.insert(i, (a, b));
        }

        fn remove(&mut self, (a, b): (usize, usize)) {
            let i = self.0.partition_point(|&(x, _)| x < a);
            assert_eq!(self.0.get(i), Some(&(a, b)));
            self.0.remove(i);
        }
    }

    /// Which paths the differential test reached (each must be reached).
    #[derive(Default, Debug)]
    struct Reached {
        fresh: usize,
        reused: usize,
        zeroed_reused: usize,
        glibc: usize,
        same_class: usize,
        grown_in_place: usize,
        moved_up: usize,
        moved_down: usize,
        out_of_arena: usize,
        into_arena_refused: usize,
    }

    /// A long seeded sequence of the `GlobalAlloc` methods called on `Alloc` on the owner
    /// thread: every block filled with its own pattern and checked before each free and
    /// realloc and at the end, zeroed blocks checked zero, alignments checked, which
    /// allocator served each block checked, the extents of live blocks checked disjoint,
    /// in-place growth predicted from the bump pointer, and the bytes past the bump pointer
    /// checked zero.
    fn differential_on_the_owner(seed: u64, ops: usize) {
        const LIVE: usize = 700;
        let mut r = Rng(seed);
        let mut live: Vec<Live> = Vec::with_capacity(LIVE + 1);
        let mut ext = Extents(Vec::with_capacity(LIVE + 2));
        let mut reached = Reached::default();
        let mut next_id = seed << 20;
        let a = &Alloc;
        for op in 0..ops {
            let k = if live.len() >= LIVE {
                90
            } else if live.is_empty() {
                0
            } else {
                r.below(100)
            };
            match k {
                // alloc and alloc_zeroed.
                0..=44 => {
                    let zeroed = k >= 33;
                    let (size, align) = (draw_size(&mut r), draw_align(&mut r));
                    let layout = Layout::from_size_align(size, align).unwrap();
                    let before = bump();
                    // SAFETY: a non-zero layout.
                    let p = unsafe {
                        if zeroed {
                            a.alloc_zeroed(layout)
                        } else {
                            a.alloc(layout)
                        }
                    };
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "{layout:?}");
                    let arena = size <= MAX_SMALL && align <= ALIGN;
                    assert_eq!(arena_ptr(p), arena, "{layout:?} at {p:p}");
                    if arena {
                        assert!((p as usize) + class_of(size).1 <= bump());
                        if (p as usize) < before {
                            reached.reused += 1;
                            reached.zeroed_reused += zeroed as usize;
                        } else {
                            assert_eq!(p as usize, before, "a fresh block at the bump pointer");
                            reached.fresh += 1;
                        }
                    } else {
                        reached.glibc += 1;
                    }
                    // SAFETY: `p` is a new block of `size` bytes.
                    let s = unsafe { std::slice::from_raw_parts_mut(p, size) };
                    if zeroed {
                        assert!(s.iter().all(|&b| b == 0), "zeroed {layout:?} at {p:p}");
                    }
                    ext.insert(extent(p, size));
                    next_id += 1;
                    fill(s, next_id, 0);
                    live.push(Live {
                        ptr: p,
                        size,
                        align,
                        id: next_id,
                    });
                }
                // realloc: a random block, or the last one pushed (often the bump
                // pointer's last block), to a size in the same class, a larger or smaller
                // one, or across `MAX_SMALL`.
                45..=79 => {
                    let i = if k >= 70 {
                        live.len() - 1
                    } else {
                        r.below(live.len())
                    };
                    let b = &live[i];
                    let (c, bytes) = class_of(b.size.min(MAX_SMALL));
                    let new_size = match r.below(5) {
                        0 if b.size <= MAX_SMALL => {
                            // Same class: anywhere in (class_floor(c), bytes].
                            let lo = class_floor(c);
                            lo + 1 + r.below(bytes - lo)
                        }
                        1 | 2 if k >= 70 => b.size + 1 + r.below(2 * b.size + 64),
                        1 => b.size + 1 + r.below(b.size + 16),
                        2 => 1 + r.below(b.size),
                        _ => draw_size(&mut r),
                    };
                    // SAFETY: the block's own bytes.
                    check(
                        unsafe { std::slice::from_raw_parts(b.ptr, b.size) },
                        b.id,
                        "before realloc",
                    );
                    let layout = Layout::from_size_align(b.size, b.align).unwrap();
                    let was_arena = arena_ptr(b.ptr);
                    let last = was_arena && b.ptr as usize + bytes == bump();
                    let old_ext = extent(b.ptr, b.size);
                    // SAFETY: a live block with its layout, a non-zero new size.
                    let p = unsafe { a.realloc(b.ptr, layout, new_size) };
                    assert!(!p.is_null());
                    assert_eq!(p as usize % b.align, 0);
                    let small = new_size <= MAX_SMALL;
                    assert_eq!(
                        arena_ptr(p),
                        was_arena && small,
                        "realloc {layout:?} to {new_size}"
                    );
                    if was_arena && small {
                        let nc = class_of(new_size).0;
                        if nc == c {
                            assert_eq!(p, b.ptr, "same class, same block");
                            reached.same_class += 1;
                        } else if nc > c && last {
                            assert_eq!(p, b.ptr, "the last block grows in place");
                            reached.grown_in_place += 1;
                        } else {
                            assert_ne!(p, b.ptr, "{c} -> {nc}, not the last block");
                            if nc > c {
                                reached.moved_up += 1;
                            } else {
                                reached.moved_down += 1;
                            }
                        }
                    } else if was_arena {
                        reached.out_of_arena += 1;
                    } else if small && b.align <= ALIGN {
                        reached.into_arena_refused += 1;
                    }
                    ext.remove(old_ext);
                    ext.insert(extent(p, new_size));
                    // SAFETY: the block now holds `new_size` bytes.
                    let s = unsafe { std::slice::from_raw_parts_mut(p, new_size) };
                    let keep = b.size.min(new_size);
                    check(&s[..keep], b.id, "kept by realloc");
                    fill(s, b.id, keep);
                    let b = &mut live[i];
                    b.ptr = p;
                    b.size = new_size;
                }
                // dealloc.
                _ => {
                    let b = live.swap_remove(r.below(live.len()));
                    // SAFETY: the block's own bytes.
                    check(
                        unsafe { std::slice::from_raw_parts(b.ptr, b.size) },
                        b.id,
                        "before dealloc",
                    );
                    ext.remove(extent(b.ptr, b.size));
                    // SAFETY: a live block with its layout.
                    unsafe { a.dealloc(b.ptr, Layout::from_size_align(b.size, b.align).unwrap()) };
                }
            }
            if op % 97 == 0 {
                // Past the bump pointer, untouched: zero.
                let n = bump();
                let len = (END.load(Ordering::Relaxed) - n).min(4096);
                // SAFETY: reserved, readable memory that no block covers.
                let s = unsafe { std::slice::from_raw_parts(n as *const u8, len) };
                assert!(s.iter().all(|&b| b == 0), "a byte past the bump pointer");
                // Every free block in the reservation below the bump pointer, aligned, its
                // class's extent clear of every live block.
                for c in 1..CLASSES {
                    let bytes = class_of(class_floor(c) + 1).1;
                    // SAFETY: the owner thread reads the state.
                    let mut f = unsafe { (*STATE.0.get()).free[c] };
                    // No more blocks than the class could have handed out: no cycle.
                    let mut room = (n - BASE.load(Ordering::Relaxed)) / bytes;
                    while f != 0 {
                        assert!(room > 0, "a cycle in the free list of class {c}");
                        room -= 1;
                        assert!(f >= BASE.load(Ordering::Relaxed) && f + bytes <= n);
                        assert_eq!(f % ALIGN, 0);
                        if let Some(e) = ext.overlap((f, f + bytes)) {
                            panic!("free block {f:#x} of class {c} overlaps live {e:x?}");
                        }
                        // SAFETY: a free block's first word links to the next.
                        f = unsafe { *(f as *const usize) };
                    }
                }
            }
        }
        for b in live.drain(..) {
            // SAFETY: the block's own bytes; then freed with its layout.
            unsafe {
                check(
                    std::slice::from_raw_parts(b.ptr, b.size),
                    b.id,
                    "at the end",
                );
                a.dealloc(b.ptr, Layout::from_size_align(b.size, b.align).unwrap());
            }
        }
        let n = &reached;
        assert!(
            [
                n.fresh,
                n.reused,
                n.zeroed_reused,
                n.glibc,
                n.same_class,
                n.grown_in_place,
                n.moved_up,
                n.moved_down,
                n.out_of_arena,
                n.into_arena_refused,
            ]
            .iter()
            .all(|&n| n > 0),
            "a path never reached: {reached:?}"
        );
    }

    /// A block and the id of its pattern, sent between threads.
    type Tagged = (u64, Vec<u8>);

    fn tagged(id: u64, size: usize) -> Tagged {
        let mut v = vec![0u8; size];
        fill(&mut v, id, 0);
        (id, v)
    }

    /// Resizes a block through `realloc` (`Vec::reserve_exact` grows it, `shrink_to_fit`
    /// shrinks it) on any thread, checks where the result lives, and refills it.
    fn resize(t: &mut Tagged, new_size: usize, owner: bool) {
        let (id, v) = t;
        check(v, *id, "before resize");
        let (old_ptr, old_size) = (v.as_ptr(), v.capacity());
        let was_arena = arena_ptr(old_ptr);
        if new_size > old_size {
            v.reserve_exact(new_size - old_size);
            v.resize(new_size, 0);
        } else {
            v.truncate(new_size);
            v.shrink_to_fit();
        }
        assert_eq!(v.capacity(), new_size);
        let same_class = new_size <= MAX_SMALL && class_of(new_size).0 == class_of(old_size).0;
        if was_arena && same_class {
            assert_eq!(v.as_ptr(), old_ptr, "same class, same block");
        }
        let arena = was_arena && (same_class || (owner && new_size <= MAX_SMALL));
        assert_eq!(
            arena_ptr(v.as_ptr()),
            arena,
            "{old_size} -> {new_size}, owner {owner}"
        );
        let keep = old_size.min(new_size);
        check(&v[..keep], *id, "kept by resize");
        fill(v, *id, keep);
    }

    /// One of the stress test's other threads: checks the arena blocks it receives,
    /// rewrites them, resizes some (in place within their class, else into glibc), frees
    /// some, keeps some to the end, sends some back to the owner, and allocates its own,
    /// which must be glibc's.
    fn worker(
        w: u64,
        rx: std::sync::mpsc::Receiver<Tagged>,
        back: std::sync::mpsc::Sender<Tagged>,
        freed: std::sync::mpsc::Sender<(usize, usize)>,
    ) -> Vec<Tagged> {
        // The arena blocks this thread frees, to check the owner never hands them out.
        let dropped = |t: Tagged| {
            if arena_ptr(t.1.as_ptr()) {
                freed.send((t.1.as_ptr() as usize, t.1.capacity())).unwrap();
            }
        };
        let mut r = Rng(0xC0FFEE + w);
        let mut held: Vec<Tagged> = Vec::new();
        let mut own_id = (w + 1) << 56;
        while let Ok((id, mut v)) = rx.recv() {
            check(&v, id, "received by a thread");
            assert!(arena_ptr(v.as_ptr()), "sent from the arena");
            let nid = id | (w + 1) << 52;
            fill(&mut v, nid, 0);
            let mut t = (nid, v);
            if r.below(3) == 0 {
                let size = t.1.len();
                let new_size = match r.below(3) {
                    0 => {
                        class_floor(class_of(size).0)
                            + 1
                            + r.below(class_of(size).1 - class_floor(class_of(size).0))
                    }
                    1 => size + 1 + r.below(2 * size),
                    _ => 1 + r.below(size),
                };
                resize(&mut t, new_size, false);
            }
            own_id += 1;
            let mine = tagged(own_id, draw_size(&mut r));
            assert!(
                !arena_ptr(mine.1.as_ptr()),
                "another thread's block from the arena"
            );
            match r.below(6) {
                0 => back.send(t).unwrap(),
                1 => held.push(t),
                _ => dropped(t),
            }
            match r.below(4) {
                0 => back.send(mine).unwrap(),
                1 => held.push(mine),
                _ => check(&mine.1, mine.0, "a thread's own block"),
            }
            if held.len() > 40 {
                let t = held.swap_remove(r.below(held.len()));
                check(&t.1, t.0, "held by a thread");
                dropped(t);
            }
        }
        held
    }

    /// The owner allocating and freeing in a loop while three threads receive its blocks
    /// over channels, check, rewrite, resize and free them, send some back to be freed on
    /// the owner, and keep some until after the owner has reused its free lists again.
    fn stress_with_threads() {
        use std::sync::mpsc;
        const WORKERS: u64 = 3;
        const ROUNDS: u64 = 3_000;
        let (back_tx, back_rx) = mpsc::channel::<Tagged>();
        let (freed_tx, freed_rx) = mpsc::channel::<(usize, usize)>();
        let mut txs = Vec::new();
        let mut workers = Vec::new();
        for w in 0..WORKERS {
            let (tx, rx) = mpsc::channel::<Tagged>();
            let (back, freed) = (back_tx.clone(), freed_tx.clone());
            workers.push(std::thread::spawn(move || worker(w, rx, back, freed)));
            txs.push(tx);
        }
        drop((back_tx, freed_tx));
        let mut r = Rng(0xFEED);
        let mut mine: Vec<Tagged> = Vec::new();
        let mut kept: Vec<Tagged> = Vec::new();
        let mut returned = 0usize;
        let mut take_back = |t: Tagged, r: &mut Rng, kept: &mut Vec<Tagged>| {
            check(&t.1, t.0, "sent back to the owner");
            returned += 1;
            let mut t = t;
            if r.below(3) == 0 {
                let new_size = draw_size(r);
                resize(&mut t, new_size, true);
            }
            if r.below(4) == 0 {
                kept.push(t);
            }
        };
        for i in 0..ROUNDS {
            let size = if r.below(8) == 0 {
                1 + r.below(MAX_SMALL)
            } else {
                1 + r.below(512)
            };
            let t = tagged(i, size);
            assert!(arena_ptr(t.1.as_ptr()));
            txs[(i % WORKERS) as usize].send(t).unwrap();
            // The owner's own churn, reusing its free lists while the others hold blocks.
            for _ in 0..2 {
                if mine.len() > 64 || (!mine.is_empty() && r.below(2) == 0) {
                    let t = mine.swap_remove(r.below(mine.len()));
                    check(&t.1, t.0, "the owner's own block");
                } else {
                    mine.push(tagged((1 << 62) | i, draw_size(&mut r)));
                }
            }
            while let Ok(t) = back_rx.try_recv() {
                take_back(t, &mut r, &mut kept);
            }
        }
        drop(txs);
        while let Ok(t) = back_rx.recv() {
            take_back(t, &mut r, &mut kept);
        }
        assert!(returned > 0);
        let held: Vec<Tagged> = workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect();
        // Every free list handed out again before the last checks.
        // The blocks freed on the other threads stay unused: blocks of their sizes
        // allocated now come from elsewhere.
        let freed: Vec<(usize, usize)> = freed_rx.iter().collect();
        assert!(freed.len() > 100);
        let freed_at: std::collections::HashSet<usize> = freed.iter().map(|f| f.0).collect();
        let same_sizes: Vec<Tagged> = freed
            .iter()
            .enumerate()
            .map(|(i, &(_, size))| tagged((7 << 60) | i as u64, size))
            .collect();
        for t in &same_sizes {
            assert!(
                !freed_at.contains(&(t.1.as_ptr() as usize)),
                "a block freed on another thread handed out again"
            );
        }
        let refill: Vec<Tagged> = (0..2000)
            .map(|i| tagged((3 << 61) | i, draw_size(&mut r)))
            .collect();
        for (what, set) in [
            ("held by a thread", &held),
            ("kept by the owner", &kept),
            ("the owner's own", &mine),
            ("refill", &refill),
            ("sized as the freed", &same_sizes),
        ] {
            for t in set {
                check(&t.1, t.0, what);
            }
        }
    }

    /// What a thread-local destructor saw and allocated on its thread's way out.
    struct ExitReport {
        owner: bool,
        gift: Tagged,
        gift_in_arena: bool,
        made: Tagged,
        made_in_arena: bool,
        zeroed: Vec<u8>,
        text: String,
    }

    impl ExitReport {
        /// Checks the report of a thread that was (or was not) the owner.
        fn check(&self, owner: bool) {
            assert_eq!(self.owner, owner);
            check(&self.gift.1, self.gift.0, "a gift checked on the way out");
            assert!(self.gift_in_arena);
            check(&self.made.1, self.made.0, "a block made on the way out");
            assert_eq!(self.made_in_arena, owner);
            assert!(self.zeroed.iter().all(|&b| b == 0));
            assert_eq!(self.text, format!("thread exit {:#x}", self.made.0));
        }
    }

    /// A thread-local value whose destructor allocates, frees and reports.
    struct OnExit {
        tx: std::sync::mpsc::Sender<ExitReport>,
        gift: Tagged,
        id: u64,
    }

    impl OnExit {
        /// With a gift: an arena block (the owner's, or made here on the owner).
        fn new(tx: std::sync::mpsc::Sender<ExitReport>, id: u64) -> Self {
            let gift = tagged(id, 100 + (id as usize % 900));
            OnExit { tx, gift, id }
        }
    }

    impl Drop for OnExit {
        fn drop(&mut self) {
            // Allocations and frees while the thread's locals are being destroyed; no
            // assertion here (a panic in a destructor aborts): the receiver checks.
            let mut churn: Vec<Tagged> = (0..50)
                .map(|i| tagged(self.id + 1 + i, 1 + i as usize * 37))
                .collect();
            churn.retain(|t| t.0 % 2 == 0);
            let made = tagged(self.id + 1000, 700);
            let made_in_arena = arena_ptr(made.1.as_ptr());
            let gift = std::mem::take(&mut self.gift);
            let gift_in_arena = arena_ptr(gift.1.as_ptr());
            let zeroed = vec![0u8; 5000];
            let text = format!("thread exit {:#x}", made.0);
            drop(churn);
            let _ = self.tx.send(ExitReport {
                owner: OWNER.with(Cell::get),
                gift,
                gift_in_arena,
                made,
                made_in_arena,
                zeroed,
                text,
            });
        }
    }

    thread_local! {
        static ON_EXIT: std::cell::RefCell<Option<OnExit>> = const { std::cell::RefCell::new(None) };
    }

    /// `enable` again (on the owner and on another thread) changes nothing; threads that
    /// start and exit while the arena is on, allocating and freeing in their thread-local
    /// destructors and freeing an arena block there, leave the arena's blocks intact.
    fn lifecycle() {
        let (base, end, next) = (
            BASE.load(Ordering::Relaxed),
            END.load(Ordering::Relaxed),
            bump(),
        );
        enable();
        assert!(OWNER.with(Cell::get));
        assert_eq!(
            (
                BASE.load(Ordering::Relaxed),
                END.load(Ordering::Relaxed),
                bump()
            ),
            (base, end, next)
        );
        let v = Box::new([3u8; 64]);
        assert!(arena_ptr(v.as_ptr()));
        std::thread::spawn(|| {
            enable();
            assert!(!OWNER.with(Cell::get));
            let v = Box::new([4u8; 64]);
            assert!(!arena_ptr(v.as_ptr()));
        })
        .join()
        .unwrap();
        assert_eq!(
            (BASE.load(Ordering::Relaxed), END.load(Ordering::Relaxed)),
            (base, end)
        );
        let (tx, rx) = std::sync::mpsc::channel::<ExitReport>();
        let mut keep: Vec<Tagged> = Vec::new();
        for round in 0..4u64 {
            let threads: Vec<_> = (0..6u64)
                .map(|k| {
                    let id = (5 << 60) | round << 16 | k << 8;
                    let on_exit = OnExit::new(tx.clone(), id);
                    assert!(arena_ptr(on_exit.gift.1.as_ptr()));
                    std::thread::spawn(move || {
                        ON_EXIT.with(|e| *e.borrow_mut() = Some(on_exit));
                        let mut v: Vec<u64> = (0..1000).collect();
                        v.retain(|x| x % 3 == 0);
                        v.len()
                    })
                })
                .collect();
            // The owner allocates while they start and exit.
            for i in 0..200 {
                keep.push(tagged(
                    (6 << 60) | round << 16 | i,
                    1 + (i as usize * 53) % 3000,
                ));
            }
            for t in threads {
                assert_eq!(t.join().unwrap(), 334);
            }
        }
        drop(tx);
        let reports: Vec<ExitReport> = rx.iter().collect();
        assert_eq!(reports.len(), 24);
        for report in &reports {
            report.check(false);
        }
        for t in &keep {
            check(&t.1, t.0, "the owner's blocks while threads came and went");
        }
    }
}

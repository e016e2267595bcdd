//! glibc's allocator set up for `arbiter build`: the one place the command line uses
//! `unsafe` (a single FFI call), for a measured gain in peak memory.

#![allow(unsafe_code)]

/// glibc's default mmap threshold: blocks of this size or more are mapped on their own
/// and unmapped when freed.
const MMAP_THRESHOLD: i32 = 128 * 1024;

/// Fixes glibc's mmap threshold at its default, which switches off its dynamic
/// adjustment. Why: `build --store` decompresses the store's modules on reader threads
/// into texts of up to 4 MB and frees each once parsed. glibc raises the threshold to
/// the size of every mapped block freed (up to 32 MB), so after the first large text the
/// later texts and the compiler's growing tables come from the threads' heaps, whose
/// freed middles stay resident. Measured on Debian's default store (`build --store -n`,
/// copied root): peak RSS 60.2–60.8 MB, against 45.0–45.5 MB with the threshold fixed, at
/// the same CPU time (1.06–1.09 s against 1.00–1.03 s); how much stayed resident depended
/// on the order in which the threads freed their texts, which is why the figure moved
/// between runs (59.9 and 64.8 MB on an idle machine) with no change to the store code.
/// `build` on files, whose compile takes its small blocks from the `arena` (glibc serves its
/// texts, tables and large vectors), gains 0.6 MB on the Debian store (`-N`: 43.4 against
/// 44.0 MB, three runs each); a small build pays 0.13 M instructions and 33 page faults for
/// it (`bench.cil`, 28.46 against 28.59 M with glibc's dynamic threshold).
pub(crate) fn fix_mmap_threshold() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `mallopt` only changes the allocator's parameters (glibc takes its lock);
        // M_MMAP_THRESHOLD with a value under its maximum is accepted and affects only
        // later allocations, never memory already handed out.
        let set = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD) };
        // 0 means refused: the defaults stay, which is only a question of memory.
        let _ = set;
    }
}

//! The main thread's stack limit, raised for `arbiter build` to compile on the main
//! thread: the one other place the command line uses `unsafe` (two FFI calls).

#![allow(unsafe_code)]

/// Whether the calling thread, which must be the process's main thread, may use `need`
/// bytes of stack: the soft `RLIMIT_STACK` allows it, or is raised to `need` (up to the
/// hard limit). The main thread's stack grows on demand up to the soft limit as it is
/// when the stack grows, and the kernel keeps at least 128 MB below it free of other
/// mappings (`mmap_base`), so a limit of up to 128 MB raised after start is usable.
pub(crate) fn main_stack_allows(need: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        let need = need as libc::rlim_t;
        if need > 128 << 20 {
            return false;
        }
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `getrlimit` writes one `rlimit` into the struct it is given, which lives
        // on this frame for the whole call.
        if unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut lim) } != 0 {
            return false;
        }
        if lim.rlim_cur == libc::RLIM_INFINITY || lim.rlim_cur >= need {
            return true;
        }
        if lim.rlim_max != libc::RLIM_INFINITY && lim.rlim_max < need {
            return false;
        }
        let raised = libc::rlimit {
            rlim_cur: need,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: `setrlimit` reads the struct it is given; raising the soft limit up to
        // the hard one changes no memory of this process, only how far the stack may grow.
        unsafe { libc::setrlimit(libc::RLIMIT_STACK, &raised) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = need;
        false
    }
}

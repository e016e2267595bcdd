//! The real kernel: `statx` for inode and mount identity, the three Landlock syscalls, and
//! the fork-and-report helper and operations the kernel differential test runs. This is the
//! crate's only module with `unsafe`; each block says why it is sound.

use crate::access::{AccessFs, AccessNet, Scopes};
use crate::object::InodeKey;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

const SYS_CREATE_RULESET: libc::c_long = 444;
const SYS_ADD_RULE: libc::c_long = 445;
const SYS_RESTRICT_SELF: libc::c_long = 446;
const CREATE_RULESET_VERSION: u32 = 1;
const RULE_PATH_BENEATH: libc::c_int = 1;
const RULE_NET_PORT: libc::c_int = 2;

/// What `statx` says about one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    /// Inode identity.
    pub key: InodeKey,
    /// `st_mode`.
    pub mode: u32,
    /// The mount the path resolves in (`stx_mnt_id`, the IDs of `/proc/self/mountinfo`).
    pub mnt_id: u64,
}

fn cpath(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

/// `statx(path)`, following the last symlink or not.
pub fn stat(path: &Path, follow: bool) -> io::Result<Stat> {
    let c = cpath(path)?;
    let mut sx = std::mem::MaybeUninit::<libc::statx>::zeroed();
    let flags = if follow { 0 } else { libc::AT_SYMLINK_NOFOLLOW };
    let mask = libc::STATX_TYPE | libc::STATX_MODE | libc::STATX_INO | libc::STATX_MNT_ID;
    // SAFETY: `c` is a NUL-terminated path and `sx` points to writable memory of the size
    // `statx` fills.
    let rc = unsafe { libc::statx(libc::AT_FDCWD, c.as_ptr(), flags, mask, sx.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: statx returned 0, so it initialised the struct (and it was zeroed before).
    let sx = unsafe { sx.assume_init() };
    Ok(Stat {
        key: InodeKey {
            dev: libc::makedev(sx.stx_dev_major, sx.stx_dev_minor),
            ino: sx.stx_ino,
        },
        mode: u32::from(sx.stx_mode),
        mnt_id: sx.stx_mnt_id,
    })
}

/// The running kernel's Landlock ABI (`landlock_create_ruleset(NULL, 0, VERSION)`), or the
/// errno (EOPNOTSUPP: disabled at boot, ENOSYS: not built).
pub fn landlock_abi() -> io::Result<u32> {
    // SAFETY: the VERSION query takes no attribute pointer and writes no memory.
    let rc = unsafe {
        libc::syscall(
            SYS_CREATE_RULESET,
            std::ptr::null::<u8>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc as u32)
    }
}

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

#[repr(C)]
struct NetPortAttr {
    allowed_access: u64,
    port: u64,
}

/// `landlock_create_ruleset` with the full ABI 6+ attribute.
pub fn create_ruleset(fs: u64, net: u64, scoped: u64) -> io::Result<OwnedFd> {
    let attr = RulesetAttr {
        handled_access_fs: fs,
        handled_access_net: net,
        scoped,
    };
    // SAFETY: `attr` is a live, correctly sized `landlock_ruleset_attr`.
    let rc = unsafe {
        libc::syscall(
            SYS_CREATE_RULESET,
            &attr as *const RulesetAttr,
            std::mem::size_of::<RulesetAttr>(),
            0u32,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the syscall returned a new file descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(rc as RawFd) })
}

/// `landlock_add_rule(PATH_BENEATH)` on the object open as `parent`.
pub fn add_path_beneath(ruleset: &OwnedFd, parent: RawFd, allowed: u64) -> io::Result<()> {
    let attr = PathBeneathAttr {
        allowed_access: allowed,
        parent_fd: parent,
    };
    // SAFETY: `attr` is a live, packed `landlock_path_beneath_attr`.
    let rc = unsafe {
        libc::syscall(
            SYS_ADD_RULE,
            ruleset.as_raw_fd(),
            RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0u32,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `landlock_add_rule(NET_PORT)`.
pub fn add_net_port(ruleset: &OwnedFd, port: u64, allowed: u64) -> io::Result<()> {
    let attr = NetPortAttr {
        allowed_access: allowed,
        port,
    };
    // SAFETY: `attr` is a live `landlock_net_port_attr`.
    let rc = unsafe {
        libc::syscall(
            SYS_ADD_RULE,
            ruleset.as_raw_fd(),
            RULE_NET_PORT,
            &attr as *const NetPortAttr,
            0u32,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `prctl(PR_SET_NO_NEW_PRIVS, 1)`, needed by unprivileged callers of `restrict_self`.
pub fn set_no_new_privs() -> io::Result<()> {
    // SAFETY: PR_SET_NO_NEW_PRIVS takes integer arguments only.
    let rc = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    if rc != 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `landlock_restrict_self(ruleset, 0)`: adds one layer to the calling thread's domain.
pub fn restrict_self(ruleset: &OwnedFd) -> io::Result<()> {
    // SAFETY: integer arguments only.
    let rc = unsafe { libc::syscall(SYS_RESTRICT_SELF, ruleset.as_raw_fd(), 0u32) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The kernel-side masks of one layer, with rules on open paths and ports.
pub struct KernelLayer<'a> {
    /// Handled fs rights.
    pub fs: AccessFs,
    /// Handled net rights.
    pub net: AccessNet,
    /// Scopes.
    pub scoped: Scopes,
    /// `(path, rights)` path-beneath rules (the path is opened with O_PATH, following links).
    pub paths: &'a [(std::path::PathBuf, AccessFs)],
    /// `(port, rights)` port rules.
    pub ports: &'a [(u64, AccessNet)],
}

/// Where applying layers failed: the stage and the errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApplyError {
    /// `landlock_create_ruleset` failed.
    Create(i32),
    /// `landlock_add_rule` failed.
    AddRule(i32),
    /// `landlock_restrict_self` failed.
    Restrict(i32),
    /// Opening a rule's path failed.
    Open(i32),
}

fn errno_of(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

/// Creates one ruleset per layer, adds its rules and restricts the calling thread, in order.
pub fn apply_layers(layers: &[KernelLayer<'_>]) -> Result<(), ApplyError> {
    set_no_new_privs().map_err(|e| ApplyError::Restrict(errno_of(&e)))?;
    for l in layers {
        let rs = create_ruleset(u64::from(l.fs), u64::from(l.net), u64::from(l.scoped))
            .map_err(|e| ApplyError::Create(errno_of(&e)))?;
        for (path, access) in l.paths {
            let f = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
                .open(path)
                .map_err(|e| ApplyError::Open(errno_of(&e)))?;
            add_path_beneath(&rs, f.as_raw_fd(), u64::from(*access))
                .map_err(|e| ApplyError::AddRule(errno_of(&e)))?;
        }
        for (port, access) in l.ports {
            add_net_port(&rs, *port, u64::from(*access))
                .map_err(|e| ApplyError::AddRule(errno_of(&e)))?;
        }
        restrict_self(&rs).map_err(|e| ApplyError::Restrict(errno_of(&e)))?;
    }
    Ok(())
}

use std::os::unix::fs::OpenOptionsExt;

/// Runs `f` in a forked child and returns the two numbers it reports. The caller must be
/// single-threaded (the differential test is a `harness = false` test binary).
pub fn fork_and_report(f: impl FnOnce() -> [i32; 2]) -> io::Result<[i32; 2]> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 returned two fresh descriptors owned by nobody else.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: the caller is single-threaded, so the child holds no other thread's locks.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        drop(r);
        let out = f();
        let mut bytes = [0u8; 8];
        bytes[..4].copy_from_slice(&out[0].to_ne_bytes());
        bytes[4..].copy_from_slice(&out[1].to_ne_bytes());
        // SAFETY: writes 8 bytes from a live buffer, then ends the child without running
        // the parent's atexit handlers or destructors.
        unsafe {
            libc::write(w.as_raw_fd(), bytes.as_ptr().cast(), 8);
            libc::_exit(0);
        }
    }
    drop(w);
    let mut status = 0;
    // SAFETY: waits for our own child; `status` is writable.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let mut bytes = [0u8; 8];
    // SAFETY: reads at most 8 bytes into a live buffer.
    let n = unsafe { libc::read(r.as_raw_fd(), bytes.as_mut_ptr().cast(), 8) };
    if n != 8 {
        return Err(io::Error::other(format!(
            "child reported nothing (status {status:#x})"
        )));
    }
    Ok([
        i32::from_ne_bytes(bytes[..4].try_into().expect("4 bytes")),
        i32::from_ne_bytes(bytes[4..].try_into().expect("4 bytes")),
    ])
}

fn rc_errno(rc: libc::c_int) -> i32 {
    if rc == 0 {
        0
    } else {
        io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    }
}

/// `mknod(path, mode, dev)`: 0 or the errno.
pub fn mknod(path: &Path, mode: u32, dev: u64) -> i32 {
    let Ok(c) = cpath(path) else {
        return libc::EINVAL;
    };
    // SAFETY: `c` is a NUL-terminated path.
    rc_errno(unsafe { libc::mknod(c.as_ptr(), mode, dev) })
}

/// `truncate(path, 0)`: 0 or the errno.
pub fn truncate(path: &Path) -> i32 {
    let Ok(c) = cpath(path) else {
        return libc::EINVAL;
    };
    // SAFETY: `c` is a NUL-terminated path.
    rc_errno(unsafe { libc::truncate(c.as_ptr(), 0) })
}

/// `renameat2(old, new, RENAME_EXCHANGE)`: 0 or the errno.
pub fn exchange(old: &Path, new: &Path) -> i32 {
    let (Ok(a), Ok(b)) = (cpath(old), cpath(new)) else {
        return libc::EINVAL;
    };
    // SAFETY: two NUL-terminated paths, integer flags.
    rc_errno(unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    })
}

/// `mount("none", path, "tmpfs", 0, NULL)`: 0 or the errno.
pub fn mount_tmpfs(path: &Path) -> i32 {
    let Ok(c) = cpath(path) else {
        return libc::EINVAL;
    };
    // SAFETY: NUL-terminated strings and a null data pointer.
    rc_errno(unsafe {
        libc::mount(
            c"none".as_ptr(),
            c.as_ptr(),
            c"tmpfs".as_ptr(),
            0,
            std::ptr::null(),
        )
    })
}

/// `mount(src, dst, NULL, MS_BIND, NULL)`: 0 or the errno.
pub fn bind_mount(src: &Path, dst: &Path) -> i32 {
    let (Ok(a), Ok(b)) = (cpath(src), cpath(dst)) else {
        return libc::EINVAL;
    };
    // SAFETY: NUL-terminated strings and a null data pointer.
    rc_errno(unsafe {
        libc::mount(
            a.as_ptr(),
            b.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND,
            std::ptr::null(),
        )
    })
}

/// `unshare(CLONE_NEWNS)` then makes every mount private, so mounts made afterwards stay in
/// this process's namespace. The caller must be single-threaded.
pub fn private_mount_namespace() -> io::Result<()> {
    // SAFETY: integer flags only.
    if unsafe { libc::unshare(libc::CLONE_NEWNS) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: NUL-terminated strings and a null data pointer.
    let rc = unsafe {
        libc::mount(
            c"none".as_ptr(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `umount2(path, MNT_DETACH)`: 0 or the errno.
pub fn umount(path: &Path) -> i32 {
    let Ok(c) = cpath(path) else {
        return libc::EINVAL;
    };
    // SAFETY: a NUL-terminated path and integer flags.
    rc_errno(unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) })
}

/// `open(path, flags, 0o644)`: the descriptor or the errno.
pub fn open(path: &Path, flags: i32) -> Result<OwnedFd, i32> {
    let c = cpath(path).map_err(|_| libc::EINVAL)?;
    // SAFETY: a NUL-terminated path; the mode argument is read only with O_CREAT.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, 0o644 as libc::c_uint) };
    if fd < 0 {
        return Err(io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO));
    }
    // SAFETY: open returned a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `kill(pid, 0)`: 0 or the errno (a signal-scope probe without side effects).
pub fn kill0(pid: i32) -> i32 {
    // SAFETY: signal 0 only checks permission.
    rc_errno(unsafe { libc::kill(pid, 0) })
}

/// `ioctl(fd, cmd, buf)` with a zeroed 256-byte buffer: 0 or the errno.
pub fn ioctl(fd: RawFd, cmd: u32) -> i32 {
    let mut buf = [0u8; 256];
    // SAFETY: every ioctl this crate issues reads or writes at most an int or a termios,
    // well inside the 256-byte buffer.
    let rc = unsafe { libc::ioctl(fd, cmd as _, buf.as_mut_ptr()) };
    if rc < 0 {
        io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    } else {
        0
    }
}

/// `execve(path, [path], [])`: returns only on failure, with the errno.
pub fn execve(path: &Path) -> i32 {
    let Ok(c) = cpath(path) else {
        return libc::EINVAL;
    };
    let argv = [c.as_ptr(), std::ptr::null()];
    let envp = [std::ptr::null::<libc::c_char>()];
    // SAFETY: NUL-terminated path; argv and envp are null-terminated arrays of C strings.
    unsafe { libc::execve(c.as_ptr(), argv.as_ptr(), envp.as_ptr()) };
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

//! Access rights, scopes and ABI versions, with the names landlockconfig and the kernel's
//! audit records use.
//!
//! Rights are plain bit masks in the kernel's UAPI bit order (`LANDLOCK_ACCESS_FS_*`,
//! `LANDLOCK_ACCESS_NET_*`, `LANDLOCK_SCOPE_*`), so a mask can be handed to the syscalls as is.

/// A set of filesystem access rights (`LANDLOCK_ACCESS_FS_*` bits).
pub type AccessFs = u16;
/// A set of network access rights (`LANDLOCK_ACCESS_NET_*` bits).
pub type AccessNet = u8;
/// A set of IPC scopes (`LANDLOCK_SCOPE_*` bits).
pub type Scopes = u8;

/// Filesystem rights, in UAPI bit order.
pub mod fs {
    use super::AccessFs;
    /// Execute a file (ABI 1).
    pub const EXECUTE: AccessFs = 1 << 0;
    /// Open a file with write access (ABI 1).
    pub const WRITE_FILE: AccessFs = 1 << 1;
    /// Open a file with read access (ABI 1).
    pub const READ_FILE: AccessFs = 1 << 2;
    /// Open a directory or list its content (ABI 1).
    pub const READ_DIR: AccessFs = 1 << 3;
    /// Remove an empty directory or rename one away (ABI 1).
    pub const REMOVE_DIR: AccessFs = 1 << 4;
    /// Unlink or rename away a file (ABI 1).
    pub const REMOVE_FILE: AccessFs = 1 << 5;
    /// Create a character device (ABI 1).
    pub const MAKE_CHAR: AccessFs = 1 << 6;
    /// Create a directory (ABI 1).
    pub const MAKE_DIR: AccessFs = 1 << 7;
    /// Create a regular file (ABI 1).
    pub const MAKE_REG: AccessFs = 1 << 8;
    /// Create a UNIX domain socket (ABI 1).
    pub const MAKE_SOCK: AccessFs = 1 << 9;
    /// Create a named pipe (ABI 1).
    pub const MAKE_FIFO: AccessFs = 1 << 10;
    /// Create a block device (ABI 1).
    pub const MAKE_BLOCK: AccessFs = 1 << 11;
    /// Create a symbolic link (ABI 1).
    pub const MAKE_SYM: AccessFs = 1 << 12;
    /// Link or rename a file from or to a different directory (ABI 2).
    pub const REFER: AccessFs = 1 << 13;
    /// Truncate a file (ABI 3).
    pub const TRUNCATE: AccessFs = 1 << 14;
    /// Use ioctl on a character or block device (ABI 5).
    pub const IOCTL_DEV: AccessFs = 1 << 15;

    /// Rights that a rule on a non-directory may carry (`ACCESS_FILE` in the kernel).
    pub const FILE: AccessFs = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV;
    /// Every filesystem right of ABI 7.
    pub const ALL: AccessFs = 0xffff;
    /// Number of filesystem rights.
    pub const COUNT: usize = 16;
}

/// Network rights, in UAPI bit order.
pub mod net {
    use super::AccessNet;
    /// Bind a TCP socket to a port (ABI 4).
    pub const BIND_TCP: AccessNet = 1 << 0;
    /// Connect a TCP socket to a port (ABI 4).
    pub const CONNECT_TCP: AccessNet = 1 << 1;
    /// Every network right of ABI 7.
    pub const ALL: AccessNet = 0b11;
}

/// IPC scopes, in UAPI bit order.
pub mod scope {
    use super::Scopes;
    /// Deny connecting to abstract UNIX sockets created outside the domain (ABI 6).
    pub const ABSTRACT_UNIX_SOCKET: Scopes = 1 << 0;
    /// Deny signalling processes outside the domain (ABI 6).
    pub const SIGNAL: Scopes = 1 << 1;
    /// Every scope of ABI 7.
    pub const ALL: Scopes = 0b11;
}

/// The newest Landlock ABI this crate models.
pub const ABI_MAX: u32 = 7;

/// Filesystem rights known to an ABI version (0 for ABI 0, i.e. no Landlock).
pub fn fs_rights_of_abi(abi: u32) -> AccessFs {
    match abi {
        0 => 0,
        1 => 0x1fff,
        2 => 0x3fff,
        3 | 4 => 0x7fff,
        _ => fs::ALL,
    }
}

/// Network rights known to an ABI version.
pub fn net_rights_of_abi(abi: u32) -> AccessNet {
    if abi >= 4 {
        net::ALL
    } else {
        0
    }
}

/// Scopes known to an ABI version.
pub fn scopes_of_abi(abi: u32) -> Scopes {
    if abi >= 6 {
        scope::ALL
    } else {
        0
    }
}

/// Filesystem right names, index = bit number (landlockconfig's spelling).
pub const FS_NAMES: [&str; fs::COUNT] = [
    "execute",
    "write_file",
    "read_file",
    "read_dir",
    "remove_dir",
    "remove_file",
    "make_char",
    "make_dir",
    "make_reg",
    "make_sock",
    "make_fifo",
    "make_block",
    "make_sym",
    "refer",
    "truncate",
    "ioctl_dev",
];

/// Network right names, index = bit number.
pub const NET_NAMES: [&str; 2] = ["bind_tcp", "connect_tcp"];

/// Scope names, index = bit number.
pub const SCOPE_NAMES: [&str; 2] = ["abstract_unix_socket", "signal"];

/// The bit of a named filesystem right.
pub fn fs_right_by_name(name: &str) -> Option<AccessFs> {
    FS_NAMES.iter().position(|n| *n == name).map(|i| 1 << i)
}

/// The bit of a named network right.
pub fn net_right_by_name(name: &str) -> Option<AccessNet> {
    NET_NAMES.iter().position(|n| *n == name).map(|i| 1 << i)
}

/// The bit of a named scope.
pub fn scope_by_name(name: &str) -> Option<Scopes> {
    SCOPE_NAMES.iter().position(|n| *n == name).map(|i| 1 << i)
}

/// Names of the bits set in `mask`, from a name table.
pub fn names_of(mask: u32, table: &[&'static str]) -> Vec<&'static str> {
    table
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, n)| *n)
        .collect()
}

/// Comma-separated names of filesystem rights (`-` for none).
pub fn fs_names(mask: AccessFs) -> String {
    join(names_of(u32::from(mask), &FS_NAMES))
}

/// Comma-separated names of network rights (`-` for none).
pub fn net_names(mask: AccessNet) -> String {
    join(names_of(u32::from(mask), &NET_NAMES))
}

/// Comma-separated names of scopes (`-` for none).
pub fn scope_names(mask: Scopes) -> String {
    join(names_of(u32::from(mask), &SCOPE_NAMES))
}

fn join(v: Vec<&str>) -> String {
    if v.is_empty() {
        "-".to_string()
    } else {
        v.join(",")
    }
}

/// The MAKE_* right for creating an inode of this `st_mode` type (`get_mode_access`): weird
/// or zero modes count as regular files, as in the kernel.
pub fn make_right_for_mode(mode: u32) -> AccessFs {
    match mode & 0o170000 {
        0o120000 => fs::MAKE_SYM,
        0o040000 => fs::MAKE_DIR,
        0o020000 => fs::MAKE_CHAR,
        0o060000 => fs::MAKE_BLOCK,
        0o010000 => fs::MAKE_FIFO,
        0o140000 => fs::MAKE_SOCK,
        _ => fs::MAKE_REG,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_to_bits() {
        for (i, n) in FS_NAMES.iter().enumerate() {
            assert_eq!(fs_right_by_name(n), Some(1 << i));
        }
        assert_eq!(net_right_by_name("connect_tcp"), Some(net::CONNECT_TCP));
        assert_eq!(scope_by_name("signal"), Some(scope::SIGNAL));
        assert_eq!(fs_right_by_name("read"), None);
    }

    #[test]
    fn abi_masks_grow_with_the_versions() {
        assert_eq!(fs_rights_of_abi(1) & fs::REFER, 0);
        assert_ne!(fs_rights_of_abi(2) & fs::REFER, 0);
        assert_eq!(fs_rights_of_abi(4) & fs::IOCTL_DEV, 0);
        assert_eq!(fs_rights_of_abi(5), fs::ALL);
        assert_eq!(net_rights_of_abi(3), 0);
        assert_eq!(scopes_of_abi(5), 0);
        assert_eq!(scopes_of_abi(7), scope::ALL);
    }

    #[test]
    fn zero_and_weird_modes_need_make_reg() {
        assert_eq!(make_right_for_mode(0), fs::MAKE_REG);
        assert_eq!(make_right_for_mode(0o040755), fs::MAKE_DIR);
        assert_eq!(make_right_for_mode(0o120777), fs::MAKE_SYM);
    }
}

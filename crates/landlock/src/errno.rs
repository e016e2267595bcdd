//! The error numbers the kernel returns from Landlock's hooks and syscalls, and the VFS
//! errors that come before them.

use std::fmt;

/// An `errno` value with its symbolic name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Errno {
    EPERM,
    ENOENT,
    E2BIG,
    EBADF,
    EACCES,
    EBUSY,
    EEXIST,
    EXDEV,
    ENOTDIR,
    EISDIR,
    EINVAL,
    ENXIO,
    ENOMSG,
    ENOTEMPTY,
    ELOOP,
    ENAMETOOLONG,
    EOPNOTSUPP,
}

const TABLE: [(Errno, i32, &str); 17] = [
    (Errno::EPERM, 1, "EPERM"),
    (Errno::ENOENT, 2, "ENOENT"),
    (Errno::E2BIG, 7, "E2BIG"),
    (Errno::EBADF, 9, "EBADF"),
    (Errno::EACCES, 13, "EACCES"),
    (Errno::EBUSY, 16, "EBUSY"),
    (Errno::EEXIST, 17, "EEXIST"),
    (Errno::EXDEV, 18, "EXDEV"),
    (Errno::ENOTDIR, 20, "ENOTDIR"),
    (Errno::EISDIR, 21, "EISDIR"),
    (Errno::EINVAL, 22, "EINVAL"),
    (Errno::ENXIO, 6, "ENXIO"),
    (Errno::ENOMSG, 42, "ENOMSG"),
    (Errno::ENOTEMPTY, 39, "ENOTEMPTY"),
    (Errno::ELOOP, 40, "ELOOP"),
    (Errno::ENAMETOOLONG, 36, "ENAMETOOLONG"),
    (Errno::EOPNOTSUPP, 95, "EOPNOTSUPP"),
];

impl Errno {
    /// The Linux x86_64/aarch64 number.
    pub fn code(self) -> i32 {
        TABLE.iter().find(|t| t.0 == self).map_or(0, |t| t.1)
    }

    /// The errno for a Linux number, if it is one this crate models.
    pub fn from_code(code: i32) -> Option<Errno> {
        TABLE.iter().find(|t| t.1 == code).map(|t| t.0)
    }

    /// The symbolic name (`EACCES`).
    pub fn name(self) -> &'static str {
        TABLE.iter().find(|t| t.0 == self).map_or("E?", |t| t.2)
    }

    /// The errno of an I/O error, if modelled.
    pub fn from_io(e: &std::io::Error) -> Option<Errno> {
        e.raw_os_error().and_then(Errno::from_code)
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_round_trip() {
        for (e, code, name) in TABLE {
            assert_eq!(Errno::from_code(code), Some(e));
            assert_eq!(e.name(), name);
            assert_eq!(e.code(), code);
        }
        assert_eq!(Errno::from_code(12345), None);
    }
}

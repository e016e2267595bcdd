//! From paths to walks: resolves a path as the kernel would (symlinks and `..` first), then
//! lists the objects the kernel's path walk meets, from the object up to the namespace root.
//!
//! For a canonical path, the kernel's walk (follow `d_parent`; at a mount root jump to the
//! mount point and skip the covered dentry) meets exactly the inodes visible at the path and
//! at each of its prefixes: a prefix that is a mount point shows the mounted root, never the
//! covered directory, and stacked mounts show only the top one. So the walk is a `statx` of
//! each prefix, and `stx_mnt_id` (the IDs of `/proc/self/mountinfo`) tells which mount each
//! step is in: bind mounts, covered mount points and mount roots fall out of that.
//! Limitation: a chroot is not seen (the kernel walks past it to the real root; so does this
//! when run outside the chroot).

use crate::errno::Errno;
use crate::object::{ObjectId, ObjectRegistry};
use crate::sys::{self, Stat};
use std::path::{Component, Path, PathBuf};

/// A resolved, existing location: its canonical path and the walk from it to `/`.
#[derive(Clone, Debug)]
pub struct Location {
    /// Canonical absolute path.
    pub path: PathBuf,
    /// `steps[0]` is the object itself, then each ancestor up to `/`.
    pub steps: Vec<Stat>,
}

impl Location {
    /// The object's own stat.
    pub fn stat(&self) -> Stat {
        self.steps[0]
    }

    /// The rule objects met on the walk.
    pub fn objects(&self, reg: &ObjectRegistry) -> Vec<Option<ObjectId>> {
        self.steps.iter().map(|s| reg.get(s.key)).collect()
    }

    /// Index of the root of the object's mount on the walk.
    pub fn mount_root(&self) -> usize {
        let m = self.steps[0].mnt_id;
        self.steps.iter().take_while(|s| s.mnt_id == m).count() - 1
    }

    /// Whether the object is a directory.
    pub fn is_dir(&self) -> bool {
        self.steps[0].mode & 0o170000 == 0o040000
    }
}

fn errno(e: &std::io::Error) -> Errno {
    Errno::from_io(e).unwrap_or(Errno::ENOENT)
}

/// Stats `path` (canonical) and each of its prefixes.
fn walk_of(path: PathBuf, last_follow: bool) -> Result<Location, Errno> {
    let mut steps = Vec::new();
    let mut p = path.as_path();
    let mut first = true;
    loop {
        let st = sys::stat(p, !first || last_follow).map_err(|e| errno(&e))?;
        steps.push(st);
        first = false;
        match p.parent() {
            Some(parent) => p = parent,
            None => break,
        }
    }
    Ok(Location { path, steps })
}

/// Resolves an existing path, following the last symlink or not (`lstat` vs `stat`).
pub fn resolve(path: &Path, follow_last: bool) -> Result<Location, Errno> {
    let (parent, name) = split(path)?;
    match name {
        None => {
            let canon = std::fs::canonicalize(path).map_err(|e| errno(&e))?;
            walk_of(canon, true)
        }
        Some(name) => {
            let dir = std::fs::canonicalize(&parent).map_err(|e| errno(&e))?;
            let full = dir.join(&name);
            if follow_last {
                let canon = std::fs::canonicalize(&full).map_err(|e| errno(&e))?;
                walk_of(canon, true)
            } else {
                walk_of(full, false)
            }
        }
    }
}

/// The parent directory of a path (resolved) and the last component, for operations that
/// create, remove or rename a name: the name itself is not followed.
pub struct Entry {
    /// The resolved parent directory.
    pub dir: Location,
    /// The name inside it.
    pub name: PathBuf,
    /// The object the name refers to now (not following a symlink), if any.
    pub existing: Option<Stat>,
}

impl Entry {
    /// The full canonical path of the name.
    pub fn path(&self) -> PathBuf {
        self.dir.path.join(&self.name)
    }
}

/// Resolves the parent of `path`; ENOENT/ENOTDIR if it is missing or not a directory.
pub fn entry(path: &Path) -> Result<Entry, Errno> {
    let (parent, name) = split(path)?;
    let name = name.ok_or(Errno::EBUSY)?;
    let dir = resolve(&parent, true)?;
    if !dir.is_dir() {
        return Err(Errno::ENOTDIR);
    }
    let existing = match sys::stat(&dir.path.join(&name), false) {
        Ok(s) => Some(s),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => None,
        Err(e) => return Err(errno(&e)),
    };
    Ok(Entry {
        dir,
        name,
        existing,
    })
}

/// Splits a path into its parent and a normal last component (None for `/`, `.` or `..`).
fn split(path: &Path) -> Result<(PathBuf, Option<PathBuf>), Errno> {
    if path.as_os_str().is_empty() {
        return Err(Errno::ENOENT);
    }
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map_err(|e| errno(&e))?.join(path)
    };
    match abs.components().next_back() {
        Some(Component::Normal(n)) => {
            let parent = abs.parent().unwrap_or(Path::new("/")).to_path_buf();
            Ok((parent, Some(PathBuf::from(n))))
        }
        _ => Ok((abs, None)),
    }
}

/// Whether `path` is a `/proc` magic link to an object of an internal filesystem (a pipe, a
/// socket, an anonymous inode): those live on `SB_NOUSER` mounts and Landlock never checks
/// them.
pub fn is_nouser_magic_link(path: &Path) -> bool {
    let under_proc = std::fs::canonicalize(path.parent().unwrap_or(Path::new("/")))
        .map(|p| p.starts_with("/proc"))
        .unwrap_or(false);
    under_proc
        && std::fs::read_link(path)
            .map(|t| !t.is_absolute())
            .unwrap_or(false)
}

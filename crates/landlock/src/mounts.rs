//! The mount table from `/proc/self/mountinfo`: per mount, where it is and the per-mount
//! flags that make the VFS refuse an operation before Landlock is asked (`noexec` for exec,
//! `nodev` for opening a device).

use std::collections::HashMap;

/// One line of `/proc/self/mountinfo`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    /// Mount ID (`statx`'s `stx_mnt_id`).
    pub id: u64,
    /// Parent mount ID.
    pub parent: u64,
    /// The directory of its filesystem that is mounted (its root).
    pub root: String,
    /// Where it is mounted.
    pub mount_point: String,
    /// Mounted `noexec`.
    pub noexec: bool,
    /// Mounted `nodev`.
    pub nodev: bool,
}

/// The mount table, by ID.
#[derive(Clone, Debug, Default)]
pub struct MountTable {
    mounts: HashMap<u64, Mount>,
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl MountTable {
    /// Parses mountinfo text; malformed lines are skipped.
    pub fn parse(text: &str) -> MountTable {
        let mut mounts = HashMap::new();
        for line in text.lines() {
            let f: Vec<&str> = line.split(' ').collect();
            if f.len() < 6 {
                continue;
            }
            let (Ok(id), Ok(parent)) = (f[0].parse(), f[1].parse()) else {
                continue;
            };
            let opts: Vec<&str> = f[5].split(',').collect();
            mounts.insert(
                id,
                Mount {
                    id,
                    parent,
                    root: unescape(f[3]),
                    mount_point: unescape(f[4]),
                    noexec: opts.contains(&"noexec"),
                    nodev: opts.contains(&"nodev"),
                },
            );
        }
        MountTable { mounts }
    }

    /// Reads this process's mount table (empty if unreadable).
    pub fn current() -> MountTable {
        std::fs::read_to_string("/proc/self/mountinfo")
            .map(|t| MountTable::parse(&t))
            .unwrap_or_default()
    }

    /// The mount with this ID.
    pub fn get(&self, id: u64) -> Option<&Mount> {
        self.mounts.get(&id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_give_ids_places_and_flags() {
        let t = MountTable::parse(
            "22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n\
             40 22 8:1 /srv/a\\040b /mnt/x rw,relatime - ext4 /dev/sda1 rw\n\
             garbage\n",
        );
        let p = t.get(22).unwrap();
        assert!(p.noexec && p.nodev);
        let b = t.get(40).unwrap();
        assert_eq!(
            (b.parent, b.root.as_str(), b.mount_point.as_str()),
            (22, "/srv/a b", "/mnt/x")
        );
        assert!(!b.noexec);
        assert!(t.get(1).is_none());
    }
}

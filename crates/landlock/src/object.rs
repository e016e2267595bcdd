//! Object identity: rules are tied to inodes, named by (device, inode number), and interned
//! to small [`ObjectId`]s as the kernel ties them to a `landlock_object`.

use std::collections::HashMap;

/// An inode's identity on this machine: `st_dev` and `st_ino`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InodeKey {
    /// Device number (`makedev(major, minor)`).
    pub dev: u64,
    /// Inode number.
    pub ino: u64,
}

/// A small, dense name for an inode that some rule mentions: the domain's rule key.
///
/// The kernel keys rules by the address of the inode's `landlock_object`; arbiter keys them by
/// the object's index in an [`ObjectRegistry`], which keeps the key at 4 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectId(pub u32);

/// Interns inode identities to [`ObjectId`]s. Every ruleset and every walk of one evaluation
/// must use the same registry.
#[derive(Default, Debug, Clone)]
pub struct ObjectRegistry {
    ids: HashMap<InodeKey, ObjectId>,
}

impl ObjectRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// The object of `key`, created on first use (as `add_rule` creates a `landlock_object`).
    pub fn intern(&mut self, key: InodeKey) -> ObjectId {
        let next = ObjectId(self.ids.len() as u32);
        *self.ids.entry(key).or_insert(next)
    }

    /// The object of `key` if some rule ever mentioned it (an inode without one has no rule).
    pub fn get(&self, key: InodeKey) -> Option<ObjectId> {
        self.ids.get(&key).copied()
    }

    /// Number of interned objects.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no object was interned.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_inode_gets_the_same_object() {
        let mut r = ObjectRegistry::new();
        let a = r.intern(InodeKey { dev: 1, ino: 2 });
        let b = r.intern(InodeKey { dev: 1, ino: 3 });
        assert_ne!(a, b);
        assert_eq!(r.intern(InodeKey { dev: 1, ino: 2 }), a);
        assert_eq!(r.get(InodeKey { dev: 2, ino: 2 }), None);
    }
}

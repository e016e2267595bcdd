//! Permission lists already resolved, by their text: `(class (name ...))` → (class
//! position, access vector). A distribution policy's rule statements repeat a few
//! thousand distinct lists (macro bodies copied at every call), so a list's names are
//! looked up once and each later occurrence costs one hash and one compare.
//!
//! Keys are the list's atoms as the tree holds them (symbol and atom mark), kept back to
//! back in one vector rather than one allocation each, so the cache adds little to the
//! build's resident memory.

use crate::intern::FxHashMap;

/// Resolved permission lists (see the module comment). Only successful resolutions are
/// entered: a bad list is resolved again, to report its error where it occurs.
#[derive(Default)]
pub(super) struct PermListCache {
    /// Hash of the key → position in `entries`. Two keys with one hash: the later one is
    /// not cached (it is resolved the slow way each time, still correctly).
    index: FxHashMap<u64, u32>,
    /// The keys' atoms, back to back.
    atoms: Vec<u32>,
    entries: Vec<Entry>,
}

struct Entry {
    /// The key's atoms: `atoms[start..start + len]`.
    start: u32,
    len: u32,
    class: u32,
    bits: u32,
}

/// The key of `(class (names...))`: the class atom, then the names' atoms; `None` when a
/// name is a nested list (an expression, resolved without the cache).
pub(super) fn key_hash(class: u32, names: &[u32], is_atom: impl Fn(u32) -> bool) -> Option<u64> {
    let mut h = mix(0x243F_6A88_85A3_08D3, class);
    for &x in names {
        if !is_atom(x) {
            return None;
        }
        h = mix(h, x);
    }
    Some(mix(h, names.len() as u32))
}

fn mix(h: u64, x: u32) -> u64 {
    (h.rotate_left(5) ^ u64::from(x)).wrapping_mul(0x517C_C1B7_2722_0A95)
}

impl PermListCache {
    /// The (class position, bits) of the list with key `class` + `names` and hash `h`.
    pub(super) fn get(&self, h: u64, class: u32, names: &[u32]) -> Option<(u32, u32)> {
        let e = &self.entries[*self.index.get(&h)? as usize];
        let key = &self.atoms[e.start as usize..(e.start + e.len) as usize];
        (key[0] == class && key[1..] == *names).then_some((e.class, e.bits))
    }

    /// Enters a resolved list (nothing when its hash is taken by another key).
    pub(super) fn insert(&mut self, h: u64, class: u32, names: &[u32], value: (u32, u32)) {
        let (Ok(start), Ok(len), Ok(pos)) = (
            u32::try_from(self.atoms.len()),
            u32::try_from(names.len() + 1),
            u32::try_from(self.entries.len()),
        ) else {
            return;
        };
        if let std::collections::hash_map::Entry::Vacant(v) = self.index.entry(h) {
            v.insert(pos);
            self.atoms.push(class);
            self.atoms.extend_from_slice(names);
            self.entries.push(Entry {
                start,
                len,
                class: value.0,
                bits: value.1,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_list_by_its_atoms_and_not_another() {
        let atom = |_| true;
        let mut c = PermListCache::default();
        let h = key_hash(7, &[1, 2], atom).unwrap();
        assert_eq!(c.get(h, 7, &[1, 2]), None);
        c.insert(h, 7, &[1, 2], (3, 0b110));
        assert_eq!(c.get(h, 7, &[1, 2]), Some((3, 0b110)));
        // The same hash asked with other atoms (a collision) is a miss, not a wrong hit.
        assert_eq!(c.get(h, 7, &[2, 1]), None);
        assert_eq!(c.get(h, 8, &[1, 2]), None);
        let h2 = key_hash(7, &[2, 1], atom).unwrap();
        assert_ne!(h, h2);
        assert_eq!(c.get(h2, 7, &[2, 1]), None);
    }

    #[test]
    fn a_nested_expression_has_no_key() {
        assert_eq!(key_hash(7, &[1, 99], |x| x != 99), None);
    }
}

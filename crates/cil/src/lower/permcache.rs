//! Permission lists already resolved, by their text: `(class (name ...))` → (class
//! position, access vector). A distribution policy's rule statements repeat a few
//! thousand distinct lists (macro bodies copied at every call), so a list's names are
//! looked up once and each later occurrence costs one hash and one compare.
//!
//! Keys are the list's atoms as the tree holds them (symbol and atom mark), kept back to
//! back in one vector rather than one allocation each, so the cache adds little to the
//! build's resident memory.

/// Resolved permission lists (see the module comment). Only successful resolutions are
/// entered: a bad list is resolved again, to report its error where it occurs.
#[derive(Default)]
pub(super) struct PermListCache {
    /// Open addressing by the key's hash, linear probing: a slot holds an entry's
    /// position plus one (0 empty). The entry keeps its full hash, so a probe compares
    /// atoms only on a likely hit.
    slots: Vec<u32>,
    /// 64 - log2(slots.len()): a hash's home slot is its top bits.
    shift: u32,
    /// The keys' atoms, back to back.
    atoms: Vec<u32>,
    entries: Vec<Entry>,
}

struct Entry {
    hash: u64,
    /// The key's atoms: `atoms[start..start + len]`.
    start: u32,
    len: u32,
    class: u32,
    bits: u32,
}

/// The key of `(class (names...))`: the class atom, then the names' atoms; `None` when a
/// name is a nested list (an expression, resolved without the cache).
#[inline]
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

#[inline]
fn mix(h: u64, x: u32) -> u64 {
    (h.rotate_left(5) ^ u64::from(x)).wrapping_mul(0x517C_C1B7_2722_0A95)
}

impl PermListCache {
    /// The first slot to probe for hash `h` (its high bits: the multiply mixes upward).
    fn home(&self, h: u64) -> usize {
        (h >> self.shift) as usize
    }

    /// The (class position, bits) of the list with key `class` + `names` and hash `h`.
    #[inline]
    pub(super) fn get(&self, h: u64, class: u32, names: &[u32]) -> Option<(u32, u32)> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(h);
        loop {
            let e = &self.entries[self.slots[i].checked_sub(1)? as usize];
            if e.hash == h && e.len as usize == names.len() + 1 {
                // Compared atom by atom: lists are short, and a `memcmp` call cost more.
                let key = &self.atoms[e.start as usize..][..names.len() + 1];
                if key[0] == class && key[1..].iter().zip(names).all(|(a, b)| a == b) {
                    return Some((e.class, e.bits));
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// Enters a resolved list not in the cache (a list past 32-bit positions is not
    /// cached).
    pub(super) fn insert(&mut self, h: u64, class: u32, names: &[u32], value: (u32, u32)) {
        let (Ok(start), Ok(len), Ok(pos)) = (
            u32::try_from(self.atoms.len()),
            u32::try_from(names.len() + 1),
            u32::try_from(self.entries.len() + 1),
        ) else {
            return;
        };
        if (self.entries.len() + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(h);
        while self.slots[i] != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = pos;
        self.atoms.push(class);
        self.atoms.extend_from_slice(names);
        self.entries.push(Entry {
            hash: h,
            start,
            len,
            class: value.0,
            bits: value.1,
        });
    }

    /// Doubles the slots (at most half are used) and enters every entry again.
    fn grow(&mut self) {
        let n = (self.slots.len() * 2).max(1024);
        self.slots = vec![0; n];
        self.shift = 64 - n.trailing_zeros();
        let mask = n - 1;
        for (p, e) in self.entries.iter().enumerate() {
            let mut i = (e.hash >> self.shift) as usize;
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = p as u32 + 1;
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
        // Many entries: the table grows and still finds each one.
        for x in 10..3000u32 {
            let hx = key_hash(7, &[x], atom).unwrap();
            c.insert(hx, 7, &[x], (1, x));
        }
        for x in 10..3000u32 {
            let hx = key_hash(7, &[x], atom).unwrap();
            assert_eq!(c.get(hx, 7, &[x]), Some((1, x)));
        }
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

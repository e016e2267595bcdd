//! [`NameSlots`]: an index of names that live elsewhere, 4 bytes a slot.
//!
//! The reader's duplicate-name check and the query layer's type lookup each need "which
//! of my records is called `name`?" over a few thousand names that are already stored (in
//! the policy image, in the model's symbol tables). A `HashMap<&str, _>` repeats each
//! name's pointer and length beside the value: 17–24 bytes a bucket, 140–204 kB for the
//! Debian policy's 4,153 types, a block over glibc's 128 kB mmap threshold whose freeing
//! raised the threshold and left later transients in the heap as free memory. This table
//! keeps only record numbers and asks its caller for a number's name when it must compare;
//! for the same policy it takes 32 kB.

use crate::keytab::NameHash;
use std::hash::BuildHasher;

/// An open-addressing table of record numbers keyed by the records' names, which the
/// caller holds: every lookup and insertion takes a `name_of` function from a number to
/// its name. Slots are 4 bytes, a power of two of them, at most three quarters used,
/// probed linearly; the hash is seeded per table, so that names from a hostile policy
/// cannot be chosen to collide. A number `k` is stored as `k + 1` (0 is the empty slot),
/// so numbers are below [`u32::MAX`]: record numbers of a policy are, every count being a
/// 32-bit field (a number of `u32::MAX` would be stored, saturated, as `u32::MAX - 1`).
pub struct NameSlots {
    hash: NameHash,
    /// 0 empty; `k + 1` the record numbered `k`.
    slots: Box<[u32]>,
    len: usize,
}

impl NameSlots {
    /// A table sized for `n` names (more are taken, at the cost of a rebuild).
    pub fn with_capacity(n: usize) -> Self {
        NameSlots {
            hash: NameHash::new(),
            slots: vec![0; Self::slots_for(n)].into_boxed_slice(),
            len: 0,
        }
    }

    /// Slots for `n` names: a power of two, at most three quarters used.
    fn slots_for(n: usize) -> usize {
        (n + n / 3 + 1).next_power_of_two()
    }

    /// The bytes the table's slots take (its heap footprint).
    pub fn slot_bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<u32>()
    }

    /// How many names the table holds.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number stored for `name`, if any.
    pub fn get<'n>(&self, name: &str, name_of: impl Fn(u32) -> &'n str) -> Option<u32> {
        self.find(name, &name_of).ok().map(|at| self.slots[at] - 1)
    }

    /// Stores `number` for `name` unless a number is stored for it already, which is then
    /// kept and returned as the error (a set's insert, the first occurrence winning).
    pub fn insert_new<'n>(
        &mut self,
        name: &str,
        number: u32,
        name_of: impl Fn(u32) -> &'n str,
    ) -> Result<(), u32> {
        self.reserve_one(&name_of);
        match self.find(name, &name_of) {
            Ok(at) => Err(self.slots[at] - 1),
            Err(empty) => {
                self.fill(empty, number);
                Ok(())
            }
        }
    }

    /// Stores `number` for `name`, replacing any number stored for it (a map's insert, the
    /// last occurrence winning); the replaced number, if any.
    pub fn insert<'n>(
        &mut self,
        name: &str,
        number: u32,
        name_of: impl Fn(u32) -> &'n str,
    ) -> Option<u32> {
        self.reserve_one(&name_of);
        match self.find(name, &name_of) {
            Ok(at) => {
                let old = self.slots[at] - 1;
                self.slots[at] = Self::slot(number);
                Some(old)
            }
            Err(empty) => {
                self.fill(empty, number);
                None
            }
        }
    }

    /// The slot value of `number`. See the type's documentation for why it fits.
    fn slot(number: u32) -> u32 {
        number.saturating_add(1)
    }

    fn fill(&mut self, at: usize, number: u32) {
        self.slots[at] = Self::slot(number);
        self.len += 1;
    }

    /// Grows the table, re-placing every number, if one more name would fill it past
    /// three quarters.
    fn reserve_one<'n>(&mut self, name_of: &impl Fn(u32) -> &'n str) {
        let wanted = Self::slots_for(self.len + 1);
        if wanted <= self.slots.len() {
            return;
        }
        let old = std::mem::replace(&mut self.slots, vec![0; wanted].into_boxed_slice());
        for slot in old.iter().copied().filter(|&s| s != 0) {
            // Stored names are distinct, so each finds an empty slot.
            let at = self
                .find(name_of(slot - 1), name_of)
                .unwrap_or_else(|empty| empty);
            self.slots[at] = slot;
        }
    }

    /// The slot holding `name` (`Ok`), or the empty one where it would go (`Err`).
    fn find<'n>(
        &self,
        name: &str,
        name_of: &impl Fn(u32) -> &'n str,
    ) -> std::result::Result<usize, usize> {
        let mask = self.slots.len() - 1;
        let mut at = self.hash.hash_one(name) as usize & mask;
        loop {
            match self.slots[at] {
                0 => return Err(at),
                s if name_of(s - 1) == name => return Ok(at),
                _ => at = (at + 1) & mask,
            }
        }
    }
}

impl std::fmt::Debug for NameSlots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NameSlots")
            .field("len", &self.len)
            .field("slots", &self.slots.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("t{i}_t")).collect()
    }

    #[test]
    fn a_set_keeps_the_first_number_and_grows_past_its_announced_size() {
        let names = names(5000);
        let name_of = |k: u32| names[k as usize].as_str();
        let mut set = NameSlots::with_capacity(100);
        for (k, n) in names.iter().enumerate() {
            assert_eq!(set.insert_new(n, k as u32, name_of), Ok(()), "{n} is new");
        }
        for (k, n) in names.iter().enumerate() {
            assert_eq!(set.insert_new(n, 0, name_of), Err(k as u32), "{n} is there");
            assert_eq!(set.get(n, name_of), Some(k as u32));
        }
        assert_eq!(set.len(), 5000);
        assert_eq!(set.get("t5000_t", name_of), None);
        // Three quarters at most.
        assert!(set.slot_bytes() / 4 * 3 >= set.len());
    }

    #[test]
    fn a_map_keeps_the_last_number() {
        let names = ["a", "b", "a", "c", "a"];
        let name_of = |k: u32| names[k as usize];
        let mut map = NameSlots::with_capacity(0);
        let replaced: Vec<Option<u32>> = names
            .iter()
            .enumerate()
            .map(|(k, n)| map.insert(n, k as u32, name_of))
            .collect();
        assert_eq!(replaced, [None, None, Some(0), None, Some(2)]);
        assert_eq!(map.len(), 3);
        assert_eq!(map.get("a", name_of), Some(4));
        assert_eq!(map.get("b", name_of), Some(1));
        assert_eq!(map.get("c", name_of), Some(3));
        assert_eq!(map.get("", name_of), None);
    }

    #[test]
    fn the_debian_policys_types_fit_under_glibcs_mmap_threshold() {
        // 4,153 types (and 4,300 names with the aliases): 8,192 slots, 32 kB.
        assert_eq!(NameSlots::with_capacity(4153).slot_bytes(), 32 * 1024);
        assert_eq!(NameSlots::with_capacity(4300).slot_bytes(), 32 * 1024);
    }
}

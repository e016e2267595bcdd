//! The index of the unconditional avtab while rules are entered (rule key -> entry
//! position). It was the largest table of lowering: a map of (key, position) took 12
//! bytes a bucket plus a control byte, sized for every rule statement, and rules entered
//! at random buckets made all of it resident. Here a slot is the entry's position + 1 (0
//! empty) in open addressing with linear probing, and the key is read back from the
//! entry: 4 bytes a slot, and the zeroed slots stay unmapped until a rule lands in
//! their page.

use arbiter_policy::avtab::{AvtabEntry, AvtabKey};

/// Rule key -> position in the unconditional avtab (`Vec<AvtabEntry>`), whose entries it
/// reads to compare keys: always used with the same table.
#[derive(Default)]
pub(super) struct AvIndex {
    slots: Vec<u32>,
    len: usize,
    /// 64 - log2(slots.len()): a key's home slot is its hash's top bits.
    shift: u32,
}

/// The key as one word: source, target, class and kind are 16 bits each, so two keys
/// are equal exactly when their words are.
#[inline]
fn word(key: &AvtabKey) -> u64 {
    key.source.value() as u64
        | (key.target.value() as u64) << 16
        | (key.class.value() as u64) << 32
        | (key.kind as u16 as u64) << 48
}

impl AvIndex {
    /// An index for about `n` keys without growing (at most three quarters of its slots
    /// are used, few enough for short probes).
    pub(super) fn with_capacity(n: usize) -> Self {
        let slots = (n.max(6) + n / 3).next_power_of_two();
        AvIndex {
            slots: vec![0; slots],
            len: 0,
            shift: 64 - slots.trailing_zeros(),
        }
    }

    /// The first slot to probe for `key` (a multiplicative hash's high bits).
    #[inline]
    fn home(&self, key: &AvtabKey) -> usize {
        self.home_of(word(key))
    }

    /// [`Self::home`] of a key's [`word`].
    #[inline]
    fn home_of(&self, w: u64) -> usize {
        (w.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// Where `key` is in `tab`, or the empty slot where it would go. Keys are compared
    /// as their words (one comparison where the key's four fields took four).
    #[inline]
    fn probe(&self, tab: &[AvtabEntry], key: &AvtabKey) -> Result<u32, usize> {
        let mask = self.slots.len() - 1;
        let w = word(key);
        let mut i = self.home_of(w);
        loop {
            match self.slots[i] {
                0 => return Err(i),
                s if word(&tab[s as usize - 1].key) == w => return Ok(s - 1),
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// The position of `key`'s entry in `tab`.
    pub(super) fn get(&self, tab: &[AvtabEntry], key: &AvtabKey) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        self.probe(tab, key).ok()
    }

    /// The position of `entry.key`'s entry in `tab`; when there is none, `entry` is
    /// appended to `tab` and indexed, and `None` returned. `tab` holds at most
    /// `u32::MAX - 1` entries (positions are stored + 1 in 32 bits).
    #[inline]
    pub(super) fn find_or_append(
        &mut self,
        tab: &mut Vec<AvtabEntry>,
        entry: AvtabEntry,
    ) -> Result<Option<u32>, TooManyRules> {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow(tab);
        }
        match self.probe(tab, &entry.key) {
            Ok(pos) => Ok(Some(pos)),
            Err(slot) => {
                let pos = u32::try_from(tab.len() + 1).map_err(|_| TooManyRules)?;
                self.slots[slot] = pos;
                self.len += 1;
                tab.push(entry);
                Ok(None)
            }
        }
    }

    /// Doubles the slots (rules beyond the estimate) and enters every position again.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, tab: &[AvtabEntry]) {
        let n = (self.slots.len() * 2).max(8);
        let old = std::mem::replace(&mut self.slots, vec![0; n]);
        self.shift = 64 - n.trailing_zeros();
        let mask = self.slots.len() - 1;
        for s in old.into_iter().filter(|&s| s != 0) {
            let mut i = self.home(&tab[s as usize - 1].key);
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = s;
        }
    }
}

/// More unconditional rules than 32-bit positions can number.
#[derive(Debug)]
pub(super) struct TooManyRules;

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_policy::avtab::{AvtabDatum, AvtabKind};
    use arbiter_policy::{ClassId, TypeId};

    fn entry(s: u16, t: u16, kind: AvtabKind) -> AvtabEntry {
        let key = AvtabKey {
            source: TypeId::new(s).unwrap(),
            target: TypeId::new(t).unwrap(),
            class: ClassId::new(1).unwrap(),
            kind,
        };
        let datum = if kind.is_type_rule() {
            AvtabDatum::Type(TypeId::new(1).unwrap())
        } else if kind.is_xperms() {
            AvtabDatum::Xperms(0)
        } else {
            AvtabDatum::Perms(1)
        };
        AvtabEntry::new(key, datum).unwrap()
    }

    #[test]
    fn finds_each_key_once_across_growth() {
        let mut tab = vec![];
        let mut idx = AvIndex::with_capacity(3);
        for round in 0..2 {
            for s in 1..200u16 {
                for kind in [AvtabKind::Allowed, AvtabKind::AuditDeny] {
                    let e = entry(s, 7, kind);
                    let found = idx.find_or_append(&mut tab, e).unwrap();
                    if round == 0 {
                        assert_eq!(found, None);
                    } else {
                        let pos = found.expect("entered in round 0") as usize;
                        assert_eq!(tab[pos].key, e.key);
                    }
                }
            }
        }
        assert_eq!(tab.len(), 199 * 2);
        assert_eq!(
            idx.get(&tab, &entry(5, 7, AvtabKind::AuditDeny).key),
            Some(9)
        );
        assert_eq!(idx.get(&tab, &entry(5, 8, AvtabKind::Allowed).key), None);
        assert_eq!(AvIndex::default().get(&tab, &tab[0].key), None);
    }
}

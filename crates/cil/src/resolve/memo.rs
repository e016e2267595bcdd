//! Written permission lists, each checked once per round. A distribution policy writes
//! 190,000 av rules with about 1,400 distinct `(class (perm ...))` lists (macro bodies
//! copied at every call); checking one reads its class's declaration and row and each
//! name in the row, about 250 instructions, where finding the list among those already
//! checked costs a hash of its atoms and one comparison.
//!
//! A list's outcome depends on the input, which does not change, and on which optionals
//! are live, which changes between rounds: the memo is emptied whenever liveness is
//! recomputed ([`ListMemo::clear`]). Only lists whose elements are all atoms are kept
//! (their atoms are the whole key); nested expressions are checked every time.

use crate::parse::ATOM;

/// The outcome of checking a written list, as [`ListMemo`] keeps it: what the check
/// returned, the flags it set on the resolver, and the hand-over's id of its value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Outcome(u32);

/// Checking the list marked the statement volatile.
const VOLATILE: u32 = 1;
/// Checking the list set the resolver's `err_hint`.
const HINT: u32 = 2;
/// A name of the list (its class or a permission) did not resolve.
const MISSING: u32 = 4;

impl Outcome {
    /// A checked list: `missing` when it did not resolve, the flags its check set, and
    /// `id`, its value's id in the hand-over (0 when none is handed over).
    pub fn new(missing: bool, volatile: bool, hint: bool, id: u16) -> Self {
        let flags = if missing { MISSING } else { 0 }
            | if volatile { VOLATILE } else { 0 }
            | if hint { HINT } else { 0 };
        Outcome((u32::from(id) << 16) | flags)
    }
    #[inline]
    pub fn missing(self) -> bool {
        self.0 & MISSING != 0
    }
    #[inline]
    pub fn volatile(self) -> bool {
        self.0 & VOLATILE != 0
    }
    #[inline]
    pub fn hint(self) -> bool {
        self.0 & HINT != 0
    }
    /// The hand-over's id of the list's value (0: none).
    #[inline]
    pub fn id(self) -> u16 {
        (self.0 >> 16) as u16
    }
}

/// Open addressing over written lists, keyed by the class element and the permission
/// elements exactly as the tree holds them (atoms: symbol with the [`ATOM`] bit).
pub struct ListMemo {
    /// The keys' permission elements, one key after another.
    words: Vec<u32>,
    /// The table, at most half full: each slot holds a key's class element (0, which is
    /// never an atom, when empty), its count and start in [`Self::words`], and its
    /// outcome, so that a probe compares the class and count without a second load.
    slots: Vec<Slot>,
    /// Slots in use.
    used: usize,
    /// 64 - log2(slots.len()): a key's home slot is its hash's top bits.
    shift: u32,
}

#[derive(Copy, Clone)]
struct Slot {
    class: u32,
    len: u32,
    start: u32,
    outcome: Outcome,
}

const EMPTY: Slot = Slot {
    class: 0,
    len: 0,
    start: 0,
    outcome: Outcome(0),
};

/// The table's first size (it doubles while it fills).
const FIRST_SLOTS: usize = 64;

impl Default for ListMemo {
    fn default() -> Self {
        ListMemo {
            words: Vec::new(),
            slots: vec![EMPTY; FIRST_SLOTS],
            used: 0,
            shift: 64 - FIRST_SLOTS.trailing_zeros(),
        }
    }
}

/// Where [`ListMemo::find`] left a key it does not hold: its hash, for [`ListMemo::insert`].
pub struct Absent(u64);

/// The two atom bits of two elements read as one word.
const ATOMS2: u64 = ((ATOM as u64) << 32) | ATOM as u64;

impl ListMemo {
    /// The hash of the key (`class`, `perms`), and whether every element of `perms` is an
    /// atom, in one pass over the elements two at a time.
    #[inline(always)]
    fn hash(class: u32, perms: &[u32]) -> (u64, bool) {
        const K: u64 = 0x517C_C1B7_2722_0A95;
        let mut h = (u64::from(class) | ((perms.len() as u64) << 32)).wrapping_mul(K);
        let mut all = ATOMS2;
        let mut pairs = perms.chunks_exact(2);
        for p in &mut pairs {
            let w = u64::from(p[0]) | (u64::from(p[1]) << 32);
            all &= w;
            h = (h.rotate_left(5) ^ w).wrapping_mul(K);
        }
        if let &[last] = pairs.remainder() {
            all &= u64::from(last) | (ATOMS2 & !u64::from(u32::MAX));
            h = (h.rotate_left(5) ^ u64::from(last)).wrapping_mul(K);
        }
        (h, all == ATOMS2)
    }

    /// The outcome of the list (`class`, `perms`) if checked in this round; else, when
    /// every element of `perms` is an atom, where to [`Self::insert`] it; `None` for a
    /// list the memo does not keep.
    #[inline(always)]
    pub fn find(&self, class: u32, perms: &[u32]) -> Option<Result<Outcome, Absent>> {
        let (h, atoms) = Self::hash(class, perms);
        if !atoms {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = (h >> self.shift) as usize;
        loop {
            let e = *self.slots.get(i)?;
            if e.class == 0 {
                return Some(Err(Absent(h)));
            }
            if e.class == class && e.len as usize == perms.len() && self.stored_is(e.start, perms) {
                return Some(Ok(e.outcome));
            }
            i = (i + 1) & mask;
        }
    }

    /// Whether the elements stored at `start` begin with `perms`, compared two at a time.
    #[inline(always)]
    fn stored_is(&self, start: u32, perms: &[u32]) -> bool {
        let Some(stored) = self.words.get(start as usize..start as usize + perms.len()) else {
            return false;
        };
        let mut a = stored.chunks_exact(2);
        let mut b = perms.chunks_exact(2);
        for (x, y) in (&mut a).zip(&mut b) {
            if (u64::from(x[0]) | u64::from(x[1]) << 32)
                != (u64::from(y[0]) | u64::from(y[1]) << 32)
            {
                return false;
            }
        }
        // Equal lengths: both remainders are empty or one element (a slice comparison
        // would call `bcmp`).
        a.remainder().first() == b.remainder().first()
    }

    /// Enters the list (`class`, `perms`), which [`Self::find`] did not hold, with its
    /// outcome.
    pub fn insert(&mut self, at: Absent, class: u32, perms: &[u32], outcome: Outcome) {
        if (self.used + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let start = self.words.len() as u32;
        self.words.extend_from_slice(perms);
        let slot = self.empty_slot(at.0);
        self.slots[slot] = Slot {
            class,
            len: perms.len() as u32,
            start,
            outcome,
        };
        self.used += 1;
    }

    /// The first empty slot on `h`'s probe sequence.
    fn empty_slot(&self, h: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = (h >> self.shift) as usize;
        while self.slots[i].class != 0 {
            i = (i + 1) & mask;
        }
        i
    }

    /// Doubles the slots and enters every key again.
    #[cold]
    fn grow(&mut self) {
        let n = self.slots.len() * 2;
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; n]);
        self.shift = 64 - n.trailing_zeros();
        for e in old.into_iter().filter(|e| e.class != 0) {
            let perms = &self.words[e.start as usize..][..e.len as usize];
            let slot = self.empty_slot(Self::hash(e.class, perms).0);
            self.slots[slot] = e;
        }
    }

    /// Forgets every list (liveness changed: outcomes may differ).
    pub fn clear(&mut self) {
        self.words.clear();
        self.slots.fill(EMPTY);
        self.used = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_each_list_entered_and_only_it() {
        let mut m = ListMemo::default();
        let a = [ATOM | 5, ATOM | 6];
        let b = [ATOM | 6, ATOM | 5];
        let Some(Err(at)) = m.find(ATOM | 1, &a) else {
            panic!("an empty memo holds nothing")
        };
        let o = Outcome::new(false, true, false, 7);
        m.insert(at, ATOM | 1, &a, o);
        assert_eq!(m.find(ATOM | 1, &a).map(Result::ok), Some(Some(o)));
        // Same names in another order, another class, a prefix, a longer list: absent.
        for (c, p) in [
            (ATOM | 1, &b[..]),
            (ATOM | 2, &a[..]),
            (ATOM | 1, &a[..1]),
            (ATOM | 1, &[ATOM | 5, ATOM | 6, ATOM | 7][..]),
            (ATOM | 1, &[][..]),
        ] {
            assert!(matches!(m.find(c, p), Some(Err(_))), "{c} {p:?}");
        }
        // A list with a nested list is not kept.
        assert!(m.find(ATOM | 1, &[ATOM | 5, 3]).is_none());
        m.clear();
        assert!(matches!(m.find(ATOM | 1, &a), Some(Err(_))));
    }

    #[test]
    fn outcomes_keep_every_flag_and_the_id() {
        for bits in 0..8u32 {
            let (missing, volatile, hint) = (bits & 1 != 0, bits & 2 != 0, bits & 4 != 0);
            let o = Outcome::new(missing, volatile, hint, u16::MAX - bits as u16);
            assert_eq!(
                (o.missing(), o.volatile(), o.hint(), o.id()),
                (missing, volatile, hint, u16::MAX - bits as u16)
            );
        }
    }

    #[test]
    fn keeps_many_lists_through_growth() {
        let mut m = ListMemo::default();
        let key = |i: u32| (ATOM | (i % 97), vec![ATOM | i, ATOM | (i * 7 + 1)]);
        for i in 0..20_000u32 {
            let (c, p) = key(i);
            match m.find(c, &p) {
                Some(Err(at)) => m.insert(at, c, &p, Outcome::new(false, false, false, i as u16)),
                _ => panic!("{i} entered twice"),
            }
        }
        for i in 0..20_000u32 {
            let (c, p) = key(i);
            assert_eq!(
                m.find(c, &p).and_then(Result::ok).map(Outcome::id),
                Some(i as u16)
            );
        }
    }
}

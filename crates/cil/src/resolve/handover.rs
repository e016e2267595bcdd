//! Permission lists the resolver hands to lowering. Checking an av rule's
//! `(class (name ...))` list reads each name in the class's row anyway; the row gives the
//! name's bit as cheaply as its presence, so the resolver keeps the access vector and
//! lowering does not resolve, or hash, the list again for each of the 180,000 rule
//! statements of a distribution policy.

/// Per statement, its permission list's (class declaration, access vector), kept as an
/// id into a table of distinct pairs: a policy repeats a few thousand lists across its
/// rule statements (macro bodies copied at every call), so an id takes 2 bytes a
/// statement where the pair would take 8.
#[derive(Default)]
pub struct PermHandOver {
    /// Per statement: its list's id + 1, 0 when none was handed over.
    of_stmt: Vec<u16>,
    /// The distinct pairs, class declaration in the high half and access vector in the
    /// low half.
    lists: Vec<u64>,
    /// Open addressing over [`Self::lists`] by a multiplicative hash, linear probing:
    /// position + 1, 0 empty. At most half full.
    slots: Vec<u16>,
    /// 64 - log2(slots.len()): a key's home slot is its hash's top bits.
    shift: u32,
    /// Set by [`Self::lower_classes`]: the pairs hold lowering's class positions, and
    /// no list is entered any more.
    lowered: bool,
}

/// Ids fit `u16` with 0 meaning none: past this many distinct lists, later ones are not
/// handed over (lowering resolves them itself).
const MAX_LISTS: usize = u16::MAX as usize;

impl PermHandOver {
    /// An empty hand-over for `stmts` statements.
    pub fn new(stmts: usize) -> Self {
        let mut h = PermHandOver {
            of_stmt: vec![0; stmts],
            ..Default::default()
        };
        h.grow();
        h
    }

    /// Records that statement `s` has the list `(class, bits)`.
    #[inline]
    pub fn set(&mut self, s: u32, class: u32, bits: u32) {
        let id = self.enter(class, bits);
        self.set_id(s, id);
    }

    /// The id of the list `(class, bits)`, entered when new: what [`Self::set_id`]
    /// records for a statement with that list; 0 past the table's last id.
    #[inline]
    pub fn enter(&mut self, class: u32, bits: u32) -> u16 {
        self.id_of(u64::from(class) << 32 | u64::from(bits))
            .unwrap_or(0)
    }

    /// Records that statement `s` has the list of id `id` ([`Self::enter`]; 0: none).
    #[inline(always)]
    pub fn set_id(&mut self, s: u32, id: u16) {
        if let Some(slot) = self.of_stmt.get_mut(s as usize) {
            *slot = id;
        }
    }

    /// Records that statement `s` has no list to hand over (a recheck in a later round
    /// may find none where an earlier one did).
    pub fn clear(&mut self, s: u32) {
        self.set_id(s, 0);
    }

    /// The (class declaration, access vector) of statement `s`'s list, if handed over.
    #[inline]
    pub fn get(&self, s: u32) -> Option<(u32, u32)> {
        let id = *self.of_stmt.get(s as usize)?;
        let key = *self.lists.get((id as usize).checked_sub(1)?)?;
        Some(((key >> 32) as u32, key as u32))
    }

    /// Rewrites every pair's class declaration as `position[declaration]` (lowering's
    /// class numbering, known once the class order is merged), so that lowering reads a
    /// statement's pair with no look-up of its own. Lists are no longer entered after
    /// this ([`Self::set`] then records none for a new one: the table is keyed by
    /// declarations).
    pub fn lower_classes(&mut self, position: &[u32]) {
        for key in &mut self.lists {
            let class = position
                .get((*key >> 32) as usize)
                .copied()
                .unwrap_or(u32::MAX);
            *key = u64::from(class) << 32 | (*key & u64::from(u32::MAX));
        }
        self.lowered = true;
    }

    /// The id + 1 of `key`, entered when new; `None` when the table is full.
    #[inline]
    fn id_of(&mut self, key: u64) -> Option<u16> {
        if self.lowered {
            return None;
        }
        if (self.lists.len() + 1) * 2 > self.slots.len() && self.lists.len() < MAX_LISTS {
            self.grow();
        }
        match self.find(key) {
            Ok(id) => Some(id),
            // Full: only lists already entered have an id.
            Err(_) if self.lists.len() >= MAX_LISTS => None,
            Err(slot) => {
                self.lists.push(key);
                let id = self.lists.len() as u16;
                self.slots[slot] = id;
                Some(id)
            }
        }
    }

    /// `key`'s id + 1, or the empty slot where it would go.
    #[inline]
    fn find(&self, key: u64) -> Result<u16, usize> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            match self.slots[i] {
                0 => return Err(i),
                id if self.lists[id as usize - 1] == key => return Ok(id),
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// The first slot to probe for `key` (the high bits of a multiplicative hash).
    #[inline]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// Doubles the slots (at least 1,024) and enters every list again.
    #[cold]
    fn grow(&mut self) {
        let n = (self.slots.len() * 2).max(4096);
        self.slots = vec![0; n];
        self.shift = 64 - n.trailing_zeros();
        for p in 0..self.lists.len() {
            if let Err(slot) = self.find(self.lists[p]) {
                self.slots[slot] = p as u16 + 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hands_over_each_statements_list_and_shares_equal_ones() {
        let mut h = PermHandOver::new(10);
        assert_eq!(h.get(3), None);
        h.set(3, 7, 0b101);
        h.set(4, 7, 0b101);
        h.set(5, 8, 0b101);
        assert_eq!(h.get(3), Some((7, 0b101)));
        assert_eq!(h.get(4), Some((7, 0b101)));
        assert_eq!(h.get(5), Some((8, 0b101)));
        assert_eq!(h.lists.len(), 2);
        assert_eq!(h.get(6), None);
        // A later round's recheck replaces or withdraws the list.
        h.set(3, 7, 0b1);
        assert_eq!(h.get(3), Some((7, 0b1)));
        h.clear(4);
        assert_eq!(h.get(4), None);
        // Out of range statements are ignored, not a panic.
        assert_eq!(PermHandOver::default().get(0), None);
        h.set(99, 1, 1);
        assert_eq!(h.get(99), None);
    }

    #[test]
    fn lowered_pairs_carry_class_positions_and_take_no_new_list() {
        let mut h = PermHandOver::new(4);
        h.set(0, 2, 0b11);
        h.set(1, 0, 0b1);
        h.set(2, 9, 0b1);
        h.lower_classes(&[5, 6, 7]);
        assert_eq!(h.get(0), Some((7, 0b11)));
        assert_eq!(h.get(1), Some((5, 0b1)));
        assert_eq!(
            h.get(2),
            Some((u32::MAX, 0b1)),
            "a class past the numbering"
        );
        h.set(3, 1, 0b1);
        assert_eq!(
            h.get(3),
            None,
            "keyed by declarations: nothing entered after"
        );
    }

    #[test]
    fn past_the_id_space_new_lists_are_not_handed_over() {
        let mut h = PermHandOver::new(2);
        for bits in 0..MAX_LISTS as u32 {
            h.set(0, 1, bits);
            assert_eq!(h.get(0), Some((1, bits)));
        }
        h.set(1, 1, 5);
        assert_eq!(h.get(1), Some((1, 5)), "an entered list still has its id");
        h.set(1, 2, 5);
        assert_eq!(h.get(1), None, "a new list past the table is withdrawn");
    }
}

//! A dense bitset over internal values (types, roles, users, categories): attribute
//! expressions are unions and intersections of these.

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bits(pub Vec<u64>);

impl Bits {
    pub fn new(n: usize) -> Self {
        Bits(vec![0; n.div_ceil(64)])
    }
    #[inline]
    pub fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    #[inline]
    pub fn get(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
    pub fn or(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }
    pub fn and(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a &= b;
        }
    }
    pub fn xor(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a ^= b;
        }
    }
    /// Complement within the first `n` bits.
    pub fn not(&mut self, n: usize) {
        for w in self.0.iter_mut() {
            *w = !*w;
        }
        self.trim(n);
    }
    pub fn all(n: usize) -> Self {
        let mut b = Bits(vec![!0; n.div_ceil(64)]);
        b.trim(n);
        b
    }
    fn trim(&mut self, n: usize) {
        if !n.is_multiple_of(64) {
            if let Some(last) = self.0.last_mut() {
                *last &= (1u64 << (n % 64)) - 1;
            }
        }
    }
    pub fn count(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }
    /// The highest set bit.
    pub fn last(&self) -> Option<usize> {
        let (i, w) = self.0.iter().enumerate().rev().find(|(_, &w)| w != 0)?;
        Some(i * 64 + 63 - w.leading_zeros() as usize)
    }
    /// The set bits, ascending.
    pub fn iter(&self) -> Ones<'_> {
        Ones {
            words: &self.0,
            at: 0,
            word: self.0.first().copied().unwrap_or(0),
        }
    }
}

/// The set bits of a [`Bits`], ascending: a word at a time, each bit found by its
/// trailing zeros (lowering's passes walk the live statements of a distribution policy
/// this way, where a `flat_map` of per-word iterators cost twice as much).
pub struct Ones<'a> {
    words: &'a [u64],
    /// The index of `word` in `words`.
    at: usize,
    /// What is left of word `at`.
    word: u64,
}

impl Iterator for Ones<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.word == 0 {
            self.at += 1;
            self.word = *self.words.get(self.at)?;
        }
        let b = self.word.trailing_zeros() as usize;
        self.word &= self.word - 1;
        Some(self.at * 64 + b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iter_lists_the_set_bits_ascending() {
        assert_eq!(Bits::new(0).iter().count(), 0);
        assert_eq!(Bits::new(300).iter().count(), 0);
        // Bits in the first and last word, across empty words, and at word edges.
        let wanted = [0usize, 1, 63, 64, 200, 255, 256, 511, 639];
        let mut b = Bits::new(640);
        for &i in &wanted {
            b.set(i);
        }
        assert_eq!(b.iter().collect::<Vec<_>>(), wanted);
        let naive: Vec<usize> = (0..640).filter(|&i| b.get(i)).collect();
        assert_eq!(b.iter().collect::<Vec<_>>(), naive);
        assert_eq!(b.last(), Some(639));
        assert_eq!(Bits::new(300).last(), None);
        let mut one = Bits::new(300);
        one.set(64);
        assert_eq!(one.last(), Some(64));
    }
}

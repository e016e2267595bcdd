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
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(i * 64 + b)
            })
        })
    }
}

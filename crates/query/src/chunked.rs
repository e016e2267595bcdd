//! A growable vector kept in pieces of at most 64 kB, for a query's transient results.
//!
//! glibc maps every block over its mmap threshold (128 kB by default) on its own, and when
//! such a block is freed it raises the threshold to the block's size (and the heap's trim
//! threshold to twice that). One large transient — a TE query's 9,000 matches in a `Vec`
//! grown by doubling to 0.5 MB — therefore makes every later buffer under 0.5 MB come from
//! the heap, where it stays as free memory once freed, and leaves the heap's top untrimmed:
//! about 0.2 MB a whole setools script kept for nothing. Pieces under the threshold come
//! from the heap and go back to it; they never move the threshold.

use std::ops::Index;

/// The most bytes one piece holds: half glibc's default mmap threshold, so that a piece and
/// its allocator header stay well under it.
const PIECE_BYTES: usize = 64 * 1024;

/// A vector of `T` in pieces of [`Chunked::PIECE`] elements, each allocated once at its
/// full size: elements never move once pushed, and no allocation is over 64 kB (but the
/// list of pieces, 24 bytes a piece).
pub struct Chunked<T> {
    pieces: Vec<Vec<T>>,
    len: usize,
}

impl<T> Chunked<T> {
    /// Elements a piece holds: the largest power of two whose bytes fit in 64 kB
    /// (one for an element larger than that), so that finding one is a shift and a mask.
    pub const PIECE: usize = {
        let fit = match PIECE_BYTES.checked_div(std::mem::size_of::<T>()) {
            Some(fit) => fit,
            None => PIECE_BYTES,
        };
        if fit == 0 {
            1
        } else {
            1 << (usize::BITS - 1 - fit.leading_zeros())
        }
    };

    /// An empty vector (no allocation until the first push).
    pub fn new() -> Self {
        Chunked {
            pieces: Vec::new(),
            len: 0,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `value`, starting a new piece when the last one is full.
    pub fn push(&mut self, value: T) {
        match self.pieces.last_mut() {
            Some(p) if p.len() < Self::PIECE => p.push(value),
            _ => {
                let mut p = Vec::with_capacity(Self::PIECE);
                p.push(value);
                self.pieces.push(p);
            }
        }
        self.len += 1;
    }

    /// Element `i`, if there is one.
    pub fn get(&self, i: usize) -> Option<&T> {
        self.pieces
            .get(i / Self::PIECE)
            .and_then(|p| p.get(i % Self::PIECE))
    }

    /// The elements in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + '_ {
        self.pieces.iter().flatten()
    }
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked::new()
    }
}

impl<T> Index<usize> for Chunked<T> {
    type Output = T;

    fn index(&self, i: usize) -> &T {
        match self.get(i) {
            Some(v) => v,
            None => panic!("index {i} out of range for {} elements", self.len),
        }
    }
}

impl<T> FromIterator<T> for Chunked<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut out = Chunked::new();
        for v in iter {
            out.push(v);
        }
        out
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Chunked<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_stay_under_64_kb_and_elements_keep_their_positions() {
        assert_eq!(Chunked::<u64>::PIECE, 8192);
        assert_eq!(Chunked::<[u8; 56]>::PIECE, 1024);
        assert_eq!(Chunked::<[u8; 100_000]>::PIECE, 1);
        let v: Chunked<u64> = (0..20_000u64).collect();
        assert_eq!(v.len(), 20_000);
        assert_eq!(v.pieces.len(), 3);
        for p in &v.pieces {
            assert_eq!(
                p.capacity(),
                8192,
                "a piece is allocated once, at its full size"
            );
            assert!(p.capacity() * 8 <= PIECE_BYTES);
        }
        assert!((0..20_000).all(|i| v[i as usize] == i && v.get(i as usize) == Some(&i)));
        assert_eq!(v.get(20_000), None);
        assert!(v.iter().copied().eq(0..20_000));
        assert!(v.iter().rev().copied().eq((0..20_000).rev()));
        assert!(Chunked::<u8>::new().is_empty());
    }
}

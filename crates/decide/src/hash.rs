//! The hasher of the decision structures' maps ([`FxHasher`]).
//!
//! Their keys — policy ids and the policy's own names — are fixed when the policy is
//! loaded, so a client cannot choose keys that collide: it can only look keys up, never
//! insert them.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The hasher of rustc (`rustc-hash`): one multiply per word, then a folded multiply at
/// the end so the low bits used for bucket selection depend on every input bit.
///
/// Not DoS-resistant: use it only for maps whose keys an attacker does not choose.
#[derive(Clone, Copy, Default)]
pub struct FxHasher {
    hash: u64,
}

const FX_K: u64 = 0xf135_7aea_2e62_a9c5;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash ^ word).wrapping_mul(FX_K);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8-byte chunk")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            // The length goes in the top byte so "a" and "a\0" differ.
            self.add(u64::from_le_bytes(buf) ^ ((rest.len() as u64) << 56));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // Multiplication only carries differences upwards, so two names differing in the
        // last byte of a word differ only in the top byte of `hash`. A folded multiply
        // (low ^ high half of the 128-bit product) brings them down to the bucket bits.
        let p = u128::from(self.hash) * u128::from(FX_K);
        (p as u64) ^ ((p >> 64) as u64)
    }
}

/// `BuildHasher` for [`FxHasher`].
pub type FxBuildHasher = BuildHasherDefault<FxHasher>;
/// A `HashMap` hashed with [`FxHasher`].
pub type FxHashMap<K, V> = HashMap<K, V, FxBuildHasher>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn fx<T: Hash + ?Sized>(v: &T) -> u64 {
        FxBuildHasher::default().hash_one(v)
    }

    #[test]
    fn fx_hash_separates_lengths_and_tails() {
        assert_ne!(fx("a"), fx("a\0"));
        assert_ne!(fx("abcdefgh"), fx("abcdefgh\0"));
        assert_ne!(fx("init_t"), fx("init_u"));
        // The low bits (bucket index) must differ for names differing only in a high byte
        // of the last word.
        let a = fx("abcdefg1") & 0xffff;
        let b = fx("abcdefg2") & 0xffff;
        assert_ne!(a, b);
    }
}

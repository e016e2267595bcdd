//! Hash tables for the reader's duplicate checks: of packed 64-bit rule keys, and a hasher
//! for names.
//!
//! The access vector table alone has some 100,000 entries in a distribution policy, each
//! to be checked against all others. An exact set of them (a `HashSet<u64>`, or any table
//! with a slot per key) is several hundred kilobytes touched at random: loading spent more
//! time there than reading the entries. So the check is in two steps. A [`Bloom`] filter of
//! 16 bits a key (a quarter of the memory, mostly cache-resident) says of each key whether
//! it is certainly new; the few that might not be (about 0.5 % of them, plus any true
//! duplicate) are then looked up exactly, in one pass over the table, with a [`KeyMap`] of
//! just those keys.
//!
//! Keys come from the policy file, which may be hostile: with a fixed hash, an adversary
//! could choose keys that collide, filling the filter's words or one probe run. Every table
//! is therefore seeded from the standard library's random hasher keys, and keys are mixed
//! with a full-avalanche finaliser, so that colliding keys cannot be chosen in advance.

use std::hash::{BuildHasher, RandomState};

/// A fresh random seed.
fn random_seed() -> u64 {
    RandomState::new().hash_one(0x5eed_u64)
}

/// murmur3's 64-bit finaliser over the seeded key: every input bit affects every output
/// bit.
#[inline]
fn mix(key: u64, seed: u64) -> u64 {
    let mut x = key ^ seed;
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// Hashes names (and other byte strings) for the reader's hash sets: 8 bytes at a time
/// through [`mix`], seeded like the tables below. SipHash, the standard library's, costs
/// several times more on the short names of a policy's thousands of symbols.
#[derive(Clone)]
pub(crate) struct NameHash {
    seed: u64,
}

impl NameHash {
    pub fn new() -> Self {
        NameHash {
            seed: random_seed(),
        }
    }
}

impl std::hash::BuildHasher for NameHash {
    type Hasher = NameHasher;
    fn build_hasher(&self) -> NameHasher {
        NameHasher(self.seed)
    }
}

/// The hasher of [`NameHash`].
pub(crate) struct NameHasher(u64);

impl std::hash::Hasher for NameHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for w in &mut chunks {
            self.0 = mix(u64::from_le_bytes(w.try_into().expect("8 bytes")), self.0);
        }
        let rest = chunks.remainder();
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        // The length in the top byte tells "a" from "a\0" (rest is at most 7 bytes).
        last[7] = rest.len() as u8;
        self.0 = mix(u64::from_le_bytes(last), self.0);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A blocked Bloom filter: each key sets 4 bits of one 64-bit word. Never wrong about a
/// key being new; wrong about a key being old for about 1 key in 200 at the load it is
/// sized for.
pub(crate) struct Bloom {
    words: Box<[u64]>,
    seed: u64,
}

impl Bloom {
    /// Bits of filter per key it is sized for.
    const BITS_PER_KEY: usize = 16;

    /// A filter for about `n` keys.
    pub fn with_capacity(n: usize) -> Self {
        let words = (n.saturating_mul(Self::BITS_PER_KEY) / 64).max(16);
        Bloom {
            words: vec![0; words].into_boxed_slice(),
            seed: random_seed(),
        }
    }

    /// The word of `key` and the bits it sets there.
    #[inline]
    fn locate(&self, key: u64) -> (usize, u64) {
        let h = mix(key, self.seed);
        // The word from the high 40 bits of the hash (as a fraction of the table), the four
        // bits from the low 24.
        let word = ((u128::from(h >> 24) * self.words.len() as u128) >> 40) as usize;
        let bits = (1u64 << (h & 63))
            | (1u64 << ((h >> 6) & 63))
            | (1u64 << ((h >> 12) & 63))
            | (1u64 << ((h >> 18) & 63));
        (word, bits)
    }

    /// Adds `key`; `false` if it was certainly not added before, `true` if it may have been.
    #[inline]
    pub fn insert(&mut self, key: u64) -> bool {
        let (word, bits) = self.locate(key);
        let w = &mut self.words[word];
        let seen = *w & bits == bits;
        *w |= bits;
        seen
    }

    /// `false` if `key` was certainly not added, `true` if it may have been.
    #[inline]
    pub fn may_contain(&self, key: u64) -> bool {
        let (word, bits) = self.locate(key);
        self.words[word] & bits == bits
    }
}

/// A set of a few keys for testing many others against: a bitmap indexed by a cheap hash
/// answers "certainly not" for most, and only the rest are looked up in a [`KeyMap`].
pub(crate) struct FewKeys<V: Copy + Default> {
    /// 64 bits per key or more (a power of two): few keys are let through in error.
    bits: Box<[u64]>,
    /// `64 - log2(bits)`.
    shift: u32,
    multiplier: u64,
    pub map: KeyMap<V>,
}

impl<V: Copy + Default> FewKeys<V> {
    pub fn new(keys: impl ExactSizeIterator<Item = u64>) -> Self {
        let nbits = (keys.len().saturating_mul(64)).max(512).next_power_of_two();
        let mut few = FewKeys {
            bits: vec![0; nbits / 64].into_boxed_slice(),
            shift: 64 - nbits.trailing_zeros(),
            multiplier: random_seed() | 1,
            map: KeyMap::with_capacity(keys.len()),
        };
        for k in keys {
            let b = few.bit(k);
            few.bits[b / 64] |= 1 << (b % 64);
            few.map.entry(k);
        }
        few
    }

    /// Multiply-shift: seeded, so no input can aim at the set bits.
    #[inline]
    fn bit(&self, key: u64) -> usize {
        (key.wrapping_mul(self.multiplier) >> self.shift) as usize
    }

    /// The value of `key`, if it is one of the set's keys.
    #[inline]
    pub fn get_mut(&mut self, key: u64) -> Option<&mut V> {
        let b = self.bit(key);
        if self.bits[b / 64] & (1 << (b % 64)) == 0 {
            return None;
        }
        self.map.get_mut(key)
    }
}

/// A map from non-zero `u64` keys (held in full) to small copyable values; linear probing,
/// load factor at most 1/2, power-of-two sizes, growing as keys come.
pub(crate) struct KeyMap<V: Copy + Default> {
    keys: Box<[u64]>,
    values: Box<[V]>,
    len: usize,
    seed: u64,
}

impl<V: Copy + Default> KeyMap<V> {
    /// A map that holds `n` keys without growing.
    pub fn with_capacity(n: usize) -> Self {
        Self::sized(
            n.saturating_mul(2).max(16).next_power_of_two(),
            random_seed(),
        )
    }

    fn sized(slots: usize, seed: u64) -> Self {
        KeyMap {
            keys: vec![0; slots].into_boxed_slice(),
            values: vec![V::default(); slots].into_boxed_slice(),
            len: 0,
            seed,
        }
    }

    /// The slot holding `key`, or the empty slot where it would go.
    #[inline]
    fn find(&self, key: u64) -> (usize, bool) {
        debug_assert_ne!(key, 0, "0 marks empty slots");
        let mask = self.keys.len() - 1;
        let mut i = mix(key, self.seed) as usize & mask;
        loop {
            let k = self.keys[i];
            if k == key {
                return (i, true);
            }
            if k == 0 {
                return (i, false);
            }
            i = (i + 1) & mask;
        }
    }

    /// Whether `key` is present.
    #[inline]
    pub fn contains(&self, key: u64) -> bool {
        self.find(key).1
    }

    /// The value of `key`, if present.
    #[inline]
    pub fn get(&self, key: u64) -> Option<V> {
        match self.find(key) {
            (i, true) => Some(self.values[i]),
            _ => None,
        }
    }

    /// The value of `key`, if present.
    #[inline]
    pub fn get_mut(&mut self, key: u64) -> Option<&mut V> {
        match self.find(key) {
            (i, true) => Some(&mut self.values[i]),
            _ => None,
        }
    }

    /// The value of `key`, inserting it with `V::default()` if absent.
    #[inline]
    pub fn entry(&mut self, key: u64) -> &mut V {
        let (mut i, found) = self.find(key);
        if !found {
            if (self.len + 1) * 2 > self.keys.len() {
                self.grow();
                i = self.find(key).0;
            }
            self.keys[i] = key;
            self.len += 1;
        }
        &mut self.values[i]
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let mut bigger = KeyMap::sized(self.keys.len() * 2, self.seed);
        for (&k, &v) in self.keys.iter().zip(self.values.iter()) {
            if k != 0 {
                let (i, _) = bigger.find(k);
                bigger.keys[i] = k;
                bigger.values[i] = v;
            }
        }
        bigger.len = self.len;
        *self = bigger;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bloom_never_forgets_and_rarely_imagines() {
        let n = 100_000u64;
        let mut b = Bloom::with_capacity(n as usize);
        let mut false_positives = 0;
        for k in 1..=n {
            if b.insert(k << 16 | 1) {
                false_positives += 1;
            }
        }
        for k in 1..=n {
            assert!(b.may_contain(k << 16 | 1), "{k} forgotten");
            assert!(b.insert(k << 16 | 1), "{k} forgotten");
        }
        // About 0.5 % expected; a generous bound so the test never flakes.
        assert!(false_positives < 2_000, "{false_positives} false positives");
    }

    #[test]
    fn few_keys_find_exactly_their_keys() {
        let keys: Vec<u64> = (1..=300u64).map(|k| ((k * 7919) << 20) | 5).collect();
        let mut few: FewKeys<u32> = FewKeys::new(keys.iter().copied());
        for &k in &keys {
            *few.get_mut(k).expect("present") += 1;
        }
        for k in 1..=100_000u64 {
            if !keys.contains(&k) {
                assert!(few.get_mut(k).is_none(), "{k}");
            }
        }
        assert!(keys.iter().all(|&k| few.map.get_mut(k) == Some(&mut 1)));
    }

    #[test]
    fn name_hash_tells_names_apart() {
        use std::collections::HashSet;
        let names: Vec<String> = (0..5000).map(|i| format!("type_{i}_t")).collect();
        let mut set: HashSet<&str, NameHash> = HashSet::with_hasher(NameHash::new());
        for n in &names {
            assert!(set.insert(n.as_str()));
        }
        for n in &names {
            assert!(!set.insert(n.as_str()));
        }
        for s in ["", "a", "a\0", "abcdefgh", "abcdefgh\0", "abcdefghi"] {
            assert!(set.insert(s), "{s:?}");
        }
    }

    #[test]
    fn key_map_values_survive_growth() {
        let mut m: KeyMap<(u32, u32)> = KeyMap::with_capacity(0);
        for k in 1..=500u64 {
            *m.entry(k << 40) = (k as u32, 7);
        }
        for k in 1..=500u64 {
            assert_eq!(*m.entry(k << 40), (k as u32, 7));
            assert!(m.contains(k << 40));
            assert!(!m.contains(k << 41 | 1));
        }
        assert_eq!(m.get_mut(3 << 40).copied(), Some((3, 7)));
        assert_eq!(m.get_mut(3 << 41 | 1), None);
        assert_eq!(m.len, 500);
    }
}

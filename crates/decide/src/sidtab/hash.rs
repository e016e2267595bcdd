//! Keyed hashing of contexts and strings (clients choose them, so keys are random).

use super::*;

/// A keyed hash (foldhash-style folded multiplies) with a per-table random key. Contexts
/// and strings here come from clients, so unlike the policy's own names (see
/// [`crate::hash::FxHasher`]) they must not be able to pick colliding keys offline.
///
/// It is also the `BuildHasher` of maps elsewhere whose keys come from logs or clients
/// (`arbiter_decide::KeyedState`): each map built with `default()` draws its own keys.
#[derive(Clone, Copy)]
pub struct Keys(u64, u64);

pub(super) const P0: u64 = 0x243f_6a88_85a3_08d3;
pub(super) const P1: u64 = 0x1319_8a2e_0370_7344;
pub(super) const P2: u64 = 0xa409_3822_299f_31d0;

impl Keys {
    pub(super) fn random() -> Keys {
        #[cfg(loom)]
        {
            // Loom replays executions and needs them deterministic.
            Keys(0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210)
        }
        #[cfg(not(loom))]
        {
            use std::hash::BuildHasher;
            let s = std::collections::hash_map::RandomState::new();
            Keys(s.hash_one(P0) | 1, s.hash_one(P1) | 1)
        }
    }

    pub(super) fn hasher(self) -> KeyedHasher {
        KeyedHasher {
            h: self.0,
            k: self.1,
        }
    }

    pub(super) fn hash_str(self, s: &str) -> u64 {
        let mut h = self.hasher();
        h.h ^= s.len() as u64;
        h.write(s.as_bytes());
        h.finish()
    }

    pub(super) fn hash_context(self, c: &Context) -> u64 {
        let mut h = self.hasher();
        c.hash(&mut h);
        h.finish()
    }
}

impl Default for Keys {
    /// Fresh random keys.
    fn default() -> Keys {
        Keys::random()
    }
}

impl std::hash::BuildHasher for Keys {
    type Hasher = KeyedHasher;
    fn build_hasher(&self) -> KeyedHasher {
        self.hasher()
    }
}

#[inline]
pub(super) fn fold(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

/// The hasher of a [`Keys`]: two folded multiplies per 16 bytes.
pub struct KeyedHasher {
    h: u64,
    k: u64,
}

impl Hasher for KeyedHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let le = |b: &[u8]| {
            let mut w = [0u8; 8];
            w[..b.len()].copy_from_slice(b);
            u64::from_le_bytes(w)
        };
        let mut rest = bytes;
        while rest.len() >= 16 {
            let (a, b) = (le(&rest[..8]), le(&rest[8..16]));
            self.h = fold(a ^ self.h ^ P0, b ^ self.k);
            rest = &rest[16..];
        }
        if !rest.is_empty() {
            let (a, b) = rest.split_at(rest.len().min(8));
            self.h = fold(le(a) ^ self.h ^ P0, le(b) ^ self.k ^ rest.len() as u64);
        }
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.h = fold(i ^ self.h ^ P0, self.k ^ P1);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.write_u64(u64::from(i));
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        fold(self.h ^ P2, self.k ^ P0)
    }
}

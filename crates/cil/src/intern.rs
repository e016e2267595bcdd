//! Identifier interning: every symbol of the source becomes a dense `Sym` (u32), so the
//! later passes compare and index by integer instead of hashing strings again.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// An interned identifier (index into [`Interner`]).
pub type Sym = u32;

/// The multiply-rotate hash rustc uses for its own symbol tables: keys here are short
/// identifiers from trusted-size input, so a DoS-resistant hash buys nothing.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(b));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
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
        self.0
    }
}

pub type FxBuild = BuildHasherDefault<FxHasher>;
pub type FxHashMap<K, V> = HashMap<K, V, FxBuild>;

/// The identifier table: bytes stored once in one buffer, found by an open-addressing
/// table of symbol ids (no per-identifier allocation; a probe compares a stored 32-bit hash
/// before the bytes).
pub struct Interner {
    /// Slots: symbol id + 1, or 0 when empty. Size is a power of two, at most half full.
    slots: Vec<u32>,
    hashes: Vec<u32>,
    spans: Vec<(u32, u32)>,
    text: Vec<u8>,
}

impl Default for Interner {
    fn default() -> Self {
        Interner {
            slots: vec![0; 1024],
            hashes: Vec::new(),
            spans: Vec::new(),
            text: Vec::new(),
        }
    }
}

#[inline]
fn hash_bytes(s: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(s);
    h.write_usize(s.len());
    h.finish()
}

impl Interner {
    pub fn intern(&mut self, s: &[u8]) -> Sym {
        let h64 = hash_bytes(s);
        let h = (h64 >> 32) as u32;
        let mask = self.slots.len() - 1;
        let mut i = (h64 as usize) & mask;
        loop {
            let e = self.slots[i];
            if e == 0 {
                break;
            }
            let id = e - 1;
            if self.hashes[id as usize] == h && self.bytes(id) == s {
                return id;
            }
            i = (i + 1) & mask;
        }
        let id = self.spans.len() as Sym;
        let start = self.text.len() as u32;
        self.text.extend_from_slice(s);
        self.spans.push((start, self.text.len() as u32));
        self.hashes.push(h);
        self.slots[i] = id + 1;
        if self.spans.len() * 2 > self.slots.len() {
            self.grow();
        }
        id
    }

    /// The symbol of `s` if it was interned (a lookup that adds nothing).
    pub fn get(&self, s: &[u8]) -> Option<Sym> {
        let h64 = hash_bytes(s);
        let h = (h64 >> 32) as u32;
        let mask = self.slots.len() - 1;
        let mut i = (h64 as usize) & mask;
        loop {
            let e = self.slots[i];
            if e == 0 {
                return None;
            }
            let id = e - 1;
            if self.hashes[id as usize] == h && self.bytes(id) == s {
                return Some(id);
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let size = self.slots.len() * 2;
        let mask = size - 1;
        let mut slots = vec![0u32; size];
        for id in 0..self.spans.len() as u32 {
            let mut i = (hash_bytes(self.bytes(id)) as usize) & mask;
            while slots[i] != 0 {
                i = (i + 1) & mask;
            }
            slots[i] = id + 1;
        }
        self.slots = slots;
    }

    pub fn bytes(&self, id: Sym) -> &[u8] {
        let (a, b) = self.spans[id as usize];
        &self.text[a as usize..b as usize]
    }

    /// The identifier as text (identifiers that reach the policy are ASCII; anything else is
    /// shown lossily in messages).
    pub fn str(&self, id: Sym) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(self.bytes(id))
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }
}

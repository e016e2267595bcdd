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

/// The identifier table: bytes stored once in one buffer, looked up by content.
#[derive(Default)]
pub struct Interner {
    map: FxHashMap<Box<[u8]>, Sym>,
    spans: Vec<(u32, u32)>,
    text: Vec<u8>,
}

impl Interner {
    pub fn intern(&mut self, s: &[u8]) -> Sym {
        if let Some(&id) = self.map.get(s) {
            return id;
        }
        let id = self.spans.len() as Sym;
        let start = self.text.len() as u32;
        self.text.extend_from_slice(s);
        self.spans.push((start, self.text.len() as u32));
        self.map.insert(s.into(), id);
        id
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

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
/// table (no per-identifier allocation). A slot packs the upper half of the name's hash
/// with its id, so a probe rejects another name without touching the text.
pub struct Interner {
    /// Slots: `tag << 32 | (id + 1)` (`tag` from [`slot_tag`]), or 0 when empty. Size is a power of two, at most
    /// half full.
    slots: Vec<u64>,
    spans: Vec<(u32, u32)>,
    text: Vec<u8>,
}

impl Default for Interner {
    fn default() -> Self {
        Interner {
            slots: vec![0; 1024],
            spans: Vec::new(),
            text: Vec::new(),
        }
    }
}

/// One step of the interner's hash: Fx's multiply-rotate over a 64-bit word.
#[inline(always)]
pub(crate) fn mix(h: u64, w: u64) -> u64 {
    (h.rotate_left(5) ^ w).wrapping_mul(SEED)
}

/// The interner's hash finished from the state after a name's whole 8-byte words, its
/// last partial word (the remaining bytes, zero-padded, little-endian; 0 when none) and
/// its length. The lexer computes the same state while it scans a symbol (see
/// `parse::scan_symbol`), so a token's bytes are read once.
#[inline(always)]
pub(crate) fn finish_hash(h: u64, tail: u64, len: usize) -> u64 {
    let h = mix(mix(h, tail), len as u64);
    h ^ (h >> 29)
}

/// The interner's hash of a whole name: Fx's multiply-rotate over its 8-byte words, the
/// zero-padded last partial word, then the length. The partial word is read as
/// (possibly overlapping) whole loads instead of copied into a buffer, so a short
/// identifier costs a few instructions and no `memcpy` call.
#[inline]
pub(crate) fn hash_bytes(s: &[u8]) -> u64 {
    let n = s.len();
    let mut h = 0;
    let mut chunks = s.chunks_exact(8);
    for c in &mut chunks {
        h = mix(h, u64::from_le_bytes(c.try_into().expect("8 bytes")));
    }
    let r = chunks.remainder();
    let k = r.len();
    let tail = match k {
        0 => 0,
        _ if n >= 8 => u64::from_le_bytes(s[n - 8..].try_into().expect("8 bytes")) >> (8 * (8 - k)),
        4..=7 => {
            let lo = u32::from_le_bytes(r[..4].try_into().expect("4 bytes")) as u64;
            let hi = u32::from_le_bytes(r[k - 4..].try_into().expect("4 bytes")) as u64;
            lo | (hi >> (8 * (8 - k))) << 32
        }
        _ => r.iter().rev().fold(0u64, |w, &b| w << 8 | b as u64),
    };
    finish_hash(h, tail, n)
}

/// A slot's upper half: the upper half of the name's hash with its lowest bit set, so that
/// no tag is 0 and a slot whose tag matches is never the empty slot.
#[inline(always)]
fn slot_tag(h64: u64) -> u64 {
    (h64 | 1 << 32) & !0xffff_ffff
}

/// Byte equality for short identifiers without a `memcmp` call: the first and last eight
/// (or four) bytes as whole words, which together cover any length up to 16.
#[inline(always)]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let w8 = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"));
    let w4 = |s: &[u8], i: usize| u32::from_le_bytes(s[i..i + 4].try_into().expect("4 bytes"));
    match n {
        0..=3 => a == b,
        4..=7 => w4(a, 0) == w4(b, 0) && w4(a, n - 4) == w4(b, n - 4),
        8..=16 => w8(a, 0) == w8(b, 0) && w8(a, n - 8) == w8(b, n - 8),
        _ => a == b,
    }
}

impl Interner {
    /// The symbol of `s`, added if new. Inlined into the lexer: it runs once per token.
    #[inline(always)]
    pub fn intern(&mut self, s: &[u8]) -> Sym {
        self.intern_hashed(s, hash_bytes(s))
    }

    /// [`Interner::intern`] with the name's hash already computed (`h64` must be
    /// `hash_bytes(s)`: the lexer computes it while scanning). Inlined into the lexer is
    /// only the first probe, which finds 95 % of the names of a distribution's store: the
    /// loop over further slots and the insertion stay out of line, so the lexer's loop
    /// does not keep the interner's fields in registers (or spill them) for every token.
    #[inline(always)]
    pub(crate) fn intern_hashed(&mut self, s: &[u8], h64: u64) -> Sym {
        let tag = slot_tag(h64);
        let e = self.slots[(h64 as usize) & (self.slots.len() - 1)];
        // Tags are never 0, so a matching slot is not empty.
        if e & !0xffff_ffff == tag {
            let id = (e as u32).wrapping_sub(1);
            if same(self.bytes(id), s) {
                return id;
            }
        }
        self.probe_or_insert(s, h64)
    }

    /// [`Interner::intern_hashed`] past the first slot: the rest of the probe sequence,
    /// then insertion in its first empty slot.
    #[inline(never)]
    fn probe_or_insert(&mut self, s: &[u8], h64: u64) -> Sym {
        let tag = slot_tag(h64);
        let mask = self.slots.len() - 1;
        let mut i = (h64 as usize) & mask;
        loop {
            let e = self.slots[i];
            if e == 0 {
                break;
            }
            if e & !0xffff_ffff == tag {
                let id = (e as u32).wrapping_sub(1);
                if same(self.bytes(id), s) {
                    return id;
                }
            }
            i = (i + 1) & mask;
        }
        let id = self.spans.len() as Sym;
        let start = self.text.len() as u32;
        self.text.extend_from_slice(s);
        self.spans.push((start, self.text.len() as u32));
        self.slots[i] = tag | (id as u64 + 1);
        if self.spans.len() * 2 > self.slots.len() {
            self.grow();
        }
        id
    }

    /// The symbol of `s` if it was interned (a lookup that adds nothing).
    pub fn get(&self, s: &[u8]) -> Option<Sym> {
        let h64 = hash_bytes(s);
        let tag = slot_tag(h64);
        let mask = self.slots.len() - 1;
        let mut i = (h64 as usize) & mask;
        loop {
            let e = self.slots[i];
            if e == 0 {
                return None;
            }
            if e & !0xffff_ffff == tag {
                let id = (e as u32).wrapping_sub(1);
                if self.bytes(id) == s {
                    return Some(id);
                }
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let size = self.slots.len() * 2;
        let mask = size - 1;
        let mut slots = vec![0u64; size];
        for id in 0..self.spans.len() as u32 {
            let h64 = hash_bytes(self.bytes(id));
            let mut i = (h64 as usize) & mask;
            while slots[i] != 0 {
                i = (i + 1) & mask;
            }
            slots[i] = slot_tag(h64) | (id as u64 + 1);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Names that share prefixes, lengths and hash tags must stay distinct through growth, and each must come back as its own id from
    /// `intern`, `get` and the lexer's pre-hashed path.
    #[test]
    fn names_of_every_length_keep_their_ids_through_growth() {
        let mut names: Vec<Vec<u8>> = Vec::new();
        for len in [0usize, 1, 3, 4, 7, 8, 9, 15, 16, 17, 24, 254, 255, 256, 300] {
            for k in 0..40u8 {
                let mut n = vec![b'a'; len];
                if len > 0 {
                    // One differing byte, at the start, the end or the middle.
                    let at = [0, len - 1, len / 2][k as usize % 3];
                    n[at] = b'a' + k % 26 + 1;
                    if k >= 26 && len > 1 {
                        n[(at + 1) % len] = b'0' + k % 10;
                    }
                }
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
        let mut int = Interner::default();
        let ids: Vec<Sym> = names.iter().map(|n| int.intern(n)).collect();
        assert_eq!(int.len(), names.len(), "one id per distinct name");
        for (n, &id) in names.iter().zip(&ids) {
            assert_eq!(int.bytes(id), &n[..]);
            assert_eq!(int.intern(n), id);
            assert_eq!(int.intern_hashed(n, hash_bytes(n)), id);
            assert_eq!(int.get(n), Some(id));
        }
        assert_eq!(int.get(b"never interned"), None);
    }
}

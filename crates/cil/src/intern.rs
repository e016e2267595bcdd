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
/// table (no per-identifier allocation).
///
/// A slot holds a name's first sixteen bytes (two zero-padded little-endian words), its
/// length and its id. The lexer has those words in registers from finding the symbol's
/// end, so it recognises a name of up to sixteen bytes (nine symbols in ten of a
/// distribution's store) from the slot's two words alone ([`Interner::intern_plain`]: one
/// sixteen-byte compare, not even the length), and only longer names compare the whole
/// text. That holds because the words of a *plain* name (one to sixteen bytes, none of
/// them NUL, as every symbol of CIL text) determine it, and the slot of any other name
/// (longer, empty, or holding a NUL) stores its first word with the low byte cleared
/// ([`slot_key`]), which no plain name's first word has.
pub struct Interner {
    /// Size a power of two, at most half full, so that a name's first probe nearly always
    /// finds it (a distribution's 22,800 names take 65,536 slots, 1.5 MB; three quarters
    /// full, 32,768 slots, one symbol in thirteen went on probing, at about 130
    /// instructions each); an empty slot has `len1` 0.
    slots: Vec<Slot>,
    /// `64 - log2(slots.len())`: a slot's index is the hash's top bits (a multiplicative
    /// hash mixes every input bit into those, not into its low bits).
    shift: u32,
    spans: Vec<(u32, u32)>,
    text: Vec<u8>,
}

/// One slot of [`Interner`]'s table (24 bytes).
#[derive(Copy, Clone, Default)]
struct Slot {
    /// The name's first eight bytes, zero-padded, little-endian (the low byte cleared if
    /// the name is not plain: [`slot_key`]).
    lo: u64,
    /// Its next eight bytes, likewise (0 for a name of up to eight bytes).
    hi: u64,
    /// [`len_tag`] of the name's length; 0 marks an empty slot.
    len1: u32,
    id: Sym,
}

/// Whether `s` is a plain name: one to sixteen bytes, none of them NUL (its zero-padded
/// words `lo` and `hi`, from [`key_of`], then tell it from every other name, whatever its
/// length). Every symbol the lexer reads is one; other names are told apart by their
/// length and bytes as well.
#[inline(always)]
fn plain(s: &[u8], lo: u64, hi: u64) -> bool {
    (1..=16).contains(&s.len()) && nonzero_prefix(lo, hi) == s.len()
}

/// How many bytes of the sixteen (`lo` then `hi`, little-endian) come before the first
/// NUL (16 if none): the lowest flag of the zero-byte test is exact, as a borrow only runs
/// upwards from a zero byte.
#[inline(always)]
fn nonzero_prefix(lo: u64, hi: u64) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let (zl, zh) = (zero(lo), zero(hi));
    if zl != 0 {
        zl.trailing_zeros() as usize / 8
    } else if zh != 0 {
        8 + zh.trailing_zeros() as usize / 8
    } else {
        16
    }
}

/// The two words a slot stores for name `s` of words `lo` and `hi`: those, for a plain
/// name; for any other, `lo` with its low byte cleared, which a plain name's first word
/// never has (its first byte is not NUL), so that [`Interner::intern_plain`]'s compare of
/// the words alone never finds it.
#[inline(always)]
fn slot_key(s: &[u8], lo: u64, hi: u64) -> (u64, u64) {
    if plain(s, lo, hi) {
        (lo, hi)
    } else {
        (lo & !0xff, hi)
    }
}

/// Whether `a` and `b` hold the same bytes: eight at a time (the last word overlapping
/// the one before it), where a slice compare calls `memcmp` for the twenty bytes of a
/// typical long name.
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        return a == b;
    }
    let w = |s: &[u8], k: usize| u64::from_le_bytes(s[k..k + 8].try_into().expect("8 bytes"));
    let mut k = 0;
    while k + 8 < n {
        if w(a, k) != w(b, k) {
            return false;
        }
        k += 8;
    }
    w(a, n - 8) == w(b, n - 8)
}

/// A slot's length field: the length plus one (0 is the empty slot), saturated for names
/// of four gigabytes and more, which are then told apart by their bytes.
#[inline(always)]
fn len_tag(len: usize) -> u32 {
    (len.min(u32::MAX as usize - 1) + 1) as u32
}

impl Default for Interner {
    fn default() -> Self {
        Interner {
            slots: vec![Slot::default(); 1024],
            shift: 64 - 10,
            spans: Vec::new(),
            text: Vec::new(),
        }
    }
}

const K1: u64 = 0x9e37_79b9_7f4a_7c15;

/// The hash of a name of up to sixteen bytes from its two zero-padded words (`hi` is 0 up
/// to eight bytes): one multiply, whose top bits (the slot's index) depend on every bit
/// of the words folded together, `hi` rotated by a number of bits that is no multiple of
/// eight so that no byte of it lines up with one of `lo`. Symbols hold no NUL byte, so the
/// padded words determine the name; the length is compared in the slot, not hashed.
#[inline(always)]
pub(crate) fn hash_short(lo: u64, hi: u64) -> u64 {
    (lo ^ hi.rotate_left(29)).wrapping_mul(K1)
}

/// One more word of a longer name mixed into its hash (the words after its first sixteen
/// bytes, the last one zero-padded).
#[inline(always)]
pub(crate) fn hash_more(h: u64, w: u64) -> u64 {
    (h.rotate_left(29) ^ w).wrapping_mul(K1)
}

/// The zero-padded little-endian word of up to eight bytes, read as (possibly
/// overlapping) whole loads rather than copied into a buffer.
#[inline]
pub(crate) fn word(r: &[u8]) -> u64 {
    let k = r.len();
    match k {
        0 => 0,
        8.. => u64::from_le_bytes(r[..8].try_into().expect("8 bytes")),
        4..=7 => {
            let lo = u32::from_le_bytes(r[..4].try_into().expect("4 bytes")) as u64;
            let hi = u32::from_le_bytes(r[k - 4..].try_into().expect("4 bytes")) as u64;
            lo | (hi >> (8 * (8 - k))) << 32
        }
        _ => r.iter().rev().fold(0u64, |w, &b| w << 8 | b as u64),
    }
}

/// A name's key: its first and second eight bytes as zero-padded words, and its hash
/// ([`hash_short`] of those, then [`hash_more`] over each further word). The lexer
/// computes the same three values while it finds the symbol's end
/// (`parse::scan_short`), so a token's bytes are read once.
#[inline]
pub(crate) fn key_of(s: &[u8]) -> (u64, u64, u64) {
    let lo = word(&s[..s.len().min(8)]);
    let hi = word(s.get(8..s.len().min(16)).unwrap_or(&[]));
    let mut h = hash_short(lo, hi);
    if let Some(rest) = s.get(16..) {
        for c in rest.chunks(8) {
            h = hash_more(h, word(c));
        }
    }
    (lo, hi, h)
}

impl Interner {
    /// The symbol of `s`, added if new.
    #[inline]
    pub fn intern(&mut self, s: &[u8]) -> Sym {
        let (lo, hi, h) = key_of(s);
        self.intern_key(s, lo, hi, h)
    }

    /// [`Interner::intern`] with the name's key already computed (`(lo, hi, h)` must be
    /// `key_of(s)`: the lexer computes it while scanning). Inlined into the lexer is only
    /// the first probe, which finds nearly every name of a distribution's store: the loop
    /// over further slots and the insertion stay out of line, so the lexer's loop does not
    /// keep the interner's fields in registers (or spill them) for every token.
    #[inline(always)]
    pub(crate) fn intern_key(&mut self, s: &[u8], lo: u64, hi: u64, h: u64) -> Sym {
        let e = self.home(h);
        if self.holds(e, s, lo, hi, plain(s, lo, hi)) {
            return e.id;
        }
        self.probe_or_insert(s, lo, hi, h)
    }

    /// The first slot of the names of hash `h`: what the lexer reads for each of the 1.9
    /// million symbols of a distribution's store.
    #[inline(always)]
    fn home(&self, h: u64) -> Slot {
        let i = (h >> self.shift) as usize;
        debug_assert!(i < self.slots.len());
        // SAFETY: `slots.len()` is `1 << (64 - shift)` (both set together, in `default`
        // and `grow`), so `h >> shift` is below it for every `h`. Measured: the bounds
        // check is three of the lexer's fifty instructions a symbol (5.8 million on the
        // Debian store), its registers reloaded around it.
        #[allow(unsafe_code)]
        unsafe {
            *self.slots.get_unchecked(i)
        }
    }

    /// [`Interner::intern_key`] of a plain name (one to sixteen bytes, no NUL: a symbol
    /// the lexer read), whose first probe compares the slot's two words and nothing else.
    #[inline(always)]
    pub(crate) fn intern_plain(&mut self, s: &[u8], lo: u64, hi: u64, h: u64) -> Sym {
        debug_assert!(plain(s, lo, hi) && (lo, hi) == (key_of(s).0, key_of(s).1));
        let e = self.home(h);
        // One sixteen-byte compare (`pxor`, `ptest`) rather than two and a branch each.
        if (e.lo ^ lo) | (e.hi ^ hi) == 0 {
            return e.id;
        }
        self.probe_or_insert(s, lo, hi, h)
    }

    /// Whether slot `e` holds the name `s`, whose first words are `lo` and `hi` and which
    /// is `plain` (see [`plain`]): a plain name is its words, any other name compares the
    /// slot's words (see [`slot_key`]), its length and its bytes.
    #[inline(always)]
    fn holds(&self, e: Slot, s: &[u8], lo: u64, hi: u64, plain: bool) -> bool {
        if plain {
            (e.lo ^ lo) | (e.hi ^ hi) == 0
        } else {
            e.lo == lo & !0xff
                && e.hi == hi
                && e.len1 == len_tag(s.len())
                && same_bytes(self.bytes(e.id), s)
        }
    }

    /// [`Interner::intern_key`] past the first slot: the rest of the probe sequence,
    /// then insertion in its first empty slot.
    #[inline(never)]
    fn probe_or_insert(&mut self, s: &[u8], lo: u64, hi: u64, h: u64) -> Sym {
        let mask = self.slots.len() - 1;
        let home = (h >> self.shift) as usize;
        let plain = plain(s, lo, hi);
        let mut i = home;
        loop {
            let e = self.slots[i];
            if e.len1 == 0 {
                break;
            }
            if self.holds(e, s, lo, hi, plain) {
                // Found past its first slot: it moves there, and the name it displaces to
                // where it was, so a name looked up again is found at once. The displaced
                // name stays on its own probe sequence: it was at or past its first slot,
                // and every slot from there to `i` is taken (this probe went through them).
                self.slots.swap(home, i);
                return e.id;
            }
            i = (i + 1) & mask;
        }
        let id = self.spans.len() as Sym;
        let start = self.text.len() as u32;
        self.text.extend_from_slice(s);
        self.spans.push((start, self.text.len() as u32));
        let (lo, hi) = slot_key(s, lo, hi);
        self.slots[i] = Slot {
            lo,
            hi,
            len1: len_tag(s.len()),
            id,
        };
        if self.spans.len() * 2 > self.slots.len() {
            self.grow();
        }
        id
    }

    /// The symbol of `s` if it was interned (a lookup that adds nothing).
    pub fn get(&self, s: &[u8]) -> Option<Sym> {
        let (lo, hi, h) = key_of(s);
        let mask = self.slots.len() - 1;
        let mut i = (h >> self.shift) as usize;
        let plain = plain(s, lo, hi);
        loop {
            let e = self.slots[i];
            if e.len1 == 0 {
                return None;
            }
            if self.holds(e, s, lo, hi, plain) {
                return Some(e.id);
            }
            i = (i + 1) & mask;
        }
    }

    /// Doubles the table: each slot moves to the new table as it is, placed by its name's
    /// hash, which for a plain name (a slot whose first word's low byte is not 0, see
    /// [`slot_key`]) is that of the slot's words, so only other names read their text
    /// again. The old slots are taken in order, so the new table is written front to back
    /// (slot `i`'s names go to `2i`, `2i + 1` and on).
    fn grow(&mut self) {
        let size = self.slots.len() * 2;
        let mask = size - 1;
        let shift = self.shift - 1;
        let mut slots = vec![Slot::default(); size];
        for &e in &self.slots {
            if e.len1 == 0 {
                continue;
            }
            let h = if e.lo & 0xff != 0 {
                hash_short(e.lo, e.hi)
            } else {
                key_of(self.bytes(e.id)).2
            };
            let mut i = (h >> shift) as usize;
            while slots[i].len1 != 0 {
                i = (i + 1) & mask;
            }
            slots[i] = e;
        }
        self.slots = slots;
        self.shift = shift;
    }

    /// Makes room for the names of `bytes` more bytes of CIL (a guess: the table for a
    /// new name per 256 bytes, the spans per 128, the text a tenth of the source), so
    /// that they grow before parsing, where they are small, instead of by doubling under
    /// it (a dozen copies each on `bench.cil`, a name per 123 bytes). The table is
    /// written where names land, so its guess is the lower one: the Debian store's
    /// `base.cil` has a name per 600 bytes, and a table sized for one per 128 took
    /// 0.8 MB more of peak RSS.
    pub fn reserve_for_source(&mut self, bytes: usize) {
        let names = self.spans.len() + bytes / 256;
        while names * 2 > self.slots.len() {
            self.grow();
        }
        self.spans.reserve(bytes / 128);
        self.text.reserve(bytes / 10);
    }

    pub fn bytes(&self, id: Sym) -> &[u8] {
        let (a, b) = self.spans[id as usize];
        &self.text[a as usize..b as usize]
    }

    /// The identifier as text (identifiers that reach the policy are ASCII; anything else is
    /// shown lossily in messages).
    pub fn str(&self, id: Sym) -> std::borrow::Cow<'_, str> {
        // `from_utf8` checks ASCII a word at a time; `from_utf8_lossy`'s chunk walk goes
        // byte by byte (about 130 instructions a name against 40).
        let b = self.bytes(id);
        match std::str::from_utf8(b) {
            Ok(s) => std::borrow::Cow::Borrowed(s),
            Err(_) => String::from_utf8_lossy(b),
        }
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name found past its first slot moves there (`probe_or_insert`): after lookups
    /// in any order, every name must still be found, as itself, by the lexer's path and
    /// by `get`, and no name may be added twice.
    #[test]
    fn names_moved_to_their_first_slot_stay_found() {
        let names: Vec<Vec<u8>> = (0..3000u32)
            .map(|k| format!("n{k}_{}", "x".repeat((k % 23) as usize)).into_bytes())
            .collect();
        let mut int = Interner::default();
        let ids: Vec<Sym> = names.iter().map(|n| int.intern(n)).collect();
        let mut order: Vec<usize> = (0..names.len()).collect();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for round in 0..6 {
            // A different order each round (xorshift), with repeats.
            for k in (1..order.len()).rev() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                order.swap(k, (x % (k as u64 + 1)) as usize);
            }
            for &k in order.iter().chain(&order[..order.len() / (round + 2)]) {
                let (lo, hi, h) = key_of(&names[k]);
                assert_eq!(
                    int.intern_key(&names[k], lo, hi, h),
                    ids[k],
                    "round {round}"
                );
            }
            for (n, &id) in names.iter().zip(&ids) {
                assert_eq!(int.get(n), Some(id));
            }
            assert_eq!(int.len(), names.len(), "nothing added by lookups");
        }
    }

    /// Reserving for a source grows the table ahead of its names: every name interned
    /// before is still found, by the lexer's path and by `get`, and new ones are added.
    #[test]
    fn names_stay_found_when_the_table_grows_for_a_source() {
        let name = |k: u32| format!("t{k}_{}", "y".repeat((k % 19) as usize)).into_bytes();
        let mut int = Interner::default();
        let before: Vec<Sym> = (0..700).map(|k| int.intern(&name(k))).collect();
        let slots = int.slots.len();
        int.reserve_for_source(1 << 20);
        assert!(int.slots.len() >= 2 * (700 + (1 << 20) / 256) && int.slots.len() > slots);
        for (k, &id) in (0..700).zip(&before) {
            let n = name(k);
            let (lo, hi, h) = key_of(&n);
            assert_eq!(int.intern_key(&n, lo, hi, h), id);
            assert_eq!(int.get(&n), Some(id));
        }
        let after: Vec<Sym> = (700..2000).map(|k| int.intern(&name(k))).collect();
        assert_eq!(after, (700..2000).collect::<Vec<Sym>>());
        assert_eq!(int.len(), 2000);
    }

    /// A plain name (what the lexer reads) must never be taken for one that is not (empty,
    /// longer than sixteen bytes, or holding a NUL) whose words it shares, by the lexer's
    /// compare of the words alone or by the general path; nor the other way round.
    #[test]
    fn plain_names_are_told_from_names_with_the_same_words() {
        let groups: [&[&[u8]]; 4] = [
            &[
                b"a",
                b"a\0",
                b"a\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
                b"",
                b"\0",
                b"\0a",
            ],
            &[
                b"abcdefghijklmnop",
                b"abcdefghijklmnopq",
                b"abcdefghijklmnopqrstuvwxyz0123",
                b"abcdefghijklmno",
                b"abcdefghijklmno\0",
                b"abcdefghijklmno\0x",
            ],
            &[
                b"abcdefgh",
                b"abcdefgh\0",
                b"abcdefgh\0i",
                b"abcdefg",
                b"\0bcdefgh",
            ],
            &[
                b"system_u:object_r:etc_t",
                b"system_u:object_r:etc_u",
                b"xystem_u:object_r:etc_t",
                b"system_u:object_r:etc_t0",
                b"system_u:object_r",
                b"system_u:object_",
            ],
        ];
        for names in groups {
            // Every order of insertion: the plain name first or last.
            for rot in 0..names.len() {
                let mut int = Interner::default();
                let order: Vec<&[u8]> = names[rot..].iter().chain(&names[..rot]).copied().collect();
                let ids: Vec<Sym> = order.iter().map(|n| int.intern(n)).collect();
                assert_eq!(int.len(), order.len(), "{order:?}");
                for (n, &id) in order.iter().zip(&ids) {
                    assert_eq!(int.bytes(id), *n);
                    assert_eq!(int.get(n), Some(id), "{n:?}");
                    assert_eq!(int.intern(n), id, "{n:?}");
                    let (lo, hi, h) = key_of(n);
                    if plain(n, lo, hi) {
                        assert!(!n.contains(&0) && !n.is_empty() && n.len() <= 16);
                        assert_eq!(int.intern_plain(n, lo, hi, h), id, "{n:?}");
                    } else {
                        assert!(n.contains(&0) || n.is_empty() || n.len() > 16);
                    }
                }
                assert_eq!(int.len(), order.len());
            }
        }
    }

    /// [`nonzero_prefix`] against a byte loop, for a NUL at each position.
    #[test]
    fn nonzero_prefix_finds_the_first_nul() {
        for at in 0..=16 {
            for fill in [0x01u8, 0x80, 0xff, b'a'] {
                let mut b = [fill; 16];
                if at < 16 {
                    b[at] = 0;
                    // Bytes after the NUL may be anything, another NUL or 0x01 included.
                    for (k, x) in b.iter_mut().enumerate().skip(at + 1) {
                        *x = [0, 1, 0x80, 0xff][k % 4];
                    }
                }
                let lo = u64::from_le_bytes(b[..8].try_into().expect("8"));
                let hi = u64::from_le_bytes(b[8..].try_into().expect("8"));
                assert_eq!(nonzero_prefix(lo, hi), at, "{b:?}");
            }
        }
    }

    /// [`same_bytes`] against a slice compare, for a differing byte at each position.
    #[test]
    fn same_bytes_is_a_slice_compare() {
        for n in 0..40 {
            let a: Vec<u8> = (0..n as u8).map(|k| b'a' + k % 26).collect();
            assert!(same_bytes(&a, &a.clone()));
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!same_bytes(&a, &b), "{n} {at}");
            }
            assert!(!same_bytes(&a, &a[..n.saturating_sub(1)]) || n == 0);
        }
    }

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
            let (lo, hi, h) = key_of(n);
            assert_eq!(int.intern_key(n, lo, hi, h), id);
            assert_eq!(int.get(n), Some(id));
        }
        assert_eq!(int.get(b"never interned"), None);
        // A name and its prefixes of eight and sixteen bytes share their first words.
        let prefixes: [&[u8]; 4] = [
            b"abcdefgh",
            b"abcdefghi",
            b"abcdefghijklmnop",
            b"abcdefghijklmnopq",
        ];
        let ids: Vec<Sym> = prefixes.iter().map(|n| int.intern(n)).collect();
        for (n, &id) in prefixes.iter().zip(&ids) {
            assert_eq!(int.bytes(id), *n);
            assert_eq!(int.get(n), Some(id));
        }
        assert_eq!(
            ids.iter().collect::<std::collections::HashSet<_>>().len(),
            4
        );
    }
}

//! Sixty-four bytes of CIL classified at once, as bit masks (bit `k` for byte `k`): the
//! symbol bytes and the blanks (space, tab). The lexer walks the bits that start a token
//! (a symbol's first byte, or any byte that is neither a symbol byte nor a blank) in
//! order, so spaces cost nothing and a symbol's end is a `trailing_zeros`.

/// The masks of one block of sixty-four bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Block {
    /// Bit `k` set when byte `k` is a symbol byte (`super::SYMBOL_BYTES`).
    pub sym: u64,
    /// Bit `k` set when byte `k` is a space or a tab.
    pub blank: u64,
}

impl Block {
    /// The bytes where a token starts: each symbol's first byte, and every byte that is
    /// neither a symbol byte nor a blank (parentheses, line breaks, and the bytes the
    /// lexer leaves to its slow path). A symbol byte at bit 0 counts as a start: a block
    /// never begins inside a symbol.
    #[inline(always)]
    pub fn starts(self) -> u64 {
        (self.sym & !(self.sym << 1)) | !(self.sym | self.blank)
    }
}

/// The masks of `b`.
#[inline(always)]
pub(super) fn classify(b: &[u8; 64]) -> Block {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        // SAFETY: `sse2::classify` only needs SSE2, which this build enables for every
        // machine it runs on (the `cfg` above: SSE2 is part of the x86_64 baseline).
        #[allow(unsafe_code)]
        unsafe {
            sse2::classify(b)
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        classify_bytes(b)
    }
}

/// [`classify`] a byte at a time with the lexer's table: the portable way, and the
/// reference its SSE2 form is tested against.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
pub(super) fn classify_bytes(b: &[u8; 64]) -> Block {
    let mut m = Block { sym: 0, blank: 0 };
    for (k, &c) in b.iter().enumerate() {
        m.sym |= (super::is_symbol_byte(c) as u64) << k;
        m.blank |= (matches!(c, b' ' | b'\t') as u64) << k;
    }
    m
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod sse2 {
    use super::Block;
    use std::arch::x86_64::*;

    /// Four vectors of sixteen bytes, each classified as `super::super::sse2::classify`
    /// does (symbol bytes: printable ASCII but `"`, `(`, `)`, `;` and `\`), and compared
    /// with space and tab.
    #[target_feature(enable = "sse2")]
    #[inline]
    pub(super) fn classify(b: &[u8; 64]) -> Block {
        let one = _mm_set1_epi8(1);
        let lowest = _mm_set1_epi8(0x21);
        let close = _mm_set1_epi8(b')' as i8);
        let quote = _mm_set1_epi8(b'"' as i8);
        let semi = _mm_set1_epi8(b';' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        let space = _mm_set1_epi8(b' ' as i8);
        let tab = _mm_set1_epi8(b'\t' as i8);
        let mut m = Block { sym: 0, blank: 0 };
        for k in 0..4 {
            // SAFETY: bytes `16 * k..16 * k + 16` of the 64 `b` refers to; an unaligned
            // load reads them whatever their alignment.
            #[allow(unsafe_code)]
            let v = unsafe { _mm_loadu_si128(b.as_ptr().add(16 * k).cast::<__m128i>()) };
            // Signed, after adding one: 0x21..=0x7e become 0x22..=0x7f, above 0x21, and
            // every other byte 0x21 or less (0x7f..=0xff become negative).
            let printable = _mm_cmpgt_epi8(_mm_add_epi8(v, one), lowest);
            // `(` and `)` differ in the low bit only.
            let paren = _mm_cmpeq_epi8(_mm_or_si128(v, one), close);
            let excluded = _mm_or_si128(
                _mm_or_si128(paren, _mm_cmpeq_epi8(v, quote)),
                _mm_or_si128(_mm_cmpeq_epi8(v, semi), _mm_cmpeq_epi8(v, backslash)),
            );
            let s = _mm_movemask_epi8(_mm_andnot_si128(excluded, printable)) as u32 as u64;
            let w = _mm_movemask_epi8(_mm_or_si128(
                _mm_cmpeq_epi8(v, space),
                _mm_cmpeq_epi8(v, tab),
            )) as u32 as u64;
            m.sym |= s << (16 * k);
            m.blank |= w << (16 * k);
        }
        m
    }
}

/// Whether the processor has what [`avx2::classify`] and the lexer compiled with it use.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(super) fn has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
}

/// The classifier for processors with AVX2: each byte's class looked up by its low and
/// its high four bits (`vpshufb`), 32 bytes at a time.
#[cfg(target_arch = "x86_64")]
pub(super) mod avx2 {
    use super::Block;
    use std::arch::x86_64::*;

    /// A byte's class is `LOW[b & 15] & HIGH[b >> 4]`. Bits 0 to 4 hold the symbol bytes,
    /// one bit per row of the ASCII table that has some (rows 2 to 7, rows 4 and 6
    /// sharing bit 2): the row's bit is set in `HIGH`, and in `LOW` for each column whose
    /// byte of that row is a symbol byte. Bit 5 is the space (row 2, column 0), bit 6 the
    /// tab (row 0, column 9). Bytes of 0x80 and above have no row bit: no class.
    const LOW: [u8; 16] = {
        let mut t = [0u8; 16];
        let mut c = 0;
        while c < 16 {
            let row2 = c != 0 && c != 2 && c != 8 && c != 9;
            t[c] = (row2 as u8)
                | ((c != 0xb) as u8) << 1
                | 1 << 2
                | ((c != 0xc) as u8) << 3
                | ((c != 0xf) as u8) << 4
                | ((c == 0) as u8) << 5
                | ((c == 9) as u8) << 6;
            c += 1;
        }
        t
    };
    const HIGH: [u8; 16] = [
        1 << 6,
        0,
        1 | 1 << 5,
        1 << 1,
        1 << 2,
        1 << 3,
        1 << 2,
        1 << 4,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
    ];

    /// The masks of `b` (as [`super::classify`]).
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(in crate::parse) fn classify(b: &[u8; 64]) -> Block {
        let table = |t: &[u8; 16]| {
            // SAFETY: reads the sixteen bytes of `t`, unaligned.
            #[allow(unsafe_code)]
            let v = unsafe { _mm_loadu_si128(t.as_ptr().cast::<__m128i>()) };
            _mm256_broadcastsi128_si256(v)
        };
        let low = table(&LOW);
        let high = table(&HIGH);
        let nibble = _mm256_set1_epi8(0x0f);
        let sym_bits = _mm256_set1_epi8(0x1f);
        let blank_bits = _mm256_set1_epi8(0x60);
        let zero = _mm256_setzero_si256();
        let half = |k: usize| {
            // SAFETY: bytes `32 * k..32 * k + 32` (`k` is 0 or 1) of the 64 `b` refers
            // to; an unaligned load reads them whatever their alignment.
            #[allow(unsafe_code)]
            let v = unsafe { _mm256_loadu_si256(b.as_ptr().add(32 * k).cast::<__m256i>()) };
            let lo = _mm256_and_si256(v, nibble);
            let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(v), nibble);
            let class =
                _mm256_and_si256(_mm256_shuffle_epi8(low, lo), _mm256_shuffle_epi8(high, hi));
            let not_sym = _mm256_cmpeq_epi8(_mm256_and_si256(class, sym_bits), zero);
            let not_blank = _mm256_cmpeq_epi8(_mm256_and_si256(class, blank_bits), zero);
            Block {
                sym: !(_mm256_movemask_epi8(not_sym) as u32) as u64,
                blank: !(_mm256_movemask_epi8(not_blank) as u32) as u64,
            }
        };
        let (l, h) = (half(0), half(1));
        Block {
            sym: l.sym | h.sym << 32,
            blank: l.blank | h.blank << 32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every classifier must agree with the byte table for every byte value at every
    /// position of a block (and so the lexer reads the same tokens on every processor).
    #[test]
    fn block_classifiers_match_the_byte_table() {
        for b in 0..=255u8 {
            for pos in 0..64 {
                let mut bytes = [b'a'; 64];
                // Every class around the byte tested: symbols, blanks, parentheses.
                let fill = b"ab (c)\t d\n";
                for (k, x) in bytes.iter_mut().enumerate() {
                    *x = fill[k % fill.len()];
                }
                bytes[pos] = b;
                let want = classify_bytes(&bytes);
                assert_eq!(want.sym >> pos & 1, super::super::is_symbol_byte(b) as u64);
                assert_eq!(want.blank >> pos & 1, matches!(b, b' ' | b'\t') as u64);
                assert_eq!(classify(&bytes), want, "byte {b:#04x} at {pos}");
                #[cfg(target_arch = "x86_64")]
                if has_avx2() {
                    // SAFETY: the processor has AVX2 (just checked).
                    #[allow(unsafe_code)]
                    let got = unsafe { avx2::classify(&bytes) };
                    assert_eq!(got, want, "byte {b:#04x} at {pos} (AVX2)");
                }
            }
        }
    }
}

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
        let mut sym = 0u64;
        let mut blank = 0u64;
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
            sym |= s << (16 * k);
            blank |= w << (16 * k);
        }
        Block { sym, blank }
    }
}

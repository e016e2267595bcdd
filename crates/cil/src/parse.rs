//! Lexer and parser: CIL text to a flat tree of atoms and lists (one per file).
//!
//! Follows libsepol's `cil_lexer.l` token classes and `cil_parser.c` checks and messages.
//! Nesting is tracked with a counter and an explicit stack, never recursion, and stops at
//! libsepol's limit of 4096 open parentheses.

use crate::intern::{hash_more, hash_short, key_of, word, Interner, Sym};

mod block;

/// The bytes [`block::classify`] takes at once.
const BLOCK: usize = 64;

/// libsepol's `CIL_PARSER_MAX_EXPR_DEPTH`.
pub const MAX_DEPTH: usize = 4096;

/// A reference to a tree element, as stored in [`Tree::kids`]: a list (index into
/// [`Tree::nodes`]) or, with [`ATOM`] set, an atom's symbol. Atoms take no node: they are
/// three quarters of CIL's elements, so the arena holds lists only.
pub const ATOM: u32 = 1 << 31;

/// One list: its line and its elements (`a..b` in [`Tree::kids`]).
#[derive(Copy, Clone, Debug)]
pub struct Node {
    line: u32,
    pub a: u32,
    pub b: u32,
}

impl Node {
    #[inline]
    pub fn line(&self) -> u32 {
        self.line
    }
}

/// The parse of all files: lists and their elements of every file in one arena.
#[derive(Default)]
pub struct Tree {
    pub nodes: Vec<Node>,
    pub kids: Vec<u32>,
    /// Per file: the top-level statements (range in `kids`).
    pub files: Vec<(u32, u32)>,
    /// Bit `k` set when some parsed list starts with the atom of symbol `k` (`k < 64`:
    /// the first keywords, see `kw.rs`). Later passes skip a walk when no list starts
    /// with a keyword it acts on (the block pass when the input has no block, macro, `in`,
    /// `blockinherit`, `blockabstract` or `tunableif`). A superset: a list whose head is
    /// not right after its parenthesis sets every bit.
    pub heads: u64,
}

impl Tree {
    /// The elements of a list (nothing for an atom).
    #[inline]
    pub fn kids(&self, n: u32) -> &[u32] {
        if n & ATOM != 0 {
            return &[];
        }
        let nd = &self.nodes[n as usize];
        &self.kids[nd.a as usize..nd.b as usize]
    }
    /// A list's node (statements and branches are lists).
    #[inline]
    pub fn node(&self, n: u32) -> &Node {
        &self.nodes[(n & !ATOM) as usize]
    }
    #[inline]
    pub fn is_list(&self, n: u32) -> bool {
        n & ATOM == 0
    }
    /// Appends a list (a rewritten copy of a statement) with `line` for messages.
    pub fn push_list(&mut self, line: u32, kids: &[u32]) -> u32 {
        let a = self.kids.len() as u32;
        self.kids.extend_from_slice(kids);
        let id = self.nodes.len() as u32;
        self.nodes.push(Node {
            line,
            a,
            b: self.kids.len() as u32,
        });
        id
    }
    /// Appends a copy of list `n` (same line, same elements), copied within the arena.
    pub fn copy_list(&mut self, n: u32) -> u32 {
        let nd = self.nodes[n as usize];
        let a = self.kids.len() as u32;
        self.kids.extend_from_within(nd.a as usize..nd.b as usize);
        let id = self.nodes.len() as u32;
        self.nodes.push(Node {
            line: nd.line,
            a,
            b: self.kids.len() as u32,
        });
        id
    }
    /// The symbol of an atom (quoted or not), None for a list.
    #[inline]
    pub fn sym(&self, n: u32) -> Option<Sym> {
        (n & ATOM != 0).then_some(n & !ATOM)
    }
}

/// Bytes that make up symbols (`cil_lexer.l`: letters, digits and the special characters),
/// as 1 (a symbol byte) or 0, so eight lookups combine into a bit mask without branches.
const SYMBOL_BYTES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = (c as u8).is_ascii_alphanumeric() as u8;
        c += 1;
    }
    let specials = b"[].@=/*-_$%+!|&^:~`#{}'<>?,";
    let mut i = 0;
    while i < specials.len() {
        t[specials[i] as usize] = 1;
        i += 1;
    }
    t
};

#[inline]
fn is_symbol_byte(c: u8) -> bool {
    SYMBOL_BYTES[c as usize] != 0
}

/// For each pair of bytes (first byte in the low half of the index, as a little-endian
/// load reads them): bit 0 set when the first is a symbol byte, bit 1 when the second is.
/// Classifying eight bytes then takes four lookups instead of eight; the rows lexed in
/// practice (printable ASCII) are about 12 KB of the table's 64 KB.
static SYMBOL_PAIRS: [u8; 65536] = {
    let mut t = [0u8; 65536];
    let mut v = 0;
    while v < 65536 {
        t[v] = SYMBOL_BYTES[v & 0xff] | SYMBOL_BYTES[v >> 8] << 1;
        v += 1;
    }
    t
};

/// Bit `k` set when byte `k` of the eight (little-endian word `w`) is a symbol byte.
#[inline(always)]
fn symbol_mask(w: u64) -> u32 {
    let t = |k: u32| (SYMBOL_PAIRS[(w >> (16 * k)) as u16 as usize] as u32) << (2 * k);
    t(0) | t(1) | t(2) | t(3)
}

/// The symbol that starts at `text[i]` (a symbol byte): its end and its interned id
/// (at least [`ATOM`] when the table of names is full). Names of fewer than sixteen bytes
/// are found inline; longer ones, and those in a file's last sixteen bytes, out of line
/// ([`long_symbol`]), so the token loop keeps only the short path's values.
#[inline(always)]
fn symbol(text: &[u8], i: usize, interner: &mut Interner) -> (usize, Sym) {
    match scan_short(text, i) {
        Some((j, lo, hi)) => (
            j,
            interner.intern_plain(&text[i..j], lo, hi, hash_short(lo, hi)),
        ),
        None => long_symbol(text, i, interner),
    }
}

/// [`symbol`] past [`scan_short`]: [`scan_long`], then the interner.
#[inline(never)]
fn long_symbol(text: &[u8], i: usize, interner: &mut Interner) -> (usize, Sym) {
    let (j, lo, hi, h) = scan_long(text, i);
    (j, interner.intern_key(&text[i..j], lo, hi, h))
}

/// The end of the symbol of fewer than sixteen bytes that starts at `text[i]` (a symbol
/// byte), with its first two words zero-padded (the interner's key, whose hash is
/// `intern::hash_short` of them): sixteen bytes are classified at once (see [`stops16`]),
/// so each byte is read once. `None` for a longer symbol and in the last sixteen bytes of
/// a file ([`scan_long`]).
#[inline(always)]
fn scan_short(text: &[u8], i: usize) -> Option<(usize, u64, u64)> {
    let c = text.get(i..i + 16)?;
    let lo = u64::from_le_bytes(c[..8].try_into().expect("8 bytes"));
    let hi = u64::from_le_bytes(c[8..].try_into().expect("8 bytes"));
    let (stops, lo, hi) = scan16(lo, hi);
    if stops == 0 {
        return None;
    }
    // 1..=15: `text[i]` is a symbol byte.
    let k = stops.trailing_zeros();
    debug_assert!(k >= 1);
    Some((i + k as usize, lo, hi))
}

/// For `k` bytes kept (`k <= 16`), the masks of the two words.
const KEEP: [[u64; 2]; 17] = {
    let mut t = [[0u64; 2]; 17];
    let mut k = 0;
    while k < 17 {
        t[k] = if k < 8 {
            [(1u64 << (8 * k)) - 1, 0]
        } else if k < 16 {
            [u64::MAX, (1u64 << (8 * (k - 8))) - 1]
        } else {
            [u64::MAX, u64::MAX]
        };
        k += 1;
    }
    t
};

/// Sixteen bytes (`lo` then `hi`, little-endian) classified: [`stops16`] of them, and
/// the bytes before the first stop, zero-padded (the key of the symbol they start with;
/// meaningless without a stop).
#[inline(always)]
fn scan16(lo: u64, hi: u64) -> (u32, u64, u64) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        // SAFETY: `sse2::scan` only needs SSE2, which this build enables for every machine
        // it runs on (the `cfg` above: SSE2 is part of the x86_64 baseline).
        #[allow(unsafe_code)]
        unsafe {
            sse2::scan(lo, hi)
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        scan16_words(lo, hi)
    }
}

/// [`scan16`] with the byte-pair table and word masks: the portable way, and the
/// reference its SSE2 form is tested against.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
#[inline(always)]
fn scan16_words(lo: u64, hi: u64) -> (u32, u64, u64) {
    let stops = stops16_table(lo, hi);
    let [ml, mh] = KEEP[(stops.trailing_zeros() & 15) as usize];
    (stops, lo & ml, hi & mh)
}

/// The symbol that starts at `text[i]` where [`scan_short`] does not apply: its end and
/// interner key (`intern::key_of`), long symbols eight bytes per step with each whole
/// word mixed into the hash as it is read.
#[inline(never)]
fn scan_long(text: &[u8], i: usize) -> (usize, u64, u64, u64) {
    let Some(c) = text.get(i..i + 16) else {
        // The last sixteen bytes of a file.
        let rest = &text[i..];
        let k = rest
            .iter()
            .position(|&b| !is_symbol_byte(b))
            .unwrap_or(rest.len());
        let (lo, hi, h) = key_of(&rest[..k]);
        return (i + k, lo, hi, h);
    };
    let lo = u64::from_le_bytes(c[..8].try_into().expect("8 bytes"));
    let hi = u64::from_le_bytes(c[8..].try_into().expect("8 bytes"));
    if stops16(lo, hi) != 0 {
        let k = (i..i + 16)
            .find(|&j| !is_symbol_byte(text[j]))
            .expect("a stop");
        let (lo, hi, h) = key_of(&text[i..k]);
        return (k, lo, hi, h);
    }
    let mut h = hash_short(lo, hi);
    let mut j = i + 16;
    while let Some(c) = text.get(j..j + 8) {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        let k = symbol_mask(w).trailing_ones() as usize;
        if k == 8 {
            h = hash_more(h, w);
            j += 8;
            continue;
        }
        if k > 0 {
            // The symbol's last partial word, zero-padded.
            h = hash_more(h, w & ((1u64 << (8 * k)) - 1));
        }
        return (j + k, lo, hi, h);
    }
    // Fewer than eight bytes left in the file.
    let rest = &text[j..];
    let k = rest
        .iter()
        .position(|&b| !is_symbol_byte(b))
        .unwrap_or(rest.len());
    if k > 0 {
        h = hash_more(h, word(&rest[..k]));
    }
    (j + k, lo, hi, h)
}

/// Bit `k` set when byte `k` of the sixteen (`lo` then `hi`, little-endian) is not a symbol
/// byte. Symbol bytes are exactly the printable ASCII bytes `0x21..=0x7e` except `"`, `(`,
/// `)`, `;` and `\` (a test checks this against [`SYMBOL_BYTES`] for every byte and position).
#[inline(always)]
fn stops16(lo: u64, hi: u64) -> u32 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        // SAFETY: `sse2::stops` only needs SSE2, which this build enables for every machine
        // it runs on (the `cfg` above: SSE2 is part of the x86_64 baseline).
        #[allow(unsafe_code)]
        unsafe {
            sse2::stops(lo, hi)
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        stops16_table(lo, hi)
    }
}

/// [`stops16`] with the byte-pair table: the portable way, and the reference its SSE2 form
/// is tested against.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
#[inline(always)]
fn stops16_table(lo: u64, hi: u64) -> u32 {
    !(symbol_mask(lo) | symbol_mask(hi) << 8) & 0xffff
}

/// Sixteen bytes classified in a few vector instructions (a compare per excluded byte)
/// where the byte-pair table takes eight loads: 1.9 million symbols on the Debian store.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod sse2 {
    use std::arch::x86_64::*;

    /// [`super::scan16`]: the bytes classified as in [`stops`], then the symbol's bytes
    /// kept with one mask from [`super::KEEP`] (where the scalar way takes a shift, two
    /// masks and two selects).
    #[target_feature(enable = "sse2")]
    #[inline]
    pub(super) fn scan(lo: u64, hi: u64) -> (u32, u64, u64) {
        let v = _mm_set_epi64x(hi as i64, lo as i64);
        let stops = classify(v);
        let [ml, mh] = super::KEEP[(stops.trailing_zeros() & 15) as usize];
        let kept = _mm_and_si128(v, _mm_set_epi64x(mh as i64, ml as i64));
        (
            stops,
            _mm_cvtsi128_si64(kept) as u64,
            _mm_cvtsi128_si64(_mm_unpackhi_epi64(kept, kept)) as u64,
        )
    }

    #[target_feature(enable = "sse2")]
    #[inline]
    pub(super) fn stops(lo: u64, hi: u64) -> u32 {
        classify(_mm_set_epi64x(hi as i64, lo as i64))
    }

    #[target_feature(enable = "sse2")]
    #[inline]
    fn classify(v: __m128i) -> u32 {
        let eq = |b: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8));
        // Signed, after adding one: 0x21..=0x7e become 0x22..=0x7f, above 0x21, and every
        // other byte 0x21 or less (0x7f..=0xff become negative).
        let printable = _mm_cmpgt_epi8(_mm_add_epi8(v, _mm_set1_epi8(1)), _mm_set1_epi8(0x21));
        // `(` and `)` differ in the low bit only.
        let paren = _mm_cmpeq_epi8(_mm_or_si128(v, _mm_set1_epi8(1)), _mm_set1_epi8(b')' as i8));
        let excluded = _mm_or_si128(
            _mm_or_si128(paren, eq(b'"')),
            _mm_or_si128(eq(b';'), eq(b'\\')),
        );
        let symbol = _mm_andnot_si128(excluded, printable);
        !(_mm_movemask_epi8(symbol) as u32) & 0xffff
    }
}

/// Where the parser is in the nesting of lists, between two calls of [`tokens`].
struct State {
    /// Where the innermost open list's elements begin on the element stack (0 at top
    /// level, which is how a symbol outside parentheses is recognised).
    start: usize,
    /// How many lists are open.
    depth: usize,
    /// [`Tree::heads`] of this file so far.
    heads: u64,
    line: u32,
    /// Whether [`tokens`] reads sixty-four bytes at a time where it can (else a byte at a
    /// time: the reference the block lexer is tested against).
    blocks: bool,
}

/// Parses one file into the shared arena and symbol table (files are parsed one after the
/// other: the work is dominated by the lexer, and one arena avoids copying and re-interning
/// per-file results, which costs more CPU than a second core saves in wall time).
/// `Err` is libsepol's message.
///
/// One stack, `pending`, holds the file's top-level statements and then the elements of
/// each open list above its parent's; each open list's id sits on it just below its
/// elements (where it stays, as its parent's element, when the list closes), and its node
/// holds its parent's `start` until then, so no second stack is kept. The tokens of
/// nearly every file (symbols, parentheses, spaces and line breaks) are read by
/// [`tokens`]; comments, quoted strings and errors come back here.
pub fn parse_file(
    tree: &mut Tree,
    interner: &mut Interner,
    path: &str,
    text: &[u8],
) -> Result<(), String> {
    parse_with(tree, interner, path, text, true)
}

/// [`parse_file`], reading the text a block at a time (`blocks`, as it does) or a byte at
/// a time only (the tests' reference: the same tokens, lines and messages either way).
fn parse_with(
    tree: &mut Tree,
    interner: &mut Interner,
    path: &str,
    text: &[u8],
    blocks: bool,
) -> Result<(), String> {
    let mut pending: Vec<u32> = Vec::with_capacity(1024);
    let mut st = State {
        start: 0,
        depth: 0,
        heads: 0,
        line: 1,
        blocks,
    };
    let mut i = 0usize;
    let n = text.len();
    loop {
        i = match tokens(text, i, tree, &mut pending, interner, &mut st) {
            Ok(i) => i,
            Err(what) => return Err(what.message(st.line, path)),
        };
        let Some(&c) = text.get(i) else {
            break;
        };
        let fail = |what: Failure| Err(what.message(st.line, path));
        match c {
            b';' => {
                while i < n && text[i] != b'\n' && text[i] != b'\r' {
                    i += 1;
                }
            }
            b'"' => {
                let mut j = i + 1;
                while j < n && text[j] != b'"' && text[j] != b'\n' && text[j] != 0 {
                    j += 1;
                }
                if j >= n || text[j] != b'"' {
                    return fail(Failure::Token(b'"'));
                }
                if st.start == 0 {
                    return fail(Failure::NotInside);
                }
                let sym = interner.intern(&text[i + 1..j]);
                if sym >= ATOM {
                    return fail(Failure::TooManyNames);
                }
                pending.push(ATOM | sym);
                i = j + 1;
            }
            other => return fail(Failure::Token(other)),
        }
    }
    if st.depth != 0 {
        return Err(Failure::OpenWithoutClose.message(st.line, path));
    }
    // What is left on the stack are the file's top-level statements.
    let a = tree.kids.len() as u32;
    tree.kids.extend_from_slice(&pending);
    tree.files.push((a, tree.kids.len() as u32));
    tree.heads |= st.heads;
    Ok(())
}

/// Reads tokens from `text[i]` on: symbols, parentheses, spaces, tabs and line breaks,
/// until the end of the text or a byte it leaves to [`parse_file`] (a comment, a quoted
/// string, a byte no token starts with), whose position it returns. Its own function, out
/// of line, with the parser's state in locals: the 1.9 million symbols and 1.4 million
/// parentheses of a distribution's store pass through one loop that keeps in registers
/// what they need, and the rare tokens' code stays outside it.
///
/// Blocks are classified with AVX2 where the processor has it (a few table lookups per
/// 32 bytes, where SSE2 compares once per excluded byte), else with SSE2 (the x86_64
/// baseline) or a byte at a time.
#[inline(never)]
fn tokens(
    text: &[u8],
    i: usize,
    tree: &mut Tree,
    pending: &mut Vec<u32>,
    interner: &mut Interner,
    st: &mut State,
) -> Result<usize, Failure> {
    #[cfg(target_arch = "x86_64")]
    if block::has_avx2() {
        // SAFETY: the processor has AVX2, BMI1 and BMI2 (just checked).
        #[allow(unsafe_code)]
        return unsafe { tokens_avx2(text, i, tree, pending, interner, st) };
    }
    lex(text, i, tree, pending, interner, st, block::classify)
}

/// [`tokens`] compiled for processors with AVX2 (the block classifier's, `tzcnt` and
/// `blsr` for the walk over a block's token starts, and BMI2's shifts by a register that
/// need not be `cl`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2")]
#[inline(never)]
fn tokens_avx2(
    text: &[u8],
    i: usize,
    tree: &mut Tree,
    pending: &mut Vec<u32>,
    interner: &mut Interner,
    st: &mut State,
) -> Result<usize, Failure> {
    // The closure, defined in this function, has its target features: the classifier
    // is inlined (a `#[target_feature]` function is not itself an `Fn`).
    lex(text, i, tree, pending, interner, st, |b| {
        block::avx2::classify(b)
    })
}

/// The body of [`tokens`], with the block classifier to use.
#[inline(always)]
fn lex(
    text: &[u8],
    mut i: usize,
    tree: &mut Tree,
    pending: &mut Vec<u32>,
    interner: &mut Interner,
    st: &mut State,
    classify: impl Fn(&[u8; BLOCK]) -> block::Block,
) -> Result<usize, Failure> {
    let mut start = st.start;
    let mut depth = st.depth;
    let mut heads = st.heads;
    let mut line = st.line;
    let r = 'lex: {
        // Blocks of sixty-four bytes, while sixteen more follow (a symbol's key is read as
        // sixteen bytes from its start); the file's last bytes go through the loop below.
        let bulk = 'bulk: {
            let blocks = st.blocks;
            // Where a symbol that ran into this block starts: it ends by this block's mask
            // (classified once, for its end and for the block's own tokens, and in one
            // place, so that the classifier is inlined).
            let mut crossing: Option<usize> = None;
            'blocks: while let Some(chunk) = text.get(i..i + BLOCK + 16).filter(|_| blocks) {
                let base = i;
                let m = classify(chunk[..BLOCK].try_into().expect("64 bytes"));
                let mut from = 0;
                if let Some(s) = crossing.take() {
                    let (sym, e) = if m.sym == u64::MAX {
                        // It runs past this block too: read from the text, and the next
                        // block starts after it.
                        let (j, sym) = symbol(text, s, interner);
                        (sym, j)
                    } else {
                        let e = (!m.sym).trailing_zeros() as usize;
                        let len = base + e - s;
                        let sym = if len <= 16 {
                            intern_short(interner, &text[s..s + 16], len)
                        } else {
                            long_in_block(text, s, len, interner)
                        };
                        (sym, base + e)
                    };
                    if sym >= ATOM {
                        break 'bulk Some(Err(Failure::TooManyNames));
                    }
                    pending.push(ATOM | sym);
                    if e >= base + BLOCK {
                        i = e;
                        continue 'blocks;
                    }
                    from = e - base;
                }
                let mut starts = m.starts() & u64::MAX << from;
                i = base + BLOCK;
                while starts != 0 {
                    let p = starts.trailing_zeros() as usize;
                    starts &= starts - 1;
                    if m.sym >> p & 1 != 0 {
                        if start == 0 {
                            break 'bulk Some(Err(Failure::NotInside));
                        }
                        let len = (!m.sym >> p).trailing_zeros() as usize;
                        let sym = if p + len < BLOCK {
                            let Some(c) = chunk.get(p..p + 16) else {
                                unreachable!("p < 64 and the chunk holds 80 bytes")
                            };
                            if len <= 16 {
                                intern_short(interner, c, len)
                            } else {
                                long_in_block(text, base + p, len, interner)
                            }
                        } else {
                            // It runs into the next block (its last byte is this block's):
                            // ended there, or after the loop when no next block follows.
                            crossing = Some(base + p);
                            continue 'blocks;
                        };
                        if sym >= ATOM {
                            break 'bulk Some(Err(Failure::TooManyNames));
                        }
                        pending.push(ATOM | sym);
                        continue;
                    }
                    // Compared in the order of their counts (`(` and `)` 700,000 each on
                    // the Debian store, line breaks 300,000): a compare or two where a
                    // `match` made a jump table of seven instructions for each. The line
                    // breaks are a table lookup, not a third compare, so that the
                    // compares are not merged back into a `switch`.
                    let c = chunk[p];
                    if c == b'(' {
                        if depth >= MAX_DEPTH {
                            break 'bulk Some(Err(Failure::TooDeep));
                        }
                        let id = tree.nodes.len() as u32;
                        if id >= ATOM {
                            break 'bulk Some(Err(Failure::TooManyLists));
                        }
                        tree.nodes.push(Node {
                            line,
                            a: start as u32,
                            b: 0,
                        });
                        pending.push(id);
                        depth += 1;
                        start = pending.len();
                        // As in the loop below: a head that does not follow its
                        // parenthesis marks every head as present (out of line: a
                        // branch rarely taken rather than a select each time).
                        if !starts_element(chunk[p + 1]) {
                            every_head(&mut heads);
                        }
                    } else if c == b')' {
                        if start == 0 {
                            break 'bulk Some(Err(Failure::CloseWithoutOpen));
                        }
                        depth -= 1;
                        let parent = close_list(tree, pending, start, &mut heads);
                        pending.truncate(start);
                        start = parent;
                    } else if LINE_BREAKS[c as usize] {
                        line = line.saturating_add(1);
                    } else {
                        break 'bulk Some(Ok(base + p));
                    }
                }
            }
            if let Some(s) = crossing {
                // The text has no next block: the symbol is read from the text.
                let (j, sym) = symbol(text, s, interner);
                if sym >= ATOM {
                    break 'bulk Some(Err(Failure::TooManyNames));
                }
                pending.push(ATOM | sym);
                i = j;
            }
            None
        };
        if let Some(r) = bulk {
            break 'lex r;
        }
        'next: loop {
            let Some(&c) = text.get(i) else {
                break Ok(i);
            };
            if is_symbol_byte(c) {
                if start == 0 {
                    break Err(Failure::NotInside);
                }
                // A run of symbols separated by single spaces (`allow a_t b_t`, `read write`).
                loop {
                    let (j, sym) = symbol(text, i, interner);
                    if sym >= ATOM {
                        break 'next Err(Failure::TooManyNames);
                    }
                    pending.push(ATOM | sym);
                    match text.get(j..j + 2) {
                        Some(&[b' ', c]) if is_symbol_byte(c) => i = j + 1,
                        _ => {
                            i = j;
                            continue 'next;
                        }
                    }
                }
            }
            match c {
                b'(' => {
                    if depth >= MAX_DEPTH {
                        break Err(Failure::TooDeep);
                    }
                    let id = tree.nodes.len() as u32;
                    if id >= ATOM {
                        break Err(Failure::TooManyLists);
                    }
                    // `a` holds the parent's `start` until the list closes.
                    tree.nodes.push(Node {
                        line,
                        a: start as u32,
                        b: 0,
                    });
                    pending.push(id);
                    depth += 1;
                    start = pending.len();
                    i += 1;
                    // The list's head, nearly always a keyword right after the parenthesis, is
                    // noted in `heads` when the list closes. Anything else that could start a
                    // keyword head (a space, a line break, a comment, a quoted string) marks
                    // every head as present, so a pass never skips on a guess; a nested list
                    // or `)` is no keyword.
                    match text.get(i) {
                        Some(&c) if is_symbol_byte(c) => {}
                        Some(b'(' | b')') => {}
                        _ => heads = u64::MAX,
                    }
                }
                b')' => {
                    // `start` is 0 at top level only (inside a list, the list's id is below it).
                    if start == 0 {
                        break Err(Failure::CloseWithoutOpen);
                    }
                    depth -= 1;
                    let parent = close_list(tree, pending, start, &mut heads);
                    pending.truncate(start);
                    start = parent;
                    i += 1;
                }
                b' ' | b'\t' => {
                    i += 1;
                    if matches!(text.get(i), Some(b' ' | b'\t')) {
                        // Indentation comes in runs of spaces: eight compared at once.
                        while let Some(c) = text.get(i..i + 8) {
                            let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
                            let spaces = (w ^ 0x2020_2020_2020_2020).trailing_zeros() as usize / 8;
                            i += spaces;
                            if spaces < 8 {
                                break;
                            }
                        }
                        while matches!(text.get(i), Some(b' ' | b'\t')) {
                            i += 1;
                        }
                    }
                }
                b'\n' | b'\r' => {
                    line = line.saturating_add(1);
                    i += 1;
                }
                _ => break Ok(i),
            }
        }
    };
    st.start = start;
    st.depth = depth;
    st.heads = heads;
    st.line = line;
    r
}

/// Marks every head as present in [`Tree::heads`].
#[cold]
#[inline(never)]
fn every_head(heads: &mut u64) {
    *heads = u64::MAX;
}

/// Whether a list's element can start with `c` right after its parenthesis, as a symbol
/// or a list, or the list end there (what [`Tree::heads`] takes for a head, or for no
/// keyword).
#[inline]
fn starts_element(c: u8) -> bool {
    ELEMENT_STARTS[c as usize]
}

/// Line feed and carriage return (each counts a line, as in libsepol's lexer): what the
/// block lexer tells from the other bytes that start no symbol by one lookup.
static LINE_BREAKS: [bool; 256] = {
    let mut t = [false; 256];
    t[b'\n' as usize] = true;
    t[b'\r' as usize] = true;
    t
};

/// [`starts_element`] of each byte: one lookup.
static ELEMENT_STARTS: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = SYMBOL_BYTES[c] != 0 || c == b'(' as usize || c == b')' as usize;
        c += 1;
    }
    t
};

/// Closes the innermost open list, whose elements are `stack[start..]`: copies them to the
/// arena, notes its head in `heads`, and returns its parent's `start` (the caller then
/// drops the elements from its stack).
#[inline(always)]
fn close_list(tree: &mut Tree, stack: &[u32], start: usize, heads: &mut u64) -> usize {
    // The list's id, just below its elements.
    let id = stack[start - 1] as usize;
    let elems = &stack[start..];
    // Once a list rather than once a symbol: its head, if an atom among the first 64
    // symbols (the keywords `Tree::heads` tracks).
    if let Some(&h) = elems.first() {
        let k = h & !ATOM;
        *heads |= ((h & ATOM != 0 && k < 64) as u64) << (k & 63);
    }
    let kids = &mut tree.kids;
    let a = kids.len() as u32;
    // Most lists hold two to four elements: copied as a fixed-size array (a capacity
    // check and a few moves) rather than through `memcpy`.
    match *elems {
        [x, y] => kids.extend_from_slice(&[x, y]),
        [x, y, z] => kids.extend_from_slice(&[x, y, z]),
        [x, y, z, w] => kids.extend_from_slice(&[x, y, z, w]),
        _ => kids.extend_from_slice(elems),
    }
    let b = kids.len() as u32;
    let nd = &mut tree.nodes[id];
    let parent = nd.a as usize;
    nd.a = a;
    nd.b = b;
    parent
}

/// The id of the symbol of `len` bytes (`len <= 16`) that `c` (sixteen bytes) starts
/// with, whose end a block's mask gave: its key is the sixteen bytes with those past its
/// end masked off.
#[inline(always)]
fn intern_short(interner: &mut Interner, c: &[u8], len: usize) -> Sym {
    let [ml, mh] = KEEP[len];
    let lo = u64::from_le_bytes(c[..8].try_into().expect("8 bytes")) & ml;
    let hi = u64::from_le_bytes(c[8..16].try_into().expect("8 bytes")) & mh;
    interner.intern_plain(&c[..len], lo, hi, hash_short(lo, hi))
}

/// The id of the symbol of `len` bytes (`16 < len < 128`) at `text[s]`, whose end a
/// block's mask gave: its key computed from whole words (the bytes past its end masked
/// off), the text holding at least eight bytes past it.
#[inline(never)]
fn long_in_block(text: &[u8], s: usize, len: usize, interner: &mut Interner) -> Sym {
    let at = |k: usize| u64::from_le_bytes(text[s + k..s + k + 8].try_into().expect("8 bytes"));
    let (lo, hi) = (at(0), at(8));
    let mut h = hash_short(lo, hi);
    let mut k = 16;
    while k + 8 <= len {
        h = hash_more(h, at(k));
        k += 8;
    }
    if k < len {
        h = hash_more(h, at(k) & ((1u64 << (8 * (len - k))) - 1));
    }
    interner.intern_key(&text[s..s + len], lo, hi, h)
}

/// Why a file does not parse (libsepol's messages, one per variant).
#[derive(Copy, Clone, Debug)]
enum Failure {
    TooDeep,
    TooManyLists,
    CloseWithoutOpen,
    OpenWithoutClose,
    /// A byte no token starts with (or an unterminated quoted string's `"`).
    Token(u8),
    NotInside,
    TooManyNames,
}

impl Failure {
    /// The message naming `line` of `path`. Out of line and cold: the lexer's loop keeps
    /// none of the values only a message needs.
    #[cold]
    #[inline(never)]
    fn message(self, line: u32, path: &str) -> String {
        match self {
            Failure::TooDeep => format!(
                "Number of open parenthesis exceeds limit of {MAX_DEPTH} at line {line} of {path}"
            ),
            Failure::TooManyLists => format!("Too many lists at line {line} of {path}"),
            Failure::CloseWithoutOpen => {
                format!("Close parenthesis without matching open at line {line} of {path}")
            }
            Failure::OpenWithoutClose => {
                format!("Open parenthesis without matching close at line {line} of {path}")
            }
            Failure::Token(other) => {
                let shown = if other.is_ascii() {
                    (other as char).to_string()
                } else {
                    format!("\\x{other:02x}")
                };
                format!("Invalid token '{shown}' at line {line} of {path}")
            }
            Failure::NotInside => format!("Symbol not inside parenthesis at line {line} of {path}"),
            Failure::TooManyNames => format!("Too many distinct names at line {line} of {path}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intern::key_of;

    /// `Tree::heads` must hold every keyword that starts a list, at any depth, or a pass
    /// that skips its walk on it would miss statements (a block in an optional, say):
    /// a head written apart from its parenthesis (`( block`, `("in"`) counts as any.
    #[test]
    fn heads_hold_every_list_head() {
        let texts: [&[u8]; 5] = [
            b"(optional o (optional p (type t) (block b (in c))))",
            b"(type t)\n(macro m ((type x)) (call n (x)))\n(tunableif tun (true (blockinherit q)))",
            b"((block) x)\n(filecon \"/a\" block ())\n(allow a b (file (read)))",
            b"(\"in\" x) (blockabstract z)",
            b"(optional o\n  ( block b)\n)",
        ];
        for text in texts {
            let mut tree = Tree::default();
            let mut int = crate::kw::Kw::interner();
            parse_file(&mut tree, &mut int, "t.cil", text).expect("parses");
            let mut walked = 0u64;
            for n in 0..tree.nodes.len() as u32 {
                if let Some(s) = tree.kids(n).first().and_then(|&k| tree.sym(k)) {
                    if s < 64 {
                        walked |= 1 << s;
                    }
                }
            }
            let shown = String::from_utf8_lossy(text);
            assert_eq!(tree.heads & walked, walked, "{shown}");
            assert_ne!(walked, 0);
            // Exact when every head follows its parenthesis, else every bit is set.
            if text
                .windows(2)
                .any(|w| w == b"( " || w == b"(\"" || w == b"(\n")
            {
                assert_eq!(tree.heads, u64::MAX, "{shown}");
            } else {
                assert_eq!(tree.heads, walked, "{shown}");
            }
        }
        // An atom that is not a list's first element sets nothing (`block` the file type;
        // `filecon`'s id is past the 64 bits).
        let mut tree = Tree::default();
        let mut int = crate::kw::Kw::interner();
        parse_file(&mut tree, &mut int, "t.cil", b"(filecon \"/a\" block ())").expect("parses");
        assert_eq!(tree.heads, 0);
    }

    /// Everything a parse produces, to compare two parses: the lists (line and elements),
    /// each file's statements, the heads, every interned name, or the message.
    fn parse_outcome(text: &[u8], blocks: bool) -> Result<(String, Vec<Vec<u8>>), String> {
        let mut tree = Tree::default();
        let mut int = crate::kw::Kw::interner();
        parse_with(&mut tree, &mut int, "t.cil", text, blocks)?;
        let lists: Vec<(u32, &[u32])> = (0..tree.nodes.len() as u32)
            .map(|n| (tree.node(n).line(), tree.kids(n)))
            .collect();
        let names = (0..int.len() as u32)
            .map(|k| int.bytes(k).to_vec())
            .collect();
        Ok((
            format!("{lists:?} {:?} {:x}", tree.files, tree.heads),
            names,
        ))
    }

    /// The block lexer must read exactly what the byte-at-a-time loop reads (the lexer
    /// before it, checked against secilc by the corpus tests): same lists, lines, names
    /// and heads, or the same message.
    #[track_caller]
    fn assert_blocks_read_as_bytes(text: &[u8]) {
        let by_blocks = parse_outcome(text, true);
        let by_bytes = parse_outcome(text, false);
        assert_eq!(by_blocks, by_bytes, "{:?}", String::from_utf8_lossy(text));
    }

    /// A small deterministic generator (xorshift), for texts with every token at every
    /// position of a block.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// Texts of CIL tokens in random order: symbols of 1 to 200 bytes (around the 16-byte
    /// key and the 64-byte block), parentheses, spaces, tabs, LF and CRLF line breaks,
    /// comments and quoted strings (some crossing blocks), after 0 to 63 bytes of padding
    /// so that each token starts at each offset of a block.
    #[test]
    fn block_lexer_reads_what_the_byte_loop_reads() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let alphabet = b"abcxyz_019.-/[]@=*$%+!|&^:~`#{}'<>?,ABCZ";
        for round in 0..3000 {
            let mut text = vec![b' '; round % 64];
            let mut depth = 0;
            text.push(b'(');
            depth += 1;
            for _ in 0..rng.below(60) + 1 {
                match rng.below(12) {
                    0..=3 => {
                        let len = match rng.below(6) {
                            0 => rng.below(200) + 1,
                            1 => 15 + rng.below(3),
                            2 => 62 + rng.below(4),
                            _ => rng.below(12) + 1,
                        };
                        // A few names, so that some repeat and are found, not added.
                        let seed = rng.below(5);
                        text.extend((0..len).map(|k| alphabet[(k * 7 + seed) % alphabet.len()]));
                        text.push(b' ');
                    }
                    4 => {
                        text.push(b'(');
                        depth += 1;
                    }
                    5 if depth > 1 => {
                        text.push(b')');
                        depth -= 1;
                    }
                    6 => text.extend_from_slice(&b"  \t   "[..rng.below(6) + 1]),
                    7 => text.push(b'\n'),
                    8 => text.extend_from_slice(b"\r\n"),
                    9 => {
                        text.extend_from_slice(b"; a comment (with parentheses) ");
                        text.extend(std::iter::repeat_n(b'-', rng.below(80)));
                        text.push(b'\n');
                    }
                    10 => {
                        text.push(b'"');
                        text.extend(std::iter::repeat_n(b'q', rng.below(90)));
                        text.extend_from_slice(b"(\r ;x)\" ");
                    }
                    _ => text.extend_from_slice(b"(allow a_t b_t (file (read write)))"),
                }
            }
            text.extend(std::iter::repeat_n(b')', depth));
            text.push(b'\n');
            assert_blocks_read_as_bytes(&text);
            // The same text cut short (an open list at the end), and with a byte no token
            // starts with (a NUL, a non-UTF-8 byte, a backslash, a form feed) or a stray
            // parenthesis put somewhere.
            let cut = rng.below(text.len());
            assert_blocks_read_as_bytes(&text[..cut]);
            for bad in [0u8, 0xff, b'\\', 0x0c, b')', b'('] {
                let mut broken = text.clone();
                broken[rng.below(text.len())] = bad;
                assert_blocks_read_as_bytes(&broken);
            }
        }
    }

    /// Symbols at the edges of a block: ending on its last byte, crossing into the next
    /// one, a symbol right after a parenthesis on the last byte, files whose length is
    /// around a block's.
    #[test]
    fn block_lexer_handles_tokens_at_block_edges() {
        for pad in 0..80 {
            for len in [1, 15, 16, 17, 63, 64, 65, 130] {
                let mut text = vec![b' '; pad];
                text.push(b'(');
                text.extend(std::iter::repeat_n(b'n', len));
                text.extend_from_slice(b"(x)(\n y)\r\n");
                text.extend(std::iter::repeat_n(b' ', pad % 7));
                text.push(b')');
                assert_blocks_read_as_bytes(&text);
                text.extend(std::iter::repeat_n(b'\n', 70));
                assert_blocks_read_as_bytes(&text);
            }
        }
    }

    /// A name of a hundred thousand bytes is one symbol, found again as itself.
    #[test]
    fn huge_names_are_one_symbol() {
        let name: Vec<u8> = (0..100_000).map(|k| b"abcdefgh_0123"[k % 13]).collect();
        let mut text = b"(type ".to_vec();
        text.extend_from_slice(&name);
        text.extend_from_slice(b")\n(typeattribute ");
        text.extend_from_slice(&name);
        text.extend_from_slice(b")\n");
        assert_blocks_read_as_bytes(&text);
        let mut tree = Tree::default();
        let mut int = crate::kw::Kw::interner();
        parse_file(&mut tree, &mut int, "t.cil", &text).expect("parses");
        let sym = int.get(&name).expect("interned");
        let atoms: Vec<u32> = tree.kids.iter().map(|&k| k & !ATOM).collect();
        assert_eq!(atoms.iter().filter(|&&k| k == sym).count(), 2);
    }

    /// A million open parentheses stop at libsepol's limit with its message, on the
    /// line where the limit is passed.
    #[test]
    fn a_million_open_parentheses_is_a_clear_error() {
        let mut text = b"\n\n".to_vec();
        text.extend(std::iter::repeat_n(b'(', 1_000_000));
        let mut tree = Tree::default();
        let mut int = crate::kw::Kw::interner();
        let err = parse_file(&mut tree, &mut int, "deep.cil", &text).expect_err("too deep");
        assert_eq!(
            err,
            "Number of open parenthesis exceeds limit of 4096 at line 3 of deep.cil"
        );
        assert_blocks_read_as_bytes(&text[..10_000]);
    }

    /// The SSE2 classifier must agree with the byte table (the lexer's definition of a
    /// symbol byte, from `cil_lexer.l`) for every byte value at every position.
    #[test]
    fn sixteen_byte_classifier_matches_the_symbol_table() {
        for b in 0..=255u8 {
            for pos in 0..16 {
                let mut bytes = *b"abcdefghijklmnop";
                bytes[pos] = b;
                let lo = u64::from_le_bytes(bytes[..8].try_into().expect("8"));
                let hi = u64::from_le_bytes(bytes[8..].try_into().expect("8"));
                let want = if is_symbol_byte(b) { 0 } else { 1 << pos };
                assert_eq!(stops16(lo, hi), want, "byte {b:#04x} at {pos}");
                assert_eq!(stops16_table(lo, hi), want, "byte {b:#04x} at {pos}");
                // The symbol's key: the SSE2 way is the scalar one.
                assert_eq!(
                    scan16(lo, hi),
                    scan16_words(lo, hi),
                    "byte {b:#04x} at {pos}"
                );
                if pos > 0 && want != 0 {
                    let (klo, khi, _) = key_of(&bytes[..pos]);
                    assert_eq!(scan16(lo, hi), (want, klo, khi), "byte {b:#04x} at {pos}");
                }
            }
        }
    }

    /// The lexer's one-pass key must equal the interner's, or a name the lexer interned
    /// would not be found by `Interner::get` (nor a keyword by the lexer).
    #[test]
    fn scanned_symbol_hash_is_the_interner_hash() {
        let alphabet = b"abcXYZ019[].@=/*-_$%+!|&^:~`#{}'<>?,";
        for len in 1..70 {
            let sym: Vec<u8> = (0..len)
                .map(|k| alphabet[(k * 7 + len) % alphabet.len()])
                .collect();
            for after in [&b""[..], b")", b" (x)", b"\n;comment that is long"] {
                let mut text = sym.clone();
                text.extend_from_slice(after);
                let (end, lo, hi, h) = match scan_short(&text, 0) {
                    Some((end, lo, hi)) => (end, lo, hi, hash_short(lo, hi)),
                    None => scan_long(&text, 0),
                };
                assert_eq!(end, len, "end of a {len}-byte symbol before {after:?}");
                assert_eq!((lo, hi, h), key_of(&sym), "key of a {len}-byte symbol");
            }
        }
    }
}

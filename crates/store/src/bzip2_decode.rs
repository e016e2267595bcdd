//! A bzip2 decoder for the store's modules, faster than the `bzip2` crate's on them: its
//! Huffman symbols come from a 10-bit lookup table (the reference decoder reads a code
//! bit by bit), its block CRC is computed eight bytes at a time over the finished text,
//! and each thread keeps its last block's table for the next instead of mapping a fresh
//! one. Decoding the store's CIL is most of `build --store`'s CPU time, all of it before
//! the last module can be parsed.
//!
//! It accepts only what it can check: one stream of blocks, each block's CRC and the
//! stream CRC right, nothing after the stream's end. Anything else — a damaged stream, a
//! "randomised" block (written by bzip2 0.9.0 only), trailing data, a text over the limit
//! — is `None`, and the caller decodes with the `bzip2` crate instead, which also gives
//! the error. The CRCs make that safe: text this decoder returns is text whose every
//! block CRC matches, so a slip here costs time (the crate decodes again), not bytes
//! (short of a slip whose wrong text also matched a block's CRC-32).

const BLOCK_MAGIC: u64 = 0x3141_5926_5359;
const END_MAGIC: u64 = 0x1772_4538_5090;
/// The reference decoder's limits: code lengths 1..=20, 2..=6 tables, up to 18,002
/// selectors read (more are read and ignored by libbzip2 1.0.8; here they are refused).
const MAX_CODE_LEN: usize = 20;
const MAX_GROUPS: usize = 6;
const MAX_SELECTORS: usize = 18_002;
const MAX_ALPHA: usize = 258;
/// Symbols per selector.
const GROUP_SIZE: usize = 50;
/// Bits resolved by one table look-up.
const TABLE_BITS: u32 = 10;

/// Reads bits most significant first from a byte slice, eight bytes at a time.
struct Bits<'a> {
    raw: &'a [u8],
    /// The next byte to load into `buf`.
    next: usize,
    /// Loaded bits, the next one at bit 63.
    buf: u64,
    /// How many of `buf`'s top bits are loaded.
    avail: u32,
}

impl<'a> Bits<'a> {
    /// A reader at bit offset `at`.
    fn new(raw: &'a [u8], at: usize) -> Bits<'a> {
        let mut b = Bits {
            raw,
            next: at / 8,
            buf: 0,
            avail: 0,
        };
        b.refill();
        b.consume((at % 8) as u32);
        b
    }

    /// Loads bytes until at least 57 bits are available; past the end it loads zeros
    /// (counted by [`Bits::position`], which callers check against the length).
    #[inline]
    fn refill(&mut self) {
        while self.avail <= 56 {
            let byte = self.raw.get(self.next).copied().unwrap_or(0);
            self.buf |= u64::from(byte) << (56 - self.avail);
            self.next += 1;
            self.avail += 8;
        }
    }

    /// The next `n` (1..=32) bits without consuming them.
    #[inline]
    fn peek(&mut self, n: u32) -> u32 {
        if self.avail < n {
            self.refill();
        }
        (self.buf >> (64 - n)) as u32
    }

    #[inline]
    fn consume(&mut self, n: u32) {
        self.buf <<= n;
        self.avail -= n;
    }

    #[inline]
    fn get(&mut self, n: u32) -> u32 {
        let v = self.peek(n);
        self.consume(n);
        v
    }

    fn get48(&mut self) -> u64 {
        (u64::from(self.get(24)) << 24) | u64::from(self.get(24))
    }

    /// The bit offset of the next unread bit.
    fn position(&self) -> usize {
        self.next * 8 - self.avail as usize
    }

    /// Whether everything read so far lies inside the input.
    fn in_bounds(&self) -> bool {
        self.position() <= self.raw.len() * 8
    }
}

/// One Huffman table, decoded as libbzip2's `BZ2_hbCreateDecodeTables` and
/// `GET_MTF_VAL` decode it: canonical codes in order of (length, symbol); a code of length
/// `n` ends where its `n`-bit prefix is at most `limit[n]`.
struct Huffman {
    /// Indexed by the next [`TABLE_BITS`] bits: symbol and code length, or length 0 for
    /// codes longer than the table (decoded by [`Huffman::slow`]).
    fast: [(u16, u8); 1 << TABLE_BITS],
    limit: [i32; MAX_CODE_LEN + 2],
    /// For each length, the code of its first symbol minus the symbol's rank.
    base: [i32; MAX_CODE_LEN + 2],
    perm: [u16; MAX_ALPHA],
    min_len: u32,
    max_len: u32,
}

impl Huffman {
    fn new(lengths: &[u8]) -> Option<Huffman> {
        let min_len = u32::from(*lengths.iter().min()?);
        let max_len = u32::from(*lengths.iter().max()?);
        let mut perm = [0u16; MAX_ALPHA];
        let mut pp = 0;
        for len in min_len..=max_len {
            for (sym, &l) in lengths.iter().enumerate() {
                if u32::from(l) == len {
                    perm[pp] = sym as u16;
                    pp += 1;
                }
            }
        }
        let mut count = [0i32; MAX_CODE_LEN + 2];
        for &l in lengths {
            count[usize::from(l)] += 1;
        }
        let (mut limit, mut base) = ([-1i32; MAX_CODE_LEN + 2], [0i32; MAX_CODE_LEN + 2]);
        let (mut code, mut rank) = (0i32, 0i32);
        for len in min_len as usize..=max_len as usize {
            base[len] = code - rank;
            code += count[len];
            rank += count[len];
            limit[len] = code - 1;
            code <<= 1;
        }
        let mut h = Huffman {
            fast: [(0, 0); 1 << TABLE_BITS],
            limit,
            base,
            perm,
            min_len,
            max_len,
        };
        // A prefix of length n ends there if it is at most limit[n] and no shorter prefix
        // ended: those are the prefixes from `lo` (every shorter limit passed) to limit[n].
        let mut lo = 0i64;
        for len in min_len..=max_len.min(TABLE_BITS) {
            // (An over-full length has more codes than prefixes: only the prefixes exist.)
            let hi = i64::from(h.limit[len as usize]).min((1 << len) - 1);
            if hi >= lo {
                let shift = TABLE_BITS - len;
                for z in lo..=hi {
                    let sym = h.perm[(z - i64::from(h.base[len as usize])) as usize];
                    let first = (z << shift) as usize;
                    h.fast[first..first + (1 << shift)].fill((sym, len as u8));
                }
            }
            lo = lo.max(i64::from(h.limit[len as usize]) + 1) << 1;
        }
        Some(h)
    }

    #[inline]
    fn decode(&self, bits: &mut Bits) -> Option<u16> {
        let (sym, len) = self.fast[bits.peek(TABLE_BITS) as usize];
        if len != 0 {
            bits.consume(u32::from(len));
            return Some(sym);
        }
        self.slow(bits)
    }

    /// The reference decoder's loop, for codes longer than the table.
    fn slow(&self, bits: &mut Bits) -> Option<u16> {
        let mut len = self.min_len;
        loop {
            if len > self.max_len {
                return None;
            }
            let z = bits.peek(len) as i32;
            if z <= self.limit[len as usize] {
                bits.consume(len);
                let i = usize::try_from(z - self.base[len as usize]).ok()?;
                return self.perm.get(i).copied();
            }
            len += 1;
        }
    }
}

/// One block read up to its BWT: `tt[i]` holds the BWT text's byte at `i` (low 8 bits)
/// and the position that follows `i` in the original text (high 24 bits).
pub(crate) struct Prepared {
    tt: Vec<u32>,
    /// Where the original text starts in the chain.
    start: u32,
    /// The CRC stored in the block's header (of the text after run-length decoding).
    crc: u32,
    /// The bit offset after the block.
    pub(crate) end: usize,
}

thread_local! {
    /// The table of the last block decoded on this thread, kept for the next: a fresh
    /// table (up to 3.6 MB) is mapped and page-faulted in for every block, which cost the
    /// store's reader threads about a fifth of their time. A reader keeps at most one
    /// table, as large as the largest block it decoded (Debian's largest module after
    /// `base` is 0.76 MB of text), until it ends with the last module.
    static SPARE_TABLE: std::cell::Cell<Vec<u32>> = const { std::cell::Cell::new(Vec::new()) };
}

impl Drop for Prepared {
    fn drop(&mut self) {
        let tt = std::mem::take(&mut self.tt);
        // During the thread's own teardown there is nothing to keep it for.
        let _ = SPARE_TABLE.try_with(|spare| spare.set(tt));
    }
}

impl Prepared {
    /// The stored CRC (checked by [`finish`]).
    pub(crate) fn crc(&self) -> u32 {
        self.crc
    }
}

/// Reads the block whose magic starts at bit `at` of `raw` (a stream of block size
/// `level` × 100,000) up to its BWT. `None` for anything the reference decoder would
/// refuse, and for a randomised block.
pub(crate) fn prepare(raw: &[u8], at: usize, level: u32) -> Option<Prepared> {
    let mut bits = Bits::new(raw, at);
    if bits.get48() != BLOCK_MAGIC {
        return None;
    }
    let stored_crc = bits.get(32);
    if bits.get(1) != 0 {
        return None; // randomised: left to the reference decoder
    }
    let orig_ptr = bits.get(24) as usize;

    // The bytes in use, in order: the MTF list's initial content.
    let used_groups = bits.get(16);
    let mut mtf = [0u8; 256];
    let mut n_in_use = 0usize;
    for i in 0..16 {
        if used_groups & (0x8000 >> i) != 0 {
            let used = bits.get(16);
            for j in 0..16 {
                if used & (0x8000 >> j) != 0 {
                    mtf[n_in_use] = (i * 16 + j) as u8;
                    n_in_use += 1;
                }
            }
        }
    }
    if n_in_use == 0 {
        return None;
    }
    let alpha = n_in_use + 2;
    let n_groups = bits.get(3) as usize;
    if !(2..=MAX_GROUPS).contains(&n_groups) {
        return None;
    }
    let n_selectors = bits.get(15) as usize;
    if !(1..=MAX_SELECTORS).contains(&n_selectors) {
        return None;
    }
    let mut group_mtf: [u8; MAX_GROUPS] = [0, 1, 2, 3, 4, 5];
    let mut selectors = Vec::with_capacity(n_selectors);
    for _ in 0..n_selectors {
        let mut j = 0;
        while bits.get(1) == 1 {
            j += 1;
            if j >= n_groups {
                return None;
            }
        }
        let g = group_mtf[j];
        group_mtf.copy_within(0..j, 1);
        group_mtf[0] = g;
        selectors.push(g);
    }
    let mut tables = Vec::with_capacity(n_groups);
    let mut lengths = [0u8; MAX_ALPHA];
    for _ in 0..n_groups {
        let mut cur = bits.get(5) as i32;
        for len in lengths.iter_mut().take(alpha) {
            loop {
                if !(1..=MAX_CODE_LEN as i32).contains(&cur) {
                    return None;
                }
                if bits.get(1) == 0 {
                    break;
                }
                cur += if bits.get(1) == 0 { 1 } else { -1 };
            }
            *len = cur as u8;
        }
        tables.push(Huffman::new(&lengths[..alpha])?);
    }
    if !bits.in_bounds() {
        return None;
    }

    // The MTF/RLE2 symbols: the block's BWT text into the low bytes of `tt`.
    let max_block = 100_000 * level as usize;
    let eob = (n_in_use + 1) as u16;
    let mut tt = SPARE_TABLE.with(|spare| spare.take());
    tt.clear();
    tt.reserve(max_block.min(raw.len().saturating_mul(64)));
    let mut counts = [0u32; 256];
    let mut group = 0usize;
    let mut left = 0usize;
    let mut table = &tables[0];
    let mut next_sym = || -> Option<u16> {
        if left == 0 {
            table = &tables[usize::from(*selectors.get(group)?)];
            group += 1;
            left = GROUP_SIZE;
        }
        left -= 1;
        table.decode(&mut bits)
    };
    let mut sym = next_sym()?;
    loop {
        if sym == eob {
            break;
        }
        if sym <= 1 {
            // A run of the front byte, its length in bijective base 2 (RUNA = 1, RUNB = 2).
            let mut run = 0usize;
            let mut weight = 1usize;
            while sym <= 1 {
                if weight >= 2 * 1024 * 1024 {
                    return None;
                }
                run += weight << sym;
                weight <<= 1;
                sym = next_sym()?;
            }
            if tt.len() + run > max_block {
                return None;
            }
            let b = mtf[0];
            counts[usize::from(b)] += run as u32;
            tt.resize(tt.len() + run, u32::from(b));
            continue;
        }
        let k = usize::from(sym) - 1;
        if k >= n_in_use || tt.len() >= max_block {
            return None;
        }
        let b = mtf[k];
        mtf.copy_within(0..k, 1);
        mtf[0] = b;
        counts[usize::from(b)] += 1;
        tt.push(u32::from(b));
        sym = next_sym()?;
    }
    if !bits.in_bounds() || orig_ptr >= tt.len() {
        return None;
    }
    let end = bits.position();

    // Each position's successor in the high 24 bits.
    let mut next = [0u32; 256];
    let mut sum = 0u32;
    for (n, c) in next.iter_mut().zip(counts) {
        *n = sum;
        sum += c;
    }
    for i in 0..tt.len() {
        let b = (tt[i] & 0xff) as usize;
        let slot = next[b] as usize;
        tt[slot] |= (i as u32) << 8;
        next[b] += 1;
    }
    let start = tt[orig_ptr] >> 8;
    Some(Prepared {
        tt,
        start,
        crc: stored_crc,
        end,
    })
}

/// Follows a prepared block's chain from its start and undoes the initial run-length
/// coding on the way (four equal bytes, then a count of more), appending the text to
/// `out`; checks the block's CRC. `None` when the CRC differs or `out` would pass `limit`
/// bytes. Each step waits for a load from a table of up to 3.6 MB at a position that looks
/// random: this loop is most of a block's decoding time. (Following the chains of two or
/// three blocks in one loop, to keep several loads in flight, was measured no faster;
/// walking into a buffer first and undoing the runs in a second pass cost a fresh buffer's
/// page faults.)
pub(crate) fn unwind(block: &Prepared, out: &mut Vec<u8>, limit: u64) -> Option<()> {
    let tt = &block.tt[..];
    let start = out.len();
    out.reserve(tt.len());
    let mut pos = block.start;
    // The byte of the current run (256: none) and how many times it came in a row.
    let (mut last, mut same) = (256u32, 0u32);
    for _ in 0..tt.len() {
        // In bounds: `prepare` stores only positions below `tt.len()`.
        let e = tt[pos as usize];
        pos = e >> 8;
        let b = e & 0xff;
        if same == 4 {
            if b > 0 {
                out.resize(out.len() + b as usize, last as u8);
                if out.len() as u64 > limit {
                    return None;
                }
            }
            (last, same) = (256, 0);
            continue;
        }
        if b == last {
            same += 1;
        } else {
            (last, same) = (b, 1);
        }
        out.push(b as u8);
    }
    if out.len() as u64 > limit {
        return None;
    }
    let got = crc32(!0, &out[start..]) ^ !0;
    (got == block.crc).then_some(())
}

/// Decodes a whole file that is exactly one bzip2 stream, at most `limit` bytes of text;
/// `None` for anything else (see the module docs).
pub fn decode(raw: &[u8], limit: u64) -> Option<Vec<u8>> {
    if raw.len() < 4 || !raw.starts_with(b"BZh") || !(b'1'..=b'9').contains(&raw[3]) {
        return None;
    }
    let level = u32::from(raw[3] - b'0');
    let mut out = Vec::with_capacity(raw.len().saturating_mul(8));
    let mut at = 32;
    let mut stream_crc = 0u32;
    loop {
        let mut bits = Bits::new(raw, at);
        match bits.get48() {
            BLOCK_MAGIC => {
                let b = prepare(raw, at, level)?;
                unwind(&b, &mut out, limit)?;
                stream_crc = stream_crc.rotate_left(1) ^ b.crc;
                at = b.end;
            }
            END_MAGIC => {
                let stored = bits.get(32);
                // Only the end marker's padding may follow.
                let end = bits.position();
                return (stored == stream_crc && end.div_ceil(8) == raw.len()).then_some(out);
            }
            _ => return None,
        }
    }
}

/// bzip2's CRC-32 (polynomial 0x04c11db7, most significant bit first), eight bytes a
/// step through eight tables.
fn crc32(mut crc: u32, data: &[u8]) -> u32 {
    let t = &CRC_TABLES;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let hi = crc ^ u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
        let lo = u32::from_be_bytes([c[4], c[5], c[6], c[7]]);
        crc = t[7][(hi >> 24) as usize]
            ^ t[6][(hi >> 16 & 0xff) as usize]
            ^ t[5][(hi >> 8 & 0xff) as usize]
            ^ t[4][(hi & 0xff) as usize]
            ^ t[3][(lo >> 24) as usize]
            ^ t[2][(lo >> 16 & 0xff) as usize]
            ^ t[1][(lo >> 8 & 0xff) as usize]
            ^ t[0][(lo & 0xff) as usize];
    }
    for &b in chunks.remainder() {
        crc = (crc << 8) ^ t[0][((crc >> 24) ^ u32::from(b)) as usize];
    }
    crc
}

/// `CRC_TABLES[k][b]`: the CRC of byte `b` followed by `k` zero bytes.
static CRC_TABLES: [[u32; 256]; 8] = crc_tables();

const fn crc_tables() -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    let mut b = 0;
    while b < 256 {
        let mut c = (b as u32) << 24;
        let mut k = 0;
        while k < 8 {
            c = if c & 0x8000_0000 != 0 {
                (c << 1) ^ 0x04c1_1db7
            } else {
                c << 1
            };
            k += 1;
        }
        t[0][b] = c;
        b += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut b = 0;
        while b < 256 {
            let prev = t[k - 1][b];
            t[k][b] = (prev << 8) ^ t[0][(prev >> 24) as usize];
            b += 1;
        }
        k += 1;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn compress(text: &[u8], level: u32) -> Vec<u8> {
        let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::new(level));
        e.write_all(text).unwrap();
        e.finish().unwrap()
    }

    fn reference(raw: &[u8]) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        bzip2::read::BzDecoder::new(raw).read_to_end(&mut out)?;
        Ok(out)
    }

    /// Texts with long runs (the run-length stages), every byte value, and several
    /// blocks at level 1.
    fn samples() -> Vec<Vec<u8>> {
        let mut v = vec![
            b"a".to_vec(),
            b"aaaa".to_vec(),
            b"aaaaa".to_vec(),
            vec![b'x'; 300],
            vec![0u8; 1_000_000],
            (0..=255u8).cycle().take(70_000).collect(),
        ];
        let mut t = Vec::new();
        let mut x = 12345u32;
        for i in 0..60_000u32 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            write!(
                t,
                "(allow t{} u{} (file (read {})))",
                x % 1013,
                i % 97,
                x >> 20
            )
            .unwrap();
            t.extend(std::iter::repeat_n(b' ', (x % 9) as usize));
            t.push(b'\n');
        }
        v.push(t);
        v
    }

    #[test]
    fn text_equals_the_reference_decoders() {
        for text in samples() {
            for level in [1, 9] {
                let raw = compress(&text, level);
                assert_eq!(decode(&raw, 1 << 30).as_deref(), Some(&text[..]));
                assert_eq!(reference(&raw).unwrap(), text);
            }
        }
    }

    #[test]
    fn crc_tables_agree_with_the_bytewise_crc() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        let mut one = !0u32;
        for &b in &data {
            one = (one << 8) ^ CRC_TABLES[0][((one >> 24) ^ u32::from(b)) as usize];
        }
        for cut in [0, 1, 7, 8, 9, 999] {
            assert_eq!(crc32(crc32(!0, &data[..cut]), &data[cut..]), one);
        }
    }

    #[test]
    fn damaged_trailing_or_oversized_input_is_left_to_the_reference_decoder() {
        let text = samples().pop().unwrap();
        let raw = compress(&text, 1);
        assert!(
            decode(&raw, text.len() as u64 - 1).is_none(),
            "over the limit"
        );
        assert!(
            decode(&raw[..raw.len() - 1], 1 << 30).is_none(),
            "truncated"
        );
        let mut two = raw.clone();
        two.extend_from_slice(&raw);
        assert!(decode(&two, 1 << 30).is_none(), "two streams");
        for at in [10, raw.len() / 3, raw.len() / 2, raw.len() - 6] {
            let mut bad = raw.clone();
            bad[at] ^= 0x04;
            let ours = decode(&bad, 1 << 30);
            assert!(ours.is_none(), "a flipped bit at byte {at} is caught");
        }
        assert!(decode(b"BZh9", 1 << 30).is_none());
        assert!(decode(b"BZh0\x17\x72\x45\x38\x50\x90\0\0\0\0", 1 << 30).is_none());
    }

    #[test]
    fn every_single_bit_flip_is_refused_or_decoded_as_the_reference_decodes_it() {
        let text: Vec<u8> = (0..3000u32)
            .flat_map(|i| format!("(type t{})\n", i % 37 * 11 % 29).into_bytes())
            .collect();
        for level in [1, 9] {
            let raw = compress(&text, level);
            for bit in 0..raw.len() * 8 {
                let mut bad = raw.clone();
                bad[bit / 8] ^= 0x80 >> (bit % 8);
                if let Some(ours) = decode(&bad, 1 << 24) {
                    assert_eq!(reference(&bad).ok(), Some(ours), "bit {bit}");
                }
            }
        }
    }

    #[test]
    fn an_empty_stream_decodes_to_nothing() {
        let raw = compress(b"", 9);
        assert_eq!(decode(&raw, 1 << 30), Some(Vec::new()));
    }
}

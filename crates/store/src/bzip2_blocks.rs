//! Decompressing the blocks of one large bzip2 stream on several threads. A bzip2 stream is
//! a header (`BZh` and the block size digit), blocks that each start with the bit-aligned
//! 48-bit magic `0x314159265359` and their own CRC, and a 48-bit end marker
//! `0x177245385090` followed by the stream CRC (every block CRC folded in). Each block
//! decodes on its own: `bzip2_decode::prepare` reads it from its bit offset, and it must
//! end where the next block's magic (or the end marker) was found, with the CRC stored in
//! its header.
//!
//! Finding the blocks by their magic can be fooled by compressed data that happens to hold
//! the same 48 bits; then a piece fails to decode (its CRC, or its structure, is wrong) and
//! the caller decodes the whole stream serially instead, which also gives the authoritative
//! error for damaged data. The pieces' block CRCs must also fold into the stream CRC, so
//! the parallel path never returns text the serial one would not.

use crate::bzip2_decode::{prepare, unwind};

const BLOCK_MAGIC: u64 = 0x3141_5926_5359;
const END_MAGIC: u64 = 0x1772_4538_5090;
const MAGIC_MASK: u64 = (1 << 48) - 1;
/// Bits before the first block: `BZh` and the block size digit.
const HEADER_BITS: usize = 32;

/// Where one stream's blocks lie in a file's bits.
#[derive(Debug, PartialEq, Eq)]
struct Blocks {
    /// The bit offset of each block's magic, in order.
    starts: Vec<usize>,
    /// The bit offset of the end marker (where the last block ends).
    end: usize,
    /// The stream CRC stored after the end marker.
    stream_crc: u32,
}

/// Reads `n` (≤ 57) bits at bit offset `at`, most significant first, or `None` past the end.
fn bits(raw: &[u8], at: usize, n: usize) -> Option<u64> {
    let mut v = 0u64;
    for i in at..at + n {
        let byte = *raw.get(i / 8)?;
        v = (v << 1) | u64::from((byte >> (7 - i % 8)) & 1);
    }
    Some(v)
}

/// Finds the blocks of a file holding exactly one bzip2 stream (the end marker's CRC and
/// its padding end the file); `None` for anything else (which the serial decoder handles).
fn find_blocks(raw: &[u8]) -> Option<Blocks> {
    if raw.len() < 4 || !raw.starts_with(b"BZh") || !(b'1'..=b'9').contains(&raw[3]) {
        return None;
    }
    let mut starts = Vec::new();
    let mut window = 0u64;
    let mut end = None;
    'scan: for (i, &byte) in raw.iter().enumerate().skip(HEADER_BITS / 8) {
        for k in (0..8).rev() {
            window = ((window << 1) | u64::from((byte >> k) & 1)) & MAGIC_MASK;
            // The bit just shifted in is bit `i * 8 + 7 - k`; a magic ends with it.
            let after = i * 8 + 8 - k;
            if after < HEADER_BITS + 48 {
                continue;
            }
            if window == BLOCK_MAGIC {
                starts.push(after - 48);
            } else if window == END_MAGIC {
                end = Some(after - 48);
                break 'scan;
            }
        }
    }
    let end = end?;
    if starts.first() != Some(&HEADER_BITS) {
        return None;
    }
    let stream_crc = u32::try_from(bits(raw, end + 48, 32)?).ok()?;
    // Only the end marker's padding may follow: one stream, nothing appended.
    if raw.len() != (end + 80).div_ceil(8) {
        return None;
    }
    Some(Blocks {
        starts,
        end,
        stream_crc,
    })
}

/// The text of `raw` (a bzip2 file) decoded block-parallel on up to `threads` threads, at
/// most `limit` bytes of it; `None` when the file is not one stream of at least two blocks
/// that all decode and agree with the stream CRC (the caller then decodes serially).
pub fn decode_parallel(raw: &[u8], threads: usize, limit: u64) -> Option<Vec<u8>> {
    let blocks = find_blocks(raw)?;
    if blocks.starts.len() < 2 || threads < 2 {
        return None;
    }
    let level = u32::from(raw[3] - b'0');
    let mut crcs = Vec::with_capacity(blocks.starts.len());
    let mut stream_crc = 0u32;
    for &s in &blocks.starts {
        let crc = u32::try_from(bits(raw, s + 48, 32)?).ok()?;
        stream_crc = stream_crc.rotate_left(1) ^ crc;
        crcs.push(crc);
    }
    if stream_crc != blocks.stream_crc {
        return None;
    }
    let ends: Vec<usize> = blocks.starts[1..]
        .iter()
        .copied()
        .chain(std::iter::once(blocks.end))
        .collect();
    let pieces: Vec<(usize, usize, u32)> = blocks
        .starts
        .iter()
        .zip(&ends)
        .zip(&crcs)
        .map(|((&s, &e), &c)| (s, e, c))
        .collect();
    let per_thread = pieces.len().div_ceil(threads.min(pieces.len()));
    let decoded: Vec<Option<Vec<Vec<u8>>>> = std::thread::scope(|s| {
        // A thread that cannot be started leaves its part undecoded (`None`): the caller
        // then decodes serially.
        let handles: Vec<_> = pieces
            .chunks(per_thread)
            .map(|part| {
                std::thread::Builder::new()
                    .name("bzip2-block".into())
                    .spawn_scoped(s, move || {
                        part.iter()
                            .map(|&(from, to, crc)| {
                                let b = prepare(raw, from, level)?;
                                if b.crc() != crc || b.end != to {
                                    return None;
                                }
                                let mut text = Vec::new();
                                unwind(&b, &mut text, limit + 1)?;
                                Some(text)
                            })
                            .collect::<Option<Vec<_>>>()
                    })
                    .ok()
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.and_then(|h| h.join().ok().flatten()))
            .collect()
    });
    let mut out = Vec::new();
    for part in decoded {
        for text in part? {
            if (out.len() + text.len()) as u64 > limit {
                return None;
            }
            out.extend_from_slice(&text);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// Text that compresses into several 100 kB blocks (block size 1), varied enough that
    /// block boundaries fall at every bit offset across the cases.
    fn sample(lines: usize) -> Vec<u8> {
        let mut t = Vec::new();
        for i in 0..lines {
            writeln!(
                t,
                "(allow t{} u{} (file (read write {})))",
                i * 7919 % 1013,
                i % 97,
                i
            )
            .unwrap();
        }
        t
    }

    fn compress(text: &[u8], level: u32) -> Vec<u8> {
        let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::new(level));
        e.write_all(text).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn a_multi_block_stream_decodes_to_the_serial_text() {
        for lines in [3_001, 5_557, 7_919] {
            let text = sample(lines);
            let raw = compress(&text, 1);
            let b = find_blocks(&raw).expect("one stream");
            assert!(b.starts.len() >= 2, "{lines} lines give several blocks");
            assert_eq!(
                decode_parallel(&raw, 3, 1 << 30).as_deref(),
                Some(&text[..])
            );
            let mut serial = Vec::new();
            bzip2::read::BzDecoder::new(&raw[..])
                .read_to_end(&mut serial)
                .unwrap();
            assert_eq!(serial, text);
        }
    }

    #[test]
    fn single_block_appended_or_damaged_streams_are_left_to_the_serial_decoder() {
        let text = sample(5_557);
        let raw = compress(&text, 1);
        assert!(decode_parallel(&compress(b"(type t)\n", 9), 4, 1 << 30).is_none());
        let mut two = raw.clone();
        two.extend_from_slice(&raw);
        assert!(decode_parallel(&two, 4, 1 << 30).is_none(), "two streams");
        let mut damaged = raw.clone();
        let mid = damaged.len() / 2;
        damaged[mid] ^= 0x10;
        assert!(decode_parallel(&damaged, 4, 1 << 30).is_none());
        assert!(
            decode_parallel(&raw, 4, text.len() as u64 - 1).is_none(),
            "over the limit"
        );
        assert!(decode_parallel(&raw[..raw.len() - 1], 4, 1 << 30).is_none());
    }
}

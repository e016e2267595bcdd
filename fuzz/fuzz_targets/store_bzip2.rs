//! The store's bzip2 decoder and its block-parallel path (`arbiter build --store`'s
//! modules) held against the `bzip2` crate's decoder: the fuzzer's bytes are compressed into a stream of several 100 kB blocks,
//! then some of its bits are flipped or it is cut short, as a damaged or hostile module file
//! would be. Whenever either path returns text, the crate's decoder must return the same
//! text; whenever it declines, nothing is lost (the crate's decoder is the authority).
//! Never a panic.
#![no_main]

use std::io::{Read, Write};

use arbiter_store::{decode_bzip2, decode_bzip2_parallel as decode_parallel};
use libfuzzer_sys::fuzz_target;

const LIMIT: u64 = 8 << 20;

fuzz_target!(|data: &[u8]| {
    if data.len() < 8 {
        return;
    }
    // The first 8 bytes steer the damage; the rest, repeated with a counter, is the text
    // (varied enough that blocks do not compress to nothing).
    let (steer, seed) = data.split_at(8);
    let mut text = Vec::new();
    let mut i = 0u32;
    while text.len() < 250_000 {
        text.extend_from_slice(seed);
        text.extend_from_slice(format!("{i}\n").as_bytes());
        i += 1;
    }
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::new(1));
    e.write_all(&text).unwrap();
    let mut raw = e.finish().unwrap();
    // Damage: up to three bit flips at steered positions, and maybe a cut.
    for k in 0..3 {
        let pos = u16::from_le_bytes([steer[2 * k], steer[2 * k + 1]]) as usize;
        if pos % 3 != 0 {
            let bit = pos * 7919 % (raw.len() * 8);
            raw[bit / 8] ^= 1 << (bit % 8);
        }
    }
    if steer[6] & 1 == 1 {
        let cut = usize::from(steer[7]) * raw.len() / 256;
        raw.truncate(cut.max(1));
    }
    let reference = || {
        let mut serial = Vec::new();
        bzip2::read::BzDecoder::new(&raw[..])
            .take(LIMIT + 1)
            .read_to_end(&mut serial)
            .expect("our decoder accepted a stream the crate's refuses");
        serial
    };
    if let Some(parallel) = decode_parallel(&raw, 3, LIMIT) {
        assert_eq!(parallel, reference(), "parallel and serial decoding differ");
    }
    if let Some(ours) = decode_bzip2(&raw, LIMIT) {
        assert_eq!(ours, reference(), "our decoder and the crate's differ");
    }
});

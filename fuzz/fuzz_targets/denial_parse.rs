//! The denial log parser on arbitrary bytes: the bounded line reader (small limit, so the
//! overlong path is exercised) and sepolgen's token scan never panic, and every accepted
//! AVC record has the fields a denial needs.
#![no_main]

use arbiter_denials::{parse_line, Line, LineReader, RawLine};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut reader = LineReader::with_limit(data, 4096);
    while let Ok(Some(line)) = reader.next_line() {
        let RawLine::Text { text, .. } = line else { continue };
        if let Line::Avc(r) = parse_line(&text) {
            assert!(!r.perms.is_empty());
            assert!(r.scontext.split(':').count() >= 3);
            assert!(r.tcontext.split(':').count() >= 3);
        }
    }
});

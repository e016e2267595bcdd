//! The bounded line reader every batch and log input goes through (`arbiter_io::Lines`),
//! and the Landlock batch's operation parser on each line, on arbitrary bytes.
//!
//! The first byte picks the line limit (1..=256, so the over-long path is exercised) and
//! whether CRLF is stripped. Invariants: no line kept is longer than the limit; line
//! numbers count up from 1; every input byte is accounted for (kept or dropped lines and
//! their terminators add up to the input); the overflow callback sees exactly the bytes of
//! each over-long line; parsing an operation never panics.
#![no_main]

use arbiter_io::{Body, Crlf, Lines};
use arbiter_landlock::Op;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, input)) = data.split_first() else {
        return;
    };
    let max = (sel as usize & 0xff) + 1;
    let crlf = if sel & 0x80 == 0 { Crlf::Strip } else { Crlf::Keep };
    let mut lines = Lines::new(input, max, crlf);
    let mut consumed = 0u64;
    let mut expect_number = 1;
    loop {
        let mut seen = 0u64;
        let Some(line) = lines.next_line_with(&mut |p| seen += p.len() as u64).unwrap() else {
            break;
        };
        assert_eq!(line.number, expect_number);
        expect_number += 1;
        match line.body {
            Body::Bytes(b) => {
                assert!(b.len() <= max);
                assert_eq!(seen, 0);
                let stripped = crlf == Crlf::Strip
                    && line.newline
                    && input.get(consumed as usize + b.len()) == Some(&b'\r');
                consumed += b.len() as u64 + u64::from(stripped);
                if let Ok(text) = std::str::from_utf8(b) {
                    let words: Vec<&str> = text.split_whitespace().collect();
                    let _ = Op::parse(&words);
                }
            }
            Body::TooLong { len } => {
                assert!(len as usize > max);
                assert_eq!(seen, len);
                consumed += len;
            }
        }
        consumed += u64::from(line.newline);
    }
    assert_eq!(consumed, input.len() as u64);
});

//! The part of an input an error message may echo back.
//!
//! An error that quotes what it complains about helps the user find it; one that quotes a
//! 100 KB context or a 1 GB line back floods the terminal and the logs. Every message that
//! echoes input goes through [`quote`], which keeps at most [`QUOTE_MAX`] bytes (cut at a
//! character boundary) and marks the cut with `…` and the full length.

use std::fmt;

/// The most bytes of an input an error message quotes.
pub const QUOTE_MAX: usize = 200;

/// A bounded, debug-escaped rendering of some input (see [`quote`]).
#[derive(Clone, Copy, Debug)]
pub struct Quoted<'a> {
    text: &'a str,
    full_len: usize,
}

/// The input as an error message should quote it: `"its first 200 bytes"…(N bytes)` when
/// longer than [`QUOTE_MAX`], else `"all of it"`; control characters escaped as `{:?}` does.
pub fn quote(input: &str) -> Quoted<'_> {
    let mut end = input.len().min(QUOTE_MAX);
    while !input.is_char_boundary(end) {
        end -= 1;
    }
    Quoted {
        text: &input[..end],
        full_len: input.len(),
    }
}

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.text)?;
        if self.full_len > self.text.len() {
            write!(f, "…({} bytes)", self.full_len)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_input_is_quoted_whole() {
        assert_eq!(quote("a:b:c").to_string(), "\"a:b:c\"");
    }

    #[test]
    fn long_input_is_cut_with_its_length() {
        let s = "x".repeat(100_000);
        let q = quote(&s).to_string();
        assert!(q.len() < QUOTE_MAX + 30, "{q}");
        assert!(q.ends_with("…(100000 bytes)"), "{q}");
    }

    #[test]
    fn cut_falls_on_a_character_boundary() {
        let s = "é".repeat(QUOTE_MAX);
        let q = quote(&s);
        assert_eq!(q.text.len(), QUOTE_MAX);
        let s = format!("a{}", "é".repeat(QUOTE_MAX));
        assert_eq!(quote(&s).text.len(), QUOTE_MAX - 1);
    }
}

//! The part of an input an error message may echo back.
//!
//! An error that quotes what it complains about helps the user find it; one that quotes a
//! 100 KB context or a 1 GB line back floods the terminal and the logs. Every message that
//! echoes input goes through [`quote`] (escaped and in quotes, as `{:?}` shows it) or
//! [`prefix`] (as is, for messages whose text follows another tool's, such as argparse's
//! `unrecognized arguments: ...`), which keep at most [`QUOTE_MAX`] bytes (cut at a
//! character boundary) and mark the cut with `…` and the full length. Short input is
//! rendered exactly as `{:?}` or `{}` would.

use std::fmt;

/// The most bytes of an input an error message quotes.
pub const QUOTE_MAX: usize = 200;

/// A bounded rendering of some input (see [`quote`] and [`prefix`]).
#[derive(Clone, Copy, Debug)]
pub struct Quoted<'a> {
    text: &'a str,
    full_len: usize,
    escaped: bool,
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
        escaped: true,
    }
}

/// The input's first [`QUOTE_MAX`] bytes as they are (no quotes, no escaping), then
/// `…(N bytes)` when it was longer.
pub fn prefix(input: &str) -> Quoted<'_> {
    Quoted {
        escaped: false,
        ..quote(input)
    }
}

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.escaped {
            write!(f, "{:?}", self.text)?;
        } else {
            f.write_str(self.text)?;
        }
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
    fn prefix_is_unescaped() {
        assert_eq!(prefix("a\"b").to_string(), "a\"b");
        assert!(prefix(&"y".repeat(500))
            .to_string()
            .ends_with("y…(500 bytes)"));
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

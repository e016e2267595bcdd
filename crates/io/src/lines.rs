//! Lines from a byte stream, each bounded in memory.
//!
//! Every batch and log input (`av`, `why`, `landlock check --batch`, ...) is read through
//! [`Lines`]: a line is split at `\n` only, and the reader never holds more than its limit
//! of one line. A line longer than the limit is read to its end without being kept (or,
//! for a caller that wants to salvage part of it, handed over piece by piece) and comes out
//! as [`Body::TooLong`]; a line that is not UTF-8 is still a line ([`Line::text`] says
//! why it cannot be read). Either way the reader goes on with the next line, so one bad
//! line costs one answer, not the batch. The last line is returned whether or not a
//! newline ends it.

use std::io::{self, BufRead};

/// The line limit most readers use: 1 MiB (an audit record stays below 9 KiB, a query
/// line below a few hundred bytes).
pub const DEFAULT_MAX_LINE: usize = 1 << 20;

/// What to do with a `\r` just before the `\n`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Crlf {
    /// Remove it: `a\r\n` is the line `a` (query and ruleset batches typed on any system).
    Strip,
    /// Keep it as part of the line, as a program reading with Python's `newline="\n"` (for
    /// instance `sys.stdin`) sees it.
    Keep,
}

/// One line as read.
#[derive(Debug, PartialEq, Eq)]
pub struct Line<'a> {
    /// 1-based line number in the input.
    pub number: u64,
    /// The line's bytes (without its terminator), or the fact that it was too long.
    pub body: Body<'a>,
    /// Whether a `\n` ended the line (the last line of an input may lack one).
    pub newline: bool,
}

/// A line's content.
#[derive(Debug, PartialEq, Eq)]
pub enum Body<'a> {
    /// The line's bytes.
    Bytes(&'a [u8]),
    /// Longer than the reader's limit: its bytes were read and dropped.
    TooLong {
        /// The line's full length in bytes (without the terminator).
        len: u64,
    },
}

/// Why one line cannot be used; the batch goes on with the next.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {}: {}", self.line(), self.reason())]
pub enum LineError {
    /// Longer than the reader's limit.
    TooLong {
        /// The line's number.
        line: u64,
        /// The reader's limit.
        max: usize,
        /// The line's length.
        len: u64,
    },
    /// Not UTF-8.
    NotUtf8 {
        /// The line's number.
        line: u64,
        /// Where the first invalid byte is, from the start of the line.
        offset: usize,
    },
}

impl LineError {
    /// The line's number.
    pub fn line(&self) -> u64 {
        match self {
            LineError::TooLong { line, .. } | LineError::NotUtf8 { line, .. } => *line,
        }
    }

    /// What is wrong with the line, without its number (for outputs that carry the number
    /// in a field of their own).
    pub fn reason(&self) -> String {
        match self {
            LineError::TooLong { max, len, .. } => {
                format!("longer than {max} bytes ({len} bytes), skipped")
            }
            LineError::NotUtf8 { offset, .. } => {
                format!("not valid UTF-8 (byte {offset} of the line), skipped")
            }
        }
    }
}

impl<'a> Line<'a> {
    /// The line as text, or why it cannot be read as text.
    pub fn text(&self, max: usize) -> Result<&'a str, LineError> {
        match self.body {
            Body::Bytes(b) => std::str::from_utf8(b).map_err(|e| LineError::NotUtf8 {
                line: self.number,
                offset: e.valid_up_to(),
            }),
            Body::TooLong { len } => Err(LineError::TooLong {
                line: self.number,
                max,
                len,
            }),
        }
    }
}

/// A line reader with a bound on a line's length (see the module documentation).
pub struct Lines<R> {
    inner: R,
    max: usize,
    crlf: Crlf,
    buf: Vec<u8>,
    number: u64,
}

impl<R: BufRead> Lines<R> {
    /// A reader that keeps lines of at most `max` bytes (terminator excluded).
    pub fn new(inner: R, max: usize, crlf: Crlf) -> Lines<R> {
        Lines {
            inner,
            max,
            crlf,
            buf: Vec::new(),
            number: 0,
        }
    }

    /// The reader's line limit.
    pub fn max(&self) -> usize {
        self.max
    }

    /// The next line, `None` at the end of the input.
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        self.next_line_with(&mut |_| {})
    }

    /// The next line; when it is over-long, `overflow` is given all of its bytes, in order
    /// and in pieces (the first `max` bytes, then each further block read), before the
    /// line comes out as [`Body::TooLong`]. A caller can so look into a line it cannot hold
    /// (to find a record inside a huge line) in memory bounded by what it keeps itself.
    pub fn next_line_with(
        &mut self,
        overflow: &mut dyn FnMut(&[u8]),
    ) -> io::Result<Option<Line<'_>>> {
        self.buf.clear();
        let mut len: u64 = 0;
        let mut too_long = false;
        let mut newline = false;
        let mut any = false;
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                break;
            }
            any = true;
            let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i, true),
                None => (chunk.len(), false),
            };
            let piece = &chunk[..take];
            len += take as u64;
            if too_long {
                overflow(piece);
            } else if self.buf.len() + take > self.max {
                too_long = true;
                overflow(&self.buf);
                overflow(piece);
                self.buf.clear();
                self.buf.shrink_to(self.max.min(1 << 16));
            } else {
                self.buf.extend_from_slice(piece);
            }
            self.inner.consume(if done { take + 1 } else { take });
            if done {
                newline = true;
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        self.number += 1;
        let body = if too_long {
            Body::TooLong { len }
        } else {
            let mut b = &self.buf[..];
            if newline && self.crlf == Crlf::Strip && b.last() == Some(&b'\r') {
                b = &b[..b.len() - 1];
            }
            Body::Bytes(b)
        };
        Ok(Some(Line {
            number: self.number,
            body,
            newline,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8], max: usize, crlf: Crlf) -> Vec<(u64, Result<String, LineError>, bool)> {
        let mut r = Lines::new(input, max, crlf);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push((l.number, l.text(max).map(str::to_string), l.newline));
        }
        out
    }

    #[test]
    fn final_line_without_newline_is_answered() {
        let l = all(b"a\nb", 10, Crlf::Strip);
        assert_eq!(l.len(), 2);
        assert_eq!(l[1], (2, Ok("b".into()), false));
    }

    #[test]
    fn crlf_is_stripped_or_kept_as_asked() {
        assert_eq!(all(b"a\r\n", 10, Crlf::Strip)[0].1, Ok("a".into()));
        assert_eq!(all(b"a\r\n", 10, Crlf::Keep)[0].1, Ok("a\r".into()));
        // A lone \r is not a line end in either mode, nor stripped when no \n follows.
        assert_eq!(all(b"a\rb", 10, Crlf::Strip)[0].1, Ok("a\rb".into()));
        assert_eq!(all(b"a\r", 10, Crlf::Strip)[0].1, Ok("a\r".into()));
    }

    #[test]
    fn overlong_line_is_that_lines_error_and_the_next_is_read() {
        let mut input = vec![b'x'; 50];
        input.extend_from_slice(b"\nok\n");
        let l = all(&input, 10, Crlf::Strip);
        assert_eq!(
            l[0].1,
            Err(LineError::TooLong {
                line: 1,
                max: 10,
                len: 50
            })
        );
        assert_eq!(l[1], (2, Ok("ok".into()), true));
    }

    #[test]
    fn line_of_exactly_the_limit_is_kept() {
        let l = all(b"0123456789\n", 10, Crlf::Strip);
        assert_eq!(l[0].1, Ok("0123456789".into()));
        // The \r of a CRLF counts toward the limit: it is part of the bytes read.
        assert!(all(b"0123456789\r\n", 10, Crlf::Strip)[0].1.is_err());
    }

    #[test]
    fn non_utf8_line_names_its_number_and_offset_and_the_next_is_read() {
        let l = all(b"ok\nab\xffc\nfine", 100, Crlf::Strip);
        assert_eq!(l[1].1, Err(LineError::NotUtf8 { line: 2, offset: 2 }));
        assert_eq!(l[2].1, Ok("fine".into()));
    }

    #[test]
    fn overflow_sees_every_byte_of_the_long_line_in_order() {
        let mut input: Vec<u8> = (0..5000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let expect = input.clone();
        input.extend_from_slice(b"\nnext\n");
        // A small BufReader buffer, so the line arrives in many pieces.
        let mut r = Lines::new(
            io::BufReader::with_capacity(64, &input[..]),
            100,
            Crlf::Keep,
        );
        let mut seen = Vec::new();
        let l = r
            .next_line_with(&mut |p| seen.extend_from_slice(p))
            .unwrap()
            .unwrap();
        assert_eq!(l.body, Body::TooLong { len: 5000 });
        assert_eq!(seen, expect);
        let l = r.next_line().unwrap().unwrap();
        assert_eq!((l.number, l.body), (2, Body::Bytes(b"next")));
    }

    #[test]
    fn empty_input_has_no_lines_and_a_lone_newline_one_empty_line() {
        assert!(all(b"", 10, Crlf::Strip).is_empty());
        assert_eq!(all(b"\n", 10, Crlf::Strip), [(1, Ok(String::new()), true)]);
    }
}

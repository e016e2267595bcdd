//! Lines from a byte stream the way Python's text mode yields them to `sepolgen` (`\n`,
//! `\r\n` and a lone `\r` all end a line, and the line keeps a `\n`), with a bound on a
//! line's length so that a huge line costs at most the bound in memory.

use std::io::{self, BufRead};

/// Lines longer than this are skipped (and reported) rather than held in memory. The
/// kernel's audit records stay below 9 KiB.
pub const MAX_LINE: usize = 1 << 20;

/// One line: its text without terminator, and whether it had one.
#[derive(Debug, PartialEq, Eq)]
pub enum RawLine {
    /// A line of text.
    Text {
        /// The line, invalid UTF-8 replaced.
        text: String,
        /// Whether a terminator ended it (the last line of a file may lack one).
        newline: bool,
    },
    /// Longer than the limit; the bytes up to the next `\n` were discarded.
    TooLong,
}

/// Reads lines with a length bound. Each physical `\n`-terminated chunk may hold several
/// lines when it contains `\r` separators; they are queued.
pub struct LineReader<R> {
    inner: R,
    max: usize,
    chunk: Vec<u8>,
    pending: std::collections::VecDeque<RawLine>,
}

impl<R: BufRead> LineReader<R> {
    /// A reader with the default bound [`MAX_LINE`].
    pub fn new(inner: R) -> LineReader<R> {
        LineReader::with_limit(inner, MAX_LINE)
    }

    /// A reader that refuses lines longer than `max` bytes.
    pub fn with_limit(inner: R, max: usize) -> LineReader<R> {
        LineReader {
            inner,
            max,
            chunk: Vec::new(),
            pending: Default::default(),
        }
    }

    /// The next line, `None` at end of input.
    pub fn next_line(&mut self) -> io::Result<Option<RawLine>> {
        if let Some(l) = self.pending.pop_front() {
            return Ok(Some(l));
        }
        self.chunk.clear();
        let mut too_long = false;
        let mut newline = false;
        let mut any = false;
        loop {
            let buf = self.inner.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            any = true;
            let (take, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            let body = if done { &buf[..take - 1] } else { &buf[..take] };
            if !too_long {
                if self.chunk.len() + body.len() > self.max {
                    too_long = true;
                    self.chunk.clear();
                } else {
                    self.chunk.extend_from_slice(body);
                }
            }
            self.inner.consume(take);
            if done {
                newline = true;
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        if too_long {
            return Ok(Some(RawLine::TooLong));
        }
        let mut body: &[u8] = &self.chunk;
        if newline && body.last() == Some(&b'\r') {
            body = &body[..body.len() - 1];
        }
        if !body.contains(&b'\r') {
            return Ok(Some(RawLine::Text {
                text: String::from_utf8_lossy(body).into_owned(),
                newline,
            }));
        }
        let parts: Vec<&[u8]> = body.split(|&b| b == b'\r').collect();
        let last = parts.len() - 1;
        for (i, p) in parts.iter().enumerate() {
            if i == last && p.is_empty() && !newline {
                break;
            }
            self.pending.push_back(RawLine::Text {
                text: String::from_utf8_lossy(p).into_owned(),
                newline: i < last || newline,
            });
        }
        Ok(self.pending.pop_front())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<RawLine> {
        let mut r = LineReader::with_limit(input, max);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push(l);
        }
        out
    }

    fn text(t: &str, newline: bool) -> RawLine {
        RawLine::Text {
            text: t.to_string(),
            newline,
        }
    }

    #[test]
    fn universal_newlines_split_like_python_text_mode() {
        assert_eq!(
            lines(b"a\r\nb\rc\nd", 100),
            [
                text("a", true),
                text("b", true),
                text("c", true),
                text("d", false)
            ]
        );
        assert_eq!(lines(b"x\r", 100), [text("x", true)]);
        assert_eq!(lines(b"\n\n", 100), [text("", true), text("", true)]);
    }

    #[test]
    fn overlong_line_is_skipped_and_the_next_one_read() {
        let mut input = vec![b'x'; 50];
        input.extend_from_slice(b"\nok\n");
        assert_eq!(lines(&input, 10), [RawLine::TooLong, text("ok", true)]);
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        assert_eq!(lines(b"a\xffb\n", 100), [text("a\u{fffd}b", true)]);
    }
}

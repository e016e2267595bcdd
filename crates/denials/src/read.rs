//! Lines from a byte stream the way `sepolgen` sees them, bounded in length.
//!
//! audit2allow reads a named file with Python's `open()` (universal newlines: `\n`,
//! `\r\n` and a lone `\r` all end a line) but standard input and `ausearch`/`dmesg` output
//! split at `\n` only, so a CRLF record keeps its `\r` there ([`Newlines`]). Lines come
//! from [`arbiter_io::Lines`], so no line costs more than [`MAX_LINE`] bytes of memory.
//!
//! sepolgen holds a line whole, however long, and finds a record anywhere in it (it looks
//! for a record token such as `avc:` among the line's words). A line over the limit is not
//! held; instead its bytes stream through a salvager that keeps the neighbourhood of the
//! line's first record token — [`CONTEXT`] bytes before it and up to [`MAX_LINE`] bytes in
//! all — so a record behind a megabyte of garbage is still found and explained (its report
//! then quotes that neighbourhood, not the whole line; fields further away are not seen).

use arbiter_io::{Body, Crlf, Lines};
use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::{self, BufRead};

/// Lines longer than this are not held in memory (they are reported, and a record inside
/// them salvaged). The kernel's audit records stay below 9 KiB.
pub const MAX_LINE: usize = 1 << 20;

/// Bytes kept before a record token found in an over-long line: the record's header
/// (`type=USER_AVC msg=audit(...): pid=... uid=... msg='avc:`) fits many times over.
pub const CONTEXT: usize = 64 << 10;

/// Where lines end.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Newlines {
    /// Python's `open()`: `\n`, `\r\n` and a lone `\r` (audit2allow's named files).
    #[default]
    Universal,
    /// `\n` only, a `\r` stays in the line (audit2allow's standard input, which Python
    /// opens with `newline="\n"`, and the `ausearch`/`dmesg` output it splits at `\n`).
    Lf,
}

/// One line.
#[derive(Debug, PartialEq, Eq)]
pub enum RawLine {
    /// A line of text.
    Text {
        /// The line, invalid UTF-8 replaced.
        text: String,
        /// Whether a terminator ended it (the last line of a file may lack one).
        newline: bool,
    },
    /// Longer than the limit: not held in memory.
    TooLong {
        /// The line's length in bytes.
        len: u64,
        /// The neighbourhood of the line's first record token, when it has one (see the
        /// module documentation), invalid UTF-8 replaced.
        salvaged: Option<String>,
        /// Whether a terminator ended it.
        newline: bool,
    },
}

/// Reads lines with a length bound. A physical line holding `\r` separators (universal
/// newlines) yields several lines; they are queued.
pub struct LineReader<R> {
    lines: Lines<R>,
    newlines: Newlines,
    pending: VecDeque<RawLine>,
}

impl<R: BufRead> LineReader<R> {
    /// A reader with universal newlines and the default bound [`MAX_LINE`].
    pub fn new(inner: R) -> LineReader<R> {
        LineReader::with_options(inner, MAX_LINE, Newlines::Universal)
    }

    /// A reader with universal newlines that does not hold lines longer than `max` bytes.
    pub fn with_limit(inner: R, max: usize) -> LineReader<R> {
        LineReader::with_options(inner, max, Newlines::Universal)
    }

    /// A reader with these line ends and bound.
    pub fn with_options(inner: R, max: usize, newlines: Newlines) -> LineReader<R> {
        LineReader {
            lines: Lines::new(inner, max, Crlf::Keep),
            newlines,
            pending: VecDeque::new(),
        }
    }

    /// The next line, `None` at end of input.
    pub fn next_line(&mut self) -> io::Result<Option<RawLine>> {
        if let Some(l) = self.pending.pop_front() {
            return Ok(Some(l));
        }
        let max = self.lines.max();
        let mut salvage = Salvage::new(max.min(MAX_LINE), CONTEXT.min(max / 2));
        let Some(line) = self
            .lines
            .next_line_with(&mut |piece| salvage.feed(piece))?
        else {
            return Ok(None);
        };
        let newline = line.newline;
        let body = match line.body {
            Body::TooLong { len } => {
                return Ok(Some(RawLine::TooLong {
                    len,
                    salvaged: salvage.finish(),
                    newline,
                }))
            }
            Body::Bytes(b) => b,
        };
        let mut body: &[u8] = body;
        if self.newlines == Newlines::Lf || !body.contains(&b'\r') {
            return Ok(Some(RawLine::Text {
                text: String::from_utf8_lossy(body).into_owned(),
                newline,
            }));
        }
        if newline && body.last() == Some(&b'\r') {
            body = &body[..body.len() - 1];
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

/// One line of a block held in memory ([`BlockLines`]).
#[derive(Debug, PartialEq, Eq)]
pub enum BlockLine<'a> {
    /// A line of text, borrowed from the block unless invalid UTF-8 had to be replaced.
    Text(Cow<'a, str>),
    /// Longer than [`MAX_LINE`], as [`RawLine::TooLong`].
    TooLong {
        /// The neighbourhood of the line's first record token, when it has one.
        salvaged: Option<String>,
    },
}

/// The lines of a block held in memory, exactly as [`LineReader::new`] yields them
/// (universal newlines, the [`MAX_LINE`] bound), but borrowed from the block: a fleet
/// worker digests blocks it already holds, and copying every line into a `String` was a
/// tenth of its time. A line over the bound goes through a [`LineReader`] of its own,
/// which holds nothing across lines, so it reads as it would in a whole stream.
pub struct BlockLines<'a> {
    rest: &'a [u8],
    pending: VecDeque<BlockLine<'a>>,
}

impl<'a> BlockLines<'a> {
    /// The lines of `block`.
    pub fn new(block: &'a [u8]) -> BlockLines<'a> {
        BlockLines {
            rest: block,
            pending: VecDeque::new(),
        }
    }

    /// Queues the lines of one physical line (ended by `\n` or the block's end) that
    /// holds a `\r` or is over the bound, as [`LineReader`] reads them.
    fn queue_slow(&mut self, physical: &'a [u8], body: &'a [u8], newline: bool) {
        if body.len() > MAX_LINE {
            let mut r = LineReader::new(physical);
            while let Ok(Some(line)) = r.next_line() {
                self.pending.push_back(match line {
                    RawLine::Text { text, .. } => BlockLine::Text(Cow::Owned(text)),
                    RawLine::TooLong { salvaged, .. } => BlockLine::TooLong { salvaged },
                });
            }
            return;
        }
        let mut body = body;
        if newline && body.last() == Some(&b'\r') {
            body = &body[..body.len() - 1];
        }
        let parts: Vec<&'a [u8]> = body.split(|&b| b == b'\r').collect();
        let last = parts.len() - 1;
        for (i, p) in parts.into_iter().enumerate() {
            if i == last && p.is_empty() && !newline {
                break;
            }
            self.pending.push_back(BlockLine::Text(lossy(p)));
        }
    }
}

/// `String::from_utf8_lossy`, with valid text (the usual case) checked by the faster
/// validator first.
fn lossy(b: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(b),
    }
}

impl<'a> Iterator for BlockLines<'a> {
    type Item = BlockLine<'a>;

    fn next(&mut self) -> Option<BlockLine<'a>> {
        loop {
            if let Some(l) = self.pending.pop_front() {
                return Some(l);
            }
            if self.rest.is_empty() {
                return None;
            }
            let (physical, body, newline) = match self.rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&self.rest[..=i], &self.rest[..i], true),
                None => (self.rest, self.rest, false),
            };
            self.rest = &self.rest[physical.len()..];
            if body.len() <= MAX_LINE && !body.contains(&b'\r') {
                return Some(BlockLine::Text(lossy(body)));
            }
            self.queue_slow(physical, body, newline);
        }
    }
}

/// Python's `str.split()` separators that are single bytes (the multi-byte Unicode spaces
/// are not looked for here; a record token they delimit is missed in an over-long line).
fn is_space_byte(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ' | 0x1c..=0x1f)
}

/// The longest record token ([`crate::parse::is_record_token`]); a longer token is not
/// looked at.
const LONGEST_TOKEN: usize = 32;

/// Finds the first record token of an over-long line as its bytes stream past, and keeps
/// its neighbourhood; holds at most about `window` bytes (twice `context` while searching).
struct Salvage {
    window: usize,
    context: usize,
    /// Searching: the last bytes seen. Capturing: the neighbourhood so far.
    buf: Vec<u8>,
    /// Where the token being read starts in `buf`, and its length so far.
    token: Option<(usize, usize)>,
    /// Whether bytes before `buf` were dropped (its front may be mid-token).
    cut: bool,
    state: State,
}

#[derive(PartialEq, Eq)]
enum State {
    Searching,
    Capturing,
    Full,
}

impl Salvage {
    fn new(window: usize, context: usize) -> Salvage {
        Salvage {
            window,
            context,
            buf: Vec::new(),
            token: None,
            cut: false,
            state: State::Searching,
        }
    }

    fn feed(&mut self, piece: &[u8]) {
        let mut rest = piece;
        if self.state == State::Searching {
            for (i, &b) in piece.iter().enumerate() {
                if is_space_byte(b) {
                    if self.end_token() {
                        rest = &piece[i..];
                        break;
                    }
                } else if let Some((_, len)) = &mut self.token {
                    *len += 1;
                } else {
                    self.token = Some((self.buf.len(), 1));
                }
                self.buf.push(b);
                if self.buf.len() >= 2 * self.context + 2 * LONGEST_TOKEN {
                    self.forget();
                }
            }
            if self.state == State::Searching {
                return;
            }
        }
        if self.state == State::Capturing {
            let take = (self.window - self.buf.len()).min(rest.len());
            self.buf.extend_from_slice(&rest[..take]);
            if self.buf.len() >= self.window {
                self.state = State::Full;
            }
        }
    }

    /// Drops all but the last `context` (+ a token's worth of) bytes.
    fn forget(&mut self) {
        let drop = self.buf.len() - self.context - LONGEST_TOKEN;
        self.buf.drain(..drop);
        self.cut = true;
        if let Some((start, len)) = &mut self.token {
            // A token that started before the cut is longer than any record token.
            *start = start.saturating_sub(drop);
            if *start == 0 {
                *len = (*len).max(LONGEST_TOKEN + 1);
            }
        }
    }

    /// The token being read has ended: if it is a record token, keep `context` bytes
    /// before it (from a token boundary) and start capturing.
    fn end_token(&mut self) -> bool {
        let Some((at, len)) = self.token.take() else {
            return false;
        };
        if len > LONGEST_TOKEN {
            return false;
        }
        let is_record =
            std::str::from_utf8(&self.buf[at..]).is_ok_and(crate::parse::is_record_token);
        if !is_record {
            return false;
        }
        let mut from = at.saturating_sub(self.context);
        if from > 0 || self.cut {
            // Start at a token boundary: past the rest of a cut token and its separators.
            while from < at && !is_space_byte(self.buf[from]) {
                from += 1;
            }
            while from < at && is_space_byte(self.buf[from]) {
                from += 1;
            }
        }
        self.buf.drain(..from);
        self.buf.truncate(self.window);
        self.state = if self.buf.len() >= self.window {
            State::Full
        } else {
            State::Capturing
        };
        true
    }

    fn finish(mut self) -> Option<String> {
        if self.state == State::Searching && !self.end_token() {
            return None;
        }
        Some(String::from_utf8_lossy(&self.buf).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_with(input: &[u8], max: usize, newlines: Newlines) -> Vec<RawLine> {
        let mut r = LineReader::with_options(input, max, newlines);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push(l);
        }
        out
    }

    fn lines(input: &[u8], max: usize) -> Vec<RawLine> {
        lines_with(input, max, Newlines::Universal)
    }

    fn text(t: &str, newline: bool) -> RawLine {
        RawLine::Text {
            text: t.to_string(),
            newline,
        }
    }

    /// What [`LineReader::new`] yields, in [`BlockLine`]'s terms.
    fn streamed(input: &[u8]) -> Vec<BlockLine<'static>> {
        lines_with(input, MAX_LINE, Newlines::Universal)
            .into_iter()
            .map(|l| match l {
                RawLine::Text { text, .. } => BlockLine::Text(Cow::Owned(text)),
                RawLine::TooLong { salvaged, .. } => BlockLine::TooLong { salvaged },
            })
            .collect()
    }

    #[test]
    fn block_lines_are_the_streamed_lines() {
        let mut long = b"x".repeat(MAX_LINE + 10);
        long.extend_from_slice(b" avc: denied { read } scontext=a:b:c\r\n");
        let mut cases: Vec<Vec<u8>> = vec![
            b"a\r\nb\rc\nd".to_vec(),
            b"x\r".to_vec(),
            b"\n\n".to_vec(),
            b"\r\r\n\r".to_vec(),
            b"ok \xff\xfe bad\nnext\r\xc3".to_vec(),
            Vec::new(),
            [&long[..], b"tail\n", &b"y".repeat(MAX_LINE)[..], b"\rz"].concat(),
        ];
        // Pseudo-random mixes of the bytes that matter.
        let alphabet = b"ab \r\n\xff\xc3\xa9";
        let mut x: u32 = 12345;
        for len in [1, 2, 3, 5, 8, 40, 300] {
            for _ in 0..50 {
                cases.push(
                    (0..len)
                        .map(|_| {
                            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                            alphabet[(x >> 16) as usize % alphabet.len()]
                        })
                        .collect(),
                );
            }
        }
        for c in &cases {
            assert_eq!(BlockLines::new(c).collect::<Vec<_>>(), streamed(c), "{c:?}");
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
    fn lf_newlines_keep_the_carriage_return_like_python_stdin() {
        assert_eq!(
            lines_with(b"a\r\nb\rc\n", 100, Newlines::Lf),
            [text("a\r", true), text("b\rc", true)]
        );
    }

    #[test]
    fn overlong_line_without_a_record_is_skipped_and_the_next_one_read() {
        let mut input = vec![b'x'; 50];
        input.extend_from_slice(b"\nok\n");
        assert_eq!(
            lines(&input, 10),
            [
                RawLine::TooLong {
                    len: 50,
                    salvaged: None,
                    newline: true
                },
                text("ok", true)
            ]
        );
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        assert_eq!(lines(b"a\xffb\n", 100), [text("a\u{fffd}b", true)]);
    }

    const RECORD: &str = "type=AVC msg=audit(1.2:3): avc:  denied  { read } for pid=1 scontext=a:b:c tcontext=d:e:f tclass=file";

    fn salvaged(input: &[u8], max: usize) -> Option<String> {
        match lines(input, max).remove(0) {
            RawLine::TooLong { salvaged, .. } => salvaged,
            other => panic!("not too long: {other:?}"),
        }
    }

    #[test]
    fn record_behind_a_long_prefix_is_salvaged_with_its_header() {
        for junk in [b'x', b' '] {
            let mut input = vec![junk; 300_000];
            input.push(b' ');
            input.extend_from_slice(RECORD.as_bytes());
            input.push(b'\n');
            let s = salvaged(&input, 4096).expect("record found");
            assert!(s.starts_with("type=AVC"), "{s:.100}");
            assert!(s.ends_with("tclass=file"), "{s:.100}");
            assert!(s.len() <= 4096);
        }
    }

    #[test]
    fn record_in_the_middle_of_a_long_line_is_salvaged() {
        let mut input = vec![b'y'; 200_000];
        input.push(b' ');
        input.extend_from_slice(RECORD.as_bytes());
        input.push(b' ');
        input.extend(std::iter::repeat_n(b'z', 200_000));
        let s = salvaged(&input, 4096).expect("record found");
        assert!(s.contains("tclass=file"), "{s:.100}");
    }

    #[test]
    fn token_split_across_reads_is_found() {
        let mut input = vec![b'x'; 100_003];
        input.extend_from_slice(b" avc:");
        let mut r = LineReader::with_options(
            io::BufReader::with_capacity(7, &input[..]),
            1000,
            Newlines::Universal,
        );
        match r.next_line().unwrap().unwrap() {
            RawLine::TooLong { salvaged, .. } => assert!(salvaged.unwrap().ends_with("avc:")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_token_that_only_ends_like_a_record_token_is_not_one() {
        // `xxx...avc:` is one long token, not `avc:`.
        let mut input = vec![b'x'; 100_000];
        input.extend_from_slice(b"avc: rest\n");
        assert_eq!(salvaged(&input, 1000), None);
    }
}

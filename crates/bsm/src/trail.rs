//! Record framing over a whole trail held in memory (a byte slice or a memory map); for a
//! trail read as it arrives, [`crate::stream::RecordStream`] frames the same way.
//!
//! A trail is a concatenation of records: a header token (0x14, 0x15, 0x74, 0x79) whose
//! big-endian size covers the whole record, or a lone file token (0x11). Framing follows
//! libbsm's `au_read_rec`: anything else, a size below 5 or a record running past the end
//! stops the trail, and so (unlike libbsm) does a size above
//! [`MAX_RECORD_SIZE`]. praudit and auditreduce stop there silently; [`Records`] reports it
//! as a [`FramingError`] with the offset, and [`Records::resync`] can look for the next
//! plausible record so that nothing after a damaged spot is lost without notice.

use crate::error::{DecodeError, FramingError};
use crate::stream::MAX_RECORD_SIZE;
use crate::token::{decode, id, Token, TRAILER_SIZE};

/// One record: its offset in the trail and its bytes (header to trailer, or a file token).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    /// Offset of the record's first byte in the trail.
    pub offset: usize,
    /// The record's bytes.
    pub bytes: &'a [u8],
}

impl<'a> Record<'a> {
    /// The record's tokens in order; decoding stops after the first error (as libbsm does:
    /// the rest of the record cannot be delimited).
    pub fn tokens(&self) -> Tokens<'a> {
        Tokens {
            rec: self.bytes,
            pos: 0,
            base: self.offset,
            done: false,
        }
    }
}

/// Iterator over the tokens of one record.
#[derive(Clone, Debug)]
pub struct Tokens<'a> {
    rec: &'a [u8],
    pos: usize,
    base: usize,
    done: bool,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Result<Token<'a>, DecodeError>;
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.pos >= self.rec.len() {
            return None;
        }
        match decode(&self.rec[self.pos..]) {
            Ok((t, n)) => {
                self.pos += n;
                Some(Ok(t))
            }
            Err(mut e) => {
                self.done = true;
                e.offset = self.base + self.pos;
                Some(Err(e))
            }
        }
    }
}

/// Iterator over the records of a trail.
#[derive(Clone, Debug)]
pub struct Records<'a> {
    buf: &'a [u8],
    pos: usize,
    stopped: bool,
}

/// Splits `buf` into records.
pub fn records(buf: &[u8]) -> Records<'_> {
    Records {
        buf,
        pos: 0,
        stopped: false,
    }
}

/// Whether a plausible record starts at `at`: a header whose size fits (at most
/// [`MAX_RECORD_SIZE`]) and whose last seven bytes are a trailer with the BSM magic
/// (0xb105). What resynchronisation looks for.
pub fn plausible(buf: &[u8], at: usize) -> bool {
    match buf.get(at) {
        Some(&(id::HEADER32 | id::HEADER32_EX | id::HEADER64 | id::HEADER64_EX)) => {
            match frame(buf, at) {
                Ok(n) if n >= 18 + TRAILER_SIZE => {
                    let t = &buf[at + n - TRAILER_SIZE..at + n];
                    t[0] == id::TRAILER && t[1] == 0xb1 && t[2] == 0x05
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// The length of the record starting at `at`, or why there is none.
pub fn frame(buf: &[u8], at: usize) -> Result<usize, FramingError> {
    let rest = &buf[at.min(buf.len())..];
    let Some(&first) = rest.first() else {
        return Err(FramingError::Truncated {
            offset: at,
            size: 0,
            available: 0,
        });
    };
    match first {
        id::HEADER32 | id::HEADER32_EX | id::HEADER64 | id::HEADER64_EX => {
            let Some(sz) = rest.get(1..5) else {
                return Err(FramingError::Truncated {
                    offset: at,
                    size: 0,
                    available: rest.len(),
                });
            };
            let size = u32::from_be_bytes([sz[0], sz[1], sz[2], sz[3]]);
            if size < 5 {
                return Err(FramingError::SizeTooSmall { offset: at, size });
            }
            if size as usize > rest.len() {
                return Err(FramingError::Truncated {
                    offset: at,
                    size: size as u64,
                    available: rest.len(),
                });
            }
            if size as usize > MAX_RECORD_SIZE {
                return Err(FramingError::TooLarge {
                    offset: at,
                    size: size as u64,
                    limit: MAX_RECORD_SIZE,
                });
            }
            Ok(size as usize)
        }
        id::FILE => {
            let Some(l) = rest.get(9..11) else {
                return Err(FramingError::Truncated {
                    offset: at,
                    size: 0,
                    available: rest.len(),
                });
            };
            let size = 11 + u16::from_be_bytes([l[0], l[1]]) as usize;
            if size > rest.len() {
                return Err(FramingError::Truncated {
                    offset: at,
                    size: size as u64,
                    available: rest.len(),
                });
            }
            Ok(size)
        }
        other => Err(FramingError::NotARecord {
            offset: at,
            id: other,
        }),
    }
}

impl<'a> Records<'a> {
    /// Offset of the next record to be read.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// After a framing error, looks for the next offset where a plausible record starts:
    /// a header whose size fits and whose last seven bytes are a trailer with the BSM
    /// magic (0xb105), or a file token. Returns that offset and resumes there, or `None`.
    pub fn resync(&mut self) -> Option<usize> {
        let start = self.pos.saturating_add(1);
        for at in start..self.buf.len() {
            if plausible(self.buf, at) {
                self.pos = at;
                self.stopped = false;
                return Some(at);
            }
        }
        None
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>, FramingError>;
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.stopped || self.pos >= self.buf.len() {
            return None;
        }
        match frame(self.buf, self.pos) {
            Ok(n) => {
                let r = Record {
                    offset: self.pos,
                    bytes: &self.buf[self.pos..self.pos + n],
                };
                self.pos += n;
                Some(Ok(r))
            }
            Err(e) => {
                self.stopped = true;
                Some(Err(e))
            }
        }
    }
}

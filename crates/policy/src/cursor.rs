//! A little-endian byte cursor over the policy image.
//!
//! All reads are bounds-checked and return [`PolicyError::Truncated`] with the offset. Counts
//! read from the file go through [`Cursor::count`], which refuses any count whose minimal
//! encoding could not fit in the remaining bytes: a hostile `0xffffffff` becomes an error,
//! never a four-billion-entry allocation.

use crate::error::{PolicyError, Result};

/// Reads little-endian fields from a byte slice, tracking the offset for error messages.
#[derive(Clone)]
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    /// Current offset from the start of the image.
    #[inline]
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// Bytes not yet consumed.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Takes the next `n` bytes.
    #[inline]
    pub fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        match self.buf.get(self.pos..).and_then(|rest| rest.get(..n)) {
            Some(s) => {
                self.pos += n;
                Ok(s)
            }
            None => Err(self.truncated(n, what)),
        }
    }

    /// Takes the next `N` bytes as an array.
    #[inline]
    pub fn array<const N: usize>(&mut self, what: &'static str) -> Result<&'a [u8; N]> {
        let b = self.bytes(N, what)?;
        Ok(b.try_into().expect("bytes returned N bytes"))
    }

    /// The error for `n` bytes wanted at the current offset.
    #[cold]
    #[inline(never)]
    fn truncated(&self, n: usize, what: &'static str) -> PolicyError {
        PolicyError::Truncated {
            what,
            offset: self.pos,
            needed: n,
            available: self.remaining(),
        }
    }

    #[inline]
    pub fn u8(&mut self, what: &'static str) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }

    #[inline]
    pub fn u16(&mut self, what: &'static str) -> Result<u16> {
        Ok(u16::from_le_bytes(*self.array(what)?))
    }

    #[inline]
    pub fn u32(&mut self, what: &'static str) -> Result<u32> {
        Ok(u32::from_le_bytes(*self.array(what)?))
    }

    #[inline]
    pub fn u64(&mut self, what: &'static str) -> Result<u64> {
        Ok(u64::from_le_bytes(*self.array(what)?))
    }

    /// Reads `N` consecutive u32 words (the kernel's `next_entry(buf, fp, N * 4)`).
    #[inline]
    pub fn u32s<const N: usize>(&mut self, what: &'static str) -> Result<[u32; N]> {
        let b = self.bytes(4 * N, what)?;
        let mut out = [0u32; N];
        for (w, chunk) in out.iter_mut().zip(b.chunks_exact(4)) {
            *w = u32::from_le_bytes(chunk.try_into().expect("4-byte chunk"));
        }
        Ok(out)
    }

    /// Validates a count of records read from the file (its u32 must already be consumed)
    /// against the bytes left: `count * min_size` must fit. `min_size` is the smallest
    /// possible encoding of one record, so this bounds every allocation by the input size.
    #[inline]
    pub fn check_count(&self, count: u32, min_size: usize, what: &'static str) -> Result<usize> {
        let need = (count as u64).saturating_mul(min_size.max(1) as u64);
        if need > self.remaining() as u64 {
            return Err(PolicyError::CountTooLarge {
                what,
                offset: self.pos.saturating_sub(4),
                count: count as u64,
                available: self.remaining(),
                min_size,
            });
        }
        Ok(count as usize)
    }

    /// Reads a u32 count and checks it with [`Cursor::check_count`].
    pub fn count(&mut self, min_size: usize, what: &'static str) -> Result<usize> {
        let n = self.u32(what)?;
        self.check_count(n, min_size, what)
    }

    /// Reads a string of `len` bytes (lengths are stored separately, before other fields).
    /// Symbol names must be valid UTF-8 without NUL bytes.
    pub fn string(&mut self, len: u32, what: &'static str) -> Result<Box<str>> {
        self.str(len, what).map(Box::from)
    }

    /// [`Cursor::string`] borrowed from the image, with the same checks.
    #[inline]
    pub fn str(&mut self, len: u32, what: &'static str) -> Result<&'a str> {
        let at = self.pos;
        let b = self.bytes(len as usize, what)?;
        // Untrusted bytes: validated, never assumed (std's UTF-8 check has an ASCII fast
        // path); the NUL scan is an inline loop because names are short, where a memchr
        // call costs more than it saves.
        match std::str::from_utf8(b) {
            Ok(s) if !s.bytes().any(|c| c == 0) => Ok(s),
            Ok(_) => Err(self.invalid_at(at, what, "name contains a NUL byte".into())),
            Err(e) => Err(self.invalid_at(at, what, format!("name is not UTF-8: {e}"))),
        }
    }

    /// An [`PolicyError::Invalid`] at the current offset.
    pub fn invalid(&self, what: &'static str, detail: impl Into<String>) -> PolicyError {
        self.invalid_at(self.pos, what, detail.into())
    }

    /// An [`PolicyError::Invalid`] at a given offset (usually where the bad field started).
    pub fn invalid_at(&self, offset: usize, what: &'static str, detail: String) -> PolicyError {
        PolicyError::Invalid {
            what,
            offset,
            detail,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_little_endian_words() {
        let mut c = Cursor::new(&[1, 0, 0, 0, 2, 0, 3, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(c.u32("a").unwrap(), 1);
        assert_eq!(c.u16("b").unwrap(), 2);
        assert_eq!(c.u64("c").unwrap(), 3);
        assert_eq!(c.remaining(), 0);
    }

    #[test]
    fn truncation_reports_offset_and_need() {
        let mut c = Cursor::new(&[1, 2, 3]);
        c.u8("x").unwrap();
        match c.u32("the field") {
            Err(PolicyError::Truncated {
                what,
                offset,
                needed,
                available,
            }) => {
                assert_eq!((what, offset, needed, available), ("the field", 1, 4, 2));
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn huge_count_is_refused_before_allocation() {
        let mut c = Cursor::new(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
        assert!(matches!(
            c.count(4, "entries"),
            Err(PolicyError::CountTooLarge {
                count: 0xffff_ffff,
                ..
            })
        ));
    }

    #[test]
    fn names_with_nul_are_rejected() {
        let mut c = Cursor::new(b"a\0b");
        assert!(matches!(
            c.string(3, "name"),
            Err(PolicyError::Invalid { .. })
        ));
    }
}

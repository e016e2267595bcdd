//! Record framing over a trail read as it arrives (a file, a pipe, standard input), in
//! memory bounded by the largest record rather than by the trail.
//!
//! [`RecordStream`] frames exactly as [`crate::trail::records`] does over a whole trail
//! held in memory, and reports the same [`FramingError`]s at the same offsets: both go
//! through [`frame`] and [`plausible`]. The one extra rule both share is
//! [`MAX_RECORD_SIZE`]: a record whose size field is larger stops the trail like any
//! other framing error (resynchronisation looks for the next record from the byte after
//! its start), so that a hostile size field cannot make a reader buffer gigabytes. Such a
//! record is reported as truncated, with the bytes that were left, when the input ends
//! before its declared end (as before the limit), else as too large. A stream only knows
//! which at that end, so it first reports it as [`FramingError::Oversized`] and
//! [`RecordStream::resolve`] settles it once the records are read.
//!
//! Memory: one buffer holding the current record (or, while resynchronising, the
//! candidate being checked) plus one read chunk. Bytes before the current record are
//! dropped as the stream moves on.

use crate::error::FramingError;
use crate::token::id;
use crate::trail::{frame, plausible, Record};
use std::io::{ErrorKind, Read};

/// The largest record either reader accepts: 16 MiB. The kernel's records are far
/// smaller (an audit record is bounded by the kernel's record buffer, tens of KiB), so
/// only a damaged or forged size field comes near it.
pub const MAX_RECORD_SIZE: usize = 16 << 20;

/// Bytes asked of the source per read.
const CHUNK: usize = 1 << 16;

/// Records read one at a time from a [`Read`] source.
///
/// Not an [`Iterator`]: each [`Record`] borrows the stream's buffer, which the next call
/// reuses. A read error ends the stream and is returned as such; framing errors are
/// returned as [`FramingError`] and stop the stream until [`RecordStream::resync`].
pub struct RecordStream<R> {
    src: R,
    /// Unconsumed input; `buf[start..]` begins at trail offset `base + start`.
    buf: Vec<u8>,
    start: usize,
    base: usize,
    eof: bool,
    stopped: bool,
}

impl<R: Read> RecordStream<R> {
    /// A stream over `src`, which is read in chunks as records are asked for.
    pub fn new(src: R) -> RecordStream<R> {
        RecordStream {
            src,
            buf: Vec::new(),
            start: 0,
            base: 0,
            eof: false,
            stopped: false,
        }
    }

    /// Trail offset of the next unread record.
    pub fn position(&self) -> usize {
        self.base + self.start
    }

    fn available(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Reads until `need` unconsumed bytes are buffered or the input ends.
    fn fill(&mut self, need: usize) -> std::io::Result<()> {
        while self.available() < need && !self.eof {
            if self.start > 0 {
                // Drop what has been consumed before growing the buffer.
                self.buf.drain(..self.start);
                self.base += self.start;
                self.start = 0;
            }
            let len = self.buf.len();
            let want = CHUNK.max(need - self.available());
            self.buf.resize(len + want, 0);
            let got = loop {
                match self.src.read(&mut self.buf[len..]) {
                    Ok(n) => break Ok(n),
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) => break Err(e),
                }
            };
            match got {
                Ok(n) => {
                    self.buf.truncate(len + n);
                    self.eof = n == 0;
                }
                Err(e) => {
                    self.buf.truncate(len);
                    self.stopped = true;
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Frames the record at the front of the buffer, reading as much as it needs (at
    /// most [`MAX_RECORD_SIZE`]). Returns its length or why there is none; the error's
    /// offset is relative to the front.
    fn frame_front(&mut self) -> std::io::Result<Result<usize, FramingError>> {
        loop {
            let rest = &self.buf[self.start..];
            match frame(rest, 0) {
                Err(FramingError::Truncated { size, .. }) if !self.eof => {
                    if size as usize > MAX_RECORD_SIZE {
                        // Whether it is cut short is only known at its end; say so then.
                        return Ok(Err(FramingError::Oversized { offset: 0, size }));
                    }
                    let size = size as usize;
                    // size 0: the size field itself is cut; 11 bytes cover either form.
                    let need = size.max(11).max(self.available() + 1);
                    self.fill(need)?;
                }
                r => return Ok(r),
            }
        }
    }

    /// Settles a provisional [`FramingError::Oversized`] once the records are read
    /// (after [`RecordStream::next_record`] returned `None`): reads on to the record's
    /// declared end, keeping nothing, and returns what the in-memory reader reports there:
    /// [`FramingError::Truncated`] with the bytes that were left, or
    /// [`FramingError::TooLarge`]. Any other error is returned as it is.
    pub fn resolve(&mut self, e: FramingError) -> std::io::Result<FramingError> {
        let FramingError::Oversized { offset, size } = e else {
            return Ok(e);
        };
        let end = offset.saturating_add(size as usize);
        loop {
            let read_to = self.base + self.buf.len();
            if read_to >= end {
                return Ok(FramingError::TooLarge {
                    offset,
                    size,
                    limit: MAX_RECORD_SIZE,
                });
            }
            if self.eof {
                return Ok(FramingError::Truncated {
                    offset,
                    size,
                    available: read_to - offset,
                });
            }
            self.base = read_to;
            self.buf.clear();
            self.start = 0;
            self.fill(1)?;
        }
    }

    /// The next record, `None` at the end of the input (or after a framing error until
    /// [`RecordStream::resync`]), or the framing error that stops the trail here.
    #[allow(clippy::type_complexity)]
    pub fn next_record(&mut self) -> std::io::Result<Option<Result<Record<'_>, FramingError>>> {
        if self.stopped {
            return Ok(None);
        }
        let at = self.position();
        self.fill(1)?;
        if self.available() == 0 {
            self.stopped = true;
            return Ok(None);
        }
        match self.frame_front()? {
            Ok(n) => {
                let s = self.start;
                self.start += n;
                Ok(Some(Ok(Record {
                    offset: at,
                    bytes: &self.buf[s..s + n],
                })))
            }
            Err(e) => {
                self.stopped = true;
                Ok(Some(Err(e.at(at))))
            }
        }
    }

    /// After a framing error, looks for the next offset where a plausible record starts
    /// (as [`crate::trail::Records::resync`] does) and resumes there; `None` if the input
    /// ends first.
    pub fn resync(&mut self) -> std::io::Result<Option<usize>> {
        let mut at = self.position() + 1;
        loop {
            // Drop everything before the candidate, so memory stays one candidate's worth.
            self.start = at - self.base;
            self.fill(1)?;
            let Some(&b) = self.buf.get(self.start) else {
                return Ok(None);
            };
            if matches!(
                b,
                id::HEADER32 | id::HEADER32_EX | id::HEADER64 | id::HEADER64_EX
            ) {
                self.fill(5)?;
                if let Some(sz) = self.buf.get(self.start + 1..self.start + 5) {
                    let size = u32::from_be_bytes([sz[0], sz[1], sz[2], sz[3]]) as usize;
                    if size <= MAX_RECORD_SIZE {
                        self.fill(size)?;
                    }
                }
                if plausible(&self.buf[self.start..], 0) {
                    self.stopped = false;
                    return Ok(Some(at));
                }
            }
            at += 1;
        }
    }
}

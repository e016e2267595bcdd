//! A fleet task's byte ranges of a log, read on the worker and widened to whole lines.
//!
//! The client cuts the fleet's logs into ranges by size alone (it reads no log), so a
//! range's ends fall anywhere in a line. A range holds the lines that *start* inside it:
//! its text runs from the first line start at or after its offset to the first line
//! start at or after its end. Every line starts in exactly one range, so the ranges of a
//! log, however it is cut, hold each of its lines once (lines end at `\n`, as for
//! `dask.bytes.read_bytes`; a line holding a lone `\r` is split later, by the digest).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};

/// The text of the lines of `path` that start in `offset .. offset + len`.
///
/// It holds that text (about `len` bytes and the last line's tail); the client keeps `len`
/// at most its `blocksize`, so a task holds one such range at a time. A log with no `\n`
/// for long is read to its next `\n`, as `fsspec`'s `read_block` does.
#[cfg(test)]
pub(crate) fn read_range(path: &str, offset: u64, len: u64) -> io::Result<Vec<u8>> {
    let mut text = Vec::new();
    read_range_into(path, offset, len, &mut text)?;
    Ok(text)
}

/// [`read_range`] into `text` (cleared first), which keeps its capacity: a fleet worker
/// reads every range of its tasks into one buffer. A new vector per range took fresh
/// pages from the kernel for every range in Dask's workers, whose nannies set
/// `MALLOC_TRIM_THRESHOLD_` (which turns glibc's adaptive mmap threshold off, so every
/// buffer past 128 KiB is mapped and unmapped): one page fault per 4 KiB of log read,
/// 82,600 instead of 15,800 for the 8 tasks of a one-worker run of 1.3 M lines.
pub(crate) fn read_range_into(
    path: &str,
    offset: u64,
    len: u64,
    text: &mut Vec<u8>,
) -> io::Result<()> {
    let named = |e: io::Error| io::Error::new(e.kind(), format!("{path}: {e}"));
    text.clear();
    let mut f = BufReader::with_capacity(1 << 16, File::open(path).map_err(named)?);
    let start = line_start_at(&mut f, offset).map_err(named)?;
    let end = line_start_at(&mut f, offset.saturating_add(len)).map_err(named)?;
    if end > start {
        // The range's size, as the file was measured; a log that shrank meanwhile gives
        // what is left, one that grew no more than this.
        text.reserve(usize::try_from(end - start).unwrap_or(0));
        f.seek(SeekFrom::Start(start)).map_err(named)?;
        f.take(end - start).read_to_end(text).map_err(named)?;
    }
    Ok(())
}

/// The first line start at or after `pos`: `pos` itself when it is 0 or follows a `\n`,
/// else the byte after the next `\n`, or the end of the file when there is none.
fn line_start_at<R: BufRead + Seek>(f: &mut R, pos: u64) -> io::Result<u64> {
    if pos == 0 {
        return Ok(0);
    }
    let mut at = f.seek(SeekFrom::Start(pos - 1))?;
    loop {
        let buf = f.fill_buf()?;
        if buf.is_empty() {
            return Ok(at);
        }
        if let Some(i) = buf.iter().position(|&b| b == b'\n') {
            return Ok(at + i as u64 + 1);
        }
        let n = buf.len();
        f.consume(n);
        at += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log in the system's temporary directory, removed when dropped.
    struct TempLog(std::path::PathBuf);

    impl TempLog {
        fn path(&self) -> &str {
            self.0.to_str().expect("a UTF-8 temporary path")
        }
    }

    impl Drop for TempLog {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn log(text: &[u8]) -> TempLog {
        use std::sync::atomic::{AtomicU64, Ordering};
        // Unique within the process: tests run on threads.
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let p = std::env::temp_dir().join(format!(
            "arbiter-ranges-{}-{}.log",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&p, text).expect("write a temporary log");
        TempLog(p)
    }

    #[test]
    fn every_cut_of_a_log_gives_each_line_once() {
        let text = b"one\ntwo two\n\nthree three three\nfour\nlast line, no newline";
        let f = log(text);
        for cuts in [1, 2, 3, 5, 7, 11, text.len()] {
            let size = text.len() as u64;
            let mut got = Vec::new();
            for i in 0..cuts as u64 {
                let (a, b) = (size * i / cuts as u64, size * (i + 1) / cuts as u64);
                got.extend(read_range(f.path(), a, b - a).expect("read"));
            }
            assert_eq!(got, text, "{cuts} ranges");
        }
    }

    #[test]
    fn a_range_holds_the_lines_that_start_in_it() {
        let f = log(b"aaaa\nbbbb\ncccc\n");
        // Offsets 5..10 are "bbbb\n": exactly one line.
        assert_eq!(read_range(f.path(), 5, 5).expect("read"), b"bbbb\n");
        // Starting inside "bbbb": the next line is the first to start in it.
        assert_eq!(read_range(f.path(), 6, 5).expect("read"), b"cccc\n");
        // Inside one line, no line starts: nothing.
        assert_eq!(read_range(f.path(), 6, 2).expect("read"), b"");
        // Past the end: nothing.
        assert_eq!(read_range(f.path(), 40, 5).expect("read"), b"");
    }

    #[test]
    fn one_buffer_reads_range_after_range() {
        let text = b"first line is long\nsecond\nthird line\n";
        let f = log(text);
        let mut buf = Vec::new();
        let mut got = Vec::new();
        // Long, then short, then empty, then long again: each read replaces the last.
        for (a, b) in [(0, 19), (19, 26), (20, 22), (26, text.len() as u64)] {
            read_range_into(f.path(), a, b - a, &mut buf).expect("read");
            assert_eq!(buf, read_range(f.path(), a, b - a).expect("read"));
            got.extend_from_slice(&buf);
        }
        assert_eq!(got, text);
        // A failed read leaves nothing of the last range.
        assert!(read_range_into("/nonexistent/arbiter/y.log", 0, 4, &mut buf).is_err());
        assert!(buf.is_empty());
    }

    #[test]
    fn a_missing_log_is_an_error_naming_it() {
        let e = read_range("/nonexistent/arbiter/x.log", 0, 10).expect_err("missing");
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(e.to_string().contains("/nonexistent/arbiter/x.log"), "{e}");
    }
}

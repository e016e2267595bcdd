//! An input read to its end, for inputs that have no size to ask for.
//!
//! A policy, ruleset or trail given as `<(zcat policy.gz)`, a FIFO or `/dev/stdin` has a
//! `stat` size of 0: a reader that sizes its buffer (or its memory map) from `stat` sees an
//! empty file. Such inputs are read to the end instead, and refused once they pass a
//! maximum the caller documents, so that an endless pipe (`/dev/zero`) costs at most that
//! much memory.

use std::io::{self, Read};

/// The input was larger than the caller's maximum (carried inside an [`io::Error`] of
/// kind [`io::ErrorKind::InvalidData`]; find it with `get_ref()` and `downcast_ref`).
#[derive(Debug, thiserror::Error)]
#[error("larger than {max} bytes, the most read from a pipe, FIFO or other non-regular file")]
pub struct TooLarge {
    /// The maximum that was exceeded.
    pub max: u64,
}

/// Reads `input` to its end, refusing it (with [`TooLarge`]) when it holds more than `max`
/// bytes; never holds more than `max + 1` bytes.
pub fn read_to_end_bounded(input: impl Read, max: u64) -> io::Result<Vec<u8>> {
    let mut data = Vec::new();
    input.take(max.saturating_add(1)).read_to_end(&mut data)?;
    if data.len() as u64 > max {
        return Err(io::Error::new(io::ErrorKind::InvalidData, TooLarge { max }));
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_at_the_maximum_is_read() {
        assert_eq!(read_to_end_bounded(&b"abcd"[..], 4).unwrap(), b"abcd");
    }

    #[test]
    fn input_past_the_maximum_is_refused_with_the_bound() {
        let e = read_to_end_bounded(io::repeat(0), 1000).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        let t = e.get_ref().unwrap().downcast_ref::<TooLarge>().unwrap();
        assert_eq!(t.max, 1000);
        assert!(e.to_string().contains("larger than 1000 bytes"));
    }
}

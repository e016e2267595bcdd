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
    read_to_end_bounded_sized(input, max, 0)
}

/// [`read_to_end_bounded`] with the buffer sized at once for `size_hint` bytes (a regular
/// file's `stat` size; at most `max` is taken): an input of that size is read without the
/// doubling reallocations and copies of a growing buffer. A wrong hint costs only speed.
pub fn read_to_end_bounded_sized(
    input: impl Read,
    max: u64,
    size_hint: u64,
) -> io::Result<Vec<u8>> {
    let mut data = Vec::with_capacity(usize::try_from(size_hint.min(max)).unwrap_or(0));
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
    fn a_size_hint_changes_no_result() {
        for hint in [0, 1, 4, 5, 1 << 40] {
            assert_eq!(
                read_to_end_bounded_sized(&b"abcd"[..], 4, hint).unwrap(),
                b"abcd"
            );
            assert!(read_to_end_bounded_sized(&b"abcde"[..], 4, hint).is_err());
        }
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

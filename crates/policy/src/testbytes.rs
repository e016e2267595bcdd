//! Test-only helpers: a little-endian writer for hand-built policy fragments, and symbol
//! counts to read them against. Shared by the section tests of the reader.

use crate::cursor::Cursor;
use crate::error::{PolicyError, Result};
use crate::read::Counts;

/// Runs `f` over `bytes`, checking that it reads them to their end.
pub(crate) fn run<T>(bytes: &[u8], f: impl FnOnce(&mut Cursor<'_>) -> Result<T>) -> Result<T> {
    let mut c = Cursor::new(bytes);
    let r = f(&mut c)?;
    assert_eq!(c.remaining(), 0, "section not read to its end");
    Ok(r)
}

/// The detail of an `Invalid` error (any other outcome fails the test).
pub(crate) fn detail<T: std::fmt::Debug>(r: Result<T>) -> String {
    match r {
        Err(PolicyError::Invalid { detail, .. }) => detail,
        other => panic!("expected an Invalid error, got {other:?}"),
    }
}

/// Builds a byte image field by field, in the format's little-endian encoding.
#[derive(Default)]
pub(crate) struct W(pub Vec<u8>);

impl W {
    pub fn new() -> Self {
        W(Vec::new())
    }

    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }

    pub fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub fn u32s(&mut self, vs: &[u32]) -> &mut Self {
        for &v in vs {
            self.u32(v);
        }
        self
    }

    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.0.extend_from_slice(b);
        self
    }

    /// A length word followed by the bytes, as names are stored.
    pub fn name(&mut self, s: &str) -> &mut Self {
        self.u32(s.len() as u32).bytes(s.as_bytes())
    }

    /// An ebitmap holding `bits` (0-based), encoded as the kernel's `ebitmap_write` does.
    pub fn ebitmap(&mut self, bits: &[u32]) -> &mut Self {
        let mut nodes: Vec<(u32, u64)> = Vec::new();
        let mut sorted = bits.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        for b in sorted {
            let start = b & !63;
            match nodes.last_mut() {
                Some((s, m)) if *s == start => *m |= 1 << (b - start),
                _ => nodes.push((start, 1 << (b - start))),
            }
        }
        let highbit = nodes.last().map(|n| n.0 + 64).unwrap_or(0);
        self.u32s(&[64, highbit, nodes.len() as u32]);
        for (s, m) in nodes {
            self.u32(s);
            self.0.extend_from_slice(&m.to_le_bytes());
        }
        self
    }

    /// An MLS range with one level (sensitivity `sens`, categories `cats`).
    pub fn level_range(&mut self, sens: u32, cats: &[u32]) -> &mut Self {
        self.u32s(&[1, sens]).ebitmap(cats)
    }

    /// An MLS range with distinct low and high levels.
    pub fn range(&mut self, low: (u32, &[u32]), high: (u32, &[u32])) -> &mut Self {
        self.u32s(&[2, low.0, high.0])
            .ebitmap(low.1)
            .ebitmap(high.1)
    }

    /// A context `user:role:type` with, when `mls` (format version >= 19), the range s0.
    pub fn context(&mut self, user: u32, role: u32, ty: u32, mls: bool) -> &mut Self {
        self.u32s(&[user, role, ty]);
        if mls {
            self.level_range(1, &[]);
        }
        self
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

/// Symbol counts for a small policy of the given format version.
pub(crate) fn counts(version: u32) -> Counts {
    Counts {
        version,
        types: 20,
        classes: 6,
        roles: 4,
        users: 3,
        bools: 5,
        sens: 2,
        cats: 8,
    }
}

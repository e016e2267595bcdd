//! Extensible bitmaps, the format's set-of-small-integers.
//!
//! Kept exactly as stored: a sorted list of 64-bit nodes, each with its starting bit. This is
//! sized to its content (sparse category and type sets stay small) and iterates in order. The
//! security server builds dense bitsets from these where it needs O(1) membership.
//!
//! A node is held in 12 bytes, as the file stores it (three `u32`s, 4-byte aligned), not as
//! a `(u32, u64)` tuple, which pads to 16: a policy's bitmaps are mostly two or three
//! nodes (the Debian policy's 4,153 type-attribute maps take 175 kB as tuples, 131 kB as
//! 12-byte nodes, and the allocator's chunks 241 and 178 kB).

use crate::cursor::Cursor;
use crate::error::{PolicyError, Result};

const MAPUNIT: u32 = 64;

/// A [`PolicyError::Invalid`] about a bitmap (kept out of line: reading is the hot path).
#[cold]
#[inline(never)]
fn c_invalid(offset: usize, what: &'static str, detail: String) -> PolicyError {
    PolicyError::Invalid {
        what,
        offset,
        detail,
    }
}

/// A set of bit positions (0-based; policy values are `bit + 1`).
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Ebitmap {
    /// Strictly ascending by start, no zero maps.
    nodes: Box<[Node]>,
}

/// One node: its start bit and its 64 bits of membership, split in two `u32`s so that the
/// node is 12 bytes with 4-byte alignment.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Node {
    start: u32,
    lo: u32,
    hi: u32,
}

impl Node {
    fn new(start: u32, map: u64) -> Node {
        Node {
            start,
            lo: map as u32,
            hi: (map >> 32) as u32,
        }
    }

    fn map(self) -> u64 {
        u64::from(self.hi) << 32 | u64::from(self.lo)
    }

    fn pair(self) -> (u32, u64) {
        (self.start, self.map())
    }
}

impl std::fmt::Debug for Ebitmap {
    /// As the `(start, map)` pairs of [`Ebitmap::nodes`].
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ebitmap")
            .field("nodes", &self.nodes().collect::<Vec<_>>())
            .finish()
    }
}

impl Ebitmap {
    /// Reads an ebitmap as libsepol 3.4's `ebitmap_read` does, with its checks: 64-bit map
    /// units; a high bit of 0 is the empty set whatever the count says (libsepol reads no
    /// nodes then, and neither does this); otherwise the high bit is a multiple of 64,
    /// there is at least one node, node starts are aligned, ascending and below the high
    /// bit, no map is empty, and the last node ends exactly at the high bit.
    pub fn read(c: &mut Cursor<'_>, what: &'static str) -> Result<Self> {
        let at = c.offset();
        let [mapunit, highbit, count] = c.u32s::<3>(what)?;
        if mapunit != MAPUNIT {
            return Err(c.invalid_at(at, what, format!("ebitmap map unit {mapunit}, expected 64")));
        }
        if highbit == 0 {
            return Ok(Ebitmap::default());
        }
        if highbit & (MAPUNIT - 1) != 0 {
            return Err(c.invalid_at(
                at,
                what,
                format!("ebitmap high bit {highbit} is not a multiple of 64"),
            ));
        }
        if count == 0 {
            return Err(c.invalid_at(at, what, format!("ebitmap high bit {highbit} but no nodes")));
        }
        let count = c.check_count(count, 12, what)?;
        let mut nodes = Vec::with_capacity(count);
        let mut last: Option<u32> = None;
        let mut node = |node_at: usize, start: u32, map: u64| -> Result<()> {
            if start & (MAPUNIT - 1) != 0 {
                return Err(c_invalid(
                    node_at,
                    what,
                    format!("ebitmap node start {start} is not a multiple of 64"),
                ));
            }
            if highbit < MAPUNIT || start > highbit - MAPUNIT {
                return Err(c_invalid(
                    node_at,
                    what,
                    format!("ebitmap node start {start} beyond high bit {highbit}"),
                ));
            }
            if let Some(prev) = last {
                if start <= prev {
                    return Err(c_invalid(
                        node_at,
                        what,
                        format!("ebitmap nodes out of order ({start} after {prev})"),
                    ));
                }
            }
            if map == 0 {
                return Err(c_invalid(
                    node_at,
                    what,
                    format!("ebitmap node at bit {start} is empty"),
                ));
            }
            last = Some(start);
            nodes.push(Node::new(start, map));
            Ok(())
        };
        // `check_count` made sure all the nodes are there: one bounds check for the lot.
        let base = c.offset();
        let raw = c.bytes(count * 12, what)?;
        for (i, n) in raw.chunks_exact(12).enumerate() {
            let start = u32::from_le_bytes(n[..4].try_into().expect("4 bytes"));
            let map = u64::from_le_bytes(n[4..].try_into().expect("8 bytes"));
            node(base + 12 * i, start, map)?;
        }
        if let Some(last) = nodes.last().map(|n| n.start) {
            if last + MAPUNIT != highbit {
                return Err(c.invalid_at(
                    at,
                    what,
                    format!(
                        "ebitmap high bit {highbit} is not the end of its last node ({})",
                        last + MAPUNIT
                    ),
                ));
            }
        }
        Ok(Ebitmap {
            nodes: nodes.into_boxed_slice(),
        })
    }

    /// Builds a bitmap from bit positions (any order, duplicates allowed).
    pub fn from_bits(bits: impl IntoIterator<Item = u32>) -> Self {
        // Most bitmaps a compiler builds are short (a type's attributes, a role's types):
        // their positions are gathered on the stack, and only the nodes are allocated.
        let mut bits = bits.into_iter();
        let mut small = [0u32; 32];
        let mut n = 0;
        while n < small.len() {
            let Some(b) = bits.next() else {
                return Self::from_positions(&mut small[..n]);
            };
            small[n] = b;
            n += 1;
        }
        let mut all = small.to_vec();
        all.extend(bits);
        Self::from_positions(&mut all)
    }

    /// [`Ebitmap::from_bits`] over the gathered positions (sorted here unless they
    /// already are).
    fn from_positions(bits: &mut [u32]) -> Self {
        if !bits.is_sorted() {
            bits.sort_unstable();
        }
        // The nodes counted first: one allocation of the boxed slice's size, no growth.
        let nodes = bits.first().map_or(0, |_| {
            1 + bits
                .windows(2)
                .filter(|w| w[0] / MAPUNIT != w[1] / MAPUNIT)
                .count()
        });
        let mut v: Vec<Node> = Vec::with_capacity(nodes);
        for &b in bits.iter() {
            let start = b & !(MAPUNIT - 1);
            let bit = 1u64 << (b - start);
            match v.last_mut() {
                Some(n) if n.start == start => *n = Node::new(start, n.map() | bit),
                _ => v.push(Node::new(start, bit)),
            }
        }
        Ebitmap {
            nodes: v.into_boxed_slice(),
        }
    }

    /// Whether `bit` is set.
    pub fn contains(&self, bit: u32) -> bool {
        let start = bit & !(MAPUNIT - 1);
        match self.nodes.binary_search_by_key(&start, |n| n.start) {
            Ok(i) => self.nodes[i].map() & (1 << (bit - start)) != 0,
            Err(_) => false,
        }
    }

    /// The set bits, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.nodes().flat_map(|(start, map)| {
            let mut m = map;
            std::iter::from_fn(move || {
                if m == 0 {
                    return None;
                }
                let i = m.trailing_zeros();
                m &= m - 1;
                Some(start + i)
            })
        })
    }

    /// Number of set bits.
    pub fn len(&self) -> usize {
        self.nodes().map(|(_, m)| m.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// One past the highest set bit (0 when empty).
    pub fn end(&self) -> u32 {
        self.nodes
            .last()
            .map(|n| n.start + 64 - n.map().leading_zeros())
            .unwrap_or(0)
    }

    /// The raw nodes, `(start bit, 64 bits of membership)` ascending, for consumers that
    /// build their own dense form.
    pub fn nodes(&self) -> impl DoubleEndedIterator<Item = (u32, u64)> + ExactSizeIterator + '_ {
        self.nodes.iter().map(|n| n.pair())
    }

    /// Whether every bit of `other` is set in `self`.
    pub fn contains_all(&self, other: &Ebitmap) -> bool {
        other.nodes().all(
            |(s, m)| match self.nodes.binary_search_by_key(&s, |n| n.start) {
                Ok(i) => self.nodes[i].map() & m == m,
                Err(_) => false,
            },
        )
    }

    /// The bits set in both.
    pub fn intersection(&self, other: &Ebitmap) -> Ebitmap {
        let mut out = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < self.nodes.len() && j < other.nodes.len() {
            let (a, b) = (self.nodes[i].pair(), other.nodes[j].pair());
            match a.0.cmp(&b.0) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    if a.1 & b.1 != 0 {
                        out.push(Node::new(a.0, a.1 & b.1));
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
        Ebitmap {
            nodes: out.into_boxed_slice(),
        }
    }

    /// Heap bytes held, for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.nodes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(highbit: u32, nodes: &[(u32, u64)]) -> Vec<u8> {
        let mut v = Vec::new();
        for w in [64, highbit, nodes.len() as u32] {
            v.extend_from_slice(&w.to_le_bytes());
        }
        for &(s, m) in nodes {
            v.extend_from_slice(&s.to_le_bytes());
            v.extend_from_slice(&m.to_le_bytes());
        }
        v
    }

    #[test]
    fn reads_and_queries_sparse_bitmap() {
        let bytes = encode(192, &[(0, 0b101), (128, 1 << 63)]);
        let e = Ebitmap::read(&mut Cursor::new(&bytes), "t").unwrap();
        assert!(e.contains(0) && e.contains(2) && e.contains(191));
        assert!(!e.contains(1) && !e.contains(64) && !e.contains(1000));
        assert_eq!(e.iter().collect::<Vec<_>>(), vec![0, 2, 191]);
        assert_eq!(e.len(), 3);
        assert_eq!(e.end(), 192);
    }

    #[test]
    fn a_zero_high_bit_is_the_empty_set_and_its_count_is_not_read() {
        // libsepol reads no nodes when the high bit is 0, whatever the count says.
        let mut bytes = encode(0, &[]);
        bytes[8..12].copy_from_slice(&3u32.to_le_bytes());
        let mut c = Cursor::new(&bytes);
        assert!(Ebitmap::read(&mut c, "t").expect("empty").is_empty());
        assert_eq!(c.offset(), 12);
    }

    #[test]
    fn a_high_bit_past_the_last_node_is_refused_with_the_offset() {
        let bytes = encode(256, &[(0, 1), (128, 1)]);
        let err = Ebitmap::read(&mut Cursor::new(&bytes), "t").expect_err("libsepol refuses");
        assert!(err.to_string().contains("offset 0"), "{err}");
        assert!(Ebitmap::read(&mut Cursor::new(&encode(192, &[(0, 1), (128, 1)])), "t").is_ok());
    }

    #[test]
    fn rejects_unordered_nodes_and_bad_units() {
        let bad_order = encode(192, &[(128, 1), (0, 1)]);
        assert!(Ebitmap::read(&mut Cursor::new(&bad_order), "t").is_err());
        let mut bad_unit = encode(64, &[(0, 1)]);
        bad_unit[0] = 32;
        assert!(Ebitmap::read(&mut Cursor::new(&bad_unit), "t").is_err());
        let beyond = encode(64, &[(64, 1)]);
        assert!(Ebitmap::read(&mut Cursor::new(&beyond), "t").is_err());
    }

    #[test]
    fn hostile_node_count_is_an_error() {
        let mut b = encode(64, &[]);
        b[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Ebitmap::read(&mut Cursor::new(&b), "t").is_err());
    }

    /// A node is held as the file stores it, 12 bytes (a `(u32, u64)` pads to 16), and
    /// reads back as the `(start, map)` it was built from.
    #[test]
    fn a_node_is_held_in_twelve_bytes() {
        let e = Ebitmap::from_bits([0, 63, 64 + 31, 64 + 32, 191]);
        assert_eq!(e.heap_bytes(), 3 * 12);
        assert_eq!(
            e.nodes().collect::<Vec<_>>(),
            vec![(0, 1 | 1 << 63), (64, 1 << 31 | 1 << 32), (128, 1 << 63)]
        );
        assert_eq!(e.end(), 192);
        assert_eq!(
            format!("{e:?}"),
            format!("Ebitmap {{ nodes: {:?} }}", e.nodes().collect::<Vec<_>>())
        );
    }

    #[test]
    fn from_bits_round_trips() {
        let e = Ebitmap::from_bits([5, 70, 3, 70]);
        assert_eq!(e.iter().collect::<Vec<_>>(), vec![3, 5, 70]);
        assert!(e.contains_all(&Ebitmap::from_bits([3, 70])));
        assert!(!e.contains_all(&Ebitmap::from_bits([4])));
    }

    /// Positions gathered on the stack (up to 32) and past it, sorted or not, with
    /// duplicates: the same set as a sorted, deduplicated list, nodes ascending and none
    /// empty (what `write` emits).
    #[test]
    fn from_bits_matches_a_sorted_set_at_every_length() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for len in 0..100usize {
            for sorted in [false, true] {
                let mut bits: Vec<u32> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        (seed % 300) as u32
                    })
                    .collect();
                if sorted {
                    bits.sort_unstable();
                }
                let want: std::collections::BTreeSet<u32> = bits.iter().copied().collect();
                let e = Ebitmap::from_bits(bits.iter().copied());
                assert_eq!(
                    e.iter().collect::<Vec<_>>(),
                    want.into_iter().collect::<Vec<_>>()
                );
                assert!(e.nodes.windows(2).all(|w| w[0].start < w[1].start));
                assert!(e.nodes().all(|(s, m)| m != 0 && s % MAPUNIT == 0));
            }
        }
    }
}

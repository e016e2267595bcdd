//! Bucket hash functions: the three from the 2025 kernel study and arbiter's own.
//!
//! All take the key as (ssid, tsid, k) where `k` is the class value for the access vector
//! table (and class plus driver/base for the extended-permission table) and return a bucket
//! index below `1 << bits`.

/// Which function maps a key to its bucket.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum HashKind {
    /// The kernel's hash from 2.6.0 to 6.18:
    /// `(ssid ^ (tsid << 2) ^ (tclass << 4)) & (slots - 1)`. Keys with small SIDs collapse
    /// onto few buckets (SIDs are dense small integers, and the low bits are all it uses).
    Original,
    /// The study's "Muladd": `ssid*0x9E3779B9 + tsid*0x85EBCA77 + tclass*0xC2B2AE35`
    /// (wrapping u32), low bits. A linear map: spreads dense SIDs well, but the low bits of
    /// a product depend only on the low bits of its factors.
    MulAdd,
    /// The kernel's `av_hash` (MurmurHash3 mixing of ssid, tsid, tclass, then the fmix32
    /// finalizer), as used by the AVC since Linux 6.19.
    Murmur3,
    /// arbiter's default: a 64x64→128-bit folded multiply of the packed key, top bits.
    /// See [`arbiter`].
    #[default]
    Arbiter,
}

impl HashKind {
    /// All kinds, in report order.
    pub const ALL: [HashKind; 4] = [
        HashKind::Original,
        HashKind::MulAdd,
        HashKind::Murmur3,
        HashKind::Arbiter,
    ];

    /// Short name used in reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            HashKind::Original => "original",
            HashKind::MulAdd => "muladd",
            HashKind::Murmur3 => "murmur3",
            HashKind::Arbiter => "arbiter",
        }
    }

    /// Parses [`name`](Self::name).
    pub fn from_name(s: &str) -> Option<HashKind> {
        HashKind::ALL.into_iter().find(|h| h.name() == s)
    }

    /// Bucket index in `0 .. 1 << bits` (`bits` ≤ 32).
    #[inline(always)]
    pub fn bucket(self, ssid: u32, tsid: u32, k: u32, bits: u32) -> usize {
        let mask = ((1u64 << bits) - 1) as u32;
        match self {
            HashKind::Original => (original(ssid, tsid, k) & mask) as usize,
            HashKind::MulAdd => (muladd(ssid, tsid, k) & mask) as usize,
            HashKind::Murmur3 => (murmur3(ssid, tsid, k) & mask) as usize,
            HashKind::Arbiter => {
                if bits == 0 {
                    0
                } else {
                    (arbiter(ssid, tsid, k) >> (64 - bits)) as usize
                }
            }
        }
    }
}

/// The original kernel AVC hash, before masking.
#[inline(always)]
pub fn original(ssid: u32, tsid: u32, tclass: u32) -> u32 {
    ssid ^ (tsid << 2) ^ (tclass << 4)
}

/// The study's multiply-add hash, before masking.
#[inline(always)]
pub fn muladd(ssid: u32, tsid: u32, tclass: u32) -> u32 {
    ssid.wrapping_mul(0x9E37_79B9)
        .wrapping_add(tsid.wrapping_mul(0x85EB_CA77))
        .wrapping_add(tclass.wrapping_mul(0xC2B2_AE35))
}

/// The kernel's `av_hash(key1, key2, key3, mask)` before masking: MurmurHash3_x86_32's
/// block mixing applied to three 32-bit words with seed 0, then the fmix32 finalizer.
/// Unlike the reference MurmurHash3 it does not fold the length in before finalizing.
#[inline(always)]
pub fn murmur3(k1: u32, k2: u32, k3: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    #[inline(always)]
    fn mix(hash: u32, input: u32) -> u32 {
        let v = input.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        (hash ^ v)
            .rotate_left(13)
            .wrapping_mul(5)
            .wrapping_add(0xe654_6b64)
    }
    let mut h = mix(mix(mix(0, k1), k2), k3);
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h
}

/// arbiter's key hash: the 64-bit packing `ssid | tsid << 32` and the class word are each
/// offset by a constant and multiplied as 64×64→128 bits; the two halves of the product
/// are xored ("folded multiply", as in wyhash/foldhash).
///
/// Why this one: every output bit depends on every input bit (the high half of a full
/// product carries the carries of all partial products, which a 32-bit multiply-add
/// throws away), so the top bits used for the bucket index behave like a random function
/// of the key and no structure of SID allocation (dense, sequential, clustered by
/// boot order) survives into the index. It costs one `mul` (3–4 cycles) and two xors:
/// cheaper than Murmur3's five multiplies and comparable to MulAdd's three.
#[inline(always)]
pub fn arbiter(ssid: u32, tsid: u32, k: u32) -> u64 {
    const P0: u64 = 0x243f_6a88_85a3_08d3; // fractional digits of pi
    const P1: u64 = 0x1319_8a2e_0370_7344;
    let a = (ssid as u64 | (tsid as u64) << 32) ^ P0;
    let b = (k as u64) ^ P1;
    let p = (a as u128) * (b as u128);
    (p as u64) ^ ((p >> 64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn original_matches_formula() {
        assert_eq!(original(1, 1, 1), 1 ^ 4 ^ 16);
        assert_eq!(
            HashKind::Original.bucket(0x1234, 0x55, 7, 9),
            ((0x1234 ^ (0x55 << 2) ^ (7 << 4)) & 511) as usize
        );
    }

    #[test]
    fn muladd_wraps() {
        let h = muladd(u32::MAX, u32::MAX, 0xFFFF);
        let want = (u32::MAX as u128 * 0x9E37_79B9
            + u32::MAX as u128 * 0x85EB_CA77
            + 0xFFFF * 0xC2B2_AE35) as u32;
        assert_eq!(h, want);
    }

    #[test]
    fn murmur3_known_values() {
        // Zero input: mix(0) thrice from hash 0, then fmix32.
        let mut h = 0u32;
        for _ in 0..3 {
            h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
        }
        h ^= h >> 16;
        h = h.wrapping_mul(0x85eb_ca6b);
        h ^= h >> 13;
        h = h.wrapping_mul(0xc2b2_ae35);
        h ^= h >> 16;
        assert_eq!(murmur3(0, 0, 0), h);
        // Order matters: the kernel mixes ssid, tsid, tclass in that order.
        assert_ne!(murmur3(1, 2, 3), murmur3(3, 2, 1));
    }

    #[test]
    fn buckets_in_range() {
        for kind in HashKind::ALL {
            for bits in [0, 1, 9, 13] {
                for k in 0..200u32 {
                    assert!(kind.bucket(k, k * 7 + 1, k % 50, bits) < 1 << bits);
                }
            }
            assert_eq!(HashKind::from_name(kind.name()), Some(kind));
        }
    }
}

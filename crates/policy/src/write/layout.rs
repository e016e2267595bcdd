//! libsepol 3.4's hash tables, reduced to the orders they iterate in.
//!
//! libsepol writes symbol tables, the unconditional avtab, filename transitions and range
//! transitions by walking its hash tables bucket by bucket, each chain kept sorted. Neither
//! the buckets nor the chain order depend on insertion order (except between avtab entries
//! of one key), so each written order is a pure function of the keys and the table size:
//! sort by (bucket, key). These functions compute the buckets as libsepol 3.4 does
//! (`symtab.c` `symhash`, `avtab.c` `avtab_hash`, `policydb.c` `filenametr_hash` and
//! `rangetr_hash`, `hashtab.c` `hashtab_check_resize`).

use std::cmp::Ordering;

use crate::avtab::AvtabKey;

/// Initial sizes of the symbol tables (`policydb.c` `symtab_sizes`), in table order:
/// commons, classes, roles, types, users, booleans, sensitivities, categories.
pub(crate) const COMMONS: u32 = 2;
pub(crate) const CLASSES: u32 = 32;
pub const ROLES: u32 = 16;
pub(crate) const TYPES: u32 = 512;
pub const USERS: u32 = 128;
pub(crate) const BOOLS: u32 = 16;
pub(crate) const LEVELS: u32 = 16;
pub(crate) const CATS: u32 = 16;
/// Each class's and common's permission table (`PERM_SYMTAB_SIZE`).
pub(crate) const PERMS: u32 = 32;
/// The filename transition table (`policydb_init`).
const FILENAME_TRANS: u32 = 1 << 10;
/// The range transition table (`policydb_init`).
const RANGE_TRANS: u32 = 256;

/// The size a table of `initial` buckets has after `n` inserts: `hashtab_check_resize`
/// doubles before each insert while the size is at most the element count, so the final
/// size is the least `initial * 2^k` that is at least `n`.
fn grown(initial: u32, n: usize) -> u64 {
    let mut size = u64::from(initial.max(1));
    while size < n as u64 {
        size *= 2;
    }
    size
}

/// `symhash`: rotate left by 4 and XOR each byte, taken as a C `char`. That is signed on
/// amd64, where Debian's secilc runs, so bytes of 0x80 and above are sign-extended.
fn symhash(name: &[u8]) -> u32 {
    name.iter()
        .fold(0u32, |h, &c| h.rotate_left(4) ^ (c as i8 as i32 as u32))
}

/// The order libsepol writes a symbol table of `initial` buckets holding `names`: indices
/// into `names`, by (bucket, name bytewise as `strcmp`).
pub fn symtab_order(initial: u32, names: &[&str]) -> Vec<usize> {
    let mask = grown(initial, names.len()) - 1;
    let mut keyed: Vec<(u64, &[u8], usize)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (u64::from(symhash(n.as_bytes())) & mask, n.as_bytes(), i))
        .collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, _, i)| i).collect()
}

/// The order libsepol walks an avtab of `slots` buckets (a power of two): by slot, then
/// (source, target, class) as `avtab_insert` keeps chains; entries of one (source,
/// target, class) keep their order in `keys`, which must be the chain's (insertion order,
/// as libsepol appends a new kind after the key's other entries).
pub(crate) fn avtab_order(slots: u32, keys: &[AvtabKey]) -> Vec<usize> {
    avtab_order_of(slots, keys.len(), |i| keys[i]).unwrap_or_else(|| (0..keys.len()).collect())
}

/// [`avtab_order`] of the `n` keys `key(0..n)`, or `None` when they are in that order
/// already (a policy built by the CIL compiler is): then no order is sorted or stored.
pub(crate) fn avtab_order_of(
    slots: u32,
    n: usize,
    key: impl Fn(usize) -> AvtabKey,
) -> Option<Vec<usize>> {
    let mask = slots.wrapping_sub(1);
    let place = |k: AvtabKey| {
        (
            k.libsepol_hash() & mask,
            k.source.value(),
            k.target.value(),
            k.class.value(),
        )
    };
    // Equal places keep their index order, so in order means not decreasing.
    let mut in_order = true;
    let mut last = (0, 0, 0, 0);
    for i in 0..n {
        let p = place(key(i));
        if p < last {
            in_order = false;
            break;
        }
        last = p;
    }
    if in_order {
        return None;
    }
    let mut keyed: Vec<(u32, u16, u16, u16, usize)> = (0..n)
        .map(|i| {
            let (h, s, t, c) = place(key(i));
            (h, s, t, c, i)
        })
        .collect();
    // The index last makes the sort stable for equal (slot, source, target, class).
    keyed.sort_unstable();
    Some(keyed.into_iter().map(|(.., i)| i).collect())
}

/// `filenametr_hash` (in C's 64-bit `unsigned long`; only the low bits are used).
fn filenametr_hash(target: u32, class: u32, name: &[u8]) -> u64 {
    name.iter().fold(u64::from(target ^ class), |h, &c| {
        let c = u64::from(c);
        h.wrapping_add(c << 4).wrapping_add(c >> 4).wrapping_mul(11)
    })
}

/// The order libsepol writes filename transition keys (target type value, class value,
/// name): by bucket, then target, class and name as `filenametr_cmp` compares them.
pub(crate) fn filename_trans_order(keys: &[(u32, u32, &str)]) -> Vec<usize> {
    let mask = grown(FILENAME_TRANS, keys.len()) - 1;
    let mut idx: Vec<(u64, usize)> = keys
        .iter()
        .enumerate()
        .map(|(i, &(t, c, n))| (filenametr_hash(t, c, n.as_bytes()) & mask, i))
        .collect();
    idx.sort_unstable_by(|a, b| {
        let (ka, kb) = (keys[a.1], keys[b.1]);
        a.0.cmp(&b.0)
            .then(ka.0.cmp(&kb.0))
            .then(ka.1.cmp(&kb.1))
            .then(ka.2.as_bytes().cmp(kb.2.as_bytes()))
            .then(a.1.cmp(&b.1))
    });
    idx.into_iter().map(|(_, i)| i).collect()
}

/// The order libsepol writes range transitions (source, target, class values): by
/// `rangetr_hash` bucket, then (source, target, class).
pub(crate) fn range_trans_order(keys: &[(u32, u32, u32)]) -> Vec<usize> {
    let mask = grown(RANGE_TRANS, keys.len()) - 1;
    let bucket = |&(s, t, c): &(u32, u32, u32)| {
        u64::from(s.wrapping_add(t << 3).wrapping_add(c << 5)) & mask
    };
    let mut idx: Vec<usize> = (0..keys.len()).collect();
    idx.sort_by(|&a, &b| {
        let (ka, kb) = (&keys[a], &keys[b]);
        match bucket(ka).cmp(&bucket(kb)) {
            Ordering::Equal => ka.cmp(kb),
            o => o,
        }
    });
    idx
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::avtab::AvtabKind;
    use crate::ids::{ClassId, TypeId};

    #[test]
    fn tables_double_until_they_hold_every_element() {
        assert_eq!(grown(16, 0), 16);
        assert_eq!(grown(16, 16), 16);
        assert_eq!(grown(16, 17), 32);
        assert_eq!(grown(512, 4421), 8192);
        assert_eq!(grown(16, 1024), 1024);
    }

    #[test]
    fn symhash_rotates_by_four_and_sign_extends_high_bytes() {
        assert_eq!(symhash(b"a"), 0x61);
        assert_eq!(symhash(b"ab"), (0x61 << 4) ^ 0x62);
        assert_eq!(symhash(&[0x80]), 0xffff_ff80);
    }

    #[test]
    fn symbol_order_is_bucket_then_name() {
        // "b" (0x62) and "r" (0x72) share bucket 2 of 16; "a" is in bucket 1.
        assert_eq!(symtab_order(16, &["r", "b", "a"]), vec![2, 1, 0]);
    }

    #[test]
    fn avtab_entries_of_one_key_keep_their_order() {
        let key = |s: u16, kind| AvtabKey {
            source: TypeId::new(s).unwrap(),
            target: TypeId::new(1).unwrap(),
            class: ClassId::new(1).unwrap(),
            kind,
        };
        let keys = [
            key(1, AvtabKind::AuditDeny),
            key(1, AvtabKind::Allowed),
            key(1, AvtabKind::Transition),
        ];
        assert_eq!(avtab_order(1 << 20, &keys), vec![0, 1, 2]);
    }

    #[test]
    fn a_table_in_order_is_not_reordered_and_one_out_of_order_is_sorted() {
        let key = |s: u16, t: u16| AvtabKey {
            source: TypeId::new(s).unwrap(),
            target: TypeId::new(t).unwrap(),
            class: ClassId::new(1).unwrap(),
            kind: AvtabKind::Allowed,
        };
        let keys: Vec<AvtabKey> = (1..200u16).map(|s| key(s, s % 7 + 1)).collect();
        // Few slots, so that chains hold several keys and the order is not trivial.
        let order = avtab_order(8, &keys);
        let sorted: Vec<AvtabKey> = order.iter().map(|&i| keys[i]).collect();
        assert_eq!(avtab_order_of(8, sorted.len(), |i| sorted[i]), None);
        let expected: Vec<AvtabKey> = {
            let mut v = keys.clone();
            v.sort_by_key(|k| (k.libsepol_hash() & 7, k.source, k.target, k.class));
            v
        };
        assert_eq!(sorted, expected);
        assert!(avtab_order_of(8, keys.len(), |i| keys[i]).is_some());
    }

    #[test]
    fn range_transitions_go_by_source_plus_shifted_target_and_class() {
        // Buckets 1 + (1 << 3) + (1 << 5) = 41 and 2 + 0 + (1 << 5) = 34 of 256.
        assert_eq!(range_trans_order(&[(1, 1, 1), (2, 0, 1)]), vec![1, 0]);
    }

    #[test]
    fn filename_transitions_hash_target_class_and_name() {
        // Equal buckets compare target, class, then name; "b" hashes after "a" here.
        let h = |n: &str| filenametr_hash(1, 1, n.as_bytes()) & 1023;
        assert_eq!(h("a"), (((0x61 << 4) + (0x61 >> 4)) * 11) & 1023);
        let keys = [(1, 1, "b"), (1, 1, "a")];
        let expected = if h("a") <= h("b") {
            vec![1, 0]
        } else {
            vec![0, 1]
        };
        assert_eq!(filename_trans_order(&keys), expected);
    }
}

//! glibc 2.36's `qsort`: a stable top-down merge sort (left half n/2, ties taken from the
//! left). libsepol sorts context rules with it, and some of its comparators are not
//! transitive, so only the same algorithm gives the same order.
//!
//! The merge moves `u32` positions, not the rules themselves (file contexts carry their
//! path bytes): the comparisons are glibc's, the copies are four bytes each.

use std::cmp::Ordering;

/// Sorts `v` exactly as glibc's `msort_with_tmp` does.
pub fn msort<T>(v: &mut Vec<T>, cmp: &impl Fn(&T, &T) -> Ordering) {
    if v.len() <= 1 {
        return;
    }
    let perm = order(v.len(), &|a, b| cmp(&v[a], &v[b]));
    permute(v, &perm);
}

/// The positions `0..n` in the order glibc's merge sort leaves them under `cmp` (which
/// compares the elements at two positions).
pub fn order(n: usize, cmp: &impl Fn(usize, usize) -> Ordering) -> Vec<u32> {
    let mut idx: Vec<u32> = (0..n as u32).collect();
    let mut tmp: Vec<u32> = Vec::with_capacity(n);
    sort(&mut idx, &mut tmp, cmp);
    idx
}

/// Rearranges `v` so that its `i`th element is the old `perm[i]`th (`perm` is a
/// permutation of `0..v.len()`).
pub fn permute<T>(v: &mut Vec<T>, perm: &[u32]) {
    let mut old: Vec<Option<T>> = v.drain(..).map(Some).collect();
    v.extend(perm.iter().filter_map(|&i| old[i as usize].take()));
}

fn sort(v: &mut [u32], tmp: &mut Vec<u32>, cmp: &impl Fn(usize, usize) -> Ordering) {
    let n = v.len();
    if n <= 1 {
        return;
    }
    let n1 = n / 2;
    {
        let (a, b) = v.split_at_mut(n1);
        sort(a, tmp, cmp);
        sort(b, tmp, cmp);
    }
    tmp.clear();
    let (mut i, mut j) = (0, n1);
    while i < n1 && j < n {
        if cmp(v[i] as usize, v[j] as usize) != Ordering::Greater {
            tmp.push(v[i]);
            i += 1;
        } else {
            tmp.push(v[j]);
            j += 1;
        }
    }
    tmp.extend_from_slice(&v[i..n1]);
    let done = tmp.len();
    v[..done].copy_from_slice(&tmp[..]);
}

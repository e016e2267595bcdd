//! glibc 2.36's `qsort`: a stable top-down merge sort (left half n/2, ties taken from the
//! left). libsepol sorts context rules with it, and some of its comparators are not
//! transitive, so only the same algorithm gives the same order.

use std::cmp::Ordering;

/// Sorts `v` exactly as glibc's `msort_with_tmp` does.
pub fn msort<T: Clone>(v: &mut [T], cmp: &impl Fn(&T, &T) -> Ordering) {
    if v.len() <= 1 {
        return;
    }
    let mut tmp: Vec<T> = Vec::with_capacity(v.len());
    sort(v, &mut tmp, cmp);
}

fn sort<T: Clone>(v: &mut [T], tmp: &mut Vec<T>, cmp: &impl Fn(&T, &T) -> Ordering) {
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
        if cmp(&v[i], &v[j]) != Ordering::Greater {
            tmp.push(v[i].clone());
            i += 1;
        } else {
            tmp.push(v[j].clone());
            j += 1;
        }
    }
    tmp.extend_from_slice(&v[i..n1]);
    let done = tmp.len();
    v[..done].clone_from_slice(&tmp[..]);
}

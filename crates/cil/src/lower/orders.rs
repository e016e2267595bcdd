//! Ordering statements (`classorder`, `sidorder`, `sensitivityorder`,
//! `categoryorder`) merged as libsepol 3.4 merges them.

use super::*;

/// libsepol 3.4's `__cil_ordered_lists_merge_all`: sweep the pending lists, merging each
/// into the composite when it shares an item placed so that the order is unambiguous
/// (its first item, or the composite's first item, is the shared one), until nothing
/// changes. `lists` holds (statement, items); `what` names the item kind for messages.
pub(super) fn merge_orders(
    l: &L<'_>,
    lists: &[(u32, Vec<u32>)],
    what: &str,
) -> Result<Vec<u32>, Fail> {
    let mut out: Vec<u32> = Vec::new();
    let mut ordered: std::collections::HashSet<u32, crate::intern::FxBuild> = Default::default();
    let mut merged = vec![false; lists.len()];
    // Inserts `items` at `at`, failing on an item already placed.
    let insert = |out: &mut Vec<u32>,
                  ordered: &mut std::collections::HashSet<u32, crate::intern::FxBuild>,
                  at: usize,
                  items: &[u32]|
     -> Result<(), Fail> {
        for (k, &x) in items.iter().enumerate() {
            if !ordered.insert(x) {
                return Err(err(format!(
                    "{what} {} has already been merged into the ordered list",
                    l.name(x)
                )));
            }
            out.insert(at + k, x);
        }
        Ok(())
    };
    // Returns Ok(true) when merged, Ok(false) when it must wait.
    let merge_one = |out: &mut Vec<u32>,
                     ordered: &mut std::collections::HashSet<u32, crate::intern::FxBuild>,
                     new: &[u32]|
     -> Result<bool, Fail> {
        if new.is_empty() {
            return Ok(true);
        }
        if out.is_empty() {
            insert(out, ordered, 0, new)?;
            return Ok(true);
        }
        let Some((ni, oi)) = new
            .iter()
            .enumerate()
            .find_map(|(ni, x)| out.iter().position(|y| y == x).map(|oi| (ni, oi)))
        else {
            return Ok(false);
        };
        if ni != 0 && oi != 0 {
            return Ok(false);
        }
        let mut oi = oi;
        if ni != 0 {
            insert(out, ordered, 0, &new[..ni])?;
            oi += ni;
        }
        // Overlap: `oprev` is the index of the last matched old item.
        let mut nc = ni + 1;
        let mut oc = oi + 1;
        let mut oprev = oi;
        while nc < new.len() && oc < out.len() {
            if new[nc] == out[oc] {
                oprev = oc;
                oc += 1;
                nc += 1;
                continue;
            }
            // Gap in old: old (A C), new (A B C).
            if let Some(m) = new[nc + 1..].iter().position(|&x| x == out[oc]) {
                let m = nc + 1 + m;
                let count = m - nc;
                insert(out, ordered, oprev + 1, &new[nc..m])?;
                oc += count;
                oprev = oc;
                oc += 1;
                nc = m + 1;
                continue;
            }
            // Gap in new: old (A B C), new (A C).
            if let Some(m) = out[oc + 1..].iter().position(|&x| x == new[nc]) {
                let m = oc + 1 + m;
                oprev = m;
                oc = m + 1;
                nc += 1;
                continue;
            }
            return Ok(false);
        }
        if nc < new.len() {
            let end = out.len();
            insert(out, ordered, end, &new[nc..])?;
        }
        Ok(true)
    };
    let mut changed = true;
    let mut waiting = 1;
    while waiting > 0 && changed {
        changed = false;
        waiting = 0;
        for (i, (_, list)) in lists.iter().enumerate() {
            if merged[i] {
                continue;
            }
            if merge_one(&mut out, &mut ordered, list)? {
                merged[i] = true;
                changed = true;
            } else {
                waiting += 1;
            }
        }
        if waiting > 0 && !changed {
            let mut m: Vec<String> = lists
                .iter()
                .zip(&merged)
                .filter(|(_, &done)| !done)
                .map(|((s, _), _)| format!("Unable to merge ordered list at {}", l.here(*s)))
                .collect();
            m.push("Failed to resolve AST".into());
            m.push("Failed to compile cildb: -1".into());
            return Err(Fail::bad(m));
        }
    }
    Ok(out)
}

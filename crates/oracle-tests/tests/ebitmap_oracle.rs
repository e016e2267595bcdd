//! Reader validation as libsepol's, for extensible bitmaps: every ebitmap of small
//! policies is damaged in each way `ebitmap_read` and the validation after it look at
//! (map size, high bit alignment, high bit zero with nodes, nodes without a high bit,
//! node alignment, order, range, empty maps, a last node that does not end at the high
//! bit, an impossible high bit), and arbiter must refuse every file libsepol 3.4 refuses,
//! with a byte offset, and accept every file libsepol accepts, with one allowance: where
//! the damage makes a range transition name a category that does not exist, arbiter
//! refuses as the kernel's `mls_range_isvalid` does and libsepol 3.4 does not check, and
//! where damage to the last bitmap of the file leaves bytes over, which arbiter refuses
//! and libsepol ignores. Such refusals are counted; none may be about the ebitmap's layout.

use arbiter_policy::Policy;
use sepol_oracle::Oracle;
use std::path::PathBuf;

/// An ebitmap found in a policy image: where it starts and its header fields.
#[derive(Clone, Copy, Debug)]
struct Found {
    at: usize,
    highbit: u32,
    count: u32,
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Every offset where a well-formed ebitmap (as libsepol writes them) starts: map size
/// 64, a high bit that is a multiple of 64, nodes aligned, ascending, non-empty, the last
/// ending at the high bit; or the empty form `64 0 0`. A few may be other fields that
/// happen to look alike; damaging those is as fair a comparison.
fn ebitmaps(b: &[u8]) -> Vec<Found> {
    let mut v = Vec::new();
    for at in 0..b.len().saturating_sub(12) {
        let (Some(64), Some(highbit), Some(count)) =
            (u32_at(b, at), u32_at(b, at + 4), u32_at(b, at + 8))
        else {
            continue;
        };
        if highbit % 64 != 0 || count > 64 || (highbit == 0) != (count == 0) {
            continue;
        }
        let mut last: Option<u32> = None;
        let mut ok = true;
        for i in 0..count as usize {
            let n = at + 12 + 12 * i;
            match (u32_at(b, n), u64_at(b, n + 4)) {
                (Some(start), Some(map))
                    if start % 64 == 0
                        && map != 0
                        && start < highbit
                        && last.is_none_or(|l| start > l) =>
                {
                    last = Some(start)
                }
                _ => {
                    ok = false;
                    break;
                }
            }
        }
        if ok && last.is_none_or(|l| l + 64 == highbit) {
            v.push(Found { at, highbit, count });
        }
    }
    v
}

/// The ways to damage one ebitmap, each with its name; `None` where it does not apply.
fn damages(b: &[u8], e: Found) -> Vec<(&'static str, Option<Vec<u8>>)> {
    let first = e.at + 12;
    let last = first + 12 * (e.count as usize).saturating_sub(1);
    let when = |cond: bool, f: &dyn Fn(&mut Vec<u8>)| {
        cond.then(|| {
            let mut m = b.to_vec();
            f(&mut m);
            m
        })
    };
    let with = |f: &dyn Fn(&mut Vec<u8>)| when(true, f);
    let nodes = e.count > 0;
    vec![
        ("map size 32", with(&|m| put32(m, e.at, 32))),
        (
            "high bit not a multiple of 64",
            when(nodes, &|m| put32(m, e.at + 4, e.highbit + 1)),
        ),
        (
            "high bit beyond the last node",
            when(nodes, &|m| put32(m, e.at + 4, e.highbit + 64)),
        ),
        (
            "high bit below the last node",
            when(e.highbit >= 128, &|m| put32(m, e.at + 4, e.highbit - 64)),
        ),
        (
            "high bit zero with nodes",
            when(nodes, &|m| put32(m, e.at + 4, 0)),
        ),
        (
            "nodes counted but high bit zero (empty form)",
            when(!nodes, &|m| put32(m, e.at + 8, 1)),
        ),
        (
            "high bit without nodes",
            with(&|m| {
                put32(m, e.at + 4, e.highbit.max(64));
                put32(m, e.at + 8, 0);
            }),
        ),
        (
            "node start not aligned",
            when(nodes, &|m| {
                let s = u32_at(m, first).unwrap_or(0);
                put32(m, first, s + 1)
            }),
        ),
        (
            "node start at the high bit",
            when(nodes, &|m| put32(m, last, e.highbit)),
        ),
        (
            "nodes out of order",
            when(e.count >= 2, &|m| {
                let a = u32_at(m, first).unwrap_or(0);
                let b2 = u32_at(m, first + 12).unwrap_or(0);
                put32(m, first, b2);
                put32(m, first + 12, a);
            }),
        ),
        (
            "empty node map",
            when(nodes, &|m| m[first + 4..first + 12].fill(0)),
        ),
        (
            "impossible high bit (last node moved to bit 2^31 - 64)",
            when(nodes, &|m| {
                put32(m, e.at + 4, 0x8000_0000);
                put32(m, last, 0x8000_0000 - 64);
            }),
        ),
        (
            "high bit 2^32 - 64 with the nodes as they are",
            when(nodes, &|m| put32(m, e.at + 4, 0xFFFF_FFC0)),
        ),
    ]
}

fn policies() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../policies/bin");
    ["tiny.33", "default.33", "features.33", "bounds.24"]
        .iter()
        .map(|p| dir.join(p))
        .collect()
}

#[test]
fn damaged_ebitmaps_are_refused_exactly_when_libsepol_refuses_them() {
    let mut failures = Vec::new();
    let mut tried = 0;
    let mut refused = 0;
    let mut stricter = 0;
    for path in policies() {
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            Oracle::load_bytes(&bytes).is_ok(),
            "{} loads",
            path.display()
        );
        assert!(
            Policy::from_bytes(&bytes).is_ok(),
            "{} reads",
            path.display()
        );
        let found = ebitmaps(&bytes);
        assert!(
            found.len() >= 10,
            "{}: {} ebitmaps",
            path.display(),
            found.len()
        );
        for e in found {
            for (what, m) in damages(&bytes, e) {
                let Some(m) = m else { continue };
                tried += 1;
                let theirs = Oracle::load_bytes(&m).is_ok();
                let ours = Policy::from_bytes(&m);
                if let Err(err) = &ours {
                    refused += 1;
                    // Layout faults name the byte offset; cross-reference faults found
                    // after reading name the record instead.
                    let text = err.to_string();
                    if text.contains("ebitmap") && !text.contains("offset") {
                        failures.push(format!("{what} at {}: no offset in {err}", e.at));
                    }
                }
                let text = ours
                    .as_ref()
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_default();
                // Stricter than libsepol, on purpose and not about the ebitmap's layout:
                // the kernel's range check, and bytes left over after the last table.
                let kernel_check = theirs
                    && ((text.contains("range transition") && text.contains("category value"))
                        || text.contains("unexpected trailing bytes"));
                if kernel_check {
                    stricter += 1;
                    continue;
                }
                if ours.is_ok() != theirs {
                    failures.push(format!(
                        "{} ebitmap at {} (high bit {}, {} nodes), {what}: libsepol {}, arbiter {}",
                        path.file_name().unwrap_or_default().to_string_lossy(),
                        e.at,
                        e.highbit,
                        e.count,
                        if theirs { "accepts" } else { "refuses" },
                        match &ours {
                            Ok(_) => "accepts".to_string(),
                            Err(e) => format!("refuses: {e}"),
                        }
                    ));
                }
            }
        }
    }
    eprintln!(
        "{tried} damaged files, {refused} refused by arbiter ({stricter} by checks libsepol lacks), {} differences",
        failures.len()
    );
    assert!(tried > 500, "only {tried} cases");
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

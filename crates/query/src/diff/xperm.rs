//! The extended-permission rule sections (allowxperm, auditallowxperm, dontauditxperm) and
//! the neverallow sections.
//!
//! sediff expands each xperm rule to (source type, target type, class) keys and unions the
//! ioctl numbers per key, but the rule it prints for an added or removed key, and sorts a
//! modified key by, is the first rule setools lists for the key with that rule's own
//! numbers only: one table entry, which holds a single ioctl driver. So a statement
//! `allowxperm domain t:c ioctl { 0x5401 0x8901 };` shows up in sediff as one added rule
//! per domain type carrying just one of its two numbers. That is sediff's output, and it
//! is reproduced (the order comes from [`super::expand`]).
//!
//! Binary policies keep no neverallow rules, so the neverallow sections are always empty:
//! printed (with zero counts) when selected, left out otherwise.

use super::expand::{each_key, finish, Stored, TeSide};
use super::Section;
use crate::index::Index;
use arbiter_policy::avtab::{AvtabKind, XpermsKind};

/// The section keys this module answers.
pub(super) const KEYS: &[&str] = &[
    "allowxperm",
    "auditallowxperm",
    "dontauditxperm",
    "neverallow",
    "neverallowxperm",
];

/// The section for `key`, or `None` when `key` is not one of [`KEYS`].
pub(super) fn section(key: &str, left: &Index<'_>, right: &Index<'_>) -> Option<Section> {
    Some(match key {
        "allowxperm" => xperm_section(left, right, AvtabKind::XpermsAllowed, "Allowxperm Rules"),
        "auditallowxperm" => xperm_section(
            left,
            right,
            AvtabKind::XpermsAuditAllow,
            "Auditallowxperm Rules",
        ),
        "dontauditxperm" => xperm_section(
            left,
            right,
            AvtabKind::XpermsDontAudit,
            "Dontauditxperm Rules",
        ),
        "neverallow" => empty("Neverallow Rules"),
        "neverallowxperm" => empty("Neverallowxperm Rules"),
        _ => return None,
    })
}

fn empty(title: &'static str) -> Section {
    Section {
        title,
        noun: title,
        has_modified: true,
        ..Section::default()
    }
}

/// A set of ioctl numbers: per driver (high byte) present, its 256 function bits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct IoctlSet(Vec<(u8, [u64; 4])>);

impl IoctlSet {
    /// The numbers of one table entry: one driver's functions, or whole drivers.
    /// Kinds other than ioctl are left out: setools 4.4.1 cannot read them.
    fn of_entry(kind: XpermsKind, driver: u8, perms: &[u32; 8]) -> IoctlSet {
        let mut words = [0u64; 4];
        for (i, w) in words.iter_mut().enumerate() {
            *w = u64::from(perms[2 * i]) | (u64::from(perms[2 * i + 1]) << 32);
        }
        match kind {
            XpermsKind::IoctlFunction if words != [0; 4] => IoctlSet(vec![(driver, words)]),
            XpermsKind::IoctlDriver => IoctlSet(
                (0..=255u8)
                    .filter(|&d| words[usize::from(d / 64)] & (1 << (d % 64)) != 0)
                    .map(|d| (d, [u64::MAX; 4]))
                    .collect(),
            ),
            _ => IoctlSet::default(),
        }
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Combines two sets driver by driver with `op` on the function bits.
    fn combine(&self, other: &IoctlSet, op: impl Fn(u64, u64) -> u64) -> IoctlSet {
        let (a, b) = (&self.0, &other.0);
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::with_capacity(a.len().max(b.len()));
        let zero = [0u64; 4];
        while i < a.len() || j < b.len() {
            let (d, x, y) = match (a.get(i), b.get(j)) {
                (Some(p), Some(q)) if p.0 == q.0 => {
                    i += 1;
                    j += 1;
                    (p.0, &p.1, &q.1)
                }
                (Some(p), Some(q)) if p.0 < q.0 => {
                    i += 1;
                    (p.0, &p.1, &zero)
                }
                (Some(p), None) => {
                    i += 1;
                    (p.0, &p.1, &zero)
                }
                (_, Some(q)) => {
                    j += 1;
                    (q.0, &zero, &q.1)
                }
                (None, None) => break,
            };
            let w = [
                op(x[0], y[0]),
                op(x[1], y[1]),
                op(x[2], y[2]),
                op(x[3], y[3]),
            ];
            if w != zero {
                out.push((d, w));
            }
        }
        IoctlSet(out)
    }

    /// Runs of consecutive numbers, ascending, as (first, last).
    fn runs(&self) -> Vec<(u16, u16)> {
        let mut runs: Vec<(u16, u16)> = Vec::new();
        let mut add = |lo: u16, hi: u16| match runs.last_mut() {
            Some(last) if u32::from(last.1) + 1 == u32::from(lo) => last.1 = hi,
            _ => runs.push((lo, hi)),
        };
        for &(driver, words) in &self.0 {
            let base = u16::from(driver) << 8;
            for (wi, &w) in words.iter().enumerate() {
                let mut w = w;
                let mut bit = 0u32;
                while w != 0 {
                    let skip = w.trailing_zeros();
                    w >>= skip;
                    bit += skip;
                    let len = w.trailing_ones();
                    let lo = base + (wi as u16) * 64 + bit as u16;
                    add(lo, lo + (len - 1) as u16);
                    bit += len;
                    w = if len == 64 { 0 } else { w >> len };
                }
            }
        }
        runs
    }

    /// The runs as setools' `IoctlSet` formats them (`{:#06x}`, `lo-hi`).
    fn run_words(&self) -> Vec<String> {
        self.runs()
            .into_iter()
            .map(|(lo, hi)| {
                if lo == hi {
                    format!("{lo:#06x}")
                } else {
                    format!("{lo:#06x}-{hi:#06x}")
                }
            })
            .collect()
    }
}

/// One side's numbers for an expanded key: the first rule's own, and the union of all.
fn key_sets(side: &TeSide<'_, '_>, rules: &[super::expand::Expanded<'_>]) -> (IoctlSet, IoctlSet) {
    let p = side.index.policy();
    let set = |stored: Stored| -> IoctlSet {
        let Some(e) = side.entry(stored) else {
            return IoctlSet::default();
        };
        let table = match stored {
            Stored::Cond(_) => &p.cond_avtab,
            _ => &p.avtab,
        };
        table
            .xperms_of(e.datum())
            .map(|x| IoctlSet::of_entry(x.kind, x.driver, &x.perms))
            .unwrap_or_default()
    };
    let first = rules.first().map(|r| set(r.stored)).unwrap_or_default();
    let mut all = first.clone();
    for r in rules.iter().skip(1) {
        all = all.combine(&set(r.stored), |a, b| a | b);
    }
    (first, all)
}

fn xperm_section(
    left: &Index<'_>,
    right: &Index<'_>,
    kind: AvtabKind,
    title: &'static str,
) -> Section {
    let (l, r) = (TeSide::new(left, kind), TeSide::new(right, kind));
    let kw = kind.name();
    let mut s = empty(title);
    // setools' AVRuleXperm.statement(): braces only around more than one run.
    let statement = |src: &str, tgt: &str, class: &str, perms: &IoctlSet| {
        let words = perms.run_words();
        if words.len() > 1 {
            format!("{kw} {src} {tgt}:{class} ioctl {{ {} }};", words.join(" "))
        } else {
            format!("{kw} {src} {tgt}:{class} ioctl {};", words.join(" "))
        }
    };
    let mut modified: Vec<(String, String)> = Vec::new();
    each_key(&l, &r, |src, a, b| match (a, b) {
        (Some(a), None) => {
            let (first, _) = key_sets(&l, a);
            s.removed
                .push(statement(src, a[0].target, a[0].class, &first));
        }
        (None, Some(b)) => {
            let (first, _) = key_sets(&r, b);
            s.added
                .push(statement(src, b[0].target, b[0].class, &first));
        }
        (Some(a), Some(b)) => {
            let (lfirst, lall) = key_sets(&l, a);
            let (_, rall) = key_sets(&r, b);
            if lall == rall {
                return;
            }
            let kept = lall.combine(&rall, |x, y| x & y);
            let added = rall.combine(&lall, |x, y| x & !y);
            let removed = lall.combine(&rall, |x, y| x & !y);
            // sediff's modified line: kept runs, then added and removed runs marked,
            // a run in brackets (`+[0x8900-0x8905]`).
            let mut words = kept.run_words();
            for (sign, set) in [('+', &added), ('-', &removed)] {
                if set.is_empty() {
                    continue;
                }
                words.extend(set.run_words().into_iter().map(|w| {
                    if w.contains('-') {
                        format!("{sign}[{w}]")
                    } else {
                        format!("{sign}{w}")
                    }
                }));
            }
            let line = format!(
                "{kw} {src} {}:{} ioctl {{ {} }};",
                a[0].target,
                a[0].class,
                words.join(" ")
            );
            modified.push((statement(src, a[0].target, a[0].class, &lfirst), line));
        }
        (None, None) => {}
    });
    finish(s, modified)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function(driver: u8, bits: &[u8]) -> IoctlSet {
        let mut perms = [0u32; 8];
        for &b in bits {
            perms[usize::from(b / 32)] |= 1 << (b % 32);
        }
        IoctlSet::of_entry(XpermsKind::IoctlFunction, driver, &perms)
    }

    #[test]
    fn runs_join_across_driver_boundaries() {
        let s =
            function(0x89, &[0xf0, 0xf1, 0xff]).combine(&function(0x8a, &[0, 1, 5]), |a, b| a | b);
        assert_eq!(s.run_words(), ["0x89f0-0x89f1", "0x89ff-0x8a01", "0x8a05"]);
    }

    #[test]
    fn whole_drivers_are_full_runs() {
        let mut perms = [0u32; 8];
        perms[0] = 0b111; // drivers 0x00..0x02
        perms[2] = 1 << 4; // driver 0x44
        let s = IoctlSet::of_entry(XpermsKind::IoctlDriver, 0, &perms);
        assert_eq!(s.run_words(), ["0x0000-0x02ff", "0x4400-0x44ff"]);
    }

    #[test]
    fn a_run_of_64_bits_and_the_top_bit_are_found() {
        let bits: Vec<u8> = (64..128).chain([255]).collect();
        assert_eq!(
            function(0xff, &bits).run_words(),
            ["0xff40-0xff7f", "0xffff"]
        );
    }

    #[test]
    fn set_operations_drop_empty_drivers() {
        let a = function(0x54, &[1, 2]);
        let b = function(0x54, &[1, 2]).combine(&function(0x89, &[1]), |x, y| x | y);
        assert!(a.combine(&b, |x, y| x & !y).is_empty());
        assert_eq!(b.combine(&a, |x, y| x & !y), function(0x89, &[1]));
    }
}

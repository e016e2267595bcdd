//! The order sesearch prints TE rules in (ascending statement text), found without
//! rendering every statement first.
//!
//! A statement begins `KIND SOURCE TARGET:CLASS `. When no type name holds a space or a
//! colon and no class name a space, comparing two statements is comparing the kinds as
//! `name + " "`, then the sources as `name + " "`, the targets as `name + ":"` and the
//! classes as `name + " "`: where two such fields differ, they differ before either one's
//! separator ends, so the rest of the line cannot matter. Each field is therefore ranked
//! once per query and a rule's place is one integer. Rules sharing a key (the same rule in
//! several conditional blocks, say) are then ordered by their full text; a policy whose
//! names break the condition gets one key for every rule, which is the plain text sort.

use super::statement::TeWriter;
use super::{MatchBody, TeMatch};
use crate::chunked::Chunked;
use crate::index::Index;
use arbiter_policy::avtab::AvtabKind;
use arbiter_policy::{ClassId, TypeId};
use std::cmp::{Ordering, Reverse};

/// Every rule kind, for ranking their keywords.
const KINDS: [AvtabKind; 9] = [
    AvtabKind::Allowed,
    AvtabKind::AuditAllow,
    AvtabKind::AuditDeny,
    AvtabKind::Transition,
    AvtabKind::Member,
    AvtabKind::Change,
    AvtabKind::XpermsAllowed,
    AvtabKind::XpermsAuditAllow,
    AvtabKind::XpermsDontAudit,
];

/// Ranks of each statement field, for one policy.
struct Ranks {
    kind: [u64; 9],
    source: Vec<u64>,
    target: Vec<u64>,
    class: Vec<u64>,
}

impl Ranks {
    /// Ranks of the names the matches use (a short result ranks a few names, a full dump
    /// all of them); `None` when one of them holds its field's separator (see the module
    /// comment).
    fn new(index: &Index<'_>, matches: &Chunked<TeMatch<'_>>) -> Option<Ranks> {
        let type_name = |i: usize| TypeId::from_index(i).map_or("", |t| index.type_name(t));
        let class_name = |i: usize| ClassId::from_index(i).map_or("", |c| index.class_name(c));
        let types = index.type_slots();
        let classes = index.policy().classes.len();
        let sources = used(types, matches.iter().map(|m| m.source.index()));
        let targets = used(types, matches.iter().map(|m| m.target.index()));
        let used_classes = used(classes, matches.iter().map(|m| m.class.index()));
        if sources
            .iter()
            .chain(&targets)
            .any(|&i| type_name(i).contains([' ', ':']))
            || used_classes.iter().any(|&i| class_name(i).contains(' '))
        {
            return None;
        }
        let all_kinds: Vec<usize> = (0..KINDS.len()).collect();
        let mut kind = [0; 9];
        kind.copy_from_slice(&rank(KINDS.len(), &all_kinds, |i| KINDS[i].name(), b' '));
        Some(Ranks {
            kind,
            source: rank(types, &sources, type_name, b' '),
            target: rank(types, &targets, type_name, b':'),
            class: rank(classes, &used_classes, class_name, b' '),
        })
    }

    /// The rule's place among statements with different keys: kind (4 bits), source,
    /// target and class ranks (16 bits each: type and class values are 16-bit).
    fn key(&self, m: &TeMatch<'_>) -> u64 {
        let kind = KINDS.iter().position(|&k| k == m.kind).unwrap_or(0);
        let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
        (self.kind[kind] << 48)
            | (at(&self.source, m.source.index()) << 32)
            | (at(&self.target, m.target.index()) << 16)
            | at(&self.class, m.class.index())
    }
}

/// The distinct slots below `len` among `slots`, ascending.
fn used(len: usize, slots: impl Iterator<Item = usize>) -> Vec<usize> {
    let mut seen = vec![false; len];
    for i in slots {
        if let Some(s) = seen.get_mut(i) {
            *s = true;
        }
    }
    (0..len).filter(|&i| seen[i]).collect()
}

/// For each of `len` slots, the position of its name among the names of `slots`, each name
/// followed by `sep`, sorted; equal names share a rank (slots not listed rank 0).
fn rank<'n>(len: usize, slots: &[usize], name: impl Fn(usize) -> &'n str, sep: u8) -> Vec<u64> {
    let mut order: Vec<(&str, usize)> = slots.iter().map(|&i| (name(i), i)).collect();
    order.sort_by(|a, b| cmp_terminated(a.0, b.0, sep));
    let mut ranks = vec![0; len];
    let mut r = 0;
    for (k, &(n, i)) in order.iter().enumerate() {
        if k > 0 && order[k - 1].0 != n {
            r += 1;
        }
        ranks[i] = r;
    }
    ranks
}

/// `(a + sep).cmp(b + sep)` without building either string.
fn cmp_terminated(a: &str, b: &str, sep: u8) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len().min(b.len());
    a[..n].cmp(&b[..n]).then_with(|| {
        let next = |s: &[u8]| s.get(n).copied().unwrap_or(sep);
        next(a).cmp(&next(b)).then(a.len().cmp(&b.len()))
    })
}

/// The positions of the matches in ascending statement order; equal statements keep their
/// scan order, as Python's stable `sorted` keeps them.
pub(super) fn sort<'p>(
    index: &Index<'p>,
    matches: &Chunked<TeMatch<'p>>,
    writer: &mut TeWriter<'_, 'p>,
) -> Vec<usize> {
    let ranks = Ranks::new(index, matches);
    let keys: Vec<u64> = matches
        .iter()
        .map(|m| ranks.as_ref().map_or(0, |r| r.key(m)))
        .collect();
    let mut order = stable_order(&keys);
    // Groups sharing a key, ordered by their text, written into one reused buffer.
    let mut text = String::new();
    let mut spans: Vec<(usize, usize, usize)> = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let k = keys[order[start]];
        let len = order[start..]
            .iter()
            .position(|&i| keys[i] != k)
            .unwrap_or(order.len() - start);
        let group = &mut order[start..start + len];
        if len > 1 {
            text.clear();
            spans.clear();
            for &i in group.iter() {
                let from = text.len();
                writer.write(&mut text, &matches[i]);
                spans.push((from, text.len(), i));
            }
            spans.sort_by(|a, b| text[a.0..a.1].cmp(&text[b.0..b.1]));
            for (slot, span) in group.iter_mut().zip(&spans) {
                *slot = span.2;
            }
        }
        start += len;
    }
    order
}

/// The positions of `keys` in ascending key order, equal keys in position order: a
/// least-significant-digit radix sort, 16 bits a pass (a pass whose digit is the same
/// everywhere is skipped), for the large results it is made for; the library's stable sort
/// below a few thousand keys.
fn stable_order(keys: &[u64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    if keys.len() < 4096 {
        order.sort_by_key(|&i| keys[i]);
        return order;
    }
    let digit = |k: u64, shift: u32| ((k >> shift) & 0xffff) as usize;
    let mut out = vec![0; keys.len()];
    let mut counts = vec![0usize; 1 << 16];
    for shift in [0, 16, 32, 48] {
        counts.fill(0);
        for &k in keys {
            counts[digit(k, shift)] += 1;
        }
        if counts.contains(&keys.len()) {
            continue;
        }
        let mut next = 0;
        for c in counts.iter_mut() {
            let n = *c;
            *c = next;
            next += n;
        }
        for &i in &order {
            let d = digit(keys[i], shift);
            out[counts[d]] = i;
            counts[d] += 1;
        }
        std::mem::swap(&mut order, &mut out);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_sorts_as_if_followed_by_its_separator() {
        // "foo:" > "foo2:" because ':' follows '2'; "foo " < "foo2 ".
        assert_eq!(cmp_terminated("foo", "foo2", b':'), Ordering::Greater);
        assert_eq!(cmp_terminated("foo", "foo2", b' '), Ordering::Less);
        assert_eq!(cmp_terminated("foo", "foo", b' '), Ordering::Equal);
        let ranks = |names: &[&'static str], sep| {
            let all: Vec<usize> = (0..names.len()).collect();
            rank(names.len(), &all, |i| names[i], sep)
        };
        assert_eq!(ranks(&["b", "a_x", "a", "a"], b':'), vec![2, 1, 0, 0]);
        assert_eq!(ranks(&["b", "a_x", "a", "a"], b' '), vec![2, 1, 0, 0]);
        assert_eq!(ranks(&["a", "a9", "a-"], b':'), vec![2, 1, 0]);
    }

    #[test]
    fn the_radix_sort_is_stable_and_agrees_with_the_library_sort() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let keys: Vec<u64> = (0..10_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Few distinct keys, so that equal keys must keep their order.
                (x % 97) << 40 | (x % 5) << 16
            })
            .collect();
        let mut want: Vec<usize> = (0..keys.len()).collect();
        want.sort_by_key(|&i| keys[i]);
        assert_eq!(stable_order(&keys), want);
    }
}

#[cfg(test)]
mod policy_tests {
    use crate::search::{execute, SearchArgs};
    use crate::Index;
    use arbiter_policy::Policy;

    fn dump(policy: &Policy) -> Vec<String> {
        let args = SearchArgs::parse(&["-A".into(), "-T".into(), "--dontaudit".into()])
            .expect("arguments");
        let (text, code) = execute(&Index::new(policy), &args);
        assert_eq!(code, 0, "{text}");
        text.lines().map(str::to_string).collect()
    }

    fn assert_text_order(lines: &[String]) {
        assert!(lines.len() > 20, "the policy has rules to order");
        let mut sorted = lines.to_vec();
        sorted.sort();
        assert_eq!(lines, sorted);
    }

    #[test]
    fn statements_come_out_in_text_order() {
        let p = Policy::from_bytes(include_bytes!("../../../../policies/bin/default.33"))
            .expect("default policy");
        assert_text_order(&dump(&p));
    }

    #[test]
    fn names_holding_a_separator_still_sort_as_text() {
        let mut p = Policy::from_bytes(include_bytes!("../../../../policies/bin/default.33"))
            .expect("default policy");
        // Names a compiler would refuse, but a binary policy can hold: a space or a colon
        // inside a name defeats per-field ranking, so the whole text decides.
        // Each odd type is named for the one before it plus " a" or ":a", so that one
        // name followed by its separator is a prefix of another.
        for i in (1..p.types.len()).step_by(2) {
            let sep = if i % 4 == 1 { " a" } else { ":a" };
            p.types[i].name = format!("{}{sep}", p.types[i - 1].name).into();
        }
        assert_text_order(&dump(&p));
    }
}

/// The order setools' `terules()` yields `matches` in (indices into `matches`, which are in
/// scan order: unconditional table in file order, filename transitions, conditionals).
///
/// libsepol reads the unconditional table into `avtab_alloc(nel)` buckets, each chain sorted
/// by (source, target, class) with an extended-permission entry put before the earlier
/// entries of its key, so those come in reverse file order. Filename transitions live in a
/// hash table of 2^10 buckets keyed by (target, class, name), each chain sorted by that key;
/// a key's outcomes and their source types keep file order. Conditional lists keep file
/// order.
///
/// The order is sorted in place with each match's chain position beside it (12 bytes a
/// match, in pieces under 64 kB: see [`Chunked`]); a cached key per match (56 bytes) and a
/// map of each key's first match made 0.3-0.5 MB transients whose freeing raised glibc's
/// mmap threshold.
pub(super) fn policy_order<'p>(index: &Index<'p>, matches: &Chunked<TeMatch<'p>>) -> Vec<u32> {
    let mask = crate::diff::avtab_mask(index.policy().avtab.entries.len());
    let chain: Chunked<u64> = matches
        .iter()
        .map(|m| match (m.cond, &m.body) {
            (Some(_), _) => 0,
            (None, MatchBody::Filename(_, ft)) => {
                (filename_bucket(ft) << 32)
                    | (u64::from(ft.target.value()) << 16)
                    | u64::from(ft.class.value())
            }
            (None, _) => {
                let key = arbiter_policy::avtab::AvtabKey {
                    source: m.source,
                    target: m.target,
                    class: m.class,
                    kind: m.kind,
                };
                (u64::from(crate::diff::avtab_bucket(&key, mask)) << 48)
                    | (u64::from(m.source.value()) << 32)
                    | (u64::from(m.target.value()) << 16)
                    | u64::from(m.class.value())
            }
        })
        .collect();
    // The three parts, in the order they are yielded; a part's matches by their chain
    // position, then (filename transitions) their name, then scan order.
    let part = |m: &TeMatch<'_>| match (m.cond, &m.body) {
        (Some(_), _) => 2u8,
        (None, MatchBody::Filename(..)) => 1,
        (None, _) => 0,
    };
    let name = |m: &TeMatch<'p>| -> &'p [u8] {
        match m.body {
            MatchBody::Filename(_, ft) => ft.name.as_bytes(),
            _ => &b""[..],
        }
    };
    let mut order: Vec<u32> = (0..matches.len() as u32).collect();
    // `te_scan` yields the parts one after the other, so each is sorted on its own: the
    // table's matches by chain position alone, the filename transitions by chain position
    // and name; the conditional ones keep scan order.
    let ends = [0, 1].map(|p| {
        matches
            .iter()
            .position(|m| part(m) > p)
            .unwrap_or(order.len())
    });
    debug_assert!(matches
        .iter()
        .enumerate()
        .all(|(i, m)| usize::from(part(m)) == ends.iter().filter(|&&e| e <= i).count()));
    order[..ends[0]].sort_unstable_by_key(|&i| (chain[i as usize], i));
    order[ends[0]..ends[1]].sort_unstable_by(|&a, &b| {
        chain[a as usize]
            .cmp(&chain[b as usize])
            .then_with(|| name(&matches[a as usize]).cmp(name(&matches[b as usize])))
            .then(a.cmp(&b))
    });
    // Within one (source, target, class) chain position, libsepol appends an entry of a new
    // kind and puts an entry of a kind already there (only extended permissions repeat)
    // before the others of that kind: kinds by first appearance, each kind's entries in
    // reverse file order. A run is the few rules of one key, in scan order here.
    let mut keys = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let first = &matches[order[start] as usize];
        let len = order[start..]
            .iter()
            .position(|&i| chain[i as usize] != chain[order[start] as usize])
            .unwrap_or(order.len() - start);
        if len > 1 && part(first) == 0 {
            reorder_chain(
                &mut order[start..start + len],
                |i| matches[i as usize].kind.bits(),
                &mut keys,
            );
        }
        start += len;
    }
    order
}

/// Reorders one chain position's rules (`run`, in scan order) as libsepol chains them:
/// kinds by first appearance, each kind's rules in reverse scan order. `keys` is scratch
/// space, reused from run to run.
fn reorder_chain(run: &mut [u32], kind: impl Fn(u32) -> u16, keys: &mut Vec<(u32, Reverse<u32>)>) {
    // `run` ascends, so the first rule of a kind found is its first appearance.
    keys.clear();
    keys.extend(run.iter().map(|&i| {
        let first = run.iter().copied().find(|&j| kind(j) == kind(i));
        (first.unwrap_or(i), Reverse(i))
    }));
    // A chain position holds a rule of each kind and perhaps a few ioctl sets: an
    // insertion sort (little code) is enough.
    for k in 1..keys.len() {
        let mut j = k;
        while j > 0 && keys[j - 1] > keys[j] {
            keys.swap(j - 1, j);
            j -= 1;
        }
    }
    for (slot, &(_, Reverse(i))) in run.iter_mut().zip(keys.iter()) {
        *slot = i;
    }
}

/// A filename transition's bucket: libsepol's `filenametr_hash` in its 2^10-slot table
/// (the order setools 4.4.1 yields them in); within a bucket, (target, class, name) as
/// `filenametr_cmp` orders them.
fn filename_bucket(ft: &arbiter_policy::transitions::FilenameTrans) -> u64 {
    let mut hash = u64::from(ft.target.value()) ^ u64::from(ft.class.value());
    for &c in ft.name.as_bytes() {
        // partial_name_hash: (prev + (c << 4) + (c >> 4)) * 11 on an unsigned long.
        let c = u64::from(c);
        hash = hash
            .wrapping_add(c << 4)
            .wrapping_add(c >> 4)
            .wrapping_mul(11);
    }
    hash & ((1 << 10) - 1)
}

#[cfg(test)]
mod policy_order_tests {
    use super::*;
    use crate::search::{te_scan, SearchArgs};
    use crate::Index;
    use arbiter_policy::Policy;

    /// The order as it was computed before it was sorted in place: a cached 56-byte key
    /// per match and a map of each (source, target, class, kind)'s first match.
    fn policy_order_by_cached_keys(
        index: &Index<'_>,
        matches: &Chunked<TeMatch<'_>>,
    ) -> Vec<usize> {
        let mask = crate::diff::avtab_mask(index.policy().avtab.entries.len());
        // Within one (source, target, class) chain position, libsepol appends an entry of a new
        // kind and puts an entry of a kind already there (only extended permissions repeat)
        // before the others of that kind: kinds by first appearance, each kind's entries in
        // reverse file order.
        let mut first_of_kind: std::collections::HashMap<(u16, u16, u16, u16), usize> =
            std::collections::HashMap::new();
        let mut order: Vec<usize> = (0..matches.len()).collect();
        order.sort_by_cached_key(|&i| {
            let m = &matches[i];
            match (m.cond, &m.body) {
                (Some(_), _) => (2u8, 0u64, 0u64, &b""[..], i),
                (None, MatchBody::Filename(_, ft)) => {
                    let (bucket, name) = (filename_bucket(ft), ft.name.as_bytes());
                    let key = (bucket << 32)
                        | (u64::from(ft.target.value()) << 16)
                        | u64::from(ft.class.value());
                    (1, key, 0, name, i)
                }
                (None, _) => {
                    let first = *first_of_kind
                        .entry((
                            m.source.value(),
                            m.target.value(),
                            m.class.value(),
                            m.kind.bits(),
                        ))
                        .or_insert(i);
                    let key = arbiter_policy::avtab::AvtabKey {
                        source: m.source,
                        target: m.target,
                        class: m.class,
                        kind: m.kind,
                    };
                    let chain = (u64::from(crate::diff::avtab_bucket(&key, mask)) << 48)
                        | (u64::from(m.source.value()) << 32)
                        | (u64::from(m.target.value()) << 16)
                        | u64::from(m.class.value());
                    let within = ((first as u64) << 32) | u64::from(u32::MAX - i as u32);
                    (0, chain, within, &b""[..], 0)
                }
            }
        });
        order
    }

    #[test]
    fn the_in_place_order_is_the_cached_key_order() {
        let policies: [&[u8]; 4] = [
            include_bytes!("../../../../policies/bin/default.33"),
            include_bytes!("../../../../policies/bin/features.33"),
            include_bytes!("../../../../policies/bin/features.35"),
            include_bytes!("../../../../policies/bin/bounds.33"),
        ];
        let queries: [&[&str]; 5] = [
            &[
                "-A",
                "-T",
                "--auditallow",
                "--dontaudit",
                "--allowxperm",
                "--auditallowxperm",
                "--dontauditxperm",
            ],
            &["-T"],
            &["-A", "-c", "file"],
            &["--allowxperm", "--dontauditxperm"],
            &["-A", "-T", "-b", ".", "-rb"],
        ];
        // The installed policies where there are (the Debian policy's 9,245 type transitions
        // and 100,000 rules fill many chains and every filename bucket).
        let installed: Vec<Vec<u8>> = ["default", "mls"]
            .iter()
            .filter_map(|s| std::fs::read(format!("/etc/selinux/{s}/policy/policy.33")).ok())
            .collect();
        let mut checked = 0;
        for bytes in policies.into_iter().chain(installed.iter().map(|b| &b[..])) {
            let policy = Policy::from_bytes(bytes).expect("policy");
            let index = Index::new(&policy);
            for q in queries {
                let args = SearchArgs::parse(&q.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                    .expect("arguments");
                let Ok(matches) = te_scan(&index, &args) else {
                    continue;
                };
                let want = policy_order_by_cached_keys(&index, &matches);
                let got: Vec<usize> = policy_order(&index, &matches)
                    .into_iter()
                    .map(|i| i as usize)
                    .collect();
                assert_eq!(got, want, "{q:?}");
                checked += matches.len();
            }
        }
        let least = if installed.is_empty() { 300 } else { 100_000 };
        assert!(checked > least, "{checked} rules ordered");
    }

    #[test]
    fn a_chain_position_lists_kinds_by_first_appearance_each_in_reverse() {
        // Scan positions 3..9 of one key: kinds a b a c b a.
        let kinds = [0, 0, 0, 1, 2, 1, 4, 2, 1];
        let mut run = [3u32, 4, 5, 6, 7, 8];
        reorder_chain(&mut run, |i| kinds[i as usize], &mut Vec::new());
        assert_eq!(run, [8, 5, 3, 7, 4, 6]);
        // 40 entries of two kinds alternating.
        let kinds: Vec<u16> = (0..40).map(|i| i % 2).collect();
        let mut run: Vec<u32> = (0..40).collect();
        reorder_chain(&mut run, |i| kinds[i as usize], &mut Vec::new());
        let want: Vec<u32> = (0..40)
            .rev()
            .filter(|i| i % 2 == 0)
            .chain((0..40).rev().filter(|i| i % 2 == 1))
            .collect();
        assert_eq!(run, want);
    }
}

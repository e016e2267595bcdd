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
use super::TeMatch;
use crate::index::Index;
use arbiter_policy::avtab::AvtabKind;
use std::cmp::Ordering;

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
    /// `None` when some name holds its field's separator (see the module comment).
    fn new(index: &Index<'_>) -> Option<Ranks> {
        let types: Vec<&str> = (0..index.type_slots())
            .map(|i| arbiter_policy::TypeId::from_index(i).map_or("", |t| index.type_name(t)))
            .collect();
        let classes: Vec<&str> = (0..index.policy().classes.len())
            .map(|i| arbiter_policy::ClassId::from_index(i).map_or("", |c| index.class_name(c)))
            .collect();
        if types.iter().any(|n| n.contains([' ', ':'])) || classes.iter().any(|n| n.contains(' ')) {
            return None;
        }
        let kinds: Vec<&str> = KINDS.iter().map(|k| k.name()).collect();
        let mut kind = [0; 9];
        kind.copy_from_slice(&rank(&kinds, b' '));
        Some(Ranks {
            kind,
            source: rank(&types, b' '),
            target: rank(&types, b':'),
            class: rank(&classes, b' '),
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

/// Each name's position when the names, each followed by `sep`, are sorted; equal names
/// share a rank.
fn rank(names: &[&str], sep: u8) -> Vec<u64> {
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(|&a, &b| cmp_terminated(names[a], names[b], sep));
    let mut ranks = vec![0; names.len()];
    let mut r = 0;
    for (i, &n) in order.iter().enumerate() {
        if i > 0 && names[order[i - 1]] != names[n] {
            r += 1;
        }
        ranks[n] = r;
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

/// Sorts matches into ascending statement order; equal statements keep their scan order,
/// as Python's stable `sorted` keeps them.
pub(super) fn sort<'p>(
    index: &Index<'p>,
    matches: &mut [TeMatch<'p>],
    writer: &mut TeWriter<'_, 'p>,
) {
    let ranks = Ranks::new(index);
    let key = |m: &TeMatch<'_>| ranks.as_ref().map_or(0, |r| r.key(m));
    matches.sort_by_cached_key(key);
    // Groups sharing a key, ordered by their text, written once into one reused buffer.
    let mut text = String::new();
    let mut spans: Vec<(usize, usize, usize)> = Vec::new();
    let mut group: Vec<TeMatch<'p>> = Vec::new();
    let mut start = 0;
    while start < matches.len() {
        let k = key(&matches[start]);
        let len = matches[start..]
            .iter()
            .position(|m| key(m) != k)
            .unwrap_or(matches.len() - start);
        let end = start + len;
        if len > 1 {
            text.clear();
            spans.clear();
            for (i, m) in matches[start..end].iter().enumerate() {
                let from = text.len();
                writer.write(&mut text, m);
                spans.push((from, text.len(), i));
            }
            spans.sort_by(|a, b| text[a.0..a.1].cmp(&text[b.0..b.1]));
            group.clear();
            group.extend(spans.iter().map(|&(_, _, i)| matches[start + i]));
            matches[start..end].copy_from_slice(&group);
        }
        start = end;
    }
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
        assert_eq!(rank(&["b", "a_x", "a", "a"], b':'), vec![2, 1, 0, 0]);
        assert_eq!(rank(&["b", "a_x", "a", "a"], b' '), vec![2, 1, 0, 0]);
        assert_eq!(rank(&["a", "a9", "a-"], b':'), vec![2, 1, 0]);
    }
}

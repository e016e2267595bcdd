//! `TERuleQuery.results()` on the query layer: the Python criteria become the
//! [`SearchArgs`] sesearch would build from the same query (sesearch is a front end over
//! `TERuleQuery`, so the matching semantics are the same), and the hits come back in
//! setools' `terules()` order.

use arbiter_policy::avtab::AvtabKind;
use arbiter_policy::Policy as Model;
use arbiter_query::search::{te_policy_order, te_statement, SearchArgs, TeBody, TeHit};
use arbiter_query::terules::{self, TeRuleRef};
use arbiter_query::{Chunked, Index};
use pyo3::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// A `TERuleQuery`'s criteria, already validated by the Python half (names looked up,
/// lists joined with commas as sesearch's options take them).
pub struct Criteria {
    pub ruletypes: Vec<String>,
    pub source: Option<String>,
    pub source_regex: bool,
    pub source_indirect: bool,
    pub target: Option<String>,
    pub target_regex: bool,
    pub target_indirect: bool,
    pub tclass: Option<String>,
    pub tclass_regex: bool,
    pub perms: Option<String>,
    pub perms_equal: bool,
    pub perms_subset: bool,
    pub xperms: Option<String>,
    pub xperms_equal: bool,
    pub default: Option<String>,
    pub default_regex: bool,
    pub boolean: Option<String>,
    pub boolean_regex: bool,
    pub boolean_equal: bool,
}

/// What follows `SOURCE TARGET:CLASS` in one matched rule, owned. Permissions are the
/// class's bits, named through [`TeResults::class_perms`]: a name per permission per rule
/// (a `Box<str>` each) made a query's results about 400 bytes a rule, 2 MB for the 5,000
/// `allow … file` rules with `write` or `append`.
enum Body {
    Perms(u32),
    Xperms(Vec<u16>),
    Default(u32),
    Filename(u32, Box<str>),
}

/// A class's permissions as (name, bit), sorted by name.
type SortedPerms = Box<[(Box<str>, u32)]>;

/// One matched rule, owned (the query layer's hit borrows the policy).
struct Hit {
    kind: AvtabKind,
    source: arbiter_policy::TypeId,
    target: arbiter_policy::TypeId,
    class: arbiter_policy::ClassId,
    body: Body,
    cond: Option<(usize, bool)>,
}

/// The rules one `TERuleQuery.results()` matched, in setools' order. Python reads each
/// rule's fields by position; statements are rendered for all rules at once, the first
/// time one is asked for (one index build instead of one per rule). Both are kept in
/// pieces under 64 kB ([`Chunked`]): a `Vec` of a large result's rules (0.5 MB for the
/// 9,000 type transitions) freed with the results raised glibc's mmap threshold.
#[pyclass(frozen, module = "arbiter._native")]
pub struct TeResults {
    model: Arc<Model>,
    hits: Chunked<Hit>,
    /// The permissions (name, bit) sorted by name of each class the hits name, by class
    /// index.
    class_perms: HashMap<usize, SortedPerms>,
    statements: OnceLock<Chunked<Option<String>>>,
}

/// `(ruletype, source value, target value, class value, body kind, default type value or
/// 0, conditional node or -1, branch)`; body kind is 0 permissions, 1 ioctls, 2 default
/// type, 3 file name.
pub type Row = (&'static str, u32, u32, u32, u8, u32, i64, bool);

#[pymethods]
impl TeResults {
    /// The fixed fields of rules `start..stop` (clamped to the rules there are), in order:
    /// read a slice at a time, so that a large result set's rows are not all made at once
    /// (5,090 rows were 1.2 MB of tuples).
    #[pyo3(signature = (start=0, stop=usize::MAX))]
    fn rows(&self, start: usize, stop: usize) -> Vec<Row> {
        let stop = stop.min(self.hits.len());
        (start.min(stop)..stop)
            .filter_map(|i| self.hits.get(i))
            .map(|h| {
                let (body, default) = match &h.body {
                    Body::Perms(_) => (0, 0),
                    Body::Xperms(_) => (1, 0),
                    Body::Default(t) => (2, *t),
                    Body::Filename(t, _) => (3, *t),
                };
                let (node, branch) = h.cond.map_or((-1, false), |(n, b)| (n as i64, b));
                (
                    h.kind.name(),
                    h.source.index() as u32 + 1,
                    h.target.index() as u32 + 1,
                    h.class.index() as u32 + 1,
                    body,
                    default,
                    node,
                    branch,
                )
            })
            .collect()
    }

    /// Rule `i`'s permission names, sorted (empty for other rules).
    fn perms(&self, i: usize) -> Vec<&str> {
        match self.hits.get(i) {
            Some(
                h @ Hit {
                    body: Body::Perms(bits),
                    ..
                },
            ) => self.perm_names(h.class, *bits),
            _ => Vec::new(),
        }
    }

    /// Rule `i`'s ioctl numbers, ascending (empty for other rules).
    fn xperms(&self, i: usize) -> Vec<u16> {
        match self.hits.get(i).map(|h| &h.body) {
            Some(Body::Xperms(v)) => v.clone(),
            _ => Vec::new(),
        }
    }

    /// Rule `i`'s object name (None unless a filename type_transition).
    fn filename(&self, i: usize) -> Option<&str> {
        match self.hits.get(i).map(|h| &h.body) {
            Some(Body::Filename(_, n)) => Some(n),
            _ => None,
        }
    }

    /// Rule `i`'s statement as setools' `statement()` writes it (None where setools'
    /// fails: an empty permission set).
    fn statement(&self, i: usize) -> Option<String> {
        let all = self.statements.get_or_init(|| {
            let index = Index::new(&self.model);
            self.hits
                .iter()
                .map(|h| {
                    let body = match &h.body {
                        Body::Perms(bits) => TeBody::Perms(self.perm_names(h.class, *bits)),
                        Body::Xperms(v) => TeBody::Xperms("ioctl", v.clone()),
                        Body::Default(t) => TeBody::Default(type_id(*t)),
                        Body::Filename(t, n) => TeBody::Filename(type_id(*t), n),
                    };
                    let hit = TeHit {
                        kind: h.kind,
                        source: h.source,
                        target: h.target,
                        class: h.class,
                        body,
                        cond: h.cond,
                    };
                    te_statement(&index, &hit).ok()
                })
                .collect()
        });
        all.get(i).cloned().flatten()
    }

    fn __len__(&self) -> usize {
        self.hits.len()
    }
}

fn type_id(value: u32) -> arbiter_policy::TypeId {
    arbiter_policy::TypeId::from_index(value as usize - 1).unwrap_or_else(|| {
        // Values come from the policy's own hits, so every one is a valid slot.
        unreachable!("type value {value} out of range")
    })
}

const ALL_KINDS: [AvtabKind; 9] = [
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

/// Runs the query. Rule types a binary policy cannot hold (`neverallow`,
/// `neverallowxperm`) match nothing; no rule types means all of them.
pub fn query(model: &Arc<Model>, c: &Criteria) -> Result<TeResults, String> {
    let te: Vec<AvtabKind> = if c.ruletypes.is_empty() {
        ALL_KINDS.to_vec()
    } else {
        ALL_KINDS
            .iter()
            .copied()
            .filter(|k| c.ruletypes.iter().any(|r| r == k.name()))
            .collect()
    };
    let mut out = TeResults {
        model: model.clone(),
        hits: Chunked::new(),
        class_perms: HashMap::new(),
        statements: OnceLock::new(),
    };
    if te.is_empty() {
        return Ok(out);
    }
    let args = SearchArgs {
        te,
        source: c.source.clone(),
        source_regex: c.source_regex,
        source_direct: !c.source_indirect,
        target: c.target.clone(),
        target_regex: c.target_regex,
        target_direct: !c.target_indirect,
        tclass: c.tclass.clone(),
        tclass_regex: c.tclass_regex,
        perms: c.perms.clone(),
        perms_equal: c.perms_equal,
        perms_subset: c.perms_subset,
        xperms: c.xperms.clone(),
        xperms_equal: c.xperms_equal,
        default: c.default.clone(),
        default_regex: c.default_regex,
        boolean: c.boolean.clone(),
        boolean_regex: c.boolean_regex,
        boolean_equal: c.boolean_equal,
        ..SearchArgs::default()
    };
    let index = Index::new(model);
    let hits = te_policy_order(&index, &args).map_err(|e| e.0)?;
    out.set_hits(&index, hits);
    Ok(out)
}

/// A hit that no longer borrows the policy; `sorted` are its class's permissions sorted by
/// name, as the hit's names are.
fn owned(h: TeHit<'_>, sorted: &[(&str, u32)]) -> Hit {
    Hit {
        kind: h.kind,
        source: h.source,
        target: h.target,
        class: h.class,
        body: match h.body {
            TeBody::Perms(p) => Body::Perms(perm_bits(&p, sorted)),
            TeBody::Xperms(_, v) => Body::Xperms(v),
            TeBody::Default(t) => Body::Default(t.index() as u32 + 1),
            TeBody::Filename(t, n) => Body::Filename(t.index() as u32 + 1, Box::from(n)),
        },
        cond: h.cond,
    }
}

impl TeResults {
    /// The rule objects for rules an analysis names by reference (an information flow
    /// step's or a domain transition's rules), in the given order, repeats kept: setools
    /// lists a rule twice on an edge it creates twice. A reference outside the policy is
    /// skipped (the engine only hands out references it read from this policy).
    pub fn from_refs(model: &Arc<Model>, index: &Index<'_>, refs: &[TeRuleRef]) -> TeResults {
        let mut out = TeResults {
            model: model.clone(),
            hits: Chunked::new(),
            class_perms: HashMap::new(),
            statements: OnceLock::new(),
        };
        out.set_hits(index, refs.iter().filter_map(|&r| terules::hit(index, r)));
        out
    }

    /// Keeps `hits`, owned, with the sorted permissions of the classes they name: one hit
    /// at a time, so that only one rule's public form (its permission names) is alive at
    /// once.
    fn set_hits<'p>(&mut self, index: &Index<'p>, hits: impl Iterator<Item = TeHit<'p>>) {
        for h in hits {
            let sorted = index.sorted_class_perms(h.class);
            if matches!(h.body, TeBody::Perms(_)) {
                self.class_perms.entry(h.class.index()).or_insert_with(|| {
                    sorted.iter().map(|&(n, bit)| (Box::from(n), bit)).collect()
                });
            }
            self.hits.push(owned(h, sorted));
        }
    }

    /// The names of a class's permission `bits`, sorted.
    fn perm_names(&self, class: arbiter_policy::ClassId, bits: u32) -> Vec<&str> {
        self.class_perms
            .get(&class.index())
            .map_or(&[][..], |v| v)
            .iter()
            .filter(|(_, bit)| bits & (1 << bit) != 0)
            .map(|(n, _)| &**n)
            .collect()
    }
}

/// The bits of permission `names` among a class's `sorted` permissions. The names came
/// from those bits (the query layer names a rule's permissions from its class's), so each
/// is found.
fn perm_bits(names: &[&str], sorted: &[(&str, u32)]) -> u32 {
    names.iter().fold(0, |bits, n| {
        match sorted.binary_search_by(|(m, _)| (*m).cmp(n)) {
            Ok(k) => bits | 1 << sorted[k].1,
            Err(_) => bits,
        }
    })
}

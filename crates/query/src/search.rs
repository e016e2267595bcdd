//! `sesearch`: TE, RBAC and MLS rule queries with setools 4.4.1's matching semantics,
//! criteria validation order, sorting and text.

mod order;
mod statement;

use crate::argv::{self, Opt, UsageError};
use crate::chunked::Chunked;
use crate::index::Index;
use crate::pattern::{self, TypeCriterion};
use crate::render;
use arbiter_policy::avtab::{Avtab, AvtabDatum, AvtabEntry, AvtabKind, Xperms, XpermsKind};
use arbiter_policy::mls::{MlsLevel, MlsRange};
use arbiter_policy::transitions::FilenameTrans;
use arbiter_policy::{ClassId, Policy, RoleId, TypeId};
use regex::Regex;

/// The parsed `sesearch` command line.
#[derive(Debug, Default, Clone)]
pub struct SearchArgs {
    /// The policy path (the positional argument).
    pub policy: Option<String>,
    /// TE rule kinds to search, in option order.
    pub te: Vec<AvtabKind>,
    /// `--role_allow` / `--role_trans`.
    pub role_allow: bool,
    /// `--role_trans`.
    pub role_trans: bool,
    /// `--range_trans`.
    pub range_trans: bool,
    /// `-s`: source type/attribute (TE, MLS) or role (RBAC).
    pub source: Option<String>,
    /// `-t`: target type/attribute or role.
    pub target: Option<String>,
    /// `-c`: comma-separated classes, or one regex with `-rc`.
    pub tclass: Option<String>,
    /// `-p`: comma-separated permissions.
    pub perms: Option<String>,
    /// `-x`: comma-separated hex extended permissions or ranges.
    pub xperms: Option<String>,
    /// `-D`: default type, role or range.
    pub default: Option<String>,
    /// `-b`: comma-separated booleans, or one regex with `-rb`.
    pub boolean: Option<String>,
    /// `-eb`.
    pub boolean_equal: bool,
    /// `-ep`.
    pub perms_equal: bool,
    /// `-ex`.
    pub xperms_equal: bool,
    /// `-Sp`.
    pub perms_subset: bool,
    /// `-ds`.
    pub source_direct: bool,
    /// `-dt`.
    pub target_direct: bool,
    /// `-rs`.
    pub source_regex: bool,
    /// `-rt`.
    pub target_regex: bool,
    /// `-rc`.
    pub tclass_regex: bool,
    /// `-rd`.
    pub default_regex: bool,
    /// `-rb`.
    pub boolean_regex: bool,
    /// `--json`: machine output instead of statements.
    pub json: bool,
    /// `--bool NAME=VALUE` overrides for the `enabled` field of `--json`.
    pub bool_values: Vec<(String, bool)>,
    /// `--expand`: each matched rule replaced by the rules on types it stands for.
    pub expand: bool,
}

const OPTS: &[Opt] = &[
    flag(&["-A"], "A"),
    flag(&["--allow"], "allow"),
    flag(&["--allowxperm"], "allowxperm"),
    flag(&["--auditallow"], "auditallow"),
    flag(&["--auditallowxperm"], "auditallowxperm"),
    flag(&["--dontaudit"], "dontaudit"),
    flag(&["--dontauditxperm"], "dontauditxperm"),
    flag(&["-T", "--type_trans", "--type_transition"], "type_trans"),
    flag(&["--type_change"], "type_change"),
    flag(&["--type_member"], "type_member"),
    flag(&["--role_allow"], "role_allow"),
    flag(&["--role_trans", "--role_transition"], "role_trans"),
    flag(&["--range_trans", "--range_transition"], "range_trans"),
    val(&["-s", "--source"], "source"),
    val(&["-t", "--target"], "target"),
    val(&["-c", "--class"], "tclass"),
    val(&["-p", "--perms"], "perms"),
    val(&["-x", "--xperms"], "xperms"),
    val(&["-D", "--default"], "default"),
    val(&["-b", "--bool"], "boolean"),
    flag(&["-eb"], "eb"),
    flag(&["-ep"], "ep"),
    flag(&["-ex"], "ex"),
    flag(&["-Sp"], "Sp"),
    flag(&["-ds"], "ds"),
    flag(&["-dt"], "dt"),
    flag(&["-rs"], "rs"),
    flag(&["-rt"], "rt"),
    flag(&["-rc"], "rc"),
    flag(&["-rd"], "rd"),
    flag(&["-rb"], "rb"),
    flag(&["-v", "--verbose"], "verbose"),
    flag(&["--debug"], "debug"),
    flag(&["--json"], "json"),
    flag(&["--expand"], "expand"),
    val(&["--set-bool"], "set_bool"),
];

const fn flag(names: &'static [&'static str], key: &'static str) -> Opt {
    Opt {
        names,
        value: None,
        key,
    }
}

const fn val(names: &'static [&'static str], key: &'static str) -> Opt {
    Opt {
        names,
        value: Some(true),
        key,
    }
}

impl SearchArgs {
    /// Reads a `sesearch` command line (without the program name).
    pub fn parse(args: &[String]) -> Result<SearchArgs, UsageError> {
        let p = argv::parse(args, OPTS)?;
        let mut a = SearchArgs::default();
        if p.positional.len() > 1 {
            return Err(UsageError(format!(
                "unrecognized arguments: {}",
                arbiter_io::prefix(&p.positional[1..].join(" "))
            )));
        }
        a.policy = p.positional.first().cloned();
        for key in &p.order {
            let kind = match *key {
                "allow" => AvtabKind::Allowed,
                "allowxperm" => AvtabKind::XpermsAllowed,
                "auditallow" => AvtabKind::AuditAllow,
                "auditallowxperm" => AvtabKind::XpermsAuditAllow,
                "dontaudit" => AvtabKind::AuditDeny,
                "dontauditxperm" => AvtabKind::XpermsDontAudit,
                "type_trans" => AvtabKind::Transition,
                "type_change" => AvtabKind::Change,
                "type_member" => AvtabKind::Member,
                _ => continue,
            };
            a.te.push(kind);
        }
        if p.has("A") {
            a.te.extend([AvtabKind::Allowed, AvtabKind::XpermsAllowed]);
        }
        a.role_allow = p.has("role_allow");
        a.role_trans = p.has("role_trans");
        a.range_trans = p.has("range_trans");
        let s = |k: &str| p.value(k).map(str::to_string);
        a.source = s("source");
        a.target = s("target");
        a.tclass = s("tclass");
        a.perms = s("perms");
        a.xperms = s("xperms");
        a.default = s("default");
        a.boolean = s("boolean");
        a.boolean_equal = p.has("eb");
        a.perms_equal = p.has("ep");
        a.xperms_equal = p.has("ex");
        a.perms_subset = p.has("Sp");
        a.source_direct = p.has("ds");
        a.target_direct = p.has("dt");
        a.source_regex = p.has("rs");
        a.target_regex = p.has("rt");
        a.tclass_regex = p.has("rc");
        a.default_regex = p.has("rd");
        a.boolean_regex = p.has("rb");
        a.json = p.has("json");
        a.expand = p.has("expand");
        for v in p.values.get("set_bool").into_iter().flatten().flatten() {
            let (name, value) = v
                .split_once('=')
                .ok_or_else(|| UsageError(format!("--set-bool expects NAME=VALUE, got {v}")))?;
            let value = match value {
                "1" | "true" | "True" | "on" => true,
                "0" | "false" | "False" | "off" => false,
                _ => return Err(UsageError(format!("--set-bool {name}: bad value {value}"))),
            };
            a.bool_values.push((name.to_string(), value));
        }
        if a.te.is_empty() && !a.role_allow && !a.role_trans && !a.range_trans {
            return Err(UsageError(
                "At least one rule type must be specified.".to_string(),
            ));
        }
        Ok(a)
    }
}

/// The body of a TE rule: what follows `SOURCE TARGET:CLASS`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TeBody<'p> {
    /// allow / auditallow / dontaudit: permission names, sorted.
    Perms(Vec<&'p str>),
    /// allowxperm and friends: the kind (`ioctl`) and the values, ascending.
    Xperms(&'static str, Vec<u16>),
    /// type_transition / type_change / type_member.
    Default(TypeId),
    /// A filename type_transition.
    Filename(TypeId, &'p str),
}

/// One matched TE rule as setools sees it (one access vector table entry, or one source type
/// of a filename transition).
#[derive(Debug, Clone)]
pub struct TeHit<'p> {
    /// Rule kind.
    pub kind: AvtabKind,
    /// `-s`: source type/attribute (TE, MLS) or role (RBAC).
    pub source: TypeId,
    /// `-t`: target type/attribute or role.
    pub target: TypeId,
    /// Object class.
    pub class: ClassId,
    /// Permissions, extended permissions or default.
    pub body: TeBody<'p>,
    /// Conditional node index and branch.
    pub cond: Option<(usize, bool)>,
}

/// One matched TE rule in the compact form a query keeps until it prints: the fields its
/// statement is written from, without the text (a full dump holds 100,000 of them).
#[derive(Debug, Clone, Copy)]
struct TeMatch<'p> {
    kind: AvtabKind,
    source: TypeId,
    target: TypeId,
    class: ClassId,
    body: MatchBody<'p>,
    /// Conditional node index and branch.
    cond: Option<(u32, bool)>,
}

/// What follows `SOURCE TARGET:CLASS` in a [`TeMatch`]'s statement.
#[derive(Debug, Clone, Copy)]
enum MatchBody<'p> {
    /// Permission bits within the class (complemented for dontaudit); never empty.
    Perms(u32),
    /// An ioctl set of a kind setools knows.
    Xperms(&'p Xperms),
    /// The default type of a type rule.
    Default(TypeId),
    /// A filename type_transition's default type, and the rule (for its name).
    Filename(TypeId, &'p FilenameTrans),
}

impl<'p> TeMatch<'p> {
    /// The public form, with permission names and ioctl values spelled out.
    fn hit(&self, index: &Index<'p>) -> TeHit<'p> {
        let body = match self.body {
            MatchBody::Perms(bits) => TeBody::Perms(
                index
                    .sorted_class_perms(self.class)
                    .iter()
                    .filter(|&&(_, bit)| bits & (1 << bit) != 0)
                    .map(|&(n, _)| n)
                    .collect(),
            ),
            MatchBody::Xperms(x) => TeBody::Xperms(
                "ioctl",
                xperm_values(x.kind, x.driver, &x.perms).unwrap_or_default(),
            ),
            MatchBody::Default(t) => TeBody::Default(t),
            MatchBody::Filename(t, ft) => TeBody::Filename(t, &ft.name),
        };
        TeHit {
            kind: self.kind,
            source: self.source,
            target: self.target,
            class: self.class,
            body,
            cond: self.cond.map(|(n, b)| (n as usize, b)),
        }
    }
}

/// A matched RBAC rule.
#[derive(Debug, Clone)]
pub enum RbacHit {
    /// `allow ROLE NEW_ROLE;`
    Allow(RoleId, RoleId),
    /// `role_transition ROLE TYPE:CLASS NEW_ROLE;`
    Trans(RoleId, TypeId, ClassId, RoleId),
}

/// A matched range_transition rule (index into `Policy::range_trans`).
#[derive(Debug, Clone, Copy)]
pub struct MlsHit(pub usize);

use crate::error::QueryError;
use crate::error::{LevelError, QueryErrorKind, SymbolKind};

/// Criteria shared by all three rule families after lookup.
struct Common {
    source: Option<Vec<bool>>,
    target: Option<Vec<bool>>,
    classes: Option<ClassCrit>,
}

enum ClassCrit {
    Set(Vec<bool>),
    Regex(Regex),
}

impl ClassCrit {
    fn matches(&self, index: &Index<'_>, c: ClassId) -> bool {
        match self {
            ClassCrit::Set(v) => v.get(c.index()).copied().unwrap_or(false),
            ClassCrit::Regex(re) => re.is_match(index.class_name(c)),
        }
    }
}

fn lookup_type(index: &Index<'_>, name: &str, regex: bool) -> Result<TypeCriterion, QueryError> {
    if regex {
        return pattern::compile(name)
            .map(TypeCriterion::Regex)
            .map_err(QueryError::from);
    }
    index
        .type_or_attr(name)
        .map(TypeCriterion::Symbol)
        .ok_or_else(|| {
            QueryError::from(QueryErrorKind::NotValid {
                kind: SymbolKind::TypeAttribute,
                name: name.to_string(),
            })
        })
}

fn lookup_classes(
    index: &Index<'_>,
    spec: Option<&str>,
    regex: bool,
) -> Result<Option<ClassCrit>, QueryError> {
    let Some(spec) = spec.filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    if regex {
        return pattern::compile(spec)
            .map(|r| Some(ClassCrit::Regex(r)))
            .map_err(QueryError::from);
    }
    let mut set = vec![false; index.policy().classes.len()];
    for name in spec.split(',') {
        let c = index.class(name).ok_or_else(|| {
            QueryError::from(QueryErrorKind::NotValid {
                kind: SymbolKind::Class,
                name: name.to_string(),
            })
        })?;
        set[c.index()] = true;
    }
    Ok(Some(ClassCrit::Set(set)))
}

/// Runs the query; `out` receives each section's lines as soon as it is complete (so a
/// later section's lookup error follows the earlier sections' output, as with sesearch).
pub fn run(
    index: &Index<'_>,
    args: &SearchArgs,
    out: &mut dyn FnMut(&str),
) -> Result<(), QueryError> {
    if !args.te.is_empty() {
        let matches = te_matches(index, args)?;
        let mut writer = statement::TeWriter::new(index);
        let mut line = String::with_capacity(256);
        for m in matches.in_order() {
            if args.expand {
                for (source, target) in crate::expand::type_pairs(index, m.source, m.target) {
                    line.clear();
                    writer.write(
                        &mut line,
                        &TeMatch {
                            source,
                            target,
                            ..*m
                        },
                    );
                    out(&line);
                }
                continue;
            }
            line.clear();
            writer.write(&mut line, m);
            out(&line);
        }
    }
    if args.role_allow || args.role_trans {
        for (line, hit) in search_rbac(index, args)? {
            if args.expand {
                for e in crate::expand::rbac(index, &hit) {
                    out(&rbac_statement(index, &e));
                }
            } else {
                out(&line);
            }
        }
    }
    if args.range_trans {
        for (line, hit) in search_mls(index, args)? {
            match index.policy().range_trans.get(hit.0) {
                Some(rt) if args.expand => {
                    for (s, t) in crate::expand::type_pairs(index, rt.source, rt.target) {
                        out(&mls_statement(index, &rt.range, s, t, rt.class));
                    }
                }
                _ => out(&line),
            }
        }
    }
    Ok(())
}

/// Permission criteria resolved per class.
struct PermCrit {
    /// For each class: the criteria's bits within the class, and whether every listed
    /// name exists in the class.
    per_class: Vec<(u32, bool)>,
    names: Vec<String>,
}

/// TE rules matching the arguments, each with its statement, sorted by statement.
pub fn search_te<'p>(
    index: &Index<'p>,
    args: &SearchArgs,
) -> Result<Vec<(String, TeHit<'p>)>, QueryError> {
    let matches = te_matches(index, args)?;
    let mut writer = statement::TeWriter::new(index);
    Ok(matches
        .in_order()
        .map(|m| {
            let mut line = String::new();
            writer.write(&mut line, m);
            (line, m.hit(index))
        })
        .collect())
}

/// TE rules matching the arguments, in scan order: the unconditional table in file order,
/// the filename transitions, then each conditional's lists.
fn te_scan<'p>(index: &Index<'p>, args: &SearchArgs) -> Result<Chunked<TeMatch<'p>>, QueryError> {
    let policy = index.policy();
    // setools sets the query's criteria in this order, so the first error reported is the
    // first failing lookup in it: target, source, default, classes, perms, xperms, booleans.
    let target = opt(args.target.as_deref())
        .map(|t| lookup_type(index, t, args.target_regex))
        .transpose()?;
    let source = opt(args.source.as_deref())
        .map(|s| lookup_type(index, s, args.source_regex))
        .transpose()?;
    let default = opt(args.default.as_deref())
        .map(|d| lookup_type(index, d, args.default_regex))
        .transpose()?;
    let classes = lookup_classes(index, args.tclass.as_deref(), args.tclass_regex)?;
    let perms = match opt(args.perms.as_deref()) {
        None => None,
        Some(p) => Some(perm_crit(index, p, classes.as_ref())?),
    };
    let xperms = match opt(args.xperms.as_deref()) {
        None => None,
        Some(x) => parse_xperms(x)?,
    };
    let booleans = match opt(args.boolean.as_deref()) {
        None => None,
        Some(b) if args.boolean_regex => Some(BoolCrit::Regex(pattern::compile(b)?)),
        Some(b) => {
            let mut ids = Vec::new();
            for name in b.split(',') {
                ids.push(index.boolean(name).ok_or_else(|| {
                    QueryError::from(QueryErrorKind::NotValid {
                        kind: SymbolKind::Boolean,
                        name: name.to_string(),
                    })
                })?);
            }
            ids.sort_unstable();
            ids.dedup();
            Some(BoolCrit::Set(ids))
        }
    };
    let common = Common {
        source: source.map(|c| pattern::type_table(index, &c, !args.source_direct)),
        target: target.map(|c| pattern::type_table(index, &c, !args.target_direct)),
        classes,
    };
    let default = default.map(|c| pattern::type_table(index, &c, true));
    // The kinds asked for, as a mask of their `specified` bits.
    let kinds = args.te.iter().fold(0u16, |m, k| m | k.bits());
    // In pieces: a `Vec` grown by doubling reached 0.5 MB for a query's 9,000 matches, and
    // freeing it raised glibc's mmap threshold (see `chunked`).
    let mut hits = Chunked::new();
    let ctx = TeCtx {
        index,
        args,
        common: &common,
        perms: perms.as_ref(),
        xperms: xperms.as_deref(),
        default: default.as_deref(),
        booleans: booleans.as_ref(),
    };
    scan_avtab(&ctx, &policy.avtab, None, kinds, &mut hits)?;
    if kinds & AvtabKind::Transition.bits() != 0
        && booleans.is_none()
        && perms.is_none()
        && xperms.is_none()
    {
        for ft in &policy.filename_trans {
            if !ctx.key_matches_target_class(ft.target, ft.class) {
                continue;
            }
            for (stypes, otype) in ft.outcomes.iter() {
                if let Some(d) = ctx.default {
                    if !d.get(otype.index()).copied().unwrap_or(false) {
                        continue;
                    }
                }
                for bit in stypes.iter() {
                    let Some(s) = TypeId::from_index(bit as usize) else {
                        continue;
                    };
                    if !ctx.slot(&common.source, s) {
                        continue;
                    }
                    hits.push(TeMatch {
                        kind: AvtabKind::Transition,
                        source: s,
                        target: ft.target,
                        class: ft.class,
                        body: MatchBody::Filename(*otype, ft),
                        cond: None,
                    });
                }
            }
        }
    }
    for (n, node) in policy.cond_nodes.iter().enumerate() {
        if let Some(b) = &booleans {
            if !b.matches(index, &render::cond_bools(&node.expr), args.boolean_equal) {
                continue;
            }
        }
        for (list, branch) in [(&node.true_list, true), (&node.false_list, false)] {
            let start = list.start as usize;
            let end = (list.end as usize).min(policy.cond_avtab.entries.len());
            if start >= end {
                continue;
            }
            scan_entries(
                &ctx,
                &policy.cond_avtab,
                &policy.cond_avtab.entries[start..end],
                Some((n as u32, branch)),
                kinds,
                &mut hits,
            )?;
        }
    }
    Ok(hits)
}

/// TE rules matching the arguments, in statement order.
fn te_matches<'p>(index: &Index<'p>, args: &SearchArgs) -> Result<TeMatches<'p>, QueryError> {
    let hits = te_scan(index, args)?;
    if hits.iter().any(|m| matches!(m.body, MatchBody::Perms(0))) {
        // setools indexes the first permission of the empty set while sorting.
        return Err(QueryError::from(QueryErrorKind::ListIndexOutOfRange));
    }
    let order = order::sort(index, &hits, &mut statement::TeWriter::new(index));
    Ok(TeMatches {
        matches: hits,
        order,
    })
}

/// TE rules matching the arguments in the order setools' `TERuleQuery.results()` yields
/// them, which is `SELinuxPolicy.terules()`'s: the unconditional table as libsepol chains
/// it (bucket by bucket), the filename transitions in their hash table's order, then each
/// conditional's true and false lists. The Python binding (`arbiter.setools`) needs this
/// order; sesearch sorts instead.
pub fn search_te_policy_order<'p>(
    index: &Index<'p>,
    args: &SearchArgs,
) -> Result<Vec<TeHit<'p>>, QueryError> {
    Ok(te_policy_order(index, args)?.collect())
}

/// [`search_te_policy_order`]'s hits one at a time. A caller that keeps the hits in a
/// compact form of its own (the Python binding keeps permission bits) then never holds
/// the public form of them all at once: a vector of permission names per rule, about
/// 1 MB for the 5,000 `allow … file` rules with `write` or `append`, which glibc's heap
/// grew by and kept.
pub fn te_policy_order<'a, 'p>(
    index: &'a Index<'p>,
    args: &SearchArgs,
) -> Result<TePolicyOrder<'a, 'p>, QueryError> {
    let matches = te_scan(index, args)?;
    let order = order::policy_order(index, &matches);
    Ok(TePolicyOrder {
        index,
        matches,
        order: order.into_iter(),
    })
}

/// The iterator [`te_policy_order`] returns: the matches in their compact form and the
/// order to make them public in.
pub struct TePolicyOrder<'a, 'p> {
    index: &'a Index<'p>,
    matches: Chunked<TeMatch<'p>>,
    /// Positions in `matches`, each once (a permutation of `0..matches.len()`).
    order: std::vec::IntoIter<u32>,
}

impl<'p> Iterator for TePolicyOrder<'_, 'p> {
    type Item = TeHit<'p>;

    fn next(&mut self) -> Option<TeHit<'p>> {
        let i = self.order.next()?;
        // `order` is a permutation of the matches' positions, so every one is found.
        self.matches.get(i as usize).map(|m| m.hit(self.index))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.order.size_hint()
    }
}

impl ExactSizeIterator for TePolicyOrder<'_, '_> {}

/// The TE rules a query matched, in scan order, and the order their statements print in.
struct TeMatches<'p> {
    matches: Chunked<TeMatch<'p>>,
    order: Vec<usize>,
}

impl<'p> TeMatches<'p> {
    /// The matches in statement order.
    fn in_order(&self) -> impl Iterator<Item = &TeMatch<'p>> {
        self.order.iter().filter_map(|&i| self.matches.get(i))
    }
}

fn opt(s: Option<&str>) -> Option<&str> {
    s.filter(|s| !s.is_empty())
}

enum BoolCrit {
    Set(Vec<u32>),
    Regex(Regex),
}

impl BoolCrit {
    fn matches(&self, index: &Index<'_>, bools: &[u32], equal: bool) -> bool {
        match self {
            BoolCrit::Regex(re) => bools.iter().any(|&b| {
                re.is_match(
                    index
                        .policy()
                        .bools
                        .get(b as usize)
                        .map_or("", |b| &*b.name),
                )
            }),
            BoolCrit::Set(set) if equal => set.as_slice() == bools,
            BoolCrit::Set(set) => set.iter().any(|b| bools.contains(b)),
        }
    }
}

struct TeCtx<'a, 'p> {
    index: &'a Index<'p>,
    args: &'a SearchArgs,
    common: &'a Common,
    perms: Option<&'a PermCrit>,
    xperms: Option<&'a [u16]>,
    default: Option<&'a [bool]>,
    booleans: Option<&'a BoolCrit>,
}

impl TeCtx<'_, '_> {
    fn slot(&self, table: &Option<Vec<bool>>, t: TypeId) -> bool {
        table
            .as_ref()
            .is_none_or(|v| v.get(t.index()).copied().unwrap_or(false))
    }

    fn key_matches_target_class(&self, target: TypeId, class: ClassId) -> bool {
        self.slot(&self.common.target, target)
            && self
                .common
                .classes
                .as_ref()
                .is_none_or(|c| c.matches(self.index, class))
    }
}

fn scan_avtab<'p>(
    ctx: &TeCtx<'_, 'p>,
    table: &'p Avtab,
    cond: Option<(u32, bool)>,
    kinds: u16,
    hits: &mut Chunked<TeMatch<'p>>,
) -> Result<(), QueryError> {
    if ctx.booleans.is_some() {
        return Ok(());
    }
    scan_entries(ctx, table, &table.entries, cond, kinds, hits)
}

fn scan_entries<'p>(
    ctx: &TeCtx<'_, 'p>,
    table: &'p Avtab,
    entries: &'p [AvtabEntry],
    cond: Option<(u32, bool)>,
    kinds: u16,
    hits: &mut Chunked<TeMatch<'p>>,
) -> Result<(), QueryError> {
    let index = ctx.index;
    // The criteria's tables taken out of the context once, and each part of the key read
    // only when the tests before it have passed: most entries fail on the kind or the
    // source, and the loop then reads one or two bytes of them.
    let source = ctx.common.source.as_deref();
    let target = ctx.common.target.as_deref();
    let classes = ctx.common.classes.as_ref();
    // The kinds asked for by variant, bit `v` for the kind whose discriminant is `v`: a
    // shift of the entry's kind byte, where its `specified` bit would be read from a table.
    let wanted = (0..16)
        .filter_map(|bit| AvtabKind::from_bits(kinds & (1 << bit)))
        .fold(0u32, |m, k| m | 1 << (k as u32));
    for e in entries {
        if wanted >> (e.key.kind as u32) & 1 == 0
            || !admits(source, e.key.source)
            || !admits(target, e.key.target)
            || classes.is_some_and(|c| !c.matches(index, e.key.class))
        {
            continue;
        }
        let k = e.key;
        let body = match e.datum() {
            AvtabDatum::Perms(bits) => {
                if ctx.xperms.is_some() || ctx.default.is_some() {
                    continue;
                }
                let bits = if k.kind == AvtabKind::AuditDeny {
                    !bits
                } else {
                    bits
                };
                if let Some(p) = ctx.perms {
                    let (mask, all) = p
                        .per_class
                        .get(k.class.index())
                        .copied()
                        .unwrap_or((0, false));
                    let present = bits & index.class_perm_mask(k.class);
                    let ok = if ctx.args.perms_subset {
                        all && present & mask == mask
                    } else if ctx.args.perms_equal {
                        all && present == mask
                    } else {
                        present & mask != 0
                    };
                    if !ok {
                        continue;
                    }
                }
                MatchBody::Perms(bits & index.class_perm_mask(k.class))
            }
            AvtabDatum::Type(t) => {
                if ctx.perms.is_some() || ctx.xperms.is_some() {
                    continue;
                }
                if let Some(d) = ctx.default {
                    if !d.get(t.index()).copied().unwrap_or(false) {
                        continue;
                    }
                }
                MatchBody::Default(t)
            }
            AvtabDatum::Xperms(_) => {
                if ctx.default.is_some() {
                    continue;
                }
                let Some(x) = table.xperms_of(e.datum()) else {
                    continue;
                };
                if !matches!(x.kind, XpermsKind::IoctlFunction | XpermsKind::IoctlDriver) {
                    return Err(QueryError::from(QueryErrorKind::UnknownXpermsKind(
                        x.kind.value(),
                    )));
                }
                if let Some(p) = ctx.perms {
                    if ctx.args.perms_equal && p.names.len() > 1 {
                        continue;
                    }
                    if !p.names.iter().any(|n| n == "ioctl") {
                        continue;
                    }
                }
                if let Some(want) = ctx.xperms {
                    let values = xperm_values(x.kind, x.driver, &x.perms).unwrap_or_default();
                    let ok = if ctx.args.xperms_equal {
                        values.as_slice() == want
                    } else {
                        sorted_intersect(&values, want)
                    };
                    if !ok {
                        continue;
                    }
                }
                MatchBody::Xperms(x)
            }
        };
        hits.push(TeMatch {
            kind: k.kind,
            source: k.source,
            target: k.target,
            class: k.class,
            body,
            cond,
        });
    }
    Ok(())
}

/// Whether a type passes a criterion's table: every type when there is none.
#[inline(always)]
fn admits(table: Option<&[bool]>, t: TypeId) -> bool {
    table.is_none_or(|v| v.get(t.index()).copied().unwrap_or(false))
}

fn sorted_intersect(a: &[u16], b: &[u16]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

/// The extended permission values of one entry, as setools expands them; `None` for kinds
/// setools 4.4.1 does not know (it fails the whole query on them).
pub fn xperm_values(kind: XpermsKind, driver: u8, perms: &[u32; 8]) -> Option<Vec<u16>> {
    let mut v = Vec::new();
    for bit in 0..256u16 {
        if perms[(bit / 32) as usize] & (1 << (bit % 32)) == 0 {
            continue;
        }
        match kind {
            XpermsKind::IoctlFunction => v.push(u16::from(driver) << 8 | bit),
            XpermsKind::IoctlDriver => v.extend((bit << 8)..=((bit << 8) | 0xff)),
            _ => return None,
        }
    }
    match kind {
        XpermsKind::IoctlFunction | XpermsKind::IoctlDriver => Some(v),
        _ => None,
    }
}

fn perm_crit(
    index: &Index<'_>,
    spec: &str,
    classes: Option<&ClassCrit>,
) -> Result<PermCrit, QueryError> {
    let policy = index.policy();
    let names: Vec<String> = spec.split(',').map(str::to_string).collect();
    // setools' validate_perms_any: every name must exist in at least one of the selected
    // classes (all classes when none is selected or the selection is a regex).
    let selected: Vec<ClassId> = match classes {
        Some(ClassCrit::Set(set)) => (0..set.len())
            .filter(|&i| set[i])
            .filter_map(ClassId::from_index)
            .collect(),
        _ => (0..policy.classes.len())
            .filter_map(ClassId::from_index)
            .collect(),
    };
    let mut invalid: Vec<&str> = Vec::new();
    for n in &names {
        if !invalid.contains(&n.as_str()) {
            invalid.push(n);
        }
    }
    invalid.retain(|n| {
        !selected
            .iter()
            .any(|&c| index.class_perms(c).any(|(p, _)| p == *n))
    });
    if !invalid.is_empty() {
        // Python prints a set; its order is not reproducible, so one name lists exactly.
        return Err(QueryError::from(QueryErrorKind::NoSuchPermissions {
            in_selected: matches!(classes, Some(ClassCrit::Set(_))),
            names: invalid.iter().map(|n| n.to_string()).collect(),
        }));
    }
    let mut per_class = Vec::with_capacity(policy.classes.len());
    for i in 0..policy.classes.len() {
        let Some(c) = ClassId::from_index(i) else {
            per_class.push((0, false));
            continue;
        };
        let mut mask = 0u32;
        let mut all = true;
        for n in &names {
            match index.class_perms(c).find(|(p, _)| p == n) {
                Some((_, bit)) => mask |= 1 << bit,
                None => all = false,
            }
        }
        per_class.push((mask, all));
    }
    Ok(PermCrit { per_class, names })
}

fn parse_xperms(spec: &str) -> Result<Option<Vec<u16>>, QueryError> {
    let mut values: Vec<u32> = Vec::new();
    for item in spec.split(',') {
        let parts: Vec<&str> = item.split('-').collect();
        let (lo, hi) = match parts.as_slice() {
            [a, b] => (hex(a)?, hex(b)?),
            [a] => (hex(a)?, hex(a)?),
            _ => {
                return Err(QueryError::from(QueryErrorKind::XpermsSyntax(
                    item.to_string(),
                )))
            }
        };
        for v in [lo, hi] {
            if !(0..=0xffff).contains(&v) {
                return Err(QueryError::from(QueryErrorKind::NotIoctl(v)));
            }
        }
        let (lo, hi) = if hi < lo { (hi, lo) } else { (lo, hi) };
        values.extend(lo as u32..=hi as u32);
    }
    values.sort_unstable();
    values.dedup();
    let v: Vec<u16> = values.into_iter().map(|v| v as u16).collect();
    Ok(if v.is_empty() { None } else { Some(v) })
}

/// Python's `int(s, base=16)`: optional sign, optional `0x`, underscores between digits,
/// surrounding whitespace.
fn hex(s: &str) -> Result<i64, QueryError> {
    let bad = || QueryError::from(QueryErrorKind::NotHex(s.to_string()));
    let t = s.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .map(|r| r.strip_prefix('_').unwrap_or(r))
        .unwrap_or(t);
    if t.is_empty() || t.starts_with('_') || t.ends_with('_') || t.contains("__") {
        return Err(bad());
    }
    let digits: String = t.chars().filter(|&c| c != '_').collect();
    if digits.len() > 12 {
        return Err(bad());
    }
    let v = i64::from_str_radix(&digits, 16).map_err(|_| bad())?;
    Ok(if neg { -v } else { v })
}

/// Python's `"{0:#07x}".format(v)`.
pub(crate) fn hex7(v: i64) -> String {
    if v < 0 {
        format!("-0x{:04x}", -v)
    } else {
        format!("{v:#07x}")
    }
}

/// The statement of a TE rule, as setools' `statement()`.
pub fn te_statement(index: &Index<'_>, h: &TeHit<'_>) -> Result<String, QueryError> {
    let mut s = String::new();
    statement::write_head(&mut s, index, h.kind, h.source, h.target, h.class);
    match &h.body {
        TeBody::Perms(p) if p.is_empty() => {
            return Err(QueryError::from(QueryErrorKind::ListIndexOutOfRange))
        }
        TeBody::Perms(p) => statement::write_perms(&mut s, p.iter().copied()),
        TeBody::Xperms(kind, values) => {
            statement::write_xperms(&mut s, kind, statement::value_runs(values));
            return Ok(s);
        }
        TeBody::Default(t) => {
            s.push_str(index.type_name(*t));
            s.push(';');
        }
        TeBody::Filename(t, name) => {
            s.push_str(index.type_name(*t));
            s.push(' ');
            s.push_str(name);
            s.push(';');
            return Ok(s);
        }
    }
    if let Some((n, branch)) = h.cond {
        let policy = index.policy();
        let expr = policy.cond_nodes.get(n).map_or(&[][..], |c| &c.expr);
        statement::write_cond(&mut s, &render::cond_expr(policy, expr), branch);
    }
    Ok(s)
}

/// RBAC rules matching the arguments, sorted by statement.
pub fn search_rbac(
    index: &Index<'_>,
    args: &SearchArgs,
) -> Result<Vec<(String, RbacHit)>, QueryError> {
    let policy = index.policy();
    let role_crit = |name: &str, regex: bool| -> Result<RoleCrit, QueryError> {
        if regex {
            return pattern::compile(name)
                .map(RoleCrit::Regex)
                .map_err(QueryError::from);
        }
        index.role(name).map(RoleCrit::Role).ok_or_else(|| {
            QueryError::from(QueryErrorKind::NotValid {
                kind: SymbolKind::Role,
                name: name.to_string(),
            })
        })
    };
    // Order of lookups: target (a type or attribute first, else a role), source, default,
    // then classes.
    let target = match opt(args.target.as_deref()) {
        None => None,
        Some(t) if args.target_regex => Some(RoleCrit::Regex(pattern::compile(t)?)),
        Some(t) => match index.type_or_attr(t) {
            Some(id) => Some(RoleCrit::Type(pattern::type_table(
                index,
                &TypeCriterion::Symbol(id),
                !args.target_direct,
            ))),
            None => Some(role_crit(t, false)?),
        },
    };
    let source = opt(args.source.as_deref())
        .map(|s| role_crit(s, args.source_regex))
        .transpose()?;
    let default = opt(args.default.as_deref())
        .map(|d| role_crit(d, args.default_regex))
        .transpose()?;
    let classes = lookup_classes(index, args.tclass.as_deref(), args.tclass_regex)?;
    let target_regex_table = match (&target, args.target_direct) {
        (Some(RoleCrit::Regex(re)), direct) => Some(pattern::type_table(
            index,
            &TypeCriterion::Regex(re.clone()),
            !direct,
        )),
        _ => None,
    };
    let role_ok = |c: &Option<RoleCrit>, r: RoleId| match c {
        None => true,
        Some(RoleCrit::Role(x)) => *x == r,
        Some(RoleCrit::Regex(re)) => re.is_match(index.role_name(r)),
        Some(RoleCrit::Type(_)) => false,
    };
    let mut hits = Vec::new();
    if args.role_allow && classes.is_none() && default.is_none() {
        for ra in &policy.role_allow {
            if role_ok(&source, ra.role) && role_ok(&target, ra.new_role) {
                hits.push(RbacHit::Allow(ra.role, ra.new_role));
            }
        }
    }
    if args.role_trans {
        for rt in &policy.role_trans {
            if !role_ok(&source, rt.role) || !role_ok(&default, rt.new_role) {
                continue;
            }
            let t_ok = match &target {
                None => true,
                Some(RoleCrit::Type(table)) => table.get(rt.ty.index()).copied().unwrap_or(false),
                Some(RoleCrit::Regex(_)) => target_regex_table
                    .as_ref()
                    .is_some_and(|t| t.get(rt.ty.index()).copied().unwrap_or(false)),
                Some(RoleCrit::Role(_)) => false,
            };
            if !t_ok || !classes.as_ref().is_none_or(|c| c.matches(index, rt.class)) {
                continue;
            }
            hits.push(RbacHit::Trans(rt.role, rt.ty, rt.class, rt.new_role));
        }
    }
    let mut lines: Vec<(String, RbacHit)> = hits
        .into_iter()
        .map(|h| (rbac_statement(index, &h), h))
        .collect();
    lines.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(lines)
}

enum RoleCrit {
    Role(RoleId),
    Regex(Regex),
    /// A type or attribute target, as a per-slot match table.
    Type(Vec<bool>),
}

/// The statement of an RBAC rule.
pub fn rbac_statement(index: &Index<'_>, h: &RbacHit) -> String {
    match *h {
        RbacHit::Allow(a, b) => format!("allow {} {};", index.role_name(a), index.role_name(b)),
        RbacHit::Trans(r, t, c, n) => format!(
            "role_transition {} {}:{} {};",
            index.role_name(r),
            index.type_name(t),
            index.class_name(c),
            index.role_name(n)
        ),
    }
}

/// range_transition rules matching the arguments, sorted by statement.
pub fn search_mls(
    index: &Index<'_>,
    args: &SearchArgs,
) -> Result<Vec<(String, MlsHit)>, QueryError> {
    let policy = index.policy();
    let target = opt(args.target.as_deref())
        .map(|t| lookup_type(index, t, args.target_regex))
        .transpose()?;
    let source = opt(args.source.as_deref())
        .map(|s| lookup_type(index, s, args.source_regex))
        .transpose()?;
    let default = opt(args.default.as_deref())
        .map(|d| parse_range(policy, d))
        .transpose()?;
    let classes = lookup_classes(index, args.tclass.as_deref(), args.tclass_regex)?;
    let source = source.map(|c| pattern::type_table(index, &c, !args.source_direct));
    let target = target.map(|c| pattern::type_table(index, &c, !args.target_direct));
    let slot = |t: &Option<Vec<bool>>, id: TypeId| {
        t.as_ref()
            .is_none_or(|v| v.get(id.index()).copied().unwrap_or(false))
    };
    let mut lines = Vec::new();
    for (i, rt) in policy.range_trans.iter().enumerate() {
        if !slot(&source, rt.source)
            || !slot(&target, rt.target)
            || !classes.as_ref().is_none_or(|c| c.matches(index, rt.class))
        {
            continue;
        }
        if let Some(d) = &default {
            if *d != rt.range {
                continue;
            }
        }
        lines.push((
            mls_statement(index, &rt.range, rt.source, rt.target, rt.class),
            MlsHit(i),
        ));
    }
    lines.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(lines)
}

/// The statement of a range_transition rule.
pub fn mls_statement(
    index: &Index<'_>,
    range: &MlsRange,
    s: TypeId,
    t: TypeId,
    c: ClassId,
) -> String {
    format!(
        "range_transition {} {}:{} {};",
        index.type_name(s),
        index.type_name(t),
        index.class_name(c),
        render::range(index.policy(), range)
    )
}

/// setools' `Range.factory_from_string`, with its messages.
pub fn parse_range(policy: &Policy, text: &str) -> Result<MlsRange, QueryError> {
    if !policy.mls {
        return Err(QueryError::from(QueryErrorKind::RangeWithoutMls));
    }
    let parts: Vec<&str> = text.split('-').collect();
    let wrap = |level| {
        QueryError::from(QueryErrorKind::InvalidRange {
            text: text.to_string(),
            level,
        })
    };
    let low = parse_level(policy, parts[0].trim()).map_err(wrap)?;
    let high = match parts.get(1) {
        Some(h) => parse_level(policy, h.trim()).map_err(wrap)?,
        None => low.clone(),
    };
    if !dominates(&high, &low) {
        return Err(QueryError::from(QueryErrorKind::RangeNotDominated {
            text: text.to_string(),
            low: render::level(policy, &low),
            high: render::level(policy, &high),
        }));
    }
    Ok(MlsRange { low, high })
}

fn dominates(a: &MlsLevel, b: &MlsLevel) -> bool {
    a.sens >= b.sens && a.cats.contains_all(&b.cats)
}

fn parse_level(policy: &Policy, name: &str) -> Result<MlsLevel, LevelError> {
    let mut split = name.split(':');
    let sens_name = split.next().unwrap_or("");
    let sens = lookup_mls(
        policy.sensitivities.iter().map(|s| &*s.name),
        &policy.sensitivity_aliases,
        sens_name,
    )
    .ok_or_else(|| LevelError::Sensitivity {
        level: name.to_string(),
        sensitivity: sens_name.to_string(),
    })?;
    let mut cats: Vec<u32> = Vec::new();
    if let Some(spec) = split.next() {
        let cat = |n: &str| {
            lookup_mls(
                policy.categories.iter().map(|c| &*c.name),
                &policy.category_aliases,
                n,
            )
        };
        for group in spec.split(',') {
            let r: Vec<&str> = group.split('.').collect();
            match r.as_slice() {
                [a, b] => {
                    let (Some(lo), Some(hi)) = (cat(a), cat(b)) else {
                        return Err(LevelError::CategoryRange {
                            level: name.to_string(),
                            range: group.to_string(),
                        });
                    };
                    cats.extend(lo..=hi);
                }
                [a] => cats.push(cat(a).ok_or_else(|| LevelError::Category {
                    level: name.to_string(),
                    category: group.to_string(),
                })?),
                _ => return Err(LevelError::Syntax(name.to_string())),
            }
        }
    }
    let level = MlsLevel {
        sens: sens + 1,
        cats: arbiter_policy::Ebitmap::from_bits(cats),
    };
    let decl = policy
        .sensitivities
        .get(sens as usize)
        .map(|s| &s.level.cats);
    if !decl.is_some_and(|d| d.contains_all(&level.cats)) {
        return Err(LevelError::NotAssociated(name.to_string()));
    }
    Ok(level)
}

/// A sensitivity or category index by name or alias.
fn lookup_mls<'a>(
    names: impl Iterator<Item = &'a str>,
    aliases: &[arbiter_policy::symbols::MlsAlias],
    name: &str,
) -> Option<u32> {
    let mut names = names;
    if let Some(i) = names.position(|n| n == name) {
        return Some(i as u32);
    }
    aliases
        .iter()
        .find(|a| &*a.name == name)
        .map(|a| a.value.saturating_sub(1))
}

/// Runs a query as the `sesearch` command would: the text it prints on stdout (results,
/// then the error message if a lookup failed) and its exit status (0 or 1).
pub fn execute(index: &Index<'_>, args: &SearchArgs) -> (String, u8) {
    let mut text = String::new();
    let result = run(index, args, &mut |line| {
        text.push_str(line);
        text.push('\n');
    });
    match result {
        Ok(()) => (text, 0),
        Err(e) => {
            text.push_str(&e.to_string());
            text.push('\n');
            (text, 1)
        }
    }
}

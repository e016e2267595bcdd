//! `seinfo`'s component listings (setools 4.4.1): each component's items, its optional name
//! filter, its sort order, and the item text with and without `-x`.

use crate::argv::{self, Opt, UsageError};
use crate::error::QueryError;
use crate::error::{QueryErrorKind, SymbolKind};
use crate::index::Index;
use crate::render;
use arbiter_policy::constraint::{Constraint, ConstraintExpr};
use arbiter_policy::mls::Context;
use arbiter_policy::ocontext::{FsUseBehavior, IbPkeyCon, PortCon};
use arbiter_policy::symbols::{DefaultRange, DefaultSide, TypeFlavor};
use arbiter_policy::{constraint_infix, ClassId, InfixStyle, Policy, TypeId};

/// One `seinfo` component: what one of its listing options (`-t`, `--portcon`, ...) lists.
/// Each has its own function below; [`InfoComponent::ALL`] is seinfo's printing order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InfoComponent {
    /// `-b`: booleans and their defaults.
    Bool,
    /// `--category`: MLS categories with their aliases.
    Category,
    /// `-c`: classes, their common and permissions.
    Class,
    /// `--common`: common permission sets.
    Common,
    /// `--constrain`: constrain and mlsconstrain statements.
    Constrain,
    /// `--default`: default_user/role/type/range rules.
    Default,
    /// `--fs_use`: fs_use_* statements.
    FsUse,
    /// `--genfscon`: genfscon statements.
    Genfscon,
    /// `--ibendportcon`: Infiniband end port contexts.
    Ibendportcon,
    /// `--ibpkeycon`: Infiniband partition key contexts.
    Ibpkeycon,
    /// `--initialsid`: initial SIDs and their contexts.
    InitialSid,
    /// `--netifcon`: network interface contexts.
    Netifcon,
    /// `--nodecon`: node (network address) contexts.
    Nodecon,
    /// `--permissive`: permissive types.
    Permissive,
    /// `--polcap`: policy capabilities.
    Polcap,
    /// `--portcon`: port contexts.
    Portcon,
    /// `-r`: roles and their types.
    Role,
    /// `--sensitivity`: MLS sensitivities with their aliases.
    Sensitivity,
    /// `--typebounds`: typebounds statements.
    Typebounds,
    /// `-t`: types with their aliases and attributes.
    Type,
    /// `-a`: type attributes and their member types.
    Attribute,
    /// `-u`: users, their roles, level and range.
    User,
    /// `--validatetrans`: validatetrans and mlsvalidatetrans statements.
    Validatetrans,
}

/// A component name [`InfoComponent::from_name`] does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown seinfo component `{0}` (known: bool, category, class, common, constrain, default, fs_use, genfscon, ibendportcon, ibpkeycon, initialsid, netifcon, nodecon, permissive, polcap, portcon, role, sensitivity, typebounds, type, attribute, user, validatetrans)")]
pub struct UnknownComponent(pub String);

impl InfoComponent {
    /// Every component, in the order seinfo prints them.
    pub const ALL: [InfoComponent; 23] = [
        InfoComponent::Bool,
        InfoComponent::Category,
        InfoComponent::Class,
        InfoComponent::Common,
        InfoComponent::Constrain,
        InfoComponent::Default,
        InfoComponent::FsUse,
        InfoComponent::Genfscon,
        InfoComponent::Ibendportcon,
        InfoComponent::Ibpkeycon,
        InfoComponent::InitialSid,
        InfoComponent::Netifcon,
        InfoComponent::Nodecon,
        InfoComponent::Permissive,
        InfoComponent::Polcap,
        InfoComponent::Portcon,
        InfoComponent::Role,
        InfoComponent::Sensitivity,
        InfoComponent::Typebounds,
        InfoComponent::Type,
        InfoComponent::Attribute,
        InfoComponent::User,
        InfoComponent::Validatetrans,
    ];

    /// The heading seinfo prints above the component (`Types`).
    pub fn heading(self) -> &'static str {
        match self {
            InfoComponent::Bool => "Booleans",
            InfoComponent::Category => "Categories",
            InfoComponent::Class => "Classes",
            InfoComponent::Common => "Commons",
            InfoComponent::Constrain => "Constraints",
            InfoComponent::Default => "Default rules",
            InfoComponent::FsUse => "Fs_use",
            InfoComponent::Genfscon => "Genfscon",
            InfoComponent::Ibendportcon => "Ibendportcon",
            InfoComponent::Ibpkeycon => "Ibpkeycon",
            InfoComponent::InitialSid => "Initial SIDs",
            InfoComponent::Netifcon => "Netifcon",
            InfoComponent::Nodecon => "Nodecon",
            InfoComponent::Permissive => "Permissive Types",
            InfoComponent::Polcap => "Polcap",
            InfoComponent::Portcon => "Portcon",
            InfoComponent::Role => "Roles",
            InfoComponent::Sensitivity => "Sensitivities",
            InfoComponent::Typebounds => "Typebounds",
            InfoComponent::Type => "Types",
            InfoComponent::Attribute => "Type Attributes",
            InfoComponent::User => "Users",
            InfoComponent::Validatetrans => "Validatetrans",
        }
    }

    /// The option's spellings on seinfo's command line.
    fn options(self) -> &'static [&'static str] {
        match self {
            InfoComponent::Bool => &["-b", "--bool"],
            InfoComponent::Category => &["--category"],
            InfoComponent::Class => &["-c", "--class"],
            InfoComponent::Common => &["--common"],
            InfoComponent::Constrain => &["--constrain"],
            InfoComponent::Default => &["--default"],
            InfoComponent::FsUse => &["--fs_use"],
            InfoComponent::Genfscon => &["--genfscon"],
            InfoComponent::Ibendportcon => &["--ibendportcon"],
            InfoComponent::Ibpkeycon => &["--ibpkeycon"],
            InfoComponent::InitialSid => &["--initialsid"],
            InfoComponent::Netifcon => &["--netifcon"],
            InfoComponent::Nodecon => &["--nodecon"],
            InfoComponent::Permissive => &["--permissive"],
            InfoComponent::Polcap => &["--polcap"],
            InfoComponent::Portcon => &["--portcon"],
            InfoComponent::Role => &["-r", "--role"],
            InfoComponent::Sensitivity => &["--sensitivity"],
            InfoComponent::Typebounds => &["--typebounds"],
            InfoComponent::Type => &["-t", "--type"],
            InfoComponent::Attribute => &["-a", "--attribute"],
            InfoComponent::User => &["-u", "--user"],
            InfoComponent::Validatetrans => &["--validatetrans"],
        }
    }

    /// The component's name: its long option without dashes (`portcon`, `type`).
    pub fn name(self) -> &'static str {
        match self {
            InfoComponent::Bool => "bool",
            InfoComponent::Category => "category",
            InfoComponent::Class => "class",
            InfoComponent::Common => "common",
            InfoComponent::Constrain => "constrain",
            InfoComponent::Default => "default",
            InfoComponent::FsUse => "fs_use",
            InfoComponent::Genfscon => "genfscon",
            InfoComponent::Ibendportcon => "ibendportcon",
            InfoComponent::Ibpkeycon => "ibpkeycon",
            InfoComponent::InitialSid => "initialsid",
            InfoComponent::Netifcon => "netifcon",
            InfoComponent::Nodecon => "nodecon",
            InfoComponent::Permissive => "permissive",
            InfoComponent::Polcap => "polcap",
            InfoComponent::Portcon => "portcon",
            InfoComponent::Role => "role",
            InfoComponent::Sensitivity => "sensitivity",
            InfoComponent::Typebounds => "typebounds",
            InfoComponent::Type => "type",
            InfoComponent::Attribute => "attribute",
            InfoComponent::User => "user",
            InfoComponent::Validatetrans => "validatetrans",
        }
    }

    /// For the components filtered by a number or range (`--portcon 80`, `--ibpkeycon
    /// 0x6000-0x6020`): the numbers' base and seinfo's message for a bad one.
    fn number_range(self) -> Option<(u32, &'static str)> {
        match self {
            InfoComponent::Portcon => {
                Some((10, "Enter a port number or range, e.g. 22 or 6000-6020"))
            }
            InfoComponent::Ibpkeycon => Some((
                16,
                "Enter a pkey number or range, e.g. 0x22 or 0x6000-0x6020",
            )),
            _ => None,
        }
    }

    /// The component called `name` (as [`InfoComponent::name`] spells it).
    pub fn from_name(name: &str) -> Result<InfoComponent, UnknownComponent> {
        InfoComponent::ALL
            .into_iter()
            .find(|c| c.name() == name)
            .ok_or_else(|| UnknownComponent(name.to_string()))
    }

    /// The component's items for `index`, only those named `name` when one is given.
    pub fn items(self, index: &Index<'_>, name: Option<&str>) -> Result<Items, QueryError> {
        let q = Filter { index, name };
        match self {
            InfoComponent::Bool => bools(&q),
            InfoComponent::Category => categories(&q),
            InfoComponent::Class => classes(&q),
            InfoComponent::Common => commons(&q),
            InfoComponent::Constrain => constraints(&q),
            InfoComponent::Default => defaults(&q),
            InfoComponent::FsUse => fs_uses(&q),
            InfoComponent::Genfscon => genfscons(&q),
            InfoComponent::Ibendportcon => ibendportcons(&q),
            InfoComponent::Ibpkeycon => ibpkeycons(&q),
            InfoComponent::InitialSid => initial_sids(&q),
            InfoComponent::Netifcon => netifcons(&q),
            InfoComponent::Nodecon => nodecons(&q),
            InfoComponent::Permissive => permissives(&q),
            InfoComponent::Polcap => polcaps(&q),
            InfoComponent::Portcon => portcons(&q),
            InfoComponent::Role => roles(&q),
            InfoComponent::Sensitivity => sensitivities(&q),
            InfoComponent::Typebounds => typebounds(&q),
            InfoComponent::Type => type_items(&q),
            InfoComponent::Attribute => attributes(&q),
            InfoComponent::User => users(&q),
            InfoComponent::Validatetrans => validatetrans(&q),
        }
    }
}

/// The parsed `seinfo` command line.
#[derive(Debug, Default, Clone)]
pub struct InfoArgs {
    /// The policy path.
    pub policy: Option<String>,
    /// Requested components, each with its optional name.
    pub components: Vec<(InfoComponent, Option<String>)>,
    /// `--all`.
    pub all: bool,
    /// `-x`: print full statements.
    pub expand: bool,
    /// `--flat`: no headings, counts or indentation.
    pub flat: bool,
    /// `--json`.
    pub json: bool,
}

fn opts() -> Vec<Opt> {
    let mut v: Vec<Opt> = InfoComponent::ALL
        .iter()
        .map(|&c| Opt {
            names: c.options(),
            value: Some(false),
            key: c.name(),
        })
        .collect();
    for (names, key) in [
        (&["-x", "--expand"][..], "expand"),
        (&["--flat"][..], "flat"),
        (&["--all"][..], "all"),
        (&["--json"][..], "json"),
        (&["-v", "--verbose"][..], "verbose"),
        (&["--debug"][..], "debug"),
    ] {
        v.push(Opt {
            names,
            value: None,
            key,
        });
    }
    v
}

impl InfoArgs {
    /// Reads a `seinfo` command line (without the program name).
    pub fn parse(args: &[String]) -> Result<InfoArgs, UsageError> {
        let p = argv::parse(args, &opts())?;
        if p.positional.len() > 1 {
            return Err(UsageError(format!(
                "unrecognized arguments: {}",
                arbiter_io::prefix(&p.positional[1..].join(" "))
            )));
        }
        let mut a = InfoArgs {
            policy: p.positional.first().cloned(),
            all: p.has("all"),
            expand: p.has("expand"),
            flat: p.has("flat"),
            json: p.has("json"),
            ..InfoArgs::default()
        };
        for c in InfoComponent::ALL {
            if let Some(v) = p.values.get(c.name()) {
                let name = v.last().cloned().flatten();
                // seinfo tests the option's value for truth: an empty name drops the
                // component altogether.
                if name.as_deref() != Some("") {
                    a.components.push((c, name));
                }
            }
        }
        for (c, name) in &a.components {
            if let (Some(name), Some((base, message))) = (name, c.number_range()) {
                if number_range(name, base).is_none() {
                    return Err(UsageError(message.into()));
                }
            }
        }
        Ok(a)
    }

    /// Whether the statistics block is printed (no component asked for, or `--all`).
    pub fn wants_statistics(&self) -> bool {
        (self.components.is_empty() || self.all) && !self.flat
    }
}

/// `N` or `LOW-HIGH` as seinfo reads `--portcon` and `--ibpkeycon` values (`None` if
/// malformed); a single number is the range `N-N`.
fn number_range(text: &str, base: u32) -> Option<(i64, i64)> {
    let mut parts = text.split('-');
    let low = py_int(parts.next()?, base)?;
    let high = match parts.next() {
        Some(h) => py_int(h, base)?,
        None => low,
    };
    parts.next().is_none().then_some((low, high))
}

/// The number range a [`Filter`] names, or seinfo's message for a malformed one.
fn filter_range(q: &Filter<'_, '_>, c: InfoComponent) -> Result<Option<(i64, i64)>, QueryError> {
    let Some((base, message)) = c.number_range() else {
        return Ok(None);
    };
    q.name
        .map(|n| {
            number_range(n, base).ok_or(QueryError::from(QueryErrorKind::NumberRange(message)))
        })
        .transpose()
}

/// Python's `int(s, base)` for the digits seinfo's option parsing accepts.
fn py_int(s: &str, base: u32) -> Option<i64> {
    let t = s.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let t = if base == 16 {
        t.strip_prefix("0x")
            .or_else(|| t.strip_prefix("0X"))
            .unwrap_or(t)
    } else {
        t
    };
    if t.is_empty() || t.starts_with('_') || t.ends_with('_') || t.contains("__") {
        return None;
    }
    let digits: String = t.chars().filter(|&c| c != '_').collect();
    if digits.len() > 15 {
        return None;
    }
    let v = i64::from_str_radix(&digits, base).ok()?;
    Some(if neg { -v } else { v })
}

/// One component's items: (text without `-x`, text with `-x`), sorted as seinfo sorts them.
pub type Items = Vec<(String, String)>;

/// A component as printed: its heading and its items.
pub struct Component {
    /// The heading (`Types`).
    pub heading: &'static str,
    /// The items.
    pub items: Items,
}

/// Every requested component (all of them with `--all`), in seinfo's order.
pub fn components(index: &Index<'_>, args: &InfoArgs) -> Result<Vec<Component>, QueryError> {
    let mut out = Vec::new();
    for c in InfoComponent::ALL {
        let name = match args.components.iter().find(|(k, _)| *k == c) {
            Some((_, n)) => n.as_deref(),
            None if args.all => None,
            None => continue,
        };
        let items = c.items(index, name)?;
        out.push(Component {
            heading: c.heading(),
            items,
        });
    }
    Ok(out)
}

/// The text seinfo prints for the components (after the statistics block, if any).
pub fn render_text(components: &[Component], args: &InfoArgs) -> String {
    let mut s = String::new();
    for c in components {
        if !args.flat {
            s.push_str(&format!("\n{}: {}\n", c.heading, c.items.len()));
        }
        for (plain, expanded) in &c.items {
            if !args.flat {
                s.push_str("   ");
            }
            s.push_str(if args.expand { expanded } else { plain });
            s.push('\n');
        }
    }
    s
}

/// The components as JSON: `{"components": [{"name", "count", "items": [statement...]}]}`.
pub fn render_json(components: &[Component]) -> serde_json::Value {
    let list: Vec<serde_json::Value> = components
        .iter()
        .map(|c| {
            serde_json::json!({
                "name": c.heading,
                "count": c.items.len(),
                "items": c.items.iter().map(|(p, x)| serde_json::json!({"name": p, "statement": x})).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({ "components": list })
}

fn sort_by_text(mut v: Vec<(String, String)>, by_expanded: bool) -> Vec<(String, String)> {
    if by_expanded {
        v.sort_by(|a, b| a.1.cmp(&b.1));
    } else {
        v.sort_by(|a, b| a.0.cmp(&b.0));
    }
    v
}

fn same(s: String) -> (String, String) {
    (s.clone(), s)
}

/// A component's name filter over one policy's index.
struct Filter<'a, 'p> {
    index: &'a Index<'p>,
    name: Option<&'a str>,
}

impl Filter<'_, '_> {
    /// Whether `n` passes the name filter (everything does without one).
    fn name_ok(&self, n: &str) -> bool {
        self.name.is_none_or(|want| want == n)
    }

    /// The class the name filter names, for the components filtered by class.
    fn class(&self) -> Result<Option<ClassId>, QueryError> {
        self.name
            .map(|n| {
                self.index.class(n).ok_or_else(|| {
                    QueryError::from(QueryErrorKind::NotValid {
                        kind: SymbolKind::Class,
                        name: n.to_string(),
                    })
                })
            })
            .transpose()
    }
}

/// `-b`: booleans and their defaults.
fn bools(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    let p = q.index.policy();
    let name_ok = |n: &str| q.name_ok(n);
    Ok(sort_by_text(
        p.bools
            .iter()
            .filter(|b| !b.name.is_empty() && name_ok(&b.name))
            .map(|b| (b.name.to_string(), format!("bool {} {};", b.name, b.state)))
            .collect(),
        false,
    ))
}

/// `--category`: MLS categories with their aliases.
fn categories(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    let p = q.index.policy();
    let names: Vec<&str> = p.categories.iter().map(|c| &*c.name).collect();
    Ok(mls_symbols(q, "category", &names, &p.category_aliases))
}

/// `--sensitivity`: MLS sensitivities with their aliases.
fn sensitivities(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    let p = q.index.policy();
    let names: Vec<&str> = p.sensitivities.iter().map(|s| &*s.name).collect();
    Ok(mls_symbols(
        q,
        "sensitivity",
        &names,
        &p.sensitivity_aliases,
    ))
}

/// Categories or sensitivities (`keyword`), each with its aliases in libsepol's symbol-table
/// order; the name filter matches a symbol or any of its aliases. Unsorted: seinfo lists
/// them by value.
fn mls_symbols(
    q: &Filter<'_, '_>,
    keyword: &str,
    names: &[&str],
    alias_list: &[arbiter_policy::symbols::MlsAlias],
) -> Items {
    let table_size = names.len() + alias_list.len();
    names
        .iter()
        .enumerate()
        .filter(|(_, n)| !n.is_empty())
        .filter(|(i, n)| q.name_ok(n) || aliases(alias_list, *i).iter().any(|a| q.name_ok(a)))
        .map(|(i, n)| {
            let al = hashtab_ordered(aliases(alias_list, i), table_size, 16);
            (n.to_string(), format!("{keyword} {n}{};", alias_text(&al)))
        })
        .collect()
}

/// `-c`: classes, their common and permissions.
fn classes(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    let p = q.index.policy();
    let name_ok = |n: &str| q.name_ok(n);
    Ok(sort_by_text(
        p.classes
            .iter()
            .filter(|c| !c.name.is_empty() && name_ok(&c.name))
            .map(|c| {
                let mut s = format!("class {}\n", c.name);
                if let Some(common) = c.common.and_then(|id| p.commons.get(id.index())) {
                    s.push_str(&format!("inherits {}\n", common.name));
                }
                if !c.perms.is_empty() {
                    s.push_str(&perm_block(c.perms.iter().map(|x| &*x.name)));
                }
                (c.name.to_string(), s)
            })
            .collect(),
        false,
    ))
}

/// `--common`: common permission sets.
fn commons(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    let p = q.index.policy();
    let name_ok = |n: &str| q.name_ok(n);
    Ok(sort_by_text(
        p.commons
            .iter()
            .filter(|c| !c.name.is_empty() && name_ok(&c.name))
            .map(|c| {
                (
                    c.name.to_string(),
                    format!(
                        "common {}\n{}",
                        c.name,
                        perm_block(c.perms.iter().map(|x| &*x.name))
                    ),
                )
            })
            .collect(),
        false,
    ))
}

/// The constraints, or with `validatetrans` the validatetrans statements, of the classes
/// (only the named class when the filter names one).
fn constraints_or_validatetrans(
    q: &Filter<'_, '_>,
    validatetrans: bool,
) -> Result<Items, QueryError> {
    let index = q.index;
    let p = q.index.policy();
    let only = q.class()?;
    let mut v = Vec::new();
    for (i, c) in p.classes.iter().enumerate() {
        let Some(cid) = ClassId::from_index(i) else {
            continue;
        };
        if only.is_some_and(|o| o != cid) {
            continue;
        }
        if !validatetrans {
            for k in c.constraints.iter() {
                v.push(same(constraint_statement(index, cid, k)));
            }
        } else {
            for k in c.validatetrans.iter() {
                v.push(same(validatetrans_statement(index, cid, k)));
            }
        }
    }
    Ok(sort_by_text(v, false))
}

/// `--constrain`.
fn constraints(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    constraints_or_validatetrans(q, false)
}

/// `--validatetrans`.
fn validatetrans(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    constraints_or_validatetrans(q, true)
}

/// `--default`: default_user/role/type/range rules.
fn defaults(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    let p = q.index.policy();
    let only = q.class()?;
    let mut v = Vec::new();
    for (i, c) in p.classes.iter().enumerate() {
        if only.is_some_and(|o| o.index() != i) {
            continue;
        }
        for (kw, s) in [
            ("default_user", c.default_user),
            ("default_role", c.default_role),
            ("default_type", c.default_type),
        ] {
            if let Some(s) = default_side(s) {
                v.push(same(format!("{kw} {} {s};", c.name)));
            }
        }
        match default_range_parts(c.default_range) {
            Some((d, Some(r))) => {
                v.push(same(format!("default_range {} {d} {r};", c.name)));
            }
            Some((d, None)) => v.push(same(format!("default_range {} {d};", c.name))),
            None => {}
        }
    }
    Ok(sort_by_text(v, false))
}

/// `--fs_use`: fs_use_* statements.
fn fs_uses(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    let index = q.index;
    let p = q.index.policy();
    let name_ok = |n: &str| q.name_ok(n);
    Ok(sort_by_text(
        p.ocontexts
            .fs_use
            .iter()
            .filter(|f| name_ok(&f.fstype))
            .map(|f| {
                same(format!(
                    "{} {} {};",
                    fs_use_keyword(f.behavior),
                    f.fstype,
                    context(index, &f.context)
                ))
            })
            .collect(),
        false,
    ))
}

/// `--genfscon`: genfscon statements.
fn genfscons(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    let index = q.index;
    let p = q.index.policy();
    let name_ok = |n: &str| q.name_ok(n);
    Ok(sort_by_text(
        p.genfs
            .iter()
            .filter(|g| name_ok(&g.fstype))
            .map(|g| {
                same(format!(
                    "genfscon {} {} {} {}",
                    g.fstype,
                    g.path,
                    genfs_filetype(p, g.class),
                    context(index, &g.context)
                ))
            })
            .collect(),
        false,
    ))
}

/// `--ibendportcon`: Infiniband end port contexts.
fn ibendportcons(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    let index = q.index;
    let p = q.index.policy();
    let name_ok = |n: &str| q.name_ok(n);
    Ok(sort_by_text(
        p.ocontexts
            .ibendports
            .iter()
            .filter(|e| name_ok(&e.device))
            .map(|e| {
                same(format!(
                    "ibendportcon {} {} {}",
                    e.device,
                    e.port,
                    context(index, &e.context)
                ))
            })
            .collect(),
        false,
    ))
}

/// `--ibpkeycon`: Infiniband partition key contexts.
fn ibpkeycons(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    let index = q.index;
    let p = q.index.policy();
    let want = filter_range(q, InfoComponent::Ibpkeycon)?;
    Ok(sort_by_text(
        p.ocontexts
            .ibpkeys
            .iter()
            .filter(|k| want.is_none_or(|(lo, hi)| lo == k.low as i64 && hi == k.high as i64))
            .map(|k| {
                same(format!(
                    "{} {}",
                    ibpkeycon_head(k),
                    context(index, &k.context)
                ))
            })
            .collect(),
        false,
    ))
}

/// `--initialsid`: initial SIDs and their contexts.
fn initial_sids(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    let index = q.index;
    let p = q.index.policy();
    let name_ok = |n: &str| q.name_ok(n);
    Ok(sort_by_text(
        p.ocontexts
            .initial_sids
            .iter()
            .map(|s| (sid_name(s.sid), s))
            .filter(|(n, _)| name_ok(n))
            .map(|(n, s)| {
                (
                    n.to_string(),
                    format!("sid {n} {}", context(index, &s.context)),
                )
            })
            .collect(),
        false,
    ))
}

/// `--netifcon`: network interface contexts.
fn netifcons(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    let index = q.index;
    let p = q.index.policy();
    let name_ok = |n: &str| q.name_ok(n);
    Ok(sort_by_text(
        p.ocontexts
            .netifs
            .iter()
            .filter(|n| name_ok(&n.name))
            .map(|n| {
                same(format!(
                    "netifcon {} {} {}",
                    n.name,
                    context(index, &n.if_context),
                    context(index, &n.msg_context)
                ))
            })
            .collect(),
        false,
    ))
}

/// `--nodecon`: node (network address) contexts.
fn nodecons(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    let index = q.index;
    let p = q.index.policy();
    let name = q.name;
    let want = name.map(parse_network).transpose()?;
    let mut v = Vec::new();
    for n in &p.ocontexts.nodes {
        let (addr, prefix) = network4(n.addr, n.mask);
        if want
            .as_ref()
            .is_some_and(|w| *w != (false, addr.to_vec(), prefix))
        {
            continue;
        }
        v.push(same(format!(
            "{} {}",
            nodecon_head4(n.addr, n.mask),
            context(index, &n.context)
        )));
    }
    for n in &p.ocontexts.nodes6 {
        let (addr, prefix) = network6(n.addr, n.mask);
        if want
            .as_ref()
            .is_some_and(|w| *w != (true, addr.to_vec(), prefix))
        {
            continue;
        }
        v.push(same(format!(
            "{} {}",
            nodecon_head6(n.addr, n.mask),
            context(index, &n.context)
        )));
    }
    Ok(sort_by_text(v, false))
}

/// `--permissive`: permissive types.
fn permissives(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    let index = q.index;
    let p = q.index.policy();
    let name_ok = |n: &str| q.name_ok(n);
    Ok(sort_by_text(
        types(index)
            .filter(|&t| p.permissive.contains(t.value() as u32))
            .filter(|&t| name_ok(index.type_name(t)))
            .map(|t| (index.type_name(t).to_string(), type_statement(index, t)))
            .collect(),
        false,
    ))
}

/// `--polcap`: policy capabilities.
fn polcaps(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    let p = q.index.policy();
    let name_ok = |n: &str| q.name_ok(n);
    Ok(sort_by_text(
        p.policycaps
            .iter()
            .filter_map(|bit| POLCAPS.get(bit as usize).copied())
            .filter(|n| name_ok(n))
            .map(|n| (n.to_string(), format!("policycap {n};")))
            .collect(),
        false,
    ))
}

/// `--portcon`: port contexts.
fn portcons(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    let index = q.index;
    let p = q.index.policy();
    let want = filter_range(q, InfoComponent::Portcon)?;
    Ok(sort_by_text(
        p.ocontexts
            .ports
            .iter()
            .filter(|pc| want.is_none_or(|(lo, hi)| pc.low as i64 <= lo && hi <= pc.high as i64))
            .map(|pc| {
                same(format!(
                    "{} {}",
                    portcon_head(pc),
                    context(index, &pc.context)
                ))
            })
            .collect(),
        false,
    ))
}

/// `-r`: roles and their types.
fn roles(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    let index = q.index;
    let p = q.index.policy();
    let name_ok = |n: &str| q.name_ok(n);
    Ok(sort_by_text(
        p.roles
            .iter()
            .filter(|r| !r.name.is_empty() && name_ok(&r.name))
            .map(|r| {
                let mut names: Vec<&str> = r
                    .types
                    .iter()
                    .filter_map(|b| TypeId::from_index(b as usize))
                    .filter(|&t| !index.is_attribute(t))
                    .map(|t| index.type_name(t))
                    .collect();
                names.sort_unstable();
                let s = match names.as_slice() {
                    [one] => format!("role {} types {one};", r.name),
                    many => format!("role {} types {{ {} }};", r.name, many.join(" ")),
                };
                (r.name.to_string(), s)
            })
            .collect(),
        false,
    ))
}

/// `--typebounds`: typebounds statements.
fn typebounds(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    let index = q.index;
    let p = q.index.policy();
    let name_ok = |n: &str| q.name_ok(n);
    Ok(sort_by_text(
        types(index)
            .filter_map(|t| p.types[t.index()].bounds.map(|b| (t, b)))
            .filter(|&(t, _)| name_ok(index.type_name(t)))
            .map(|(t, b)| {
                same(format!(
                    "typebounds {} {};",
                    index.type_name(b),
                    index.type_name(t)
                ))
            })
            .collect(),
        false,
    ))
}

/// `-t`: types with their aliases and attributes.
fn type_items(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    let index = q.index;
    let name_ok = |n: &str| q.name_ok(n);
    Ok(sort_by_text(
        types(index)
            .filter(|&t| {
                name_ok(index.type_name(t)) || type_aliases(index, t).iter().any(|a| name_ok(a))
            })
            .map(|t| (index.type_name(t).to_string(), type_statement(index, t)))
            .collect(),
        false,
    ))
}

/// `-a`: type attributes and their member types.
fn attributes(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    let index = q.index;
    let p = q.index.policy();
    let name_ok = |n: &str| q.name_ok(n);
    Ok(sort_by_text(
        (0..p.types.len())
            .filter_map(TypeId::from_index)
            .filter(|&t| index.is_attribute(t) && name_ok(index.type_name(t)))
            .map(|t| {
                let mut members: Vec<&str> = index
                    .expand(t)
                    .iter()
                    .map(|&m| index.type_name(m))
                    .collect();
                members.sort_unstable();
                let body = if members.is_empty() {
                    "<empty attribute>".to_string()
                } else {
                    members.join("\n\t")
                };
                (
                    index.type_name(t).to_string(),
                    format!("attribute {};\n\t{body}", index.type_name(t)),
                )
            })
            .collect(),
        false,
    ))
}

/// `-u`: users, their roles, level and range.
fn users(q: &Filter<'_, '_>) -> Result<Items, QueryError> {
    let p = q.index.policy();
    let name_ok = |n: &str| q.name_ok(n);
    Ok(sort_by_text(
        p.users
            .iter()
            .filter(|u| !u.name.is_empty() && name_ok(&u.name))
            .map(|u| {
                let mut roles: Vec<&str> = u
                    .roles
                    .iter()
                    .filter_map(|b| p.roles.get(b as usize))
                    .map(|r| &*r.name)
                    .collect();
                roles.sort_unstable();
                let mut s = format!("user {} roles ", u.name);
                match roles.as_slice() {
                    [one] => s.push_str(one),
                    many => s.push_str(&format!("{{ {} }}", many.join(" "))),
                }
                if p.mls {
                    s.push_str(&format!(
                        " level {} range {};",
                        render::level(p, &u.default_level),
                        render::range(p, &u.range)
                    ));
                } else {
                    s.push(';');
                }
                (u.name.to_string(), s)
            })
            .collect(),
        false,
    ))
}

/// libsepol 3.4's policy capability names, by bit.
const POLCAPS: &[&str] = &[
    "network_peer_controls",
    "open_perms",
    "extended_socket_class",
    "always_check_network",
    "cgroup_seclabel",
    "nnp_nosuid_transition",
    "genfs_seclabel_symlinks",
    "ioctl_skip_cloexec",
];

/// setools' names of the SELinux initial SIDs, by SID number.
const SID_NAMES: &[&str] = &[
    "undefined",
    "kernel",
    "security",
    "unlabeled",
    "fs",
    "file",
    "file_labels",
    "init",
    "any_socket",
    "port",
    "netif",
    "netmsg",
    "node",
    "igmp_packet",
    "icmp_socket",
    "tcp_socket",
    "sysctl_modprobe",
    "sysctl",
    "sysctl_fs",
    "sysctl_kernel",
    "sysctl_net",
    "sysctl_net_unix",
    "sysctl_vm",
    "sysctl_dev",
    "kmod",
    "policy",
    "scmp_packet",
    "devnull",
];

/// A policy capability's name as setools 4.4.1 (libsepol 3.4) prints it; capabilities
/// libsepol 3.4 does not know are named by number.
pub fn polcap_name(bit: usize) -> String {
    POLCAPS
        .get(bit)
        .map_or_else(|| format!("polcap{bit}"), |n| n.to_string())
}

pub(crate) fn sid_name(sid: u32) -> &'static str {
    SID_NAMES.get(sid as usize).copied().unwrap_or("undefined")
}

fn types<'a>(index: &'a Index<'_>) -> impl Iterator<Item = TypeId> + 'a {
    let p = index.policy();
    (0..p.types.len())
        .filter_map(TypeId::from_index)
        .filter(move |t| p.types[t.index()].flavor == TypeFlavor::Type)
}

fn type_aliases<'p>(index: &Index<'p>, t: TypeId) -> Vec<&'p str> {
    index
        .policy()
        .type_aliases
        .iter()
        .filter(|a| a.target == t)
        .map(|a| &*a.name)
        .collect()
}

fn type_statement(index: &Index<'_>, t: TypeId) -> String {
    let mut s = format!("type {}", index.type_name(t));
    let p = index.policy();
    let mut al = type_aliases(index, t);
    let entries = p.types.len() + p.type_aliases.len();
    hashtab_order(&mut al, entries, 512);
    match al.as_slice() {
        [] => {}
        [one] => s.push_str(&format!(" alias {one}")),
        many => s.push_str(&format!(" alias {{ {} }}", many.join(" "))),
    }
    for a in index.attributes_of(t) {
        s.push_str(", ");
        s.push_str(index.type_name(a));
    }
    s.push(';');
    s
}

/// Orders names as libsepol's symbol table iterates them, which is the order setools 4.4.1
/// lists aliases in: by bucket of the symbol hash (`symhash`) in a table that starts at
/// `initial` slots and doubles while it holds at least as many entries as slots, then by
/// name within a bucket. Public for the Python binding, whose symbol iterators walk the
/// tables in this order as setools' do.
pub fn hashtab_order(names: &mut [&str], entries: usize, initial: usize) {
    hashtab_order_by(names, |&s| s, entries, initial);
}

/// [`hashtab_order`] over items named by `name` (positions into a table, say), so that a
/// caller orders its own items without a copy of the names and a map back to the items.
pub fn hashtab_order_by<'a, T>(
    items: &mut [T],
    name: impl Fn(&T) -> &'a str,
    entries: usize,
    initial: usize,
) {
    let mut size = initial.max(1);
    while size <= entries.saturating_sub(1) && size < (1 << 30) {
        size *= 2;
    }
    let bucket = |s: &str| {
        let mut v: u32 = 0;
        for &b in s.as_bytes() {
            // libsepol hashes `char`, signed on the platforms setools runs on.
            v = v.rotate_left(4) ^ (b as i8 as i32 as u32);
        }
        v as usize & (size - 1)
    };
    items.sort_by(|a, b| {
        let (a, b) = (name(a), name(b));
        bucket(a).cmp(&bucket(b)).then(a.cmp(b))
    });
}

fn hashtab_ordered(mut names: Vec<&str>, entries: usize, initial: usize) -> Vec<&str> {
    hashtab_order(&mut names, entries, initial);
    names
}

fn aliases(list: &[arbiter_policy::symbols::MlsAlias], index: usize) -> Vec<&str> {
    list.iter()
        .filter(|a| a.value as usize == index + 1)
        .map(|a| &*a.name)
        .collect()
}

fn alias_text(al: &[&str]) -> String {
    match al {
        [] => String::new(),
        [one] => format!(" alias {one}"),
        many => format!(" alias {{ {} }}", many.join(" ")),
    }
}

fn perm_block<'a>(perms: impl Iterator<Item = &'a str>) -> String {
    let mut v: Vec<&str> = perms.collect();
    v.sort_unstable();
    format!("{{\n\t{}\n}}", v.join("\n\t"))
}

pub(crate) fn context(index: &Index<'_>, c: &Context) -> String {
    let p = index.policy();
    let user = p.users.get(c.user.index()).map_or("", |u| &*u.name);
    let base = format!(
        "{}:{}:{}",
        user,
        index.role_name(c.role),
        index.type_name(c.ty)
    );
    if p.mls {
        format!("{base}:{}", render::range(p, &c.range))
    } else {
        base
    }
}

/// A constraint expression as setools' `ConstraintExpression.__str__` writes it, including
/// its stray spaces. Name sets are written in name order (setools writes them in Python's
/// per-process hash order, which is not reproducible).
fn constraint_expr(index: &Index<'_>, expr: &[ConstraintExpr]) -> String {
    let p = index.policy();
    constraint_infix(expr, InfixStyle::Setools, |i| {
        let e = &expr[i];
        let (left, right) = e.operands().unwrap_or(("?", None));
        let op = match e {
            ConstraintExpr::Attr { op, .. } | ConstraintExpr::Names { op, .. } => op.keyword(),
            _ => "",
        };
        let right = match (right, e.written_names(p.version)) {
            (Some(word), _) => word.to_string(),
            (None, bits) => {
                let bits = bits.into_iter().flat_map(|b| b.iter());
                let name = |b: u32| -> Option<String> {
                    let b = b as usize;
                    match left.as_bytes().first() {
                        Some(b'r') => p.roles.get(b).map(|r| r.name.to_string()),
                        Some(b't') => p.types.get(b).map(|t| t.name.to_string()),
                        _ => p.users.get(b).map(|u| u.name.to_string()),
                    }
                };
                let mut set: Vec<String> = bits.filter_map(name).collect();
                set.sort_unstable();
                match set.len() {
                    0 | 1 => set.concat(),
                    _ => format!("{{ {} }} ", set.join(" ")),
                }
            }
        };
        format!("{left} {op} {right}")
    })
}

/// An IPv4 network as Python's `ip_network("addr/prefix", strict=False)` normalises it.
pub(crate) fn network4(addr: [u8; 4], mask: [u8; 4]) -> ([u8; 4], u32) {
    let prefix = u32::from_be_bytes(mask).count_ones();
    let m = u32::from_be_bytes(mask4(prefix));
    ((u32::from_be_bytes(addr) & m).to_be_bytes(), prefix)
}

fn mask4(prefix: u32) -> [u8; 4] {
    let m = if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - prefix.min(32))
    };
    m.to_be_bytes()
}

pub(crate) fn network6(addr: [u8; 16], mask: [u8; 16]) -> ([u8; 16], u32) {
    let prefix = u128::from_be_bytes(mask).count_ones();
    let m = u128::from_be_bytes(mask6(prefix));
    ((u128::from_be_bytes(addr) & m).to_be_bytes(), prefix)
}

fn mask6(prefix: u32) -> [u8; 16] {
    let m = if prefix == 0 {
        0
    } else {
        u128::MAX << (128 - prefix.min(128))
    };
    m.to_be_bytes()
}

fn dotted(a: &[u8; 4]) -> String {
    std::net::Ipv4Addr::from(*a).to_string()
}

/// An IPv6 address in Python's `ipaddress` text form (RFC 5952, as Rust's).
fn ipv6_text(a: &[u8; 16]) -> String {
    std::net::Ipv6Addr::from(*a).to_string()
}

/// `ipaddress.ip_network(text)` (strict): (is IPv6, network address, prefix length).
fn parse_network(text: &str) -> Result<(bool, Vec<u8>, u32), QueryError> {
    let bad = || QueryError::from(QueryErrorKind::NotNetwork(text.to_string()));
    let (addr, prefix) = match text.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (text, None),
    };
    if let Ok(a) = addr.parse::<std::net::Ipv4Addr>() {
        let prefix = match prefix {
            None => 32,
            Some(p) => match p.parse::<u32>() {
                Ok(n) if n <= 32 => n,
                _ => match p.parse::<std::net::Ipv4Addr>() {
                    Ok(m) => u32::from(m).count_ones(),
                    Err(_) => return Err(bad()),
                },
            },
        };
        let (net, prefix) = network4(a.octets(), mask4(prefix));
        if net != a.octets() {
            return Err(QueryError::from(QueryErrorKind::HostBitsSet(
                text.to_string(),
            )));
        }
        return Ok((false, net.to_vec(), prefix));
    }
    if let Ok(a) = addr.parse::<std::net::Ipv6Addr>() {
        let prefix = match prefix {
            None => 128,
            Some(p) => match p.parse::<u32>() {
                Ok(n) if n <= 128 => n,
                _ => return Err(bad()),
            },
        };
        let (net, prefix) = network6(a.octets(), mask6(prefix));
        if net != a.octets() {
            return Err(QueryError::from(QueryErrorKind::HostBitsSet(
                text.to_string(),
            )));
        }
        return Ok((true, net.to_vec(), prefix));
    }
    Err(bad())
}

/// The whole `seinfo` output for a parsed command line: the statistics block when asked
/// for (`stats`, rendered by the caller), then the components.
pub fn execute(index: &Index<'_>, args: &InfoArgs, stats: &str) -> (String, u8) {
    let mut out = String::new();
    match components(index, args) {
        Ok(c) => {
            if args.wants_statistics() {
                out.push_str(stats);
            }
            out.push_str(&render_text(&c, args));
            (out, 0)
        }
        Err(e) => (format!("{}\n", e), 1),
    }
}

impl Component {
    /// Whether the component has no items.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// The policy a component listing was made from (for callers that print the path).
pub fn policy_of<'p>(index: &Index<'p>) -> &'p Policy {
    index.policy()
}

/// A `constrain`/`mlsconstrain` statement as setools writes it (with its trailing space).
pub(crate) fn constraint_statement(index: &Index<'_>, class: ClassId, k: &Constraint) -> String {
    let mut perms: Vec<&str> = index
        .class_perms(class)
        .filter(|&(_, b)| k.perms & (1 << b) != 0)
        .map(|(n, _)| n)
        .collect();
    perms.sort_unstable();
    let perms = match perms.as_slice() {
        [one] => one.to_string(),
        [] => String::new(),
        many => format!("{{ {} }}", many.join(" ")),
    };
    let kw = if k.is_mls() {
        "mlsconstrain"
    } else {
        "constrain"
    };
    format!(
        "{kw} {} {perms} ({}); ",
        index.class_name(class),
        constraint_expr(index, &k.expr)
    )
}

/// A `validatetrans`/`mlsvalidatetrans` statement as setools writes it.
pub(crate) fn validatetrans_statement(index: &Index<'_>, class: ClassId, k: &Constraint) -> String {
    let kw = if k.is_mls() {
        "mlsvalidatetrans"
    } else {
        "validatetrans"
    };
    format!(
        "{kw} {} ({});",
        index.class_name(class),
        constraint_expr(index, &k.expr)
    )
}

/// The value of a `default_user`/`default_role`/`default_type` rule (`None`: no rule).
pub(crate) fn default_side(s: DefaultSide) -> Option<&'static str> {
    match s {
        DefaultSide::None => None,
        DefaultSide::Source => Some("source"),
        DefaultSide::Target => Some("target"),
    }
}

/// A `default_range` rule as setools splits it: the default (`source`, `target`,
/// `glblub`) and the range part (`low`, `high`, `low_high`; none for `glblub`).
pub(crate) fn default_range_parts(r: DefaultRange) -> Option<(&'static str, Option<&'static str>)> {
    match r {
        DefaultRange::None => None,
        DefaultRange::SourceLow => Some(("source", Some("low"))),
        DefaultRange::SourceHigh => Some(("source", Some("high"))),
        DefaultRange::SourceLowHigh => Some(("source", Some("low_high"))),
        DefaultRange::TargetLow => Some(("target", Some("low"))),
        DefaultRange::TargetHigh => Some(("target", Some("high"))),
        DefaultRange::TargetLowHigh => Some(("target", Some("low_high"))),
        DefaultRange::Glblub => Some(("glblub", None)),
    }
}

/// The keyword of an fs_use statement.
pub(crate) fn fs_use_keyword(b: FsUseBehavior) -> String {
    match b {
        FsUseBehavior::Xattr => "fs_use_xattr".to_string(),
        FsUseBehavior::Trans => "fs_use_trans".to_string(),
        FsUseBehavior::Task => "fs_use_task".to_string(),
        other => format!("{other:?}"),
    }
}

/// A genfscon's file type flag (`--`, `-d`...) from its class value; empty for none or a
/// class that is not a file class (setools drops those with a warning).
pub(crate) fn genfs_filetype(p: &Policy, class: u32) -> &'static str {
    let class = if class == 0 {
        ""
    } else {
        p.classes.get(class as usize - 1).map_or("", |c| &*c.name)
    };
    match class {
        "blk_file" => "-b",
        "chr_file" => "-c",
        "dir" => "-d",
        "fifo_file" => "-p",
        "file" => "--",
        "lnk_file" => "-l",
        "sock_file" => "-s",
        _ => "",
    }
}

/// An ibpkeycon statement up to its context: `ibpkeycon PREFIX 0xLOW[-0xHIGH]`.
pub(crate) fn ibpkeycon_head(k: &IbPkeyCon) -> String {
    let mut a = [0u8; 16];
    a[..8].copy_from_slice(&k.subnet_prefix);
    let keys = if k.low == k.high {
        format!("{:#x}", k.low)
    } else {
        format!("{:#x}-{:#x}", k.low, k.high)
    };
    format!("ibpkeycon {} {keys}", ipv6_text(&a))
}

/// A portcon statement up to its context: `portcon PROTO LOW[-HIGH]`.
pub(crate) fn portcon_head(pc: &PortCon) -> String {
    let proto = match pc.protocol {
        6 => "tcp".to_string(),
        17 => "udp".to_string(),
        33 => "dccp".to_string(),
        132 => "sctp".to_string(),
        other => other.to_string(),
    };
    if pc.low == pc.high {
        format!("portcon {proto} {}", pc.low)
    } else {
        format!("portcon {proto} {}-{}", pc.low, pc.high)
    }
}

/// An IPv4 nodecon statement up to its context: `nodecon NETWORK NETMASK`, normalised as
/// Python's `ip_network` does.
pub(crate) fn nodecon_head4(addr: [u8; 4], mask: [u8; 4]) -> String {
    let (net, prefix) = network4(addr, mask);
    format!("nodecon {} {}", dotted(&net), dotted(&mask4(prefix)))
}

/// An IPv6 nodecon statement up to its context.
pub(crate) fn nodecon_head6(addr: [u8; 16], mask: [u8; 16]) -> String {
    let (net, prefix) = network6(addr, mask);
    format!("nodecon {} {}", ipv6_text(&net), ipv6_text(&mask6(prefix)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn default_policy() -> Policy {
        Policy::from_bytes(include_bytes!("../../../policies/bin/default.33")).expect("policy")
    }

    #[test]
    fn every_component_is_found_by_its_name_and_an_unknown_one_is_an_error() {
        for c in InfoComponent::ALL {
            assert_eq!(InfoComponent::from_name(c.name()), Ok(c));
        }
        assert_eq!(
            InfoComponent::from_name("types"),
            Err(UnknownComponent("types".into()))
        );
    }

    #[test]
    fn a_malformed_number_filter_is_an_error_not_a_panic() {
        let policy = default_policy();
        let index = Index::new(&policy);
        for bad in ["", "-", "80-", "1-2-3", "x"] {
            assert!(
                InfoComponent::Portcon.items(&index, Some(bad)).is_err(),
                "{bad:?}"
            );
            assert!(
                InfoComponent::Ibpkeycon.items(&index, Some(bad)).is_err(),
                "{bad:?}"
            );
        }
        assert!(InfoComponent::Portcon.items(&index, Some("80")).is_ok());
    }

    #[test]
    fn the_command_line_names_components_by_their_options() {
        let args: Vec<String> = ["POLICY", "-t", "httpd_t", "--portcon", "80", "-b"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let a = InfoArgs::parse(&args).expect("parses");
        assert_eq!(
            a.components,
            vec![
                (InfoComponent::Bool, None),
                (InfoComponent::Portcon, Some("80".into())),
                (InfoComponent::Type, Some("httpd_t".into())),
            ]
        );
        let bad: Vec<String> = ["POLICY", "--portcon", "80-x"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(InfoArgs::parse(&bad).is_err());
    }
}

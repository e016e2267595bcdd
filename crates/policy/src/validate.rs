//! Whole-policy checks run after reading: cross-references the reader could not check in
//! file order (bitmaps naming types that come later, bounds, contexts), as the kernel's
//! `policydb_index`, `policydb_context_isvalid` and `policydb_bounds_sanity_check` do, plus
//! the reference checks of libsepol's `policydb_validate` where the kernel would crash or
//! misbehave on what it does not check.
//!
//! Context validity is public ([`Policy::context_is_valid`]) because the security server
//! must apply exactly the same rule to contexts it is handed at run time.

use crate::constraint::{attr, Constraint, ConstraintExpr};
use crate::ebitmap::Ebitmap;
use crate::error::{PolicyError, Result};
use crate::ids::RoleId;
use crate::mls::{Context, MlsLevel, MlsRange};
use crate::policy::{version, Policy};
use crate::symbols::TypeFlavor;

/// `POLICYDB_BOUNDS_MAXDEPTH`: a bounds chain may climb at most this many - 1 levels.
const BOUNDS_MAX_DEPTH: usize = 4;

pub(crate) fn validate(p: &Policy) -> Result<()> {
    check_roles(p)?;
    check_users(p)?;
    check_types(p)?;
    check_bounds(p)?;
    if p.mls {
        check_mls_symbols(p)?;
    }
    check_constraints(p)?;
    check_type_maps(p)?;
    check_rules(p)?;
    check_object_contexts(p)?;
    Ok(())
}

/// The failure of a cross-reference check: `what` names the record, `detail` the fault.
fn inconsistent(what: impl Into<String>, detail: impl std::fmt::Display) -> PolicyError {
    PolicyError::Inconsistent {
        what: what.into(),
        detail: detail.to_string(),
    }
}

/// Why a symbol reference, level, range or context is not valid in a policy: the kernel's
/// `*_isvalid` rules, each variant carrying the offending values. Its text is the detail of
/// [`PolicyError::Inconsistent`] at load and the reason of the security server's
/// invalid-context errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    /// A value outside its symbol table.
    #[error("{table} value {value} is outside 1..={count}")]
    OutOfRange {
        /// The table (`type`, `role`, `sensitivity`, ...).
        table: &'static str,
        /// The 1-based value.
        value: usize,
        /// The table's size.
        count: usize,
    },
    /// A value inside the table that no symbol has.
    #[error("{table} value {value} is not declared (no symbol has it)")]
    Undeclared {
        /// The table.
        table: &'static str,
        /// The 1-based value.
        value: usize,
    },
    /// A bitmap naming a value past the end of its table.
    #[error("bitmap names {table} value {value}, but there are only {count}")]
    BitmapOutOfRange {
        /// The table.
        table: &'static str,
        /// The highest 1-based value named.
        value: usize,
        /// The table's size.
        count: usize,
    },
    /// A bitmap naming a value no symbol has.
    #[error("bitmap names {table} value {value}, which no symbol has")]
    BitmapUndeclared {
        /// The table.
        table: &'static str,
        /// The 1-based value.
        value: usize,
    },
    /// An attribute or unnamed value where a type proper is required.
    #[error("{0} is not a type (an attribute or unnamed value)")]
    NotAType(String),
    /// The role is not authorised for the type.
    #[error("role `{role}` may not have {ty}")]
    RoleType {
        /// The role's name.
        role: String,
        /// The type, by name where it has one.
        ty: String,
    },
    /// The user is not authorised for the role.
    #[error("user `{user}` may not have role `{role}`")]
    UserRole {
        /// The user's name.
        user: String,
        /// The role's name.
        role: String,
    },
    /// The context's range is not within its user's range.
    #[error("range {range} is not within the range {user_range} of user `{user}`")]
    OutsideUserRange {
        /// The context's range.
        range: String,
        /// The user's range.
        user_range: String,
        /// The user's name.
        user: String,
    },
    /// A range whose high level does not dominate its low level.
    #[error("range {0}: the high level does not dominate the low level")]
    HighBelowLow(String),
    /// A type attribute named where a context needs a type (the kernel's context parser
    /// refuses attributes; the load-time check accepts them in stored contexts).
    #[error("{0} is a type attribute, not a type")]
    AttributeAsType(String),
    /// `default_range glblub` of two ranges with no common level: no label exists.
    #[error("default_range glblub of disjoint ranges")]
    DisjointGlblub,
    /// A category its level's sensitivity does not allow.
    #[error("{category} is not allowed with sensitivity `{sensitivity}`")]
    CategoryNotAllowed {
        /// The category, by name where it has one.
        category: String,
        /// The sensitivity's name.
        sensitivity: String,
    },
}

/// The symbol tables an ebitmap or value may index.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Sym {
    Type,
    Role,
    User,
    Bool,
    Sens,
    Cat,
}

impl Sym {
    fn noun(self) -> &'static str {
        match self {
            Sym::Type => "type",
            Sym::Role => "role",
            Sym::User => "user",
            Sym::Bool => "boolean",
            Sym::Sens => "sensitivity",
            Sym::Cat => "category",
        }
    }
}

impl Policy {
    /// Number of values of a table.
    fn sym_count(&self, s: Sym) -> usize {
        match s {
            Sym::Type => self.types.len(),
            Sym::Role => self.roles.len(),
            Sym::User => self.users.len(),
            Sym::Bool => self.bools.len(),
            Sym::Sens => self.sensitivities.len(),
            Sym::Cat => self.categories.len(),
        }
    }

    /// The name of the datum at `index`; empty for a value the file leaves unnamed.
    fn sym_name(&self, s: Sym, index: usize) -> &str {
        match s {
            Sym::Type => &self.types[index].name,
            Sym::Role => &self.roles[index].name,
            Sym::User => &self.users[index].name,
            Sym::Bool => &self.bools[index].name,
            Sym::Sens => &self.sensitivities[index].name,
            Sym::Cat => &self.categories[index].name,
        }
    }

    /// "type `init_t`", or "type value 7" when unnamed or out of range.
    fn sym_label(&self, s: Sym, index: usize) -> String {
        match (index < self.sym_count(s)).then(|| self.sym_name(s, index)) {
            Some(name) if !name.is_empty() => format!("{} `{name}`", s.noun()),
            _ => format!("{} value {}", s.noun(), index + 1),
        }
    }

    /// Checks that a 1-based `value` names a datum of table `s`. Unnamed types pass: they
    /// are attributes of policies before version 24, usable wherever attributes are.
    fn check_value(&self, s: Sym, value: usize) -> std::result::Result<(), Invalid> {
        let n = self.sym_count(s);
        if value == 0 || value > n {
            return Err(Invalid::OutOfRange {
                table: s.noun(),
                value,
                count: n,
            });
        }
        if s != Sym::Type && self.sym_name(s, value - 1).is_empty() {
            return Err(Invalid::Undeclared {
                table: s.noun(),
                value,
            });
        }
        Ok(())
    }

    /// Checks that every bit of `map` (bit i = value i + 1) names a datum of table `s`.
    fn check_bits(&self, s: Sym, map: &Ebitmap) -> std::result::Result<(), Invalid> {
        let n = self.sym_count(s);
        if map.end() as usize > n {
            return Err(Invalid::BitmapOutOfRange {
                table: s.noun(),
                value: map.end() as usize,
                count: n,
            });
        }
        if s != Sym::Type {
            if let Some(bit) = map
                .iter()
                .find(|&b| self.sym_name(s, b as usize).is_empty())
            {
                return Err(Invalid::BitmapUndeclared {
                    table: s.noun(),
                    value: bit as usize + 1,
                });
            }
        }
        Ok(())
    }

    /// Whether `id` is within the type table and is a type proper (not an attribute, not an
    /// unnamed value): what bounds, permissive maps and new types of rules must name.
    fn check_simple_type(&self, value: usize) -> std::result::Result<(), Invalid> {
        match self.types.get(value.wrapping_sub(1)) {
            Some(t) if t.flavor == TypeFlavor::Type => Ok(()),
            Some(_) => Err(Invalid::NotAType(self.sym_label(Sym::Type, value - 1))),
            None => Err(Invalid::OutOfRange {
                table: Sym::Type.noun(),
                value,
                count: self.types.len(),
            }),
        }
    }

    /// Checks a security context as the kernel's `policydb_context_isvalid` does, for
    /// contexts stored in the policy and for contexts the security server is handed:
    ///
    /// - user, role and type name declared symbols;
    /// - unless the role is `object_r` (value 1, the role of objects), the role may have the
    ///   type and the user may have the role;
    /// - in an MLS policy, the range is valid ([`Policy::mls_range_is_valid`]) and, unless
    ///   the role is `object_r`, lies within the user's range.
    ///
    /// Attributes are accepted as types here, as in the kernel, whose context-string parser
    /// refuses them separately. Non-MLS policies store a range (from version 19) that is
    /// ignored.
    pub fn context_is_valid(&self, c: &Context) -> std::result::Result<(), Invalid> {
        self.check_value(Sym::User, c.user.value() as usize)?;
        self.check_value(Sym::Role, c.role.value() as usize)?;
        self.check_value(Sym::Type, c.ty.value() as usize)?;
        if self.types[c.ty.index()].flavor == TypeFlavor::Unnamed {
            return Err(Invalid::Undeclared {
                table: Sym::Type.noun(),
                value: c.ty.value() as usize,
            });
        }
        let exempt = is_object_r(c.role);
        if !exempt {
            let role = self.role(c.role);
            if !role.types.contains(c.ty.index() as u32) {
                return Err(Invalid::RoleType {
                    role: role.name.to_string(),
                    ty: self.sym_label(Sym::Type, c.ty.index()),
                });
            }
            let user = self.user(c.user);
            if !user.roles.contains(c.role.index() as u32) {
                return Err(Invalid::UserRole {
                    user: user.name.to_string(),
                    role: role.name.to_string(),
                });
            }
        }
        if self.mls {
            self.mls_range_is_valid(&c.range)?;
            if !exempt {
                let user = self.user(c.user);
                if !range_contains(&user.range, &c.range) {
                    return Err(Invalid::OutsideUserRange {
                        range: self.range_label(&c.range),
                        user_range: self.range_label(&user.range),
                        user: user.name.to_string(),
                    });
                }
            }
        }
        Ok(())
    }

    /// The kernel's `mls_range_isvalid`: both levels valid and the high level dominating
    /// the low one.
    pub fn mls_range_is_valid(&self, r: &MlsRange) -> std::result::Result<(), Invalid> {
        self.mls_level_is_valid(&r.low)?;
        self.mls_level_is_valid(&r.high)?;
        if !r.high.dominates(&r.low) {
            return Err(Invalid::HighBelowLow(self.range_label(r)));
        }
        Ok(())
    }

    /// The kernel's `mls_level_isvalid`: the sensitivity is declared, and every category is
    /// declared and allowed for that sensitivity by its `level` statement.
    pub fn mls_level_is_valid(&self, l: &MlsLevel) -> std::result::Result<(), Invalid> {
        self.check_value(Sym::Sens, l.sens as usize)?;
        let sens = &self.sensitivities[l.sens as usize - 1];
        if !sens.level.cats.contains_all(&l.cats) {
            let bad = l
                .cats
                .iter()
                .find(|&b| !sens.level.cats.contains(b))
                .unwrap_or(0);
            return Err(Invalid::CategoryNotAllowed {
                category: self.sym_label(Sym::Cat, bad as usize),
                sensitivity: sens.name.to_string(),
            });
        }
        Ok(())
    }

    /// A range for messages: `s0-s1:c0,c1` style, by name where the values have one.
    fn range_label(&self, r: &MlsRange) -> String {
        let level = |l: &MlsLevel| {
            let sens = match self.sensitivities.get((l.sens as usize).wrapping_sub(1)) {
                Some(s) if !s.name.is_empty() => s.name.to_string(),
                _ => format!("sensitivity value {}", l.sens),
            };
            if l.cats.is_empty() {
                return sens;
            }
            let cats: Vec<String> = l
                .cats
                .iter()
                .take(8)
                .map(|b| match self.categories.get(b as usize) {
                    Some(c) if !c.name.is_empty() => c.name.to_string(),
                    _ => format!("#{}", b + 1),
                })
                .collect();
            let more = if l.cats.len() > 8 { ",..." } else { "" };
            format!("{sens}:{}{more}", cats.join(","))
        };
        if r.low == r.high {
            level(&r.low)
        } else {
            format!("{}-{}", level(&r.low), level(&r.high))
        }
    }
}

/// Whether the role is [`crate::symbols::OBJECT_R`] (`OBJECT_R_VAL`), exempt from role/type
/// and user/role authorisation.
fn is_object_r(role: RoleId) -> bool {
    role.value() == 1
}

/// The kernel's `mls_range_contains(outer, inner)`.
fn range_contains(outer: &MlsRange, inner: &MlsRange) -> bool {
    inner.low.dominates(&outer.low) && outer.high.dominates(&inner.high)
}

fn check_roles(p: &Policy) -> Result<()> {
    for (i, role) in p.roles.iter().enumerate() {
        if role.name.is_empty() {
            continue;
        }
        let what = || format!("role `{}`", role.name);
        p.check_bits(Sym::Role, &role.dominates)
            .map_err(|e| inconsistent(what(), format!("dominates: {e}")))?;
        p.check_bits(Sym::Type, &role.types)
            .map_err(|e| inconsistent(what(), format!("types: {e}")))?;
        if let Some(b) = role.bounds {
            p.check_value(Sym::Role, b.value() as usize)
                .map_err(|e| inconsistent(what(), format!("bounds: {e}")))?;
            if b.index() == i {
                return Err(inconsistent(what(), "bounds itself"));
            }
        }
    }
    Ok(())
}

fn check_users(p: &Policy) -> Result<()> {
    for user in p.users.iter().filter(|u| !u.name.is_empty()) {
        let what = || format!("user `{}`", user.name);
        p.check_bits(Sym::Role, &user.roles)
            .map_err(|e| inconsistent(what(), format!("roles: {e}")))?;
        if let Some(b) = user.bounds {
            p.check_value(Sym::User, b.value() as usize)
                .map_err(|e| inconsistent(what(), format!("bounds: {e}")))?;
        }
        // libsepol checks the user's levels name declared symbols; the kernel trusts them
        // and would index its tables with them when computing a login range.
        if p.mls {
            for (label, l) in [
                ("range low level", &user.range.low),
                ("range high level", &user.range.high),
                ("default level", &user.default_level),
            ] {
                check_level_symbols(p, l)
                    .map_err(|e| inconsistent(what(), format!("{label}: {e}")))?;
            }
        }
    }
    Ok(())
}

/// The sensitivity and categories of a level name declared symbols.
fn check_level_symbols(p: &Policy, l: &MlsLevel) -> std::result::Result<(), Invalid> {
    p.check_value(Sym::Sens, l.sens as usize)?;
    p.check_bits(Sym::Cat, &l.cats)
}

fn check_types(p: &Policy) -> Result<()> {
    for t in &p.types {
        let Some(b) = t.bounds else { continue };
        let what = || format!("type `{}`", t.name);
        // The kernel's type_bounds_sanity_check refuses a bound that is an attribute; an
        // unnamed bound would make it dereference a null datum. libsepol also refuses
        // bounds on attributes.
        if t.flavor == TypeFlavor::Attribute {
            return Err(inconsistent(what(), "an attribute cannot have a bound"));
        }
        p.check_simple_type(b.value() as usize)
            .map_err(|e| inconsistent(what(), format!("bounded by {e}")))?;
    }
    Ok(())
}

/// The kernel's `policydb_bounds_sanity_check` (from version 24): no bounds chain longer
/// than [`BOUNDS_MAX_DEPTH`] - 1 (which also catches loops); every role a bounded user
/// has, each of its bounding users has; likewise every type of a bounded role.
fn check_bounds(p: &Policy) -> Result<()> {
    if p.version < version::BOUNDARY {
        return Ok(());
    }
    for (i, user) in p.users.iter().enumerate() {
        let chain = bounds_chain(i, |j| p.users[j].bounds.map(|b| b.index()));
        let what = || format!("user `{}`", user.name);
        for upper in chain.map_err(|()| inconsistent(what(), "too deep or looped bounds"))? {
            let upper = &p.users[upper];
            if let Some(bit) = user.roles.iter().find(|&r| !upper.roles.contains(r)) {
                return Err(inconsistent(
                    what(),
                    format!(
                        "has {} beyond its bound `{}`",
                        p.sym_label(Sym::Role, bit as usize),
                        upper.name
                    ),
                ));
            }
        }
    }
    for (i, role) in p.roles.iter().enumerate() {
        let chain = bounds_chain(i, |j| p.roles[j].bounds.map(|b| b.index()));
        let what = || format!("role `{}`", role.name);
        for upper in chain.map_err(|()| inconsistent(what(), "too deep or looped bounds"))? {
            let upper = &p.roles[upper];
            if let Some(bit) = role.types.iter().find(|&t| !upper.types.contains(t)) {
                return Err(inconsistent(
                    what(),
                    format!(
                        "has {} beyond its bound `{}`",
                        p.sym_label(Sym::Type, bit as usize),
                        upper.name
                    ),
                ));
            }
        }
    }
    for (i, t) in p.types.iter().enumerate() {
        bounds_chain(i, |j| p.types[j].bounds.map(|b| b.index())).map_err(|()| {
            inconsistent(format!("type `{}`", t.name), "too deep or looped bounds")
        })?;
    }
    Ok(())
}

/// The datums above `start` in its bounds chain, nearest first; `Err` when the chain
/// reaches [`BOUNDS_MAX_DEPTH`] links (the kernel's `++depth == POLICYDB_BOUNDS_MAXDEPTH`).
fn bounds_chain(
    start: usize,
    bound_of: impl Fn(usize) -> Option<usize>,
) -> std::result::Result<Vec<usize>, ()> {
    let mut chain = Vec::new();
    let mut cur = start;
    while let Some(upper) = bound_of(cur) {
        if chain.len() + 1 == BOUNDS_MAX_DEPTH {
            return Err(());
        }
        chain.push(upper);
        cur = upper;
    }
    Ok(chain)
}

/// Sensitivities' allowed categories name declared categories (libsepol); aliases were
/// resolved when read.
fn check_mls_symbols(p: &Policy) -> Result<()> {
    for s in p.sensitivities.iter().filter(|s| !s.name.is_empty()) {
        p.check_bits(Sym::Cat, &s.level.cats)
            .map_err(|e| inconsistent(format!("sensitivity `{}`", s.name), e))?;
    }
    Ok(())
}

/// Name sets of constraint terms index the table their attribute names.
fn check_constraints(p: &Policy) -> Result<()> {
    for class in &p.classes {
        for (kind, list) in [
            ("constraint", &class.constraints),
            ("validatetrans", &class.validatetrans),
        ] {
            for (i, cons) in list.iter().enumerate() {
                check_constraint(p, cons)
                    .map_err(|e| inconsistent(format!("class `{}` {kind} {i}", class.name), e))?;
            }
        }
    }
    Ok(())
}

fn check_constraint(p: &Policy, cons: &Constraint) -> std::result::Result<(), String> {
    for (j, term) in cons.expr.iter().enumerate() {
        let ConstraintExpr::Names {
            attr: a,
            names,
            type_names,
            ..
        } = term
        else {
            continue;
        };
        let sym = match a & !(attr::TARGET | attr::XTARGET) {
            attr::USER => Sym::User,
            attr::ROLE => Sym::Role,
            _ => Sym::Type,
        };
        p.check_bits(sym, names)
            .map_err(|e| format!("term {j} names: {e}"))?;
        if let Some(ts) = type_names {
            p.check_bits(Sym::Type, &ts.types)
                .and_then(|()| p.check_bits(Sym::Type, &ts.negset))
                .map_err(|e| format!("term {j} type set: {e}"))?;
        }
    }
    Ok(())
}

/// The permissive and neveraudit maps and the type→attribute map.
fn check_type_maps(p: &Policy) -> Result<()> {
    // These two are indexed by type *value* (the kernel tests bit `scontext->type`), so bit
    // 0 is never set; libsepol requires each to be a type proper.
    for (what, map) in [
        ("permissive types", &p.permissive),
        ("neveraudit types", &p.neveraudit),
    ] {
        for bit in map.iter() {
            p.check_simple_type(bit as usize)
                .map_err(|e| inconsistent(what, e))?;
        }
    }
    if p.type_attr_map.len() != p.types.len() {
        return Err(inconsistent(
            "type attribute map",
            format!(
                "{} maps for {} type values",
                p.type_attr_map.len(),
                p.types.len()
            ),
        ));
    }
    for (i, (map, t)) in p.type_attr_map.iter().zip(&p.types).enumerate() {
        let what = || format!("type attribute map of {}", p.sym_label(Sym::Type, i));
        p.check_bits(Sym::Type, map)
            .map_err(|e| inconsistent(what(), e))?;
        // An attribute stands for its types; it has no attributes of its own in a kernel
        // policy (libsepol refuses them).
        if t.flavor == TypeFlavor::Attribute {
            if let Some(other) = map.iter().find(|&b| b as usize != i) {
                return Err(inconsistent(
                    what(),
                    format!(
                        "an attribute cannot have attributes, but it has {}",
                        p.sym_label(Sym::Type, other as usize)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// References of rules that the reader checked only for range: booleans of conditional
/// expressions, roles of role rules, filename-transition sources and new types, and range
/// transitions' ranges (which the kernel's `range_read` checks with `mls_range_isvalid`).
fn check_rules(p: &Policy) -> Result<()> {
    for (i, node) in p.cond_nodes.iter().enumerate() {
        for e in node.expr.iter() {
            if let crate::cond::CondExpr::Bool(b) = e {
                p.check_value(Sym::Bool, b.value() as usize)
                    .map_err(|e| inconsistent(format!("conditional {i} expression"), e))?;
            }
        }
    }
    for rt in &p.role_trans {
        let what = || format!("role_transition of role value {}", rt.role.value());
        p.check_value(Sym::Role, rt.role.value() as usize)
            .and_then(|()| p.check_value(Sym::Role, rt.new_role.value() as usize))
            .map_err(|e| inconsistent(what(), e))?;
    }
    for ra in &p.role_allow {
        p.check_value(Sym::Role, ra.role.value() as usize)
            .and_then(|()| p.check_value(Sym::Role, ra.new_role.value() as usize))
            .map_err(|e| inconsistent("role allow rule", e))?;
    }
    for ft in &p.filename_trans {
        let what = || {
            format!(
                "filename transition \"{}\" on {}",
                ft.name,
                p.sym_label(Sym::Type, ft.target.index())
            )
        };
        for (sources, new_type) in ft.outcomes.iter() {
            p.check_bits(Sym::Type, sources)
                .map_err(|e| inconsistent(what(), format!("source types: {e}")))?;
            p.check_simple_type(new_type.value() as usize)
                .map_err(|e| inconsistent(what(), format!("new type: {e}")))?;
        }
    }
    for rt in &p.range_trans {
        p.mls_range_is_valid(&rt.range).map_err(|e| {
            inconsistent(
                format!(
                    "range_transition {} {}",
                    p.sym_label(Sym::Type, rt.source.index()),
                    p.sym_label(Sym::Type, rt.target.index())
                ),
                e,
            )
        })?;
    }
    Ok(())
}

/// Every stored context: initial SIDs, object contexts and genfscon entries.
fn check_object_contexts(p: &Policy) -> Result<()> {
    let o = &p.ocontexts;
    let check = |what: &dyn Fn() -> String, c: &Context| {
        p.context_is_valid(c)
            .map_err(|e| inconsistent(format!("{} context", what()), e))
    };
    for s in &o.initial_sids {
        check(&|| format!("initial SID {}", s.sid), &s.context)?;
    }
    for f in &o.fs {
        check(&|| format!("fscon {}", f.name), &f.context)?;
        check(&|| format!("fscon {} file", f.name), &f.file_context)?;
    }
    for port in &o.ports {
        check(
            &|| format!("portcon {} {}-{}", port.protocol, port.low, port.high),
            &port.context,
        )?;
    }
    for n in &o.netifs {
        check(&|| format!("netifcon {}", n.name), &n.if_context)?;
        check(&|| format!("netifcon {} message", n.name), &n.msg_context)?;
    }
    for n in &o.nodes {
        check(&|| format!("nodecon {:?}/{:?}", n.addr, n.mask), &n.context)?;
    }
    for f in &o.fs_use {
        check(&|| format!("fs_use {}", f.fstype), &f.context)?;
    }
    for n in &o.nodes6 {
        check(&|| format!("nodecon6 {:x?}", n.addr), &n.context)?;
    }
    for k in &o.ibpkeys {
        check(&|| format!("ibpkeycon {}-{}", k.low, k.high), &k.context)?;
    }
    for e in &o.ibendports {
        check(
            &|| format!("ibendportcon {} {}", e.device, e.port),
            &e.context,
        )?;
    }
    for g in &p.genfs {
        check(&|| format!("genfscon {} {}", g.fstype, g.path), &g.context)?;
    }
    for (label, c) in o.xen.labeled_contexts() {
        check(&|| label.clone(), c)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{BoolId, ClassId, TypeId, UserId};
    use crate::policy::HandleUnknown;
    use crate::symbols::{Bool, Category, Role, Sensitivity, TypeDatum, User, OBJECT_R};
    use crate::transitions::{FilenameTrans, RangeTrans, RoleTrans};

    fn level(sens: u32, cats: &[u32]) -> MlsLevel {
        MlsLevel {
            sens,
            cats: Ebitmap::from_bits(cats.iter().copied()),
        }
    }

    fn range(low: MlsLevel, high: MlsLevel) -> MlsRange {
        MlsRange { low, high }
    }

    fn role(name: &str, types: &[u32]) -> Role {
        Role {
            name: name.into(),
            bounds: None,
            dominates: Ebitmap::default(),
            types: Ebitmap::from_bits(types.iter().copied()),
        }
    }

    fn ty(name: &str, flavor: TypeFlavor) -> TypeDatum {
        TypeDatum {
            name: name.into(),
            flavor,
            bounds: None,
        }
    }

    fn user(name: &str, roles: &[u32], r: MlsRange) -> User {
        User {
            name: name.into(),
            bounds: None,
            roles: Ebitmap::from_bits(roles.iter().copied()),
            range: r.clone(),
            default_level: r.low,
        }
    }

    /// An MLS policy: roles object_r, r (types t1, t2); types t1, t2, attribute a,
    /// t3; users u (role r, s0-s1:c0.c1), v (role r, s0); s0 allows c0, s1 allows c0, c1.
    fn policy() -> Policy {
        let types = vec![
            ty("t1", TypeFlavor::Type),
            ty("t2", TypeFlavor::Type),
            ty("a", TypeFlavor::Attribute),
            ty("t3", TypeFlavor::Type),
        ];
        let n = types.len() as u32;
        Policy {
            version: 33,
            mls: true,
            handle_unknown: HandleUnknown::Deny,
            policycaps: Ebitmap::default(),
            permissive: Ebitmap::default(),
            neveraudit: Ebitmap::default(),
            commons: vec![],
            classes: vec![],
            roles: vec![role(OBJECT_R, &[]), role("r", &[0, 1])],
            types,
            type_aliases: vec![],
            users: vec![
                user("u", &[1], range(level(1, &[]), level(2, &[0, 1]))),
                user("v", &[1], range(level(1, &[]), level(1, &[]))),
            ],
            bools: vec![Bool {
                name: "b".into(),
                state: false,
            }],
            sensitivities: vec![
                Sensitivity {
                    name: "s0".into(),
                    level: level(1, &[0]),
                },
                Sensitivity {
                    name: "s1".into(),
                    level: level(2, &[0, 1]),
                },
            ],
            sensitivity_aliases: vec![],
            categories: vec![
                Category { name: "c0".into() },
                Category { name: "c1".into() },
            ],
            category_aliases: vec![],
            avtab: Default::default(),
            cond_nodes: vec![],
            cond_avtab: Default::default(),
            role_trans: vec![],
            role_allow: vec![],
            filename_trans: vec![],
            ocontexts: Default::default(),
            genfs: vec![],
            range_trans: vec![],
            type_attr_map: (0..n).map(|i| Ebitmap::from_bits([i])).collect(),
        }
    }

    fn ctx(user: u32, role: u32, ty: u16, r: MlsRange) -> Context {
        Context {
            user: UserId::new(user).unwrap(),
            role: RoleId::new(role).unwrap(),
            ty: TypeId::new(ty).unwrap(),
            range: r,
        }
    }

    fn s0() -> MlsRange {
        range(level(1, &[]), level(1, &[]))
    }

    fn err_of(p: &Policy) -> String {
        match validate(p) {
            Err(PolicyError::Inconsistent { what, detail }) => format!("{what}: {detail}"),
            other => panic!("expected Inconsistent, got {other:?}"),
        }
    }

    #[test]
    fn the_test_policy_is_valid() {
        validate(&policy()).unwrap();
    }

    #[test]
    fn context_needs_role_type_and_user_role_authorisation() {
        let p = policy();
        p.context_is_valid(&ctx(1, 2, 1, s0())).unwrap();
        let e = p.context_is_valid(&ctx(1, 2, 4, s0())).unwrap_err();
        assert_eq!(e.to_string(), "role `r` may not have type `t3`");
        let mut q = policy();
        q.users[0].roles = Ebitmap::default();
        let e = q.context_is_valid(&ctx(1, 2, 1, s0())).unwrap_err();
        assert_eq!(e.to_string(), "user `u` may not have role `r`");
    }

    #[test]
    fn object_r_contexts_skip_role_and_user_range_checks() {
        let p = policy();
        // t3 is in no role, and s1:c1 is beyond user v's range: fine for object_r.
        p.context_is_valid(&ctx(2, 1, 4, range(level(2, &[1]), level(2, &[1]))))
            .unwrap();
        // But the range itself must still be valid.
        let e = p
            .context_is_valid(&ctx(2, 1, 4, range(level(1, &[1]), level(1, &[1]))))
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("category `c1` is not allowed with sensitivity `s0`"),
            "{e}"
        );
    }

    #[test]
    fn context_range_must_be_within_the_users_range() {
        let p = policy();
        p.context_is_valid(&ctx(1, 2, 1, range(level(1, &[]), level(2, &[1]))))
            .unwrap();
        let e = p
            .context_is_valid(&ctx(2, 2, 1, range(level(1, &[]), level(2, &[]))))
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("not within the range s0 of user `v`"),
            "{e}"
        );
    }

    #[test]
    fn mls_range_high_must_dominate_low() {
        let p = policy();
        let e = p
            .mls_range_is_valid(&range(level(2, &[]), level(1, &[])))
            .unwrap_err();
        assert!(e.to_string().contains("does not dominate"), "{e}");
        let e = p
            .mls_range_is_valid(&range(level(2, &[1]), level(2, &[0])))
            .unwrap_err();
        assert!(e.to_string().contains("does not dominate"), "{e}");
        assert!(p.mls_level_is_valid(&level(3, &[])).is_err());
        assert!(p.mls_level_is_valid(&level(0, &[])).is_err());
    }

    #[test]
    fn non_mls_policies_ignore_the_stored_range() {
        let mut p = policy();
        p.mls = false;
        p.context_is_valid(&ctx(1, 2, 1, MlsRange::default()))
            .unwrap();
    }

    #[test]
    fn contexts_out_of_range_or_unnamed_are_refused_without_panicking() {
        let mut p = policy();
        assert!(p.context_is_valid(&ctx(3, 2, 1, s0())).is_err());
        assert!(p.context_is_valid(&ctx(1, 3, 1, s0())).is_err());
        assert!(p.context_is_valid(&ctx(1, 2, 5, s0())).is_err());
        p.types[3] = ty("", TypeFlavor::Unnamed);
        assert!(p.context_is_valid(&ctx(1, 1, 4, s0())).is_err());
    }

    #[test]
    fn stored_contexts_are_checked() {
        let mut p = policy();
        p.ocontexts.initial_sids.push(crate::ocontext::InitialSid {
            sid: 3,
            context: ctx(1, 2, 4, s0()),
        });
        assert!(err_of(&p).starts_with("initial SID 3 context: role `r` may not have"));
    }

    #[test]
    fn typebounds_must_name_a_type_not_an_attribute() {
        let mut p = policy();
        p.types[0].bounds = TypeId::new(3);
        assert!(err_of(&p).contains("type `t1`: bounded by type `a` is not a type"));
        let mut p = policy();
        p.types[2].bounds = TypeId::new(1);
        assert!(err_of(&p).contains("an attribute cannot have a bound"));
    }

    #[test]
    fn bounds_loops_and_deep_chains_are_refused() {
        let mut p = policy();
        p.types[0].bounds = TypeId::new(2);
        p.types[1].bounds = TypeId::new(1);
        assert!(err_of(&p).contains("too deep or looped"));

        // Three links (t1 -> t2 -> t3 -> t4) are allowed; a fourth is not, loop or no loop.
        let mut p = policy();
        for name in ["t4", "t5"] {
            p.types.push(ty(name, TypeFlavor::Type));
            p.type_attr_map.push(Ebitmap::default());
        }
        p.types[0].bounds = TypeId::new(2);
        p.types[1].bounds = TypeId::new(4);
        p.types[3].bounds = TypeId::new(5);
        validate(&p).unwrap();
        p.types[4].bounds = TypeId::new(6);
        assert!(err_of(&p).contains("type `t1`: too deep or looped"));
    }

    #[test]
    fn bounded_roles_and_users_stay_within_their_bounds() {
        let mut p = policy();
        p.roles.push(role("child", &[0, 3]));
        p.roles[2].bounds = RoleId::new(2);
        assert!(err_of(&p).contains("role `child`: has type `t3` beyond its bound `r`"));

        let mut p = policy();
        p.users[1].roles = Ebitmap::from_bits([0, 1]);
        p.users[1].bounds = UserId::new(1);
        assert!(err_of(&p).contains("user `v`: has role `object_r` beyond its bound `u`"));
    }

    #[test]
    fn bitmaps_beyond_their_tables_are_refused() {
        let mut p = policy();
        p.roles[1].types = Ebitmap::from_bits([4]);
        assert!(err_of(&p).contains("role `r`: types: bitmap names type value 5"));

        let mut p = policy();
        p.users[0].roles = Ebitmap::from_bits([2]);
        assert!(err_of(&p).contains("user `u`: roles"));

        let mut p = policy();
        p.sensitivities[0].level.cats = Ebitmap::from_bits([2]);
        assert!(err_of(&p).contains("sensitivity `s0`"));

        let mut p = policy();
        p.type_attr_map[0] = Ebitmap::from_bits([0, 9]);
        assert!(err_of(&p).contains("type attribute map of type `t1`"));
    }

    #[test]
    fn bitmaps_naming_unnamed_roles_are_refused() {
        let mut p = policy();
        p.roles.push(role("", &[]));
        p.users[0].roles = Ebitmap::from_bits([1, 2]);
        assert!(err_of(&p).contains("role value 3, which no symbol has"));
    }

    #[test]
    fn permissive_bits_are_type_values() {
        let mut p = policy();
        p.permissive = Ebitmap::from_bits([1, 4]);
        validate(&p).unwrap();
        p.permissive = Ebitmap::from_bits([0]);
        assert!(err_of(&p).contains("permissive types: type value 0"));
        p.permissive = Ebitmap::from_bits([3]);
        assert!(err_of(&p).contains("type `a` is not a type"));
        let mut p = policy();
        p.neveraudit = Ebitmap::from_bits([5]);
        assert!(err_of(&p).starts_with("neveraudit types"));
    }

    #[test]
    fn attributes_have_no_attributes() {
        let mut p = policy();
        p.type_attr_map[2] = Ebitmap::from_bits([2, 0]);
        assert!(err_of(&p).contains("an attribute cannot have attributes"));
    }

    #[test]
    fn constraint_names_index_the_table_of_their_attribute() {
        use crate::constraint::ConstraintOp;
        let names_term = |a: u32, bits: &[u32]| ConstraintExpr::Names {
            attr: a,
            op: ConstraintOp::Eq,
            names: Ebitmap::from_bits(bits.iter().copied()),
            type_names: None,
        };
        let mut p = policy();
        p.classes.push(crate::symbols::Class {
            name: "file".into(),
            common: None,
            nprim: 1,
            perms: Box::new([]),
            constraints: Box::new([Constraint {
                perms: 1,
                expr: Box::new([names_term(attr::USER | attr::TARGET, &[1])]),
            }]),
            validatetrans: Box::new([]),
            default_user: Default::default(),
            default_role: Default::default(),
            default_type: Default::default(),
            default_range: Default::default(),
        });
        validate(&p).unwrap();
        p.classes[0].constraints = Box::new([Constraint {
            perms: 1,
            expr: Box::new([names_term(attr::USER, &[2])]),
        }]);
        assert!(err_of(&p).starts_with("class `file` constraint 0: term 0 names"));
        // Type sets of 29+ are checked too.
        p.classes[0].constraints = Box::new([Constraint {
            perms: 1,
            expr: Box::new([ConstraintExpr::Names {
                attr: attr::TYPE,
                op: ConstraintOp::Eq,
                names: Ebitmap::from_bits([0]),
                type_names: Some(Box::new(crate::constraint::TypeSet {
                    types: Ebitmap::from_bits([7]),
                    ..Default::default()
                })),
            }]),
        }]);
        assert!(err_of(&p).contains("type set"));
    }

    #[test]
    fn rules_must_name_declared_symbols() {
        let mut p = policy();
        p.roles.push(role("", &[]));
        p.role_trans.push(RoleTrans {
            role: RoleId::new(2).unwrap(),
            ty: TypeId::new(1).unwrap(),
            class: ClassId::new(1).unwrap(),
            new_role: RoleId::new(3).unwrap(),
        });
        assert!(err_of(&p).contains("role value 3 is not declared"));

        let mut p = policy();
        p.bools.push(Bool {
            name: "".into(),
            state: false,
        });
        p.cond_nodes.push(crate::cond::CondNode {
            cur_state: false,
            expr: Box::new([crate::cond::CondExpr::Bool(BoolId::new(2).unwrap())]),
            true_list: 0..0,
            false_list: 0..0,
        });
        assert!(err_of(&p).contains("boolean value 2 is not declared"));

        let mut p = policy();
        p.filename_trans.push(FilenameTrans {
            target: TypeId::new(1).unwrap(),
            class: ClassId::new(1).unwrap(),
            name: "x".into(),
            outcomes: Box::new([(Ebitmap::from_bits([0]), TypeId::new(3).unwrap())]),
        });
        assert!(err_of(&p).contains("new type: type `a` is not a type"));
    }

    #[test]
    fn range_transitions_need_valid_ranges() {
        let mut p = policy();
        p.range_trans.push(RangeTrans {
            source: TypeId::new(1).unwrap(),
            target: TypeId::new(2).unwrap(),
            class: ClassId::new(1).unwrap(),
            range: range(level(2, &[]), level(1, &[])),
        });
        assert!(err_of(&p).starts_with("range_transition type `t1` type `t2`"));
    }
}

//! Writes a [`Policy`] as a binary kernel policy of a chosen format version (15 to 35).
//!
//! Sections are written in the kernel's order, with the layout libsepol's `policydb_write`
//! uses for kernel policies of that version, so that the kernel, libsepol and this crate's
//! reader all load the result. By default ([`Layout::ValueOrder`]) symbols are written in
//! value order (libsepol writes its hash tables' order), so the bytes need not equal
//! checkpolicy's; what is guaranteed is that reading the output gives back the same model.
//!
//! This makes the writer a converter between versions:
//!
//! ```no_run
//! use arbiter_policy::{write::write_policy, Policy};
//! let p = Policy::open("/etc/selinux/default/policy/policy.33")?;
//! // Up-convert for a kernel that reads version 35, or down-convert for an old one.
//! std::fs::write("policy.35", write_policy(&p, 35)?)?;
//! std::fs::write("policy.30", write_policy(&p, 30)?)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`write_policy`] refuses, with [`WriteError::Unsupported`], to write anything the target
//! version cannot express (extended permissions in conditional rules below version 34,
//! `neveraudit` types below 35, filename transitions below 25, MLS below 19, ...): the
//! policy read back would differ from the one written, and silently losing rules changes
//! decisions. [`write_policy_with`] and [`WriteOptions::drop_unsupported`] ask for the
//! conversion anyway, as `checkpolicy -c` does: what the version cannot hold is left out
//! (or, for rules on attributes below version 20, expanded to the attributes' types as
//! libsepol does), and every such loss is listed in [`Written::dropped`].
//!
//! # libsepol 3.4's layout
//!
//! [`Layout::Libsepol34`] writes the bytes libsepol 3.4's `policydb_write` writes for the
//! same policy (what `secilc` and `semodule` on Debian 12 produce), for versions 24 to 33.
//! libsepol keeps symbols, the unconditional rules, filename transitions and range
//! transitions in hash tables and writes them in bucket order, so this mode sorts them the
//! same way (`write/layout.rs` holds libsepol's hash functions): symbol tables by
//! `symhash` bucket and name; the unconditional avtab by slot of a table of `avtab_slots`
//! buckets (secilc always allocates 2^20, whatever the policy's size), then (source,
//! target, class), entries of one key keeping the model's order; filename transition keys
//! and range transitions by their tables' buckets. Everything else (conditional lists,
//! role transitions and allows, object contexts) is written in the model's order, which a
//! compiler must build as libsepol does; genfs entries are written as secilc sorts them
//! (filesystem, then path). Details follow libsepol rather than the model where the two can
//! differ: a role's `dominates` always holds the role itself (object_r's is empty), and
//! what libsepol leaves out of older versions without failing (filename transitions below
//! 25, class defaults below 27, constraint type names below 29, `glblub` below 32, ...) is
//! left out and listed in [`Written::dropped`] whatever [`WriteOptions::drop_unsupported`]
//! says; what libsepol refuses (extended permissions below 30, MLS below 19) is refused.
//! Reading secilc's output and writing it back in this mode gives secilc's bytes; the
//! Debian 12 policies (2 MB, about 100 000 rules) take some tens of milliseconds.
//!
//! # Xen policies
//!
//! A model whose [`crate::ocontext::OContexts::platform`] is Xen is written as a "XenFlask"
//! policy (`write/xen.rs`): only at versions 24 and 30 (libsepol's Xen layouts), with
//! Xen's object contexts after the initial SIDs, in either layout. What a Xen policy
//! cannot hold is refused with [`WriteError::PlatformMismatch`]: Linux object contexts, and
//! extended permissions (libsepol refuses those for Xen); Xen contexts in a SELinux model
//! likewise.
//!
//! Nothing here validates the model beyond what the layout needs: a [`Policy`] from
//! [`Policy::from_bytes`] is valid, and one changed by hand should be read back
//! ([`Policy::from_bytes`] on the output) to have it checked.

use std::collections::{HashMap, HashSet};

mod filename;
pub(crate) mod layout;
mod unsupported;
mod xen;

use filename::per_rule;
/// libsepol 3.4's symbol-table walk order and the role and user tables' initial sizes:
/// secilc's bounds checks report violations in the order they walk those tables.
pub use layout::{symtab_order, ROLES as ROLE_TABLE_BUCKETS, USERS as USER_TABLE_BUCKETS};
pub use unsupported::Unsupported;

use crate::avtab::{Avtab, AvtabDatum, AvtabKey, AvtabKind, SPEC_ORDER};
use crate::cond::{CondExpr, CondNode};
use crate::constraint::{Constraint, ConstraintExpr, TypeSet};
use crate::ebitmap::Ebitmap;
use crate::header::{compat_table_sizes, platform_table_sizes};
use crate::ids::{ClassId, TypeId};
use crate::mls::{Context, MlsLevel, MlsRange};
use crate::policy::{version, HandleUnknown, Policy, MAX_VERSION, MIN_VERSION};
use crate::symbols::{DefaultRange, DefaultSide, Perm, TypeFlavor, OBJECT_R};
use crate::transitions::FilenameTrans;

use crate::format::{
    AVTAB_AV, AVTAB_ENABLED, AVTAB_ENABLED_OLD, CONFIG_ALLOW_UNKNOWN, CONFIG_MLS,
    CONFIG_REJECT_UNKNOWN, MAGIC, TYPE_PROPERTY_ATTRIBUTE, TYPE_PROPERTY_PRIMARY,
};

/// How to write: what to do with content the target version cannot hold, and in which
/// order. Build it with `..Default::default()`: fields may be added.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// Leave such content out (listing it in [`Written::dropped`]) instead of failing with
    /// [`WriteError::Unsupported`].
    pub drop_unsupported: bool,
    /// The order of symbols and rules in the file.
    pub layout: Layout,
}

/// The order in which tables are written (see the [module documentation](self)).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// Symbols in value order, everything else in the model's order.
    #[default]
    ValueOrder,
    /// libsepol 3.4's hash-table orders, for byte-identical output: the unconditional
    /// avtab is laid out as a table of `avtab_slots` buckets (a power of two; secilc's is
    /// `1 << 20`, libsepol's `policydb_read` sizes it from the rule count).
    Libsepol34 { avtab_slots: u32 },
}

/// The output of [`write_policy_with`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// The binary policy.
    pub bytes: Vec<u8>,
    /// What the target version could not hold and was left out (empty unless
    /// [`WriteOptions::drop_unsupported`] was set).
    pub dropped: Vec<Unsupported>,
}

/// Why a policy could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// The target version is outside what the format defines.
    #[error("cannot write policy version {version} (writable: {min} to {max})")]
    UnsupportedVersion { version: u32, min: u32, max: u32 },

    /// The policy holds something the target version cannot express.
    #[error(
        "a version {version} policy cannot hold {what} ({})",
        versions_text(what)
    )]
    Unsupported { version: u32, what: Unsupported },

    /// The policy holds something its platform cannot express (Linux object contexts or
    /// extended permissions in a Xen policy, Xen object contexts in a SELinux one).
    #[error("a {platform:?} policy cannot hold {what}")]
    PlatformMismatch {
        platform: crate::xen::Platform,
        what: String,
    },

    /// libsepol defines Xen policies of versions 24 and 30 only.
    #[error(
        "cannot write a Xen policy of version {version} (Xen policies have versions 24 and 30)"
    )]
    UnsupportedXenVersion { version: u32 },

    /// The model cannot be laid out at all (for example two type rules that conflict once
    /// attributes are expanded, or a table too large for the format's counts).
    #[error("cannot write the policy: {0}")]
    Invalid(String),
}

/// "needs version 35", "only versions 15 to 23".
fn versions_text(u: &Unsupported) -> String {
    let v = u.versions();
    if *v.end() == MAX_VERSION {
        format!("needs version {}", v.start())
    } else {
        format!("only versions {} to {}", v.start(), v.end())
    }
}

/// Writes `p` as a binary policy of format `version`, failing on anything that version
/// cannot express (see the [module documentation](self)).
pub fn write_policy(p: &Policy, version: u32) -> Result<Vec<u8>, WriteError> {
    write_policy_with(p, version, &WriteOptions::default()).map(|w| w.bytes)
}

/// Writes `p` as a binary policy of format `version`, with `opts` deciding what happens to
/// content the version cannot express.
pub fn write_policy_with(
    p: &Policy,
    version: u32,
    opts: &WriteOptions,
) -> Result<Written, WriteError> {
    if !(MIN_VERSION..=MAX_VERSION).contains(&version) {
        return Err(WriteError::UnsupportedVersion {
            version,
            min: MIN_VERSION,
            max: MAX_VERSION,
        });
    }
    let sepol_slots = match opts.layout {
        Layout::ValueOrder => None,
        Layout::Libsepol34 { avtab_slots } if avtab_slots.is_power_of_two() => Some(avtab_slots),
        Layout::Libsepol34 { avtab_slots } => {
            return Err(WriteError::Invalid(format!(
                "{avtab_slots} avtab slots: libsepol's tables have a power of two"
            )))
        }
    };
    let mut w = Writer {
        p,
        v: version,
        drop: opts.drop_unsupported,
        sepol_slots,
        dropped: Vec::new(),
        out: Out(Vec::with_capacity(size_hint(p))),
        mls: p.mls,
    };
    w.policy()?;
    Ok(Written {
        bytes: w.out.0,
        dropped: w.dropped,
    })
}

/// About the size of `p`'s binary policy, from the tables that make up most of it
/// (rules, types and their attribute maps, contexts, booleans): the output is reserved
/// once at this size. Grown by doubling from nothing, it was copied by `realloc` at each
/// step, about its final size in all, byte by byte in a profile. An estimate short of
/// the size costs one doubling; beyond it, address space that is never touched.
fn size_hint(p: &Policy) -> usize {
    // A context: user, role, type, and with MLS two levels (sensitivity, categories).
    let context = if p.mls { 72 } else { 16 };
    let types: usize = p.types.iter().map(|t| t.name.len() + 16).sum();
    let type_attr_map: usize = (p.type_attr_map.iter())
        .map(|m| 12 + 12 * m.nodes().len())
        .sum();
    let bools: usize = p.bools.iter().map(|b| b.name.len() + 12).sum();
    let conds: usize = p.cond_nodes.iter().map(|c| 24 + 8 * c.expr.len()).sum();
    let genfs: usize = p.genfs.iter().map(|g| 16 + g.path.len() + context).sum();
    let o = &p.ocontexts;
    // Each with one context (a network interface has two) and a few words.
    let ocontexts = (o.initial_sids.len() + o.fs.len() + o.ports.len() + 2 * o.netifs.len())
        + (o.nodes.len() + o.fs_use.len() + o.nodes6.len())
        + (o.ibpkeys.len() + o.ibendports.len());
    4096 + 16 * (p.avtab.len() + p.cond_avtab.len())
        + (types + type_attr_map + bools + conds + genfs)
        + (24 + context) * ocontexts
        + 32 * (p.filename_trans.len() + p.role_trans.len() + p.range_trans.len())
}

/// Little-endian output.
struct Out(Vec<u8>);

impl Out {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u32s(&mut self, vs: &[u32]) {
        for &v in vs {
            self.u32(v);
        }
    }
    fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }
    /// A length word and the bytes.
    fn name(&mut self, s: &str) -> Result<(), WriteError> {
        self.u32(len32(s.len(), "name")?);
        self.bytes(s.as_bytes());
        Ok(())
    }
    /// The kernel's `ebitmap_write`: map unit, high bit, node count, then (start, map) pairs.
    fn ebitmap(&mut self, e: &Ebitmap) {
        let highbit = e.nodes().next_back().map_or(0, |(start, _)| start + 64);
        let nodes = e.nodes();
        self.u32s(&[64, highbit, nodes.len() as u32]);
        for (start, map) in nodes {
            self.u32(start);
            self.0.extend_from_slice(&map.to_le_bytes());
        }
    }
}

/// A count or length as the format's u32.
fn len32(n: usize, what: &str) -> Result<u32, WriteError> {
    u32::try_from(n).map_err(|_| WriteError::Invalid(format!("{n} {what}s do not fit a u32")))
}

struct Writer<'a> {
    p: &'a Policy,
    v: u32,
    drop: bool,
    /// `Some(avtab slots)` in [`Layout::Libsepol34`].
    sepol_slots: Option<u32>,
    dropped: Vec<Unsupported>,
    out: Out,
    /// Whether the MLS flag is written (cleared when MLS is dropped below version 19).
    mls: bool,
}

/// One entry to write: a key and its datum, resolved out of the table.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Item {
    key: AvtabKey,
    datum: Datum,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Datum {
    Word(u32),
    Xperms(crate::avtab::Xperms),
}

impl<'a> Writer<'a> {
    /// Refuses `what`, or notes it as dropped.
    fn unsupported(&mut self, what: Unsupported) -> Result<(), WriteError> {
        if self.drop || (self.sepol() && what.libsepol_drops()) {
            self.dropped.push(what);
            Ok(())
        } else {
            Err(WriteError::Unsupported {
                version: self.v,
                what,
            })
        }
    }

    /// Whether libsepol's layout and behaviour are asked for.
    fn sepol(&self) -> bool {
        self.sepol_slots.is_some()
    }

    /// The order to write a symbol table of `initial` buckets in: indices into `names`.
    fn symbol_order(&self, initial: u32, names: &[&str]) -> Vec<usize> {
        if self.sepol() {
            layout::symtab_order(initial, names)
        } else {
            (0..names.len()).collect()
        }
    }

    /// Calls [`Writer::unsupported`] when `count` items of a feature exist below `since`.
    fn needs(
        &mut self,
        since: u32,
        count: usize,
        what: impl FnOnce(usize) -> Unsupported,
    ) -> Result<bool, WriteError> {
        if self.v < since && count > 0 {
            self.unsupported(what(count))?;
            return Ok(false);
        }
        Ok(true)
    }

    fn policy(&mut self) -> Result<(), WriteError> {
        self.check_platform()?;
        self.check_mls()?;
        self.header()?;
        self.symbols()?;
        let attr_types = self.attribute_expansion()?;
        self.avtab(attr_types.as_deref())?;
        if self.v >= version::BOOL {
            self.conditionals(attr_types.as_deref())?;
        } else {
            let (bools, cond_nodes) = (self.p.bools.len(), self.p.cond_nodes.len());
            if bools + cond_nodes > 0 {
                self.unsupported(Unsupported::Booleans { bools, cond_nodes })?;
            }
        }
        self.role_trans()?;
        self.role_allow()?;
        if self.v >= version::FILENAME_TRANS {
            self.filename_trans()?;
        } else {
            self.needs(
                version::FILENAME_TRANS,
                self.p.filename_trans.len(),
                Unsupported::FilenameTransitions,
            )?;
        }
        self.ocontexts()?;
        self.genfs()?;
        if self.v >= version::MLS {
            self.range_trans()?;
        } else {
            self.needs(
                version::MLS,
                self.p.range_trans.len(),
                Unsupported::RangeTransitions,
            )?;
        }
        if self.v >= version::AVTAB {
            for map in &self.p.type_attr_map {
                self.out.ebitmap(map);
            }
        }
        Ok(())
    }

    /// Below version 19 there is no MLS: refuse (or drop) the flag, the MLS symbols and
    /// any level stored in users and contexts.
    fn check_mls(&mut self) -> Result<(), WriteError> {
        if self.v >= version::MLS {
            return Ok(());
        }
        let p = self.p;
        let default = MlsRange::default();
        let ranged = |r: &MlsRange| *r != default;
        let o = &p.ocontexts;
        let contexts = o
            .initial_sids
            .iter()
            .map(|s| &s.context)
            .chain(o.fs.iter().flat_map(|f| [&f.context, &f.file_context]))
            .chain(o.ports.iter().map(|c| &c.context))
            .chain(
                o.netifs
                    .iter()
                    .flat_map(|n| [&n.if_context, &n.msg_context]),
            )
            .chain(o.nodes.iter().map(|c| &c.context))
            .chain(o.fs_use.iter().map(|c| &c.context))
            .chain(o.nodes6.iter().map(|c| &c.context))
            .chain(o.ibpkeys.iter().map(|c| &c.context))
            .chain(o.ibendports.iter().map(|c| &c.context))
            .chain(p.genfs.iter().map(|g| &g.context));
        let any = p.mls
            || !p.sensitivities.is_empty()
            || !p.categories.is_empty()
            || p.users
                .iter()
                .any(|u| ranged(&u.range) || u.default_level != MlsLevel::default())
            || contexts.into_iter().any(|c| ranged(&c.range));
        if any {
            self.unsupported(Unsupported::Mls)?;
            self.mls = false;
        }
        Ok(())
    }

    fn header(&mut self) -> Result<(), WriteError> {
        let p = self.p;
        let platform = p.ocontexts.platform;
        let (sym_num, ocon_num) = platform_table_sizes(platform, self.v)
            .ok_or(WriteError::UnsupportedXenVersion { version: self.v })?;
        let mut config = if self.mls { CONFIG_MLS } else { 0 };
        config |= match p.handle_unknown {
            HandleUnknown::Deny => 0,
            HandleUnknown::Reject => CONFIG_REJECT_UNKNOWN,
            HandleUnknown::Allow => CONFIG_ALLOW_UNKNOWN,
        };
        self.out.u32(MAGIC);
        let target = platform.target();
        self.out.u32(target.len() as u32);
        self.out.bytes(target);
        self.out.u32s(&[self.v, config, sym_num, ocon_num]);
        if self.needs(
            version::POLCAP,
            p.policycaps.len(),
            Unsupported::PolicyCapabilities,
        )? && self.v >= version::POLCAP
        {
            self.out.ebitmap(&p.policycaps);
        }
        if self.needs(
            version::PERMISSIVE,
            p.permissive.len(),
            Unsupported::PermissiveTypes,
        )? && self.v >= version::PERMISSIVE
        {
            self.out.ebitmap(&p.permissive);
        }
        if self.needs(
            version::NEVERAUDIT,
            p.neveraudit.len(),
            Unsupported::NeverAuditTypes,
        )? && self.v >= version::NEVERAUDIT
        {
            self.out.ebitmap(&p.neveraudit);
        }
        Ok(())
    }

    // ---------------------------------------------------------------- symbol tables

    fn symbols(&mut self) -> Result<(), WriteError> {
        let (sym_num, _) = compat_table_sizes(self.v);
        self.check_symbol_features()?;
        self.commons()?;
        self.classes()?;
        self.roles()?;
        self.types()?;
        self.users()?;
        if sym_num > 5 {
            self.bools()?;
        }
        if sym_num > 6 {
            self.sensitivities()?;
            self.categories()?;
        }
        Ok(())
    }

    /// The per-symbol features newer versions added: bounds, class defaults, constraint
    /// type names, validatetrans.
    fn check_symbol_features(&mut self) -> Result<(), WriteError> {
        let p = self.p;
        let bounds = p.types.iter().filter(|t| t.bounds.is_some()).count()
            + p.roles.iter().filter(|r| r.bounds.is_some()).count()
            + p.users.iter().filter(|u| u.bounds.is_some()).count();
        self.needs(version::BOUNDARY, bounds, Unsupported::Bounds)?;
        let attributes = p
            .types
            .iter()
            .filter(|t| t.flavor == TypeFlavor::Attribute)
            .count();
        self.needs(version::BOUNDARY, attributes, Unsupported::AttributeNames)?;
        let validatetrans = p.classes.iter().map(|c| c.validatetrans.len()).sum();
        self.needs(version::MLS, validatetrans, Unsupported::ValidateTrans)?;
        let defaults = p
            .classes
            .iter()
            .map(|c| {
                usize::from(c.default_user != DefaultSide::None)
                    + usize::from(c.default_role != DefaultSide::None)
                    + usize::from(c.default_range != DefaultRange::None)
            })
            .sum();
        self.needs(
            version::NEW_OBJECT_DEFAULTS,
            defaults,
            Unsupported::ClassDefaults,
        )?;
        let default_type = p
            .classes
            .iter()
            .filter(|c| c.default_type != DefaultSide::None)
            .count();
        self.needs(
            version::DEFAULT_TYPE,
            default_type,
            Unsupported::DefaultType,
        )?;
        if self.v >= version::NEW_OBJECT_DEFAULTS {
            let glblub = p
                .classes
                .iter()
                .filter(|c| c.default_range == DefaultRange::Glblub)
                .count();
            self.needs(version::GLBLUB, glblub, Unsupported::Glblub)?;
        }
        let type_names = p
            .classes
            .iter()
            .flat_map(|c| c.constraints.iter().chain(c.validatetrans.iter()))
            .flat_map(|c| c.expr.iter())
            .filter(|e| {
                matches!(e, ConstraintExpr::Names { type_names: Some(ts), .. } if **ts != TypeSet::default())
            })
            .count();
        self.needs(
            version::CONSTRAINT_NAMES,
            type_names,
            Unsupported::ConstraintTypeNames,
        )?;
        Ok(())
    }

    /// A table's `nprim` and `nel`.
    fn table_header(&mut self, nprim: usize, nel: usize) -> Result<(), WriteError> {
        self.out.u32(len32(nprim, "symbol")?);
        self.out.u32(len32(nel, "symbol")?);
        Ok(())
    }

    fn perms(&mut self, perms: &[Perm]) -> Result<(), WriteError> {
        let names: Vec<&str> = perms.iter().map(|p| &*p.name).collect();
        for i in self.symbol_order(layout::PERMS, &names) {
            let perm = &perms[i];
            self.out.u32(len32(perm.name.len(), "name byte")?);
            self.out.u32(perm.value);
            self.out.bytes(perm.name.as_bytes());
        }
        Ok(())
    }

    /// The named entries of a value-indexed table, as (value, index), in the order to
    /// write them.
    fn named<'n>(&self, initial: u32, names: impl Iterator<Item = &'n str>) -> Vec<(u32, usize)> {
        let named: Vec<(u32, usize, &str)> = (1u32..)
            .zip(names.enumerate())
            .filter(|(_, (_, n))| !n.is_empty())
            .map(|(v, (i, n))| (v, i, n))
            .collect();
        let just_names: Vec<&str> = named.iter().map(|&(_, _, n)| n).collect();
        self.symbol_order(initial, &just_names)
            .into_iter()
            .map(|k| (named[k].0, named[k].1))
            .collect()
    }

    fn commons(&mut self) -> Result<(), WriteError> {
        let p = self.p;
        let order = self.named(layout::COMMONS, p.commons.iter().map(|c| &*c.name));
        self.table_header(p.commons.len(), order.len())?;
        for (value, i) in order {
            let c = &p.commons[i];
            self.out.u32s(&[
                len32(c.name.len(), "name byte")?,
                value,
                c.nprim,
                len32(c.perms.len(), "permission")?,
            ]);
            self.out.bytes(c.name.as_bytes());
            self.perms(&c.perms)?;
        }
        Ok(())
    }

    fn classes(&mut self) -> Result<(), WriteError> {
        let p = self.p;
        let v = self.v;
        let order = self.named(layout::CLASSES, p.classes.iter().map(|c| &*c.name));
        self.table_header(p.classes.len(), order.len())?;
        for (value, i) in order {
            let c = &p.classes[i];
            let common = c
                .common
                .map(|id| p.commons.get(id.index()).map(|cm| &*cm.name).unwrap_or(""))
                .unwrap_or("");
            self.out.u32s(&[
                len32(c.name.len(), "name byte")?,
                len32(common.len(), "name byte")?,
                value,
                c.nprim,
                len32(c.perms.len(), "permission")?,
                len32(c.constraints.len(), "constraint")?,
            ]);
            self.out.bytes(c.name.as_bytes());
            self.out.bytes(common.as_bytes());
            self.perms(&c.perms)?;
            self.constraints(&c.constraints)?;
            if v >= version::VALIDATETRANS {
                self.out.u32(len32(c.validatetrans.len(), "validatetrans")?);
                self.constraints(&c.validatetrans)?;
            }
            if v >= version::NEW_OBJECT_DEFAULTS {
                let range = match c.default_range {
                    DefaultRange::Glblub if v < version::GLBLUB => 0,
                    r => r.raw(),
                };
                self.out
                    .u32s(&[c.default_user.raw(), c.default_role.raw(), range]);
            }
            if v >= version::DEFAULT_TYPE {
                self.out.u32(c.default_type.raw());
            }
        }
        Ok(())
    }

    fn constraints(&mut self, list: &[Constraint]) -> Result<(), WriteError> {
        for c in list {
            self.out.u32(c.perms);
            self.out.u32(len32(c.expr.len(), "constraint term")?);
            for e in c.expr.iter() {
                match e {
                    ConstraintExpr::Not => self.out.u32s(&[1, 0, 0]),
                    ConstraintExpr::And => self.out.u32s(&[2, 0, 0]),
                    ConstraintExpr::Or => self.out.u32s(&[3, 0, 0]),
                    ConstraintExpr::Attr { attr, op } => self.out.u32s(&[4, *attr, op.raw()]),
                    ConstraintExpr::Names {
                        attr,
                        op,
                        names,
                        type_names,
                    } => {
                        self.out.u32s(&[5, *attr, op.raw()]);
                        self.out.ebitmap(names);
                        if self.v >= version::CONSTRAINT_NAMES {
                            // libsepol writes an empty set where none was read.
                            let empty = TypeSet::default();
                            let ts = type_names.as_deref().unwrap_or(&empty);
                            self.out.ebitmap(&ts.types);
                            self.out.ebitmap(&ts.negset);
                            self.out.u32(ts.flags);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn roles(&mut self) -> Result<(), WriteError> {
        let p = self.p;
        let order = self.named(layout::ROLES, p.roles.iter().map(|r| &*r.name));
        self.table_header(p.roles.len(), order.len())?;
        for (value, i) in order {
            let r = &p.roles[i];
            self.out.u32(len32(r.name.len(), "name byte")?);
            self.out.u32(value);
            if self.v >= version::BOUNDARY {
                self.out.u32(r.bounds.map_or(0, |b| b.value()));
            }
            self.out.bytes(r.name.as_bytes());
            if &*r.name == OBJECT_R && value == 1 {
                // The kernel replaces object_r's record with its own (the model keeps that
                // one); checkpolicy and libsepol write it with both bitmaps empty.
                self.out.ebitmap(&Ebitmap::default());
                self.out.ebitmap(&Ebitmap::default());
            } else if self.sepol() && !r.dominates.contains(value - 1) {
                // libsepol's compilers always set the role's own bit.
                let bits = r.dominates.iter().chain([value - 1]);
                self.out.ebitmap(&Ebitmap::from_bits(bits));
                self.out.ebitmap(&r.types);
            } else {
                self.out.ebitmap(&r.dominates);
                self.out.ebitmap(&r.types);
            }
        }
        Ok(())
    }

    fn types(&mut self) -> Result<(), WriteError> {
        let p = self.p;
        let bounded = self.v >= version::BOUNDARY;
        // From version 24 every value is named: unnamed ones (attributes of older files)
        // are refused, or named as attributes.
        let unnamed = p
            .types
            .iter()
            .filter(|t| t.flavor == TypeFlavor::Unnamed)
            .count();
        let mut taken = HashSet::new();
        if bounded && unnamed > 0 {
            self.unsupported(Unsupported::UnnamedTypes(unnamed))?;
            taken.extend(p.types.iter().map(|t| &*t.name));
            taken.extend(p.type_aliases.iter().map(|a| &*a.name));
        }
        /// A record of the type table: a type or attribute (by value), or an alias.
        enum Record<'t> {
            Primary(u32, &'t crate::symbols::TypeDatum),
            Alias(&'t crate::symbols::TypeAlias),
        }
        // The name each record is written under; values not written have none.
        let mut records: Vec<(std::borrow::Cow<'_, str>, Record<'_>)> =
            Vec::with_capacity(p.types.len() + p.type_aliases.len());
        for (value, t) in (1u32..).zip(&p.types) {
            let name = match t.flavor {
                TypeFlavor::Type => (&*t.name).into(),
                TypeFlavor::Attribute if bounded => (&*t.name).into(),
                TypeFlavor::Unnamed if bounded => {
                    let mut name = format!("attribute_{value}");
                    while taken.contains(&*name) {
                        name.push('_');
                    }
                    name.into()
                }
                _ => continue,
            };
            records.push((name, Record::Primary(value, t)));
        }
        records.extend(
            p.type_aliases
                .iter()
                .map(|a| ((&*a.name).into(), Record::Alias(a))),
        );
        self.table_header(p.types.len(), records.len())?;
        let names: Vec<&str> = records.iter().map(|(n, _)| &**n).collect();
        for i in self.symbol_order(layout::TYPES, &names) {
            let (name, record) = &records[i];
            self.out.u32(len32(name.len(), "name byte")?);
            match record {
                Record::Primary(value, t) => {
                    self.out.u32(*value);
                    if bounded {
                        let mut props = TYPE_PROPERTY_PRIMARY;
                        if t.flavor != TypeFlavor::Type {
                            props |= TYPE_PROPERTY_ATTRIBUTE;
                        }
                        self.out.u32(props);
                        self.out.u32(t.bounds.map_or(0, |b| u32::from(b.value())));
                    } else {
                        self.out.u32(1);
                    }
                }
                Record::Alias(a) => {
                    // Not primary, no properties, no bounds (bounds name the type).
                    self.out.u32(u32::from(a.target.value()));
                    if bounded {
                        self.out.u32s(&[0, 0]);
                    } else {
                        self.out.u32(0);
                    }
                }
            }
            self.out.bytes(name.as_bytes());
        }
        Ok(())
    }

    fn users(&mut self) -> Result<(), WriteError> {
        let p = self.p;
        let order = self.named(layout::USERS, p.users.iter().map(|u| &*u.name));
        self.table_header(p.users.len(), order.len())?;
        for (value, i) in order {
            let u = &p.users[i];
            self.out.u32(len32(u.name.len(), "name byte")?);
            self.out.u32(value);
            if self.v >= version::BOUNDARY {
                self.out.u32(u.bounds.map_or(0, |b| b.value()));
            }
            self.out.bytes(u.name.as_bytes());
            self.out.ebitmap(&u.roles);
            if self.v >= version::MLS {
                self.range(&u.range);
                self.level(&u.default_level);
            }
        }
        Ok(())
    }

    fn bools(&mut self) -> Result<(), WriteError> {
        let p = self.p;
        let order = self.named(layout::BOOLS, p.bools.iter().map(|b| &*b.name));
        self.table_header(p.bools.len(), order.len())?;
        for (value, i) in order {
            let b = &p.bools[i];
            self.out
                .u32s(&[value, u32::from(b.state), len32(b.name.len(), "name byte")?]);
            self.out.bytes(b.name.as_bytes());
        }
        Ok(())
    }

    fn sensitivities(&mut self) -> Result<(), WriteError> {
        let p = self.p;
        // (name, is alias, level): an alias shares its sensitivity's level.
        let mut records: Vec<(&str, u32, MlsLevel)> = p
            .sensitivities
            .iter()
            .filter(|s| !s.name.is_empty())
            .map(|s| (&*s.name, 0, s.level.clone()))
            .collect();
        for a in &p.sensitivity_aliases {
            let level = p
                .sensitivities
                .get((a.value as usize).wrapping_sub(1))
                .map(|s| s.level.clone())
                .unwrap_or(MlsLevel {
                    sens: a.value,
                    cats: Ebitmap::default(),
                });
            records.push((&a.name, 1, level));
        }
        self.table_header(p.sensitivities.len(), records.len())?;
        let names: Vec<&str> = records.iter().map(|r| r.0).collect();
        for i in self.symbol_order(layout::LEVELS, &names) {
            let (name, alias, level) = &records[i];
            self.out.u32s(&[len32(name.len(), "name byte")?, *alias]);
            self.out.bytes(name.as_bytes());
            self.level(level);
        }
        Ok(())
    }

    fn categories(&mut self) -> Result<(), WriteError> {
        let p = self.p;
        // (name, value, is alias)
        let mut records: Vec<(&str, u32, u32)> = (1u32..)
            .zip(&p.categories)
            .filter(|(_, c)| !c.name.is_empty())
            .map(|(v, c)| (&*c.name, v, 0))
            .collect();
        records.extend(p.category_aliases.iter().map(|a| (&*a.name, a.value, 1)));
        self.table_header(p.categories.len(), records.len())?;
        let names: Vec<&str> = records.iter().map(|r| r.0).collect();
        for i in self.symbol_order(layout::CATS, &names) {
            let (name, value, alias) = records[i];
            self.out
                .u32s(&[len32(name.len(), "name byte")?, value, alias]);
            self.out.bytes(name.as_bytes());
        }
        Ok(())
    }

    /// The kernel's `mls_write_level`: the sensitivity and the category bitmap.
    fn level(&mut self, l: &MlsLevel) {
        self.out.u32(l.sens);
        self.out.ebitmap(&l.cats);
    }

    /// `mls_write_range_helper`: one level when low equals high, else two.
    fn range(&mut self, r: &MlsRange) {
        if r.low == r.high {
            self.out.u32s(&[1, r.low.sens]);
            self.out.ebitmap(&r.low.cats);
        } else {
            self.out.u32s(&[2, r.low.sens, r.high.sens]);
            self.out.ebitmap(&r.low.cats);
            self.out.ebitmap(&r.high.cats);
        }
    }

    fn context(&mut self, c: &Context) {
        self.out
            .u32s(&[c.user.value(), c.role.value(), u32::from(c.ty.value())]);
        if self.v >= version::MLS {
            self.range(&c.range);
        }
    }

    // ---------------------------------------------------------------- rules

    /// Below version 20 rules must name types: decides whether attributes are involved, and
    /// if they are (and may be dropped), returns for each type value the types it stands
    /// for, to expand rules with.
    fn attribute_expansion(&mut self) -> Result<Option<Vec<Vec<TypeId>>>, WriteError> {
        if self.v >= version::AVTAB {
            return Ok(None);
        }
        let p = self.p;
        let is_type =
            |t: TypeId| p.types.get(t.index()).map(|d| d.flavor) == Some(TypeFlavor::Type);
        let rules = p
            .avtab
            .entries
            .iter()
            .chain(p.cond_avtab.entries.iter())
            .filter(|e| !is_type(e.key.source) || !is_type(e.key.target))
            .count();
        let maps = p
            .type_attr_map
            .iter()
            .enumerate()
            .filter(|(i, m)| m.len() != 1 || !m.contains(*i as u32))
            .count();
        if rules + maps == 0 {
            return Ok(None);
        }
        self.unsupported(Unsupported::AttributeRules(rules + maps))?;
        // libsepol's expand_avtab: an attribute stands for the types whose map lists it.
        let mut of: Vec<Vec<TypeId>> = vec![Vec::new(); p.types.len()];
        for (i, (map, t)) in p.type_attr_map.iter().zip(&p.types).enumerate() {
            if t.flavor != TypeFlavor::Type {
                continue;
            }
            let Some(id) = TypeId::from_index(i) else {
                continue;
            };
            for bit in map.iter() {
                if let Some(list) = of.get_mut(bit as usize) {
                    list.push(id);
                }
            }
        }
        Ok(Some(of))
    }

    /// Resolves a table's entries `range` into items.
    fn items(&self, table: &Avtab, range: std::ops::Range<usize>) -> Result<Vec<Item>, WriteError> {
        let entries = table.entries.get(range).ok_or_else(|| {
            WriteError::Invalid("a conditional list lies outside the conditional rule table".into())
        })?;
        entries
            .iter()
            .map(|e| {
                let datum = match e.datum() {
                    AvtabDatum::Perms(p) => Datum::Word(p),
                    AvtabDatum::Type(t) => Datum::Word(u32::from(t.value())),
                    AvtabDatum::Xperms(_) => {
                        Datum::Xperms(*table.xperms_of(e.datum()).ok_or_else(|| {
                            WriteError::Invalid(format!(
                                "{} has no extended permissions",
                                crate::avtab::describe(&e.key)
                            ))
                        })?)
                    }
                };
                Ok(Item { key: e.key, datum })
            })
            .collect()
    }

    /// Applies the version's limit on extended permissions to the unconditional table: none
    /// below 30.
    fn filter_xperms(&mut self, items: Vec<Item>) -> Result<Vec<Item>, WriteError> {
        let n = items
            .iter()
            .filter(|i| matches!(i.datum, Datum::Xperms(_)))
            .count();
        if self.needs(version::XPERMS_IOCTL, n, Unsupported::Xperms)? {
            return Ok(items);
        }
        Ok(items
            .into_iter()
            .filter(|i| !matches!(i.datum, Datum::Xperms(_)))
            .collect())
    }

    fn avtab(&mut self, expand: Option<&[Vec<TypeId>]>) -> Result<(), WriteError> {
        if expand.is_none() && self.v >= version::AVTAB {
            return self.avtab_entries();
        }
        let p = self.p;
        let items = self.items(&p.avtab, 0..p.avtab.entries.len())?;
        let mut items = self.filter_xperms(items)?;
        if let Some(of) = expand {
            items = expand_attributes(items, of)?;
        }
        if let Some(slots) = self.sepol_slots {
            let keys: Vec<AvtabKey> = items.iter().map(|i| i.key).collect();
            items = layout::avtab_order(slots, &keys)
                .into_iter()
                .map(|i| items[i])
                .collect();
        }
        self.item_list(&items, None)
    }

    /// The unconditional table in the format of version 20 and later, written from its
    /// entries in place: resolving 100,000 entries into items, ordering them and copying
    /// them again cost more than writing them (and, at 48 bytes an item, two copies
    /// raised the memory in use). A table already in libsepol's order is not reordered.
    fn avtab_entries(&mut self) -> Result<(), WriteError> {
        let table = &self.p.avtab;
        let entries = &table.entries;
        let nx = entries
            .iter()
            .filter(|e| matches!(e.datum(), AvtabDatum::Xperms(_)))
            .count();
        // Below version 30 extended permissions are dropped (or refused), as
        // `filter_xperms` does.
        let keep_xperms = self.needs(version::XPERMS_IOCTL, nx, Unsupported::Xperms)?;
        let order = match self.sepol_slots {
            Some(slots) => layout::avtab_order_of(slots, entries.len(), |i| entries[i].key),
            None => None,
        };
        let count = if keep_xperms {
            entries.len()
        } else {
            entries.len() - nx
        };
        self.out.u32(len32(count, "rule")?);
        self.out.0.reserve(count * 12 + nx * 34);
        let mut write = |e: &crate::avtab::AvtabEntry| -> Result<(), WriteError> {
            let k = e.key;
            let word = match e.datum() {
                AvtabDatum::Perms(p) => p,
                AvtabDatum::Type(t) => u32::from(t.value()),
                AvtabDatum::Xperms(_) if !keep_xperms => return Ok(()),
                AvtabDatum::Xperms(_) => {
                    let x = table.xperms_of(e.datum()).ok_or_else(|| {
                        WriteError::Invalid(format!(
                            "{} has no extended permissions",
                            crate::avtab::describe(&e.key)
                        ))
                    })?;
                    self.item(
                        &Item {
                            key: k,
                            datum: Datum::Xperms(*x),
                        },
                        false,
                    );
                    return Ok(());
                }
            };
            self.out.bytes(&word_entry(&k, word, false));
            Ok(())
        };
        match order {
            Some(order) => order.into_iter().try_for_each(|i| write(&entries[i])),
            None => entries.iter().try_for_each(write),
        }
    }

    /// Writes a count and the items; `enabled` is `Some` in conditional lists.
    fn item_list(&mut self, items: &[Item], enabled: Option<bool>) -> Result<(), WriteError> {
        if self.v >= version::AVTAB {
            self.out.u32(len32(items.len(), "rule")?);
            for item in items {
                self.item(item, enabled.unwrap_or(false));
            }
            return Ok(());
        }
        // The old format: one item per key and kind group, kinds in `SPEC_ORDER`. Runs of
        // consecutive entries with one key are merged (as libsepol merges all entries of a
        // key), which keeps their order when read back.
        let mut groups: Vec<(AvtabKey, u32, Vec<u32>)> = Vec::new();
        for item in items {
            let Datum::Word(word) = item.datum else {
                continue; // refused or dropped before
            };
            let pos = spec_pos(item.key.kind);
            let bit = u32::from(item.key.kind.bits());
            let group = |k: u16| k & AVTAB_AV != 0;
            if let Some((key, kinds, data)) = groups.last_mut() {
                let last_pos = SPEC_ORDER
                    .iter()
                    .rposition(|k| *kinds & u32::from(k.bits()) != 0)
                    .unwrap_or(0);
                if key.source == item.key.source
                    && key.target == item.key.target
                    && key.class == item.key.class
                    && group(key.kind.bits()) == group(item.key.kind.bits())
                    && pos > last_pos
                {
                    *kinds |= bit;
                    data.push(word);
                    continue;
                }
            }
            groups.push((item.key, bit, vec![word]));
        }
        self.out.u32(len32(groups.len(), "rule")?);
        let flag = if enabled == Some(true) {
            AVTAB_ENABLED_OLD
        } else {
            0
        };
        for (key, kinds, data) in groups {
            self.out.u32(4 + data.len() as u32);
            self.out.u32s(&[
                u32::from(key.source.value()),
                u32::from(key.target.value()),
                u32::from(key.class.value()),
                kinds | flag,
            ]);
            self.out.u32s(&data);
        }
        Ok(())
    }

    /// One entry in the format of version 20 and later.
    fn item(&mut self, item: &Item, enabled: bool) {
        let k = item.key;
        self.out.u16(k.source.value());
        self.out.u16(k.target.value());
        self.out.u16(k.class.value());
        self.out
            .u16(k.kind.bits() | if enabled { AVTAB_ENABLED } else { 0 });
        match item.datum {
            Datum::Word(w) => self.out.u32(w),
            Datum::Xperms(x) => {
                self.out.u8(x.kind.value());
                self.out.u8(x.driver);
                self.out.u32s(&x.perms);
            }
        }
    }

    fn conditionals(&mut self, expand: Option<&[Vec<TypeId>]>) -> Result<(), WriteError> {
        if expand.is_none() && self.v >= version::AVTAB {
            return self.conditionals_in_place();
        }
        let p = self.p;
        self.out.u32(len32(p.cond_nodes.len(), "conditional")?);
        // Extended permissions of all lists are counted together for one report (below
        // version 30 too: they are conditional ones, which need 34).
        let mut lists: Vec<(&CondNode, Vec<Item>, Vec<Item>)> = Vec::new();
        for node in &p.cond_nodes {
            let range = |r: &std::ops::Range<u32>| r.start as usize..r.end as usize;
            let t = self.items(&p.cond_avtab, range(&node.true_list))?;
            let f = self.items(&p.cond_avtab, range(&node.false_list))?;
            lists.push((node, t, f));
        }
        let xperms = lists
            .iter()
            .flat_map(|(_, t, f)| t.iter().chain(f.iter()))
            .filter(|i| matches!(i.datum, Datum::Xperms(_)))
            .count();
        let keep_xperms =
            self.needs(version::COND_XPERMS, xperms, Unsupported::ConditionalXperms)?;
        for (node, t, f) in lists {
            self.cond_node_head(node)?;
            for (list, active) in [(t, node.cur_state), (f, !node.cur_state)] {
                let mut list: Vec<Item> = if keep_xperms {
                    list
                } else {
                    list.into_iter()
                        .filter(|i| !matches!(i.datum, Datum::Xperms(_)))
                        .collect()
                };
                if let Some(of) = expand {
                    list = expand_attributes(list, of)?;
                }
                self.item_list(&list, Some(active))?;
            }
        }
        Ok(())
    }

    /// A conditional node's state and expression (its lists follow).
    fn cond_node_head(&mut self, node: &CondNode) -> Result<(), WriteError> {
        self.out.u32(u32::from(node.cur_state));
        self.out.u32(len32(node.expr.len(), "expression node")?);
        for e in node.expr.iter() {
            let (ty, b) = match e {
                CondExpr::Bool(b) => (1, b.value()),
                CondExpr::Not => (2, 0),
                CondExpr::Or => (3, 0),
                CondExpr::And => (4, 0),
                CondExpr::Xor => (5, 0),
                CondExpr::Eq => (6, 0),
                CondExpr::Neq => (7, 0),
            };
            self.out.u32s(&[ty, b]);
        }
        Ok(())
    }

    /// The conditional lists in the format of version 20 and later without attribute
    /// expansion, written from the table's entries: each list used to be resolved into
    /// 48-byte items (a `Vec` per list), then copied again when extended permissions
    /// were filtered. The checks come first, as there: every list inside the table,
    /// every extended permission entry with its permissions, then the version's limit.
    fn conditionals_in_place(&mut self) -> Result<(), WriteError> {
        let p = self.p;
        let table = &p.cond_avtab;
        let list = |r: &std::ops::Range<u32>| {
            table
                .entries
                .get(r.start as usize..r.end as usize)
                .ok_or_else(|| {
                    WriteError::Invalid(
                        "a conditional list lies outside the conditional rule table".into(),
                    )
                })
        };
        let xperms_of = |e: &crate::avtab::AvtabEntry| {
            table.xperms_of(e.datum()).ok_or_else(|| {
                WriteError::Invalid(format!(
                    "{} has no extended permissions",
                    crate::avtab::describe(&e.key)
                ))
            })
        };
        let mut xperms = 0;
        for node in &p.cond_nodes {
            for r in [&node.true_list, &node.false_list] {
                for e in list(r)? {
                    if matches!(e.datum(), AvtabDatum::Xperms(_)) {
                        xperms_of(e)?;
                        xperms += 1;
                    }
                }
            }
        }
        let keep_xperms =
            self.needs(version::COND_XPERMS, xperms, Unsupported::ConditionalXperms)?;
        self.out.u32(len32(p.cond_nodes.len(), "conditional")?);
        for node in &p.cond_nodes {
            self.cond_node_head(node)?;
            for (r, active) in [
                (&node.true_list, node.cur_state),
                (&node.false_list, !node.cur_state),
            ] {
                let entries = list(r)?;
                let count = match keep_xperms {
                    true => entries.len(),
                    false => (entries.iter())
                        .filter(|e| !matches!(e.datum(), AvtabDatum::Xperms(_)))
                        .count(),
                };
                self.out.u32(len32(count, "rule")?);
                for e in entries {
                    let word = match e.datum() {
                        AvtabDatum::Perms(p) => p,
                        AvtabDatum::Type(t) => u32::from(t.value()),
                        AvtabDatum::Xperms(_) if !keep_xperms => continue,
                        AvtabDatum::Xperms(_) => {
                            let item = Item {
                                key: e.key,
                                datum: Datum::Xperms(*xperms_of(e)?),
                            };
                            self.item(&item, active);
                            continue;
                        }
                    };
                    self.out.bytes(&word_entry(&e.key, word, active));
                }
            }
        }
        Ok(())
    }

    /// Role transitions; below version 26 only those for `process`, which is implied.
    fn role_trans(&mut self) -> Result<(), WriteError> {
        let p = self.p;
        let process = self.process_class();
        let keep: Vec<_> = if self.v >= version::ROLETRANS {
            p.role_trans.iter().collect()
        } else {
            let (keep, other): (Vec<_>, Vec<_>) =
                p.role_trans.iter().partition(|r| Some(r.class) == process);
            self.needs(
                version::ROLETRANS,
                other.len(),
                Unsupported::RoleTransitionClasses,
            )?;
            keep
        };
        self.out.u32(len32(keep.len(), "role transition")?);
        for r in keep {
            self.out
                .u32s(&[r.role.value(), u32::from(r.ty.value()), r.new_role.value()]);
            if self.v >= version::ROLETRANS {
                self.out.u32(u32::from(r.class.value()));
            }
        }
        Ok(())
    }

    fn process_class(&self) -> Option<ClassId> {
        self.p.process_class()
    }

    fn role_allow(&mut self) -> Result<(), WriteError> {
        let p = self.p;
        self.out.u32(len32(p.role_allow.len(), "role allow rule")?);
        for r in &p.role_allow {
            self.out.u32s(&[r.role.value(), r.new_role.value()]);
        }
        Ok(())
    }

    fn filename_trans(&mut self) -> Result<(), WriteError> {
        let p = self.p;
        let groups: Vec<&FilenameTrans> = if self.sepol() {
            let keys: Vec<(u32, u32, &str)> = p
                .filename_trans
                .iter()
                .map(|f| {
                    (
                        u32::from(f.target.value()),
                        u32::from(f.class.value()),
                        &*f.name,
                    )
                })
                .collect();
            layout::filename_trans_order(&keys)
                .into_iter()
                .map(|i| &p.filename_trans[i])
                .collect()
        } else {
            p.filename_trans.iter().collect()
        };
        if self.v >= version::COMP_FTRANS {
            self.out.u32(len32(groups.len(), "filename transition")?);
            for f in groups {
                self.out.name(&f.name)?;
                self.out.u32s(&[
                    u32::from(f.target.value()),
                    u32::from(f.class.value()),
                    len32(f.outcomes.len(), "filename transition outcome")?,
                ]);
                for (sources, new_type) in f.outcomes.iter() {
                    self.out.ebitmap(sources);
                    self.out.u32(u32::from(new_type.value()));
                }
            }
            return Ok(());
        }
        let mut rules: Vec<(&FilenameTrans, u32, TypeId)> = Vec::new();
        let mut regrouped = 0;
        for f in groups {
            if self.sepol() {
                // libsepol's `filename_write_one_compat`: outcome by outcome, each source
                // in ascending order (its outcomes never share a source or a new type).
                for (sources, new_type) in f.outcomes.iter() {
                    rules.extend(sources.iter().map(|b| (f, b + 1, *new_type)));
                }
                continue;
            }
            match per_rule(f) {
                Ok(r) => rules.extend(r.into_iter().map(|(s, o)| (f, s, o))),
                Err(r) => {
                    regrouped += 1;
                    rules.extend(r.into_iter().map(|(s, o)| (f, s, o)));
                }
            }
        }
        self.needs(
            version::COMP_FTRANS,
            regrouped,
            Unsupported::FilenameTransitionGrouping,
        )?;
        self.out.u32(len32(rules.len(), "filename transition")?);
        for (f, source, new_type) in rules {
            self.out.name(&f.name)?;
            self.out.u32s(&[
                source,
                u32::from(f.target.value()),
                u32::from(f.class.value()),
                u32::from(new_type.value()),
            ]);
        }
        Ok(())
    }

    fn ocontexts(&mut self) -> Result<(), WriteError> {
        let p = self.p;
        let o = &p.ocontexts;
        let (_, ocon_num) = compat_table_sizes(self.v);
        self.needs(version::IPV6, o.nodes6.len(), Unsupported::Ipv6NodeContexts)?;
        self.needs(
            version::INFINIBAND,
            o.ibpkeys.len() + o.ibendports.len(),
            Unsupported::InfinibandContexts,
        )?;

        self.out.u32(len32(o.initial_sids.len(), "initial SID")?);
        for s in &o.initial_sids {
            self.out.u32(s.sid);
            self.context(&s.context);
        }
        if o.platform == crate::xen::Platform::Xen {
            return self.xen_ocontexts();
        }
        self.out.u32(len32(o.fs.len(), "filesystem context")?);
        for f in &o.fs {
            self.out.name(&f.name)?;
            self.context(&f.context);
            self.context(&f.file_context);
        }
        self.out.u32(len32(o.ports.len(), "port context")?);
        for c in &o.ports {
            self.out.u32s(&[c.protocol, c.low, c.high]);
            self.context(&c.context);
        }
        self.out.u32(len32(o.netifs.len(), "interface context")?);
        for n in &o.netifs {
            self.out.name(&n.name)?;
            self.context(&n.if_context);
            self.context(&n.msg_context);
        }
        self.out.u32(len32(o.nodes.len(), "node context")?);
        for n in &o.nodes {
            self.out.bytes(&n.addr);
            self.out.bytes(&n.mask);
            self.context(&n.context);
        }
        self.out.u32(len32(o.fs_use.len(), "fs_use context")?);
        for f in &o.fs_use {
            self.out.u32(fs_use_raw(f.behavior));
            self.out.name(&f.fstype)?;
            self.context(&f.context);
        }
        if ocon_num > 6 {
            self.out.u32(len32(o.nodes6.len(), "node context")?);
            for n in &o.nodes6 {
                self.out.bytes(&n.addr);
                self.out.bytes(&n.mask);
                self.context(&n.context);
            }
        }
        if ocon_num > 7 {
            self.out.u32(len32(o.ibpkeys.len(), "pkey context")?);
            for k in &o.ibpkeys {
                self.out.bytes(&k.subnet_prefix);
                self.out.u32s(&[u32::from(k.low), u32::from(k.high)]);
                self.context(&k.context);
            }
            self.out.u32(len32(o.ibendports.len(), "end port context")?);
            for e in &o.ibendports {
                self.out
                    .u32s(&[len32(e.device.len(), "name byte")?, u32::from(e.port)]);
                self.out.bytes(e.device.as_bytes());
                self.context(&e.context);
            }
        }
        Ok(())
    }

    /// genfscon, grouped by filesystem in order of first appearance (the model keeps the
    /// kernel's lookup order, which the reader restores from any grouping); in libsepol's
    /// layout, in secilc's order.
    fn genfs(&mut self) -> Result<(), WriteError> {
        let p = self.p;
        let mut entries: Vec<&crate::ocontext::GenfsCon> = p.genfs.iter().collect();
        if self.sepol() {
            // secilc's order (`cil_post_genfscon_compare`): filesystem, then path, as
            // `strcmp` compares them; a stable sort keeps the model's order of equal paths,
            // which (being of equal length) the model keeps as secilc wrote them.
            entries.sort_by(|a, b| {
                (a.fstype.as_bytes(), a.path.as_bytes())
                    .cmp(&(b.fstype.as_bytes(), b.path.as_bytes()))
            });
        }
        let mut order: Vec<&str> = Vec::new();
        let mut by_fs: HashMap<&str, Vec<&crate::ocontext::GenfsCon>> = HashMap::new();
        for g in entries {
            by_fs
                .entry(&g.fstype)
                .or_insert_with(|| {
                    order.push(&g.fstype);
                    Vec::new()
                })
                .push(g);
        }
        self.out.u32(len32(order.len(), "genfs filesystem")?);
        for fs in order {
            let entries = &by_fs[fs];
            self.out.name(fs)?;
            self.out.u32(len32(entries.len(), "genfs entry")?);
            for g in entries {
                self.out.name(&g.path)?;
                self.out.u32(g.class);
                self.context(&g.context);
            }
        }
        Ok(())
    }

    /// Range transitions (version 19 on); below 21 only those for `process`.
    fn range_trans(&mut self) -> Result<(), WriteError> {
        let p = self.p;
        let process = self.process_class();
        let all: Vec<_> = if self.sepol() {
            let keys: Vec<(u32, u32, u32)> = p
                .range_trans
                .iter()
                .map(|r| {
                    (
                        u32::from(r.source.value()),
                        u32::from(r.target.value()),
                        u32::from(r.class.value()),
                    )
                })
                .collect();
            layout::range_trans_order(&keys)
                .into_iter()
                .map(|i| &p.range_trans[i])
                .collect()
        } else {
            p.range_trans.iter().collect()
        };
        let keep: Vec<_> = if self.v >= version::RANGETRANS {
            all
        } else {
            let (keep, other): (Vec<_>, Vec<_>) =
                all.into_iter().partition(|r| Some(r.class) == process);
            self.needs(
                version::RANGETRANS,
                other.len(),
                Unsupported::RangeTransitionClasses,
            )?;
            keep
        };
        self.out.u32(len32(keep.len(), "range transition")?);
        for r in keep {
            self.out
                .u32s(&[u32::from(r.source.value()), u32::from(r.target.value())]);
            if self.v >= version::RANGETRANS {
                self.out.u32(u32::from(r.class.value()));
            }
            self.range(&r.range);
        }
        Ok(())
    }
}

/// Expands rules on attributes to their types, as libsepol's `expand_avtab` does for the
/// format before version 20: `of[v - 1]` lists the types type value `v` stands for. Entries
/// landing on one key merge: granted and audited bits are OR-ed, the audit-on-denial mask
/// AND-ed; type rules must agree. (Extended permissions do not exist in that format and are
/// gone by now.)
fn expand_attributes(items: Vec<Item>, of: &[Vec<TypeId>]) -> Result<Vec<Item>, WriteError> {
    let mut out: Vec<Item> = Vec::new();
    let mut at: HashMap<AvtabKey, usize> = HashMap::new();
    for item in items {
        let Datum::Word(new) = item.datum else {
            continue;
        };
        let sources = of.get(item.key.source.index()).map_or(&[][..], |v| v);
        let targets = of.get(item.key.target.index()).map_or(&[][..], |v| v);
        for &source in sources {
            for &target in targets {
                let key = AvtabKey {
                    source,
                    target,
                    ..item.key
                };
                let Some(&i) = at.get(&key) else {
                    at.insert(key, out.len());
                    out.push(Item { key, ..item });
                    continue;
                };
                let Datum::Word(old) = out[i].datum else {
                    continue;
                };
                let merged = match key.kind {
                    AvtabKind::Allowed | AvtabKind::AuditAllow => old | new,
                    AvtabKind::AuditDeny => old & new,
                    _ if old == new => old,
                    _ => {
                        return Err(WriteError::Invalid(format!(
                            "expanding attributes makes {} conflict (new types {old} and {new})",
                            crate::avtab::describe(&key)
                        )))
                    }
                };
                out[i].datum = Datum::Word(merged);
            }
        }
    }
    Ok(out)
}

/// An entry whose datum is one word, in the format of version 20 and later (source,
/// target, class, kind with the enabled flag of an active conditional list, datum), as
/// one 12-byte copy where five writes each grew the buffer.
fn word_entry(k: &AvtabKey, word: u32, enabled: bool) -> [u8; 12] {
    let kind = k.kind.bits() | if enabled { AVTAB_ENABLED } else { 0 };
    let mut b = [0u8; 12];
    b[0..2].copy_from_slice(&k.source.value().to_le_bytes());
    b[2..4].copy_from_slice(&k.target.value().to_le_bytes());
    b[4..6].copy_from_slice(&k.class.value().to_le_bytes());
    b[6..8].copy_from_slice(&kind.to_le_bytes());
    b[8..12].copy_from_slice(&word.to_le_bytes());
    b
}

/// The position of a kind in the old format's data order.
fn spec_pos(kind: AvtabKind) -> usize {
    SPEC_ORDER.iter().position(|k| *k == kind).unwrap_or(0)
}

fn fs_use_raw(b: crate::ocontext::FsUseBehavior) -> u32 {
    use crate::ocontext::FsUseBehavior::*;
    match b {
        Xattr => 1,
        Trans => 2,
        Task => 3,
        Genfs => 4,
        Mntpoint => 6,
        Other(v) => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The output's reservation covers the Debian policies (installed ones, when present)
    /// without reserving far beyond them: one allocation, no doubling.
    #[test]
    fn size_hint_covers_the_debian_policies() {
        for path in [arbiter_testkit::DEBIAN_DEFAULT, arbiter_testkit::DEBIAN_MLS] {
            let Ok(bytes) = std::fs::read(path) else {
                eprintln!("note: {path} is not installed; skipping");
                continue;
            };
            let p = Policy::from_bytes(&bytes).expect("installed policy");
            let hint = size_hint(&p);
            eprintln!("{path}: {} bytes, hint {hint}", bytes.len());
            assert!(hint >= bytes.len() && hint <= bytes.len() * 3 / 2);
        }
    }

    #[test]
    fn errors_name_the_version_needed() {
        let err = WriteError::UnsupportedVersion {
            version: 36,
            min: MIN_VERSION,
            max: MAX_VERSION,
        };
        assert!(err.to_string().contains("15 to 35"));
        let e = WriteError::Unsupported {
            version: 33,
            what: Unsupported::NeverAuditTypes(2),
        };
        assert_eq!(
            e.to_string(),
            "a version 33 policy cannot hold 2 neveraudit types (needs version 35)"
        );
    }

    #[test]
    fn a_conditional_list_outside_the_table_is_an_error_not_a_panic() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../policies/bin/features.33"
        );
        let mut p = Policy::open(path).expect("fixture");
        assert!(!p.cond_nodes.is_empty(), "the fixture has conditionals");
        let past = p.cond_avtab.entries.len() as u32 + 1;
        p.cond_nodes[0].false_list = past..past + 1;
        // Version 33 without attribute expansion writes the lists in place.
        match write_policy(&p, 33) {
            Err(WriteError::Invalid(m)) => assert!(m.contains("lies outside"), "{m}"),
            other => panic!("{:?}", other.map(|b| b.len())),
        }
    }
}

//! The symbol tables: commons, classes, roles, types, users, booleans, sensitivities and
//! categories. Each is a flat array indexed by the symbol's value - 1.
//!
//! A value that no record of the file names (attributes before format version 24, role
//! attributes, which compilers count but never write) keeps its slot so that indexing by
//! value stays valid: a type of [`TypeFlavor::Unnamed`], or for the other tables a
//! placeholder whose `name` is empty and which holds nothing. Role value 1 is always
//! [`OBJECT_R`].

use crate::constraint::Constraint;
use crate::ebitmap::Ebitmap;
use crate::ids::{CommonId, RoleId, TypeId, UserId};
use crate::mls::{MlsLevel, MlsRange};

/// A permission name and its value (bit `value - 1` of an access vector).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Perm {
    pub name: Box<str>,
    pub value: u32,
}

/// A common permission set shared by several classes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Common {
    pub name: Box<str>,
    /// The `nprim` of the permission table (highest value in use).
    pub nprim: u32,
    pub perms: Box<[Perm]>,
}

/// Which part of the source or target context a `default_user`/`default_role`/
/// `default_type` rule takes (0 = no rule). The discriminants are the file's
/// `DEFAULT_SOURCE`/`DEFAULT_TARGET` numbers.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum DefaultSide {
    #[default]
    None = 0,
    Source = 1,
    Target = 2,
}

/// What a `default_range` rule takes. The discriminants are the file's `DEFAULT_*`
/// numbers.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum DefaultRange {
    #[default]
    None = 0,
    SourceLow = 1,
    SourceHigh = 2,
    SourceLowHigh = 3,
    TargetLow = 4,
    TargetHigh = 5,
    TargetLowHigh = 6,
    /// `glblub` (format version 32).
    Glblub = 7,
}

impl DefaultSide {
    /// The file's number for the setting (0: no rule), as libsepol writes it.
    pub fn raw(self) -> u32 {
        self as u32
    }
}

impl DefaultRange {
    /// The file's number for the setting (0: no rule), as libsepol writes it.
    pub fn raw(self) -> u32 {
        self as u32
    }
}

/// A security class: its own permissions, an optional common, constraints and defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Class {
    pub name: Box<str>,
    pub common: Option<CommonId>,
    /// The `nprim` of the class's permission table (includes the common's permissions).
    pub nprim: u32,
    /// The class's own permissions (not the common's).
    pub perms: Box<[Perm]>,
    /// `constrain` and `mlsconstrain` rules, in file order.
    pub constraints: Box<[Constraint]>,
    /// `validatetrans` and `mlsvalidatetrans` rules, in file order.
    pub validatetrans: Box<[Constraint]>,
    pub default_user: DefaultSide,
    pub default_role: DefaultSide,
    pub default_type: DefaultSide,
    pub default_range: DefaultRange,
}

/// A role: the roles it dominates and the types it may have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Role {
    pub name: Box<str>,
    pub bounds: Option<RoleId>,
    /// Bit i = role value i+1.
    pub dominates: Ebitmap,
    /// Bit i = type value i+1.
    pub types: Ebitmap,
}

/// Whether a type-table entry is a type, an attribute, or a value the file leaves unnamed
/// (kernel policies before version 24 do not name attributes, leaving holes in the values).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TypeFlavor {
    Type,
    Attribute,
    /// A value counted by the table's `nprim` that no symbol names.
    Unnamed,
}

/// A type or attribute (aliases are listed separately in [`TypeAlias`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeDatum {
    /// Empty for [`TypeFlavor::Unnamed`].
    pub name: Box<str>,
    pub flavor: TypeFlavor,
    pub bounds: Option<TypeId>,
}

/// An alias: another name for a type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeAlias {
    pub name: Box<str>,
    pub target: TypeId,
}

/// A user: authorised roles and, for MLS, the range and default level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    pub name: Box<str>,
    pub bounds: Option<UserId>,
    /// Bit i = role value i+1.
    pub roles: Ebitmap,
    /// Present in the file from version 19 on (meaningful only in MLS policies).
    pub range: MlsRange,
    pub default_level: MlsLevel,
}

/// A conditional boolean and its default state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bool {
    pub name: Box<str>,
    pub state: bool,
}

/// A sensitivity, with the categories its `level` statement allows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sensitivity {
    pub name: Box<str>,
    /// The level: `level.sens` is this sensitivity's value; `level.cats` the allowed cats.
    pub level: MlsLevel,
}

/// An alias of a sensitivity or category: (alias name, value of the primary symbol).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MlsAlias {
    pub name: Box<str>,
    pub value: u32,
}

/// A category.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Category {
    pub name: Box<str>,
}

use crate::constraint::{self, ConstraintKind};
use crate::cursor::Cursor;
use crate::error::Result;
use crate::header::Header;
use crate::ids::ClassId;
use crate::nametab::NameSlots;
use crate::policy::version;
use crate::read::Counts;
use std::collections::HashMap;

/// The eight symbol tables as read, before the rules that refer to them.
pub(crate) struct Symtabs {
    pub commons: Vec<Common>,
    pub classes: Vec<Class>,
    pub roles: Vec<Role>,
    pub types: Vec<TypeDatum>,
    pub type_aliases: Vec<TypeAlias>,
    pub users: Vec<User>,
    pub bools: Vec<Bool>,
    pub sensitivities: Vec<Sensitivity>,
    pub sensitivity_aliases: Vec<MlsAlias>,
    pub categories: Vec<Category>,
    pub category_aliases: Vec<MlsAlias>,
}

impl Symtabs {
    pub fn counts(&self, version: u32) -> Counts {
        Counts {
            version,
            types: self.types.len() as u32,
            classes: self.classes.len() as u32,
            roles: self.roles.len() as u32,
            users: self.users.len() as u32,
            bools: self.bools.len() as u32,
            sens: self.sensitivities.len() as u32,
            cats: self.categories.len() as u32,
        }
    }

    pub fn class_by_name(&self, name: &str) -> Option<ClassId> {
        self.classes
            .iter()
            .position(|c| &*c.name == name)
            .and_then(ClassId::from_index)
    }
}

/// Reads the `sym_num` symbol tables that follow the header, in the kernel's order
/// (`common_read`, `class_read`, `role_read`, `type_read`, `user_read`, `cond_read_bool`,
/// `sens_read`, `cat_read`).
///
/// Each table is `nprim` (the number of values) and `nel` (the number of records), then the
/// records. Every record carries its value; the datum lands at index `value - 1` of a
/// vector of exactly `nprim` entries. Values must lie in `1..=nprim` and name one datum
/// each; names must be unique within a table (aliases included), as the kernel's hash
/// tables require.
///
/// Values that no record names are legal (the kernel tolerates them, and compilers leave
/// them: attributes in policies before version 24, role attributes in every version). They
/// keep the arrays indexable by value and are represented as placeholders: a type of
/// [`TypeFlavor::Unnamed`], and for every other table a datum with an empty name and
/// nothing in it. Validation refuses contexts and rules that *use* an unnamed user, role,
/// class, boolean, sensitivity or category (as libsepol does); unnamed types stay usable
/// where attributes may appear.
pub(crate) fn read(c: &mut Cursor<'_>, hdr: &Header) -> Result<Symtabs> {
    let v = hdr.version;
    let (commons, common_ids) = read_commons(c)?;
    let classes = read_classes(c, v, &commons, &common_ids)?;
    let roles = read_roles(c, v)?;
    let (types, type_aliases) = read_types(c, v)?;
    let users = read_users(c, v)?;
    let bools = if hdr.sym_num > 5 {
        read_bools(c)?
    } else {
        Vec::new()
    };
    let (sensitivities, sensitivity_aliases, categories, category_aliases) = if hdr.sym_num > 6 {
        let (s, sa, alias_levels) = read_sensitivities(c)?;
        let (k, ka) = read_categories(c)?;
        check_alias_levels(c, &alias_levels, &k)?;
        (s, sa, k, ka)
    } else {
        Default::default()
    };
    Ok(Symtabs {
        commons,
        classes,
        roles,
        types,
        type_aliases,
        users,
        bools,
        sensitivities,
        sensitivity_aliases,
        categories,
        category_aliases,
    })
}

/// Each value of a table must be paid for by at least this many bytes of the rest of the
/// file before its slot is allocated. This is libsepol's bound (`nprim * 3 * sizeof(u32)`);
/// for types from version 20 on it is exact, since the type→attribute map at the end of
/// the file holds one bitmap of at least 12 bytes per type value.
const SLOT_MIN_BYTES: usize = 12;
/// Permissions per class: access vectors are 32 bits wide (`PERM_SYMTAB_SIZE`).
const MAX_PERMS: u32 = 32;
/// Smallest records (fixed words plus a one-byte name, plus any bitmaps at 12 bytes).
const COMMON_MIN_BYTES: usize = 16 + 1;
const PERM_MIN_BYTES: usize = 8 + 1;
const BOOL_MIN_BYTES: usize = 12 + 1;
const SENS_MIN_BYTES: usize = 8 + 1 + 4 + 12;
const CAT_MIN_BYTES: usize = 12 + 1;

fn class_min_bytes(v: u32) -> usize {
    let mut n = 24 + 1;
    if v >= version::VALIDATETRANS {
        n += 4;
    }
    if v >= version::NEW_OBJECT_DEFAULTS {
        n += 12;
    }
    if v >= version::DEFAULT_TYPE {
        n += 4;
    }
    n
}

fn role_min_bytes(v: u32) -> usize {
    if v >= version::BOUNDARY {
        12 + 1 + 24
    } else {
        8 + 1 + 24
    }
}

fn type_min_bytes(v: u32) -> usize {
    if v >= version::BOUNDARY {
        16 + 1
    } else {
        12 + 1
    }
}

fn user_min_bytes(v: u32) -> usize {
    let fixed = if v >= version::BOUNDARY { 12 } else { 8 };
    // roles bitmap; from 19 a one-level range (items, sens, cats) and a default level.
    let mls = if v >= version::MLS { 20 + 16 } else { 0 };
    fixed + 1 + 12 + mls
}

/// The names a table has read, to refuse a duplicate: the names in read order, indexed by
/// a [`NameSlots`] of their positions (4 bytes a slot; see there why not a `HashSet`).
struct NameSet<'a> {
    names: Vec<&'a str>,
    index: NameSlots,
}

impl<'a> NameSet<'a> {
    /// A set for `n` names (more are taken, at the cost of a rebuild).
    fn with_capacity(n: usize) -> Self {
        NameSet {
            names: Vec::with_capacity(n),
            index: NameSlots::with_capacity(n),
        }
    }

    /// Adds `name`; false if the set holds it already.
    fn insert(&mut self, name: &'a str) -> bool {
        // A table's names are records of at least 4 bytes each in a file the cursor holds
        // in memory, counted by a 32-bit field, so their positions fit below `u32::MAX`.
        let k = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        let names = &self.names;
        let fresh = self
            .index
            .insert_new(name, k, |k| names.get(k as usize).copied().unwrap_or(""))
            .is_ok();
        if fresh {
            self.names.push(name);
        }
        fresh
    }
}

/// One symbol table being filled: slots indexed by value - 1, and the names seen so far
/// (borrowed from the image being read).
struct Table<'a, T> {
    /// Singular noun for errors: "type", "role", ...
    kind: &'static str,
    slots: Vec<Option<T>>,
    names: NameSet<'a>,
}

impl<'a, T> Table<'a, T> {
    /// Reads `nprim` and `nel`, bounding both by the bytes left: `nprim` by
    /// [`SLOT_MIN_BYTES`] per value, `nel` by the table's smallest record. `max_nprim` is
    /// the width of the id type the values must fit.
    fn start(
        c: &mut Cursor<'_>,
        kind: &'static str,
        what: &'static str,
        record_min: usize,
        max_nprim: u32,
    ) -> Result<(Self, usize)> {
        let at = c.offset();
        let nprim = c.u32(what)?;
        if nprim > max_nprim {
            return Err(c.invalid_at(
                at,
                what,
                format!("{nprim} {kind} values; at most {max_nprim} fit the format's ids"),
            ));
        }
        let nprim = c.check_count(nprim, SLOT_MIN_BYTES, what)?;
        let nel = c.count(record_min, what)?;
        let mut slots = Vec::new();
        slots.resize_with(nprim, || None);
        Ok((
            Table {
                kind,
                slots,
                names: NameSet::with_capacity(nel),
            },
            nel,
        ))
    }

    fn nprim(&self) -> u32 {
        self.slots.len() as u32
    }

    /// Reads a record's name (`len` bytes), refusing empty and duplicate names.
    fn name(&mut self, c: &mut Cursor<'a>, len: u32, what: &'static str) -> Result<Box<str>> {
        let at = c.offset();
        if len == 0 {
            return Err(c.invalid_at(at, what, format!("{} with an empty name", self.kind)));
        }
        let name = c.str(len, what)?;
        if !self.names.insert(name) {
            return Err(c.invalid_at(
                at,
                what,
                format!("{} `{name}` is declared twice", self.kind),
            ));
        }
        Ok(name.into())
    }

    /// Checks a value read at `at` for the datum called `name`: in `1..=nprim`.
    fn check_value(
        &self,
        c: &Cursor<'_>,
        at: usize,
        what: &'static str,
        name: &str,
        value: u32,
    ) -> Result<()> {
        if value == 0 || value > self.nprim() {
            return Err(c.invalid_at(
                at,
                what,
                format!(
                    "{} `{name}` has value {value}, outside 1..={}",
                    self.kind,
                    self.nprim()
                ),
            ));
        }
        Ok(())
    }

    /// Puts a datum at `value - 1`, refusing values out of range or already taken.
    fn place(
        &mut self,
        c: &Cursor<'_>,
        at: usize,
        what: &'static str,
        value: u32,
        datum: T,
    ) -> Result<()>
    where
        T: Named,
    {
        let name = datum.name();
        self.check_value(c, at, what, name, value)?;
        let slot = &mut self.slots[value as usize - 1];
        if let Some(other) = slot {
            return Err(c.invalid_at(
                at,
                what,
                format!(
                    "{} `{name}` has value {value}, already used by `{}`",
                    self.kind,
                    other.name()
                ),
            ));
        }
        *slot = Some(datum);
        Ok(())
    }

    /// An optional bound (0 = none) of the datum `name`, read at `at`: a value of this
    /// same table (whether it names a datum is checked once the table is complete).
    fn bound<I>(
        &self,
        c: &Cursor<'_>,
        at: usize,
        what: &'static str,
        name: &str,
        raw: u32,
        new: impl Fn(u32) -> Option<I>,
    ) -> Result<Option<I>> {
        if raw == 0 {
            return Ok(None);
        }
        if raw > self.nprim() {
            return Err(c.invalid_at(
                at,
                what,
                format!(
                    "{} `{name}` is bounded by value {raw}, outside 1..={}",
                    self.kind,
                    self.nprim()
                ),
            ));
        }
        Ok(new(raw))
    }

    /// The datum at `value`, if a record named it.
    fn get(&self, value: u32) -> Option<&T> {
        self.slots.get(value.wrapping_sub(1) as usize)?.as_ref()
    }

    /// The finished array, with `unnamed(value)` in the slots no record named.
    fn finish(self, unnamed: impl Fn(u32) -> T) -> Vec<T> {
        self.slots
            .into_iter()
            .zip(1u32..)
            .map(|(d, value)| d.unwrap_or_else(|| unnamed(value)))
            .collect()
    }
}

/// Data that carry a name (for "value already used by `x`" errors).
trait Named {
    fn name(&self) -> &str;
}

macro_rules! named {
    ($($t:ty),*) => {$(
        impl Named for $t {
            fn name(&self) -> &str {
                &self.name
            }
        }
    )*};
}
named!(
    Common,
    Class,
    Role,
    TypeDatum,
    User,
    Bool,
    Sensitivity,
    Category
);

/// Reads the permissions of a common or class: `nel` records of (len, value, name), values
/// in `first..=nprim` (a class's own permissions come after its common's), each used once.
fn read_perms(
    c: &mut Cursor<'_>,
    owner: &str,
    nprim: u32,
    first: u32,
    nel: u32,
) -> Result<Box<[Perm]>> {
    const WHAT: &str = "permission";
    let nel = c.check_count(nel, PERM_MIN_BYTES, WHAT)?;
    let mut perms: Vec<Perm> = Vec::with_capacity(nel);
    let mut used = 0u32;
    for _ in 0..nel {
        let at = c.offset();
        let [len, value] = c.u32s::<2>(WHAT)?;
        if len == 0 {
            return Err(c.invalid(
                WHAT,
                format!("`{owner}` has a permission with an empty name"),
            ));
        }
        let name = c.string(len, WHAT)?;
        if value < first || value > nprim {
            return Err(c.invalid_at(
                at,
                WHAT,
                format!(
                    "`{owner}` permission `{name}` has value {value}, outside {first}..={nprim}"
                ),
            ));
        }
        let bit = 1u32 << (value - 1);
        // At most 32 names: a hash set would cost more than comparing.
        if used & bit != 0 || perms.iter().any(|p| p.name == name) {
            return Err(c.invalid_at(
                at,
                WHAT,
                format!("`{owner}` permission `{name}` (value {value}) is declared twice"),
            ));
        }
        used |= bit;
        perms.push(Perm { name, value });
    }
    // Hash-table order in the file; by value reads better and is deterministic.
    perms.sort_by_key(|p| p.value);
    Ok(perms.into_boxed_slice())
}

/// The permission table size of a common or class: at most 32 (one access vector word).
fn check_perm_nprim(
    c: &Cursor<'_>,
    at: usize,
    what: &'static str,
    owner: &str,
    nprim: u32,
) -> Result<()> {
    if nprim > MAX_PERMS {
        return Err(c.invalid_at(
            at,
            what,
            format!("`{owner}` has {nprim} permissions; access vectors hold at most {MAX_PERMS}"),
        ));
    }
    Ok(())
}

/// Commons by name: classes name their common, and the ids go in the model.
type CommonIds = HashMap<Box<str>, CommonId>;

fn read_commons(c: &mut Cursor<'_>) -> Result<(Vec<Common>, CommonIds)> {
    const WHAT: &str = "common";
    let (mut t, nel) = Table::start(c, "common", "common table", COMMON_MIN_BYTES, u32::MAX)?;
    for _ in 0..nel {
        let at = c.offset();
        let [len, value, nprim, perm_nel] = c.u32s::<4>(WHAT)?;
        let name = t.name(c, len, WHAT)?;
        check_perm_nprim(c, at + 8, WHAT, &name, nprim)?;
        let perms = read_perms(c, &name, nprim, 1, perm_nel)?;
        let common = Common { name, nprim, perms };
        t.place(c, at + 4, WHAT, value, common)?;
    }
    let commons = t.finish(|_| Common {
        name: "".into(),
        nprim: 0,
        perms: Box::new([]),
    });
    let ids = commons
        .iter()
        .zip(1u32..)
        .filter(|(cm, _)| !cm.name.is_empty())
        .filter_map(|(cm, v)| Some((cm.name.clone(), CommonId::new(v)?)))
        .collect();
    Ok((commons, ids))
}

fn default_side(raw: u32) -> Option<DefaultSide> {
    Some(match raw {
        0 => DefaultSide::None,
        1 => DefaultSide::Source,
        2 => DefaultSide::Target,
        _ => return None,
    })
}

fn default_range(raw: u32) -> Option<DefaultRange> {
    Some(match raw {
        0 => DefaultRange::None,
        1 => DefaultRange::SourceLow,
        2 => DefaultRange::SourceHigh,
        3 => DefaultRange::SourceLowHigh,
        4 => DefaultRange::TargetLow,
        5 => DefaultRange::TargetHigh,
        6 => DefaultRange::TargetLowHigh,
        7 => DefaultRange::Glblub,
        _ => return None,
    })
}

fn read_classes(
    c: &mut Cursor<'_>,
    v: u32,
    commons: &[Common],
    common_ids: &CommonIds,
) -> Result<Vec<Class>> {
    const WHAT: &str = "class";
    let (mut t, nel) = Table::start(
        c,
        "class",
        "class table",
        class_min_bytes(v),
        u16::MAX as u32,
    )?;
    for _ in 0..nel {
        let at = c.offset();
        let [len, common_len, value, nprim, perm_nel, ncons] = c.u32s::<6>(WHAT)?;
        let name = t.name(c, len, WHAT)?;
        check_perm_nprim(c, at + 12, WHAT, &name, nprim)?;
        let (common, first_perm) = if common_len == 0 {
            (None, 1)
        } else {
            let cat = c.offset();
            let cname = c.string(common_len, "class common name")?;
            let id = *common_ids.get(&cname).ok_or_else(|| {
                c.invalid_at(
                    cat,
                    WHAT,
                    format!("class `{name}` inherits unknown common `{cname}`"),
                )
            })?;
            (Some(id), commons[id.index()].nprim + 1)
        };
        let perms = read_perms(c, &name, nprim, first_perm, perm_nel)?;
        let constraints =
            constraint::read_constraints(c, v, ncons, ConstraintKind::Constrain, &name)?;
        let validatetrans = if v >= version::VALIDATETRANS {
            let n = c.u32("validatetrans count")?;
            constraint::read_constraints(c, v, n, ConstraintKind::ValidateTrans, &name)?
        } else {
            Box::new([])
        };
        let mut class = Class {
            name: name.clone(),
            common,
            nprim,
            perms,
            constraints,
            validatetrans,
            default_user: DefaultSide::None,
            default_role: DefaultSide::None,
            default_type: DefaultSide::None,
            default_range: DefaultRange::None,
        };
        if v >= version::NEW_OBJECT_DEFAULTS {
            let dat = c.offset();
            let [user, role, range] = c.u32s::<3>("class defaults")?;
            let bad = |field: &str, raw: u32, off: usize| {
                c.invalid_at(
                    dat + off,
                    "class defaults",
                    format!("class `{name}` has unknown {field} {raw}"),
                )
            };
            class.default_user = default_side(user).ok_or_else(|| bad("default_user", user, 0))?;
            class.default_role = default_side(role).ok_or_else(|| bad("default_role", role, 4))?;
            class.default_range =
                default_range(range).ok_or_else(|| bad("default_range", range, 8))?;
        }
        if v >= version::DEFAULT_TYPE {
            let dat = c.offset();
            let ty = c.u32("class defaults")?;
            class.default_type = default_side(ty).ok_or_else(|| {
                c.invalid_at(
                    dat,
                    "class defaults",
                    format!("class `{name}` has unknown default_type {ty}"),
                )
            })?;
        }
        t.place(c, at + 8, WHAT, value, class)?;
    }
    Ok(t.finish(|_| Class {
        name: "".into(),
        common: None,
        nprim: 0,
        perms: Box::new([]),
        constraints: Box::new([]),
        validatetrans: Box::new([]),
        default_user: DefaultSide::None,
        default_role: DefaultSide::None,
        default_type: DefaultSide::None,
        default_range: DefaultRange::None,
    }))
}

/// The role every policy has at value 1 (`OBJECT_R`, `OBJECT_R_VAL`): the role of
/// objects, exempt from the role/type and user/role checks on contexts.
pub const OBJECT_R: &str = "object_r";

/// The kernel's object_r datum: it creates object_r itself before reading the role table
/// and discards the file's record, so the file's bitmaps for it never matter.
fn object_r() -> Role {
    Role {
        name: OBJECT_R.into(),
        bounds: None,
        dominates: Ebitmap::default(),
        types: Ebitmap::default(),
    }
}

/// The start of a role or user record: name length, value and bounds (from version
/// [`version::BOUNDARY`] on; 0 before).
fn bounded_record_start(c: &mut Cursor<'_>, v: u32, what: &'static str) -> Result<[u32; 3]> {
    let [len, value] = c.u32s::<2>(what)?;
    let bounds = if v >= version::BOUNDARY {
        c.u32(what)?
    } else {
        0
    };
    Ok([len, value, bounds])
}

fn read_roles(c: &mut Cursor<'_>, v: u32) -> Result<Vec<Role>> {
    const WHAT: &str = "role";
    let (mut t, nel) = Table::start(c, "role", "role table", role_min_bytes(v), u32::MAX)?;
    for _ in 0..nel {
        let at = c.offset();
        let [len, value, bounds] = bounded_record_start(c, v, WHAT)?;
        let name = t.name(c, len, WHAT)?;
        let dominates = Ebitmap::read(c, "role dominates")?;
        let types = Ebitmap::read(c, "role types")?;
        if &*name == OBJECT_R {
            if value != 1 {
                return Err(c.invalid_at(
                    at + 4,
                    WHAT,
                    format!("role `{OBJECT_R}` has value {value}; the kernel reserves 1 for it"),
                ));
            }
            t.place(c, at + 4, WHAT, value, object_r())?;
            continue;
        }
        let bounds = t.bound(c, at + 8, WHAT, &name, bounds, RoleId::new)?;
        let role = Role {
            name,
            bounds,
            dominates,
            types,
        };
        t.place(c, at + 4, WHAT, value, role)?;
    }
    match t.get(1) {
        Some(r) if &*r.name != OBJECT_R => {
            return Err(c.invalid(
                WHAT,
                format!(
                    "role `{}` has value 1, which the kernel reserves for `{OBJECT_R}`",
                    r.name
                ),
            ))
        }
        // Like the kernel's roles_init: object_r exists even if the file omits it.
        None if t.nprim() >= 1 => t.slots[0] = Some(object_r()),
        _ => {}
    }
    Ok(t.finish(|_| Role {
        name: "".into(),
        bounds: None,
        dominates: Ebitmap::default(),
        types: Ebitmap::default(),
    }))
}

use crate::format::{TYPE_PROPERTY_ATTRIBUTE, TYPE_PROPERTY_PRIMARY};

fn read_types(c: &mut Cursor<'_>, v: u32) -> Result<(Vec<TypeDatum>, Vec<TypeAlias>)> {
    const WHAT: &str = "type";
    // Access vector table keys and contexts hold types in 16 bits.
    let (mut t, nel) = Table::start(c, "type", "type table", type_min_bytes(v), u16::MAX as u32)?;
    let mut aliases: Vec<(Box<str>, u32, usize)> = Vec::new();
    for _ in 0..nel {
        let at = c.offset();
        let [len, value] = c.u32s::<2>(WHAT)?;
        let (primary, attribute, bounds) = if v >= version::BOUNDARY {
            let [properties, bounds] = c.u32s::<2>(WHAT)?;
            (
                properties & TYPE_PROPERTY_PRIMARY != 0,
                properties & TYPE_PROPERTY_ATTRIBUTE != 0,
                bounds,
            )
        } else {
            (c.u32(WHAT)? != 0, false, 0)
        };
        let name = t.name(c, len, WHAT)?;
        if !primary {
            // An alias: another name for the type whose value it carries. Resolved once
            // the whole table is read, since it may come before its type.
            if attribute {
                return Err(c.invalid_at(
                    at + 8,
                    WHAT,
                    format!("type alias `{name}` is flagged as an attribute"),
                ));
            }
            t.check_value(c, at + 4, WHAT, &name, value)?;
            aliases.push((name, value, at + 4));
            continue;
        }
        let bounds = t.bound(c, at + 12, WHAT, &name, bounds, |b| TypeId::new(b as u16))?;
        let datum = TypeDatum {
            name,
            flavor: if attribute {
                TypeFlavor::Attribute
            } else {
                TypeFlavor::Type
            },
            bounds,
        };
        t.place(c, at + 4, WHAT, value, datum)?;
    }
    let mut type_aliases = Vec::with_capacity(aliases.len());
    for (name, value, at) in aliases {
        match t.get(value) {
            Some(d) if d.flavor == TypeFlavor::Type => {}
            Some(d) => {
                return Err(c.invalid_at(
                    at,
                    WHAT,
                    format!("type alias `{name}` names attribute `{}`", d.name),
                ))
            }
            None => {
                return Err(c.invalid_at(
                    at,
                    WHAT,
                    format!("type alias `{name}` names value {value}, which no type has"),
                ))
            }
        }
        let target = TypeId::new(value as u16).expect("checked against nprim");
        type_aliases.push(TypeAlias { name, target });
    }
    type_aliases.sort_by_key(|a| a.target);
    let types = t.finish(|_| TypeDatum {
        name: "".into(),
        flavor: TypeFlavor::Unnamed,
        bounds: None,
    });
    Ok((types, type_aliases))
}

fn read_users(c: &mut Cursor<'_>, v: u32) -> Result<Vec<User>> {
    const WHAT: &str = "user";
    let (mut t, nel) = Table::start(c, "user", "user table", user_min_bytes(v), u32::MAX)?;
    for _ in 0..nel {
        let at = c.offset();
        let [len, value, bounds] = bounded_record_start(c, v, WHAT)?;
        let name = t.name(c, len, WHAT)?;
        let roles = Ebitmap::read(c, "user roles")?;
        let (range, default_level) = if v >= version::MLS {
            (
                MlsRange::read(c, "user range")?,
                MlsLevel::read(c, "user default level")?,
            )
        } else {
            Default::default()
        };
        let bounds = t.bound(c, at + 8, WHAT, &name, bounds, UserId::new)?;
        let user = User {
            name,
            bounds,
            roles,
            range,
            default_level,
        };
        t.place(c, at + 4, WHAT, value, user)?;
    }
    Ok(t.finish(|_| User {
        name: "".into(),
        bounds: None,
        roles: Ebitmap::default(),
        range: MlsRange::default(),
        default_level: MlsLevel::default(),
    }))
}

fn read_bools(c: &mut Cursor<'_>) -> Result<Vec<Bool>> {
    const WHAT: &str = "boolean";
    let (mut t, nel) = Table::start(c, "boolean", "boolean table", BOOL_MIN_BYTES, u32::MAX)?;
    for _ in 0..nel {
        let at = c.offset();
        let [value, state, len] = c.u32s::<3>(WHAT)?;
        let name = t.name(c, len, WHAT)?;
        let state = match state {
            0 => false,
            1 => true,
            other => {
                return Err(c.invalid_at(
                    at + 4,
                    WHAT,
                    format!("boolean `{name}` has state {other} (0 or 1 expected)"),
                ))
            }
        };
        t.place(c, at, WHAT, value, Bool { name, state })?;
    }
    Ok(t.finish(|_| Bool {
        name: "".into(),
        state: false,
    }))
}

/// An MLS record's `isalias` word: 0 or 1.
fn is_alias(c: &Cursor<'_>, at: usize, what: &'static str, name: &str, raw: u32) -> Result<bool> {
    match raw {
        0 => Ok(false),
        1 => Ok(true),
        other => Err(c.invalid_at(
            at,
            what,
            format!("`{name}` has alias flag {other} (0 or 1 expected)"),
        )),
    }
}

/// Checks that every alias names a value some primary symbol has.
fn check_mls_aliases<T: Named>(
    c: &Cursor<'_>,
    t: &Table<'_, T>,
    aliases: &[(MlsAlias, usize)],
    what: &'static str,
) -> Result<()> {
    for (a, at) in aliases {
        if t.get(a.value).is_none() {
            return Err(c.invalid_at(
                *at,
                what,
                format!(
                    "{} alias `{}` names value {}, which no {} has",
                    t.kind, a.name, a.value, t.kind
                ),
            ));
        }
    }
    Ok(())
}

/// A sensitivity alias's own level (its offset and categories): kept only to be checked
/// once the categories are read, as libsepol validates every level datum, aliases too.
type AliasLevel = (usize, Ebitmap);

/// Every category an alias's level allows is a declared category (libsepol's
/// `validate_ebitmap` over the level datum).
fn check_alias_levels(c: &Cursor<'_>, levels: &[AliasLevel], cats: &[Category]) -> Result<()> {
    for (at, map) in levels {
        let undeclared = map
            .iter()
            .find(|&b| cats.get(b as usize).is_none_or(|k| k.name.is_empty()));
        if let Some(bit) = undeclared {
            return Err(c.invalid_at(
                *at,
                "sensitivity level",
                format!(
                    "sensitivity alias level names category value {}, which no category has",
                    bit + 1
                ),
            ));
        }
    }
    Ok(())
}

#[allow(clippy::type_complexity)]
fn read_sensitivities(
    c: &mut Cursor<'_>,
) -> Result<(Vec<Sensitivity>, Vec<MlsAlias>, Vec<AliasLevel>)> {
    const WHAT: &str = "sensitivity";
    let (mut t, nel) = Table::start(
        c,
        "sensitivity",
        "sensitivity table",
        SENS_MIN_BYTES,
        u32::MAX,
    )?;
    let mut aliases = Vec::new();
    let mut alias_levels = Vec::new();
    for _ in 0..nel {
        let at = c.offset();
        let [len, isalias] = c.u32s::<2>(WHAT)?;
        let name = t.name(c, len, WHAT)?;
        let isalias = is_alias(c, at + 4, WHAT, &name, isalias)?;
        let level_at = c.offset();
        let level = MlsLevel::read(c, "sensitivity level")?;
        // A sensitivity's value is the `sens` of its level.
        t.check_value(c, level_at, WHAT, &name, level.sens)?;
        if isalias {
            let value = level.sens;
            aliases.push((MlsAlias { name, value }, level_at));
            alias_levels.push((level_at, level.cats));
            continue;
        }
        let value = level.sens;
        t.place(c, level_at, WHAT, value, Sensitivity { name, level })?;
    }
    check_mls_aliases(c, &t, &aliases, WHAT)?;
    let sens = t.finish(|value| Sensitivity {
        name: "".into(),
        level: MlsLevel {
            sens: value,
            cats: Ebitmap::default(),
        },
    });
    Ok((
        sens,
        aliases.into_iter().map(|(a, _)| a).collect(),
        alias_levels,
    ))
}

fn read_categories(c: &mut Cursor<'_>) -> Result<(Vec<Category>, Vec<MlsAlias>)> {
    const WHAT: &str = "category";
    let (mut t, nel) = Table::start(c, "category", "category table", CAT_MIN_BYTES, u32::MAX)?;
    let mut aliases = Vec::new();
    for _ in 0..nel {
        let at = c.offset();
        let [len, value, isalias] = c.u32s::<3>(WHAT)?;
        let name = t.name(c, len, WHAT)?;
        let isalias = is_alias(c, at + 8, WHAT, &name, isalias)?;
        t.check_value(c, at + 4, WHAT, &name, value)?;
        if isalias {
            aliases.push((MlsAlias { name, value }, at + 4));
            continue;
        }
        t.place(c, at + 4, WHAT, value, Category { name })?;
    }
    check_mls_aliases(c, &t, &aliases, WHAT)?;
    let cats = t.finish(|_| Category { name: "".into() });
    Ok((cats, aliases.into_iter().map(|(a, _)| a).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::PolicyError;
    use crate::testbytes::W;

    /// One symbol table of a test image: `nprim` and the encoded records.
    #[derive(Clone, Default)]
    struct Tab {
        nprim: u32,
        records: Vec<Vec<u8>>,
    }

    impl Tab {
        fn new(nprim: u32, records: Vec<Vec<u8>>) -> Self {
            Tab { nprim, records }
        }
    }

    /// The eight tables of a small policy, editable before encoding.
    struct Parts {
        v: u32,
        tabs: Vec<Tab>,
    }

    fn rec(f: impl FnOnce(&mut W)) -> Vec<u8> {
        let mut w = W::new();
        f(&mut w);
        w.into_bytes()
    }

    fn common(name: &str, value: u32, perms: &[(&str, u32)]) -> Vec<u8> {
        rec(|w| {
            w.u32s(&[
                name.len() as u32,
                value,
                perms.len() as u32,
                perms.len() as u32,
            ]);
            w.bytes(name.as_bytes());
            for (p, v) in perms {
                w.u32s(&[p.len() as u32, *v]).bytes(p.as_bytes());
            }
        })
    }

    fn class_with(
        v: u32,
        name: &str,
        common: Option<&str>,
        value: u32,
        nprim: u32,
        perms: &[(&str, u32)],
        defaults: [u32; 4],
    ) -> Vec<u8> {
        rec(|w| {
            let clen = common.map_or(0, |c| c.len() as u32);
            w.u32s(&[name.len() as u32, clen, value, nprim, perms.len() as u32, 0]);
            w.bytes(name.as_bytes());
            if let Some(c) = common {
                w.bytes(c.as_bytes());
            }
            for (p, pv) in perms {
                w.u32s(&[p.len() as u32, *pv]).bytes(p.as_bytes());
            }
            if v >= 19 {
                w.u32(0);
            }
            if v >= 27 {
                w.u32s(&defaults[..3]);
            }
            if v >= 28 {
                w.u32(defaults[3]);
            }
        })
    }

    fn class(
        v: u32,
        name: &str,
        common: Option<&str>,
        value: u32,
        perms: &[(&str, u32)],
    ) -> Vec<u8> {
        let inherited = if common.is_some() { 2 } else { 0 };
        class_with(
            v,
            name,
            common,
            value,
            inherited + perms.len() as u32,
            perms,
            [0; 4],
        )
    }

    fn role(v: u32, name: &str, value: u32, bounds: u32, types: &[u32]) -> Vec<u8> {
        rec(|w| {
            w.u32s(&[name.len() as u32, value]);
            if v >= 24 {
                w.u32(bounds);
            }
            w.bytes(name.as_bytes())
                .ebitmap(&[value - 1])
                .ebitmap(types);
        })
    }

    /// A type record; `props` is the v24 properties word, or the primary flag before.
    fn ty(v: u32, name: &str, value: u32, props: u32, bounds: u32) -> Vec<u8> {
        rec(|w| {
            w.u32s(&[name.len() as u32, value]);
            if v >= 24 {
                w.u32s(&[props, bounds]);
            } else {
                w.u32(props & TYPE_PROPERTY_PRIMARY);
            }
            w.bytes(name.as_bytes());
        })
    }

    fn user(v: u32, name: &str, value: u32, roles: &[u32]) -> Vec<u8> {
        rec(|w| {
            w.u32s(&[name.len() as u32, value]);
            if v >= 24 {
                w.u32(0);
            }
            w.bytes(name.as_bytes()).ebitmap(roles);
            if v >= 19 {
                w.range((1, &[]), (2, &[0, 1])).u32(1).ebitmap(&[]);
            }
        })
    }

    fn boolean(name: &str, value: u32, state: u32) -> Vec<u8> {
        rec(|w| {
            w.u32s(&[value, state, name.len() as u32])
                .bytes(name.as_bytes());
        })
    }

    fn sens(name: &str, isalias: u32, value: u32, cats: &[u32]) -> Vec<u8> {
        rec(|w| {
            w.u32s(&[name.len() as u32, isalias]).bytes(name.as_bytes());
            w.u32(value).ebitmap(cats);
        })
    }

    fn cat(name: &str, value: u32, isalias: u32) -> Vec<u8> {
        rec(|w| {
            w.u32s(&[name.len() as u32, value, isalias])
                .bytes(name.as_bytes());
        })
    }

    const PRIMARY: u32 = TYPE_PROPERTY_PRIMARY;
    const ATTR: u32 = TYPE_PROPERTY_PRIMARY | TYPE_PROPERTY_ATTRIBUTE;

    /// A policy with every table populated: commons {file}, classes {process, file},
    /// roles {object_r, system_r}, types {init_t, domain (attribute), file_t, alias
    /// bin_t → file_t}, users {system_u}, booleans {b1, b2}, s0, s1 (alias high), c0, c1
    /// (alias top).
    fn parts(v: u32) -> Parts {
        let mut tabs = vec![
            Tab::new(1, vec![common("file", 1, &[("read", 1), ("write", 2)])]),
            Tab::new(
                2,
                vec![
                    class(v, "process", None, 1, &[("fork", 1), ("transition", 2)]),
                    class(v, "file", Some("file"), 2, &[("execute", 3)]),
                ],
            ),
            Tab::new(
                2,
                vec![
                    role(v, "object_r", 1, 0, &[]),
                    role(v, "system_r", 2, 0, &[0, 2]),
                ],
            ),
            Tab::new(
                3,
                vec![
                    ty(v, "init_t", 1, PRIMARY, 0),
                    ty(v, "bin_t", 3, 0, 0),
                    ty(v, "domain", 2, ATTR, 0),
                    ty(v, "file_t", 3, PRIMARY, 0),
                ],
            ),
            Tab::new(1, vec![user(v, "system_u", 1, &[0, 1])]),
        ];
        if v >= 16 {
            tabs.push(Tab::new(2, vec![boolean("b2", 2, 1), boolean("b1", 1, 0)]));
        }
        if v >= 19 {
            tabs.push(Tab::new(
                2,
                vec![
                    sens("s0", 0, 1, &[0]),
                    sens("high", 1, 2, &[0, 1]),
                    sens("s1", 0, 2, &[0, 1]),
                ],
            ));
            tabs.push(Tab::new(
                2,
                vec![cat("c0", 1, 0), cat("top", 2, 1), cat("c1", 2, 0)],
            ));
        }
        if v < 24 {
            // Attributes are not written before version 24: value 2 stays unnamed.
            tabs[3].records.remove(2);
        }
        Parts { v, tabs }
    }

    fn encode(p: &Parts) -> Vec<u8> {
        let mut w = W::new();
        for t in &p.tabs {
            w.u32s(&[t.nprim, t.records.len() as u32]);
            for r in &t.records {
                w.bytes(r);
            }
        }
        // Room for the rest of a policy: the symbol tables' slot bound counts on it.
        w.bytes(&[0; 64]);
        w.into_bytes()
    }

    fn header(p: &Parts) -> Header {
        let (sym_num, ocon_num) = crate::header::compat_table_sizes(p.v);
        Header {
            platform: crate::xen::Platform::Selinux,
            version: p.v,
            mls: false,
            handle_unknown: crate::policy::HandleUnknown::Deny,
            sym_num,
            ocon_num,
            policycaps: Ebitmap::default(),
            permissive: Ebitmap::default(),
            neveraudit: Ebitmap::default(),
        }
    }

    fn read_parts(p: &Parts) -> Result<Symtabs> {
        let bytes = encode(p);
        let mut c = Cursor::new(&bytes);
        let s = read(&mut c, &header(p))?;
        assert_eq!(c.remaining(), 64, "symbol tables not consumed exactly");
        Ok(s)
    }

    /// The detail of an `Invalid` error (panics on anything else).
    fn invalid(r: Result<Symtabs>) -> String {
        match r {
            Err(PolicyError::Invalid { detail, .. }) => detail,
            Err(e) => panic!("expected Invalid, got {e}"),
            Ok(_) => panic!("expected Invalid, got Ok"),
        }
    }

    #[test]
    fn reads_every_table_at_version_33() {
        let s = read_parts(&parts(33)).unwrap();
        assert_eq!(s.commons[0].perms.len(), 2);
        let file = &s.classes[1];
        assert_eq!(&*file.name, "file");
        assert_eq!(file.common, CommonId::new(1));
        assert_eq!((file.nprim, file.perms[0].value), (3, 3));
        assert_eq!(s.class_by_name("process"), ClassId::new(1));
        assert_eq!(
            s.roles.iter().map(|r| &*r.name).collect::<Vec<_>>(),
            ["object_r", "system_r"]
        );
        assert_eq!(
            s.types.iter().map(|t| t.flavor).collect::<Vec<_>>(),
            [TypeFlavor::Type, TypeFlavor::Attribute, TypeFlavor::Type]
        );
        assert_eq!(&*s.type_aliases[0].name, "bin_t");
        assert_eq!(s.type_aliases[0].target, TypeId::new(3).unwrap());
        assert_eq!(s.users[0].range.high.sens, 2);
        assert_eq!(
            s.bools
                .iter()
                .map(|b| (&*b.name, b.state))
                .collect::<Vec<_>>(),
            [("b1", false), ("b2", true)]
        );
        assert_eq!(s.sensitivities[1].level.cats.len(), 2);
        assert_eq!(s.sensitivity_aliases[0].value, 2);
        assert_eq!(&*s.categories[1].name, "c1");
        assert_eq!(&*s.category_aliases[0].name, "top");
        let counts = s.counts(33);
        assert_eq!((counts.types, counts.sens, counts.cats), (3, 2, 2));
    }

    #[test]
    fn reads_the_tables_each_old_version_has() {
        for v in [15, 16, 18, 19, 23, 24, 26, 27, 28] {
            let s = read_parts(&parts(v)).unwrap_or_else(|e| panic!("version {v}: {e}"));
            assert_eq!(s.bools.len(), if v >= 16 { 2 } else { 0 }, "version {v}");
            assert_eq!(s.sensitivities.len(), if v >= 19 { 2 } else { 0 });
            let expected = if v >= 24 {
                TypeFlavor::Attribute
            } else {
                TypeFlavor::Unnamed
            };
            assert_eq!(s.types[1].flavor, expected, "version {v}");
        }
    }

    #[test]
    fn duplicate_symbol_value_is_an_error_naming_both() {
        let mut p = parts(33);
        p.tabs[3].records[3] = ty(33, "file_t", 1, PRIMARY, 0);
        let d = invalid(read_parts(&p));
        assert!(
            d.contains("type `file_t` has value 1, already used by `init_t`"),
            "{d}"
        );
    }

    #[test]
    fn values_outside_nprim_are_errors() {
        let mut p = parts(33);
        p.tabs[4].records[0] = user(33, "system_u", 2, &[]);
        let d = invalid(read_parts(&p));
        assert!(
            d.contains("user `system_u` has value 2, outside 1..=1"),
            "{d}"
        );

        let mut p = parts(33);
        p.tabs[5].records[0] = boolean("b2", 0, 1);
        assert!(invalid(read_parts(&p)).contains("value 0"));
    }

    #[test]
    fn the_name_set_refuses_each_repeat_and_grows_past_its_announced_size() {
        let names: Vec<String> = (0..5000).map(|i| format!("t{i}_t")).collect();
        let mut set = NameSet::with_capacity(100);
        for n in &names {
            assert!(set.insert(n), "{n} is new");
        }
        for n in &names {
            assert!(!set.insert(n), "{n} is there");
        }
        assert!(set.insert("t5000_t") && !set.insert("t5000_t"));
        // The Debian policy's 4,153 types: both parts under glibc's 128 kB mmap threshold.
        let set = NameSet::with_capacity(4153);
        assert_eq!(set.index.slot_bytes(), 32 * 1024);
        assert!(set.names.capacity() * 16 < 128 * 1024);
    }

    #[test]
    fn duplicate_and_empty_names_are_errors() {
        let mut p = parts(33);
        p.tabs[7].records.push(cat("c0", 2, 1));
        assert!(invalid(read_parts(&p)).contains("category `c0` is declared twice"));

        let mut p = parts(33);
        p.tabs[3].records.push(ty(33, "", 1, 0, 0));
        assert!(invalid(read_parts(&p)).contains("empty name"));
    }

    #[test]
    fn object_r_must_have_value_1() {
        let mut p = parts(33);
        p.tabs[2].records = vec![
            role(33, "system_r", 1, 0, &[]),
            role(33, "object_r", 2, 0, &[]),
        ];
        let d = invalid(read_parts(&p));
        assert!(d.contains("object_r"), "{d}");
    }

    #[test]
    fn object_r_is_created_when_the_file_omits_it() {
        let mut p = parts(33);
        p.tabs[2].records.remove(0);
        let s = read_parts(&p).unwrap();
        assert_eq!(&*s.roles[0].name, OBJECT_R);

        let mut p = parts(33);
        p.tabs[2].records = vec![role(33, "system_r", 1, 0, &[])];
        assert!(invalid(read_parts(&p)).contains("reserves"));
    }

    #[test]
    fn object_r_bitmaps_from_the_file_are_ignored_like_the_kernel() {
        let mut p = parts(33);
        p.tabs[2].records[0] = role(33, "object_r", 1, 0, &[0, 1, 2]);
        let s = read_parts(&p).unwrap();
        assert!(s.roles[0].types.is_empty());
    }

    #[test]
    fn unnamed_values_become_placeholders() {
        let mut p = parts(33);
        p.tabs[2].nprim = 4; // role values 3 and 4: role attributes, never written
        p.tabs[4].nprim = 2;
        let s = read_parts(&p).unwrap();
        assert_eq!(s.roles.len(), 4);
        assert!(s.roles[2].name.is_empty() && s.roles[3].types.is_empty());
        assert!(s.users[1].name.is_empty());
    }

    #[test]
    fn aliases_must_name_a_type() {
        let mut p = parts(33);
        p.tabs[3].records[1] = ty(33, "bin_t", 2, 0, 0);
        assert!(invalid(read_parts(&p)).contains("names attribute `domain`"));

        let mut p = parts(23);
        p.tabs[3].records[1] = ty(23, "bin_t", 2, 0, 0);
        assert!(invalid(read_parts(&p)).contains("which no type has"));
    }

    #[test]
    fn sensitivity_aliases_must_name_a_sensitivity() {
        let mut p = parts(33);
        p.tabs[6].records.remove(2); // s1 gone: alias `high` dangles, value 2 unnamed
        assert!(invalid(read_parts(&p)).contains("sensitivity alias `high`"));
    }

    #[test]
    fn types_must_fit_sixteen_bits() {
        let mut p = parts(33);
        p.tabs[3].nprim = 65536;
        let d = invalid(read_parts(&p));
        assert!(d.contains("65536 type values"), "{d}");
    }

    #[test]
    fn hostile_counts_are_refused_before_allocation() {
        for table in 0..8 {
            for field in 0..2 {
                let mut p = parts(33);
                let mut bytes = encode(&p);
                // Find the table's header: encode the preceding tables only.
                p.tabs.truncate(table);
                let at = encode(&p).len() - 64 + 4 * field;
                bytes[at..at + 4].copy_from_slice(&0x4000_0000u32.to_le_bytes());
                let mut c = Cursor::new(&bytes);
                let r = read(&mut c, &header(&parts(33)));
                assert!(
                    matches!(
                        r,
                        Err(PolicyError::CountTooLarge { .. }) | Err(PolicyError::Invalid { .. })
                    ),
                    "table {table} field {field}: {:?}",
                    r.err()
                );
            }
        }
    }

    #[test]
    fn boolean_state_must_be_0_or_1() {
        let mut p = parts(33);
        p.tabs[5].records[0] = boolean("b2", 2, 2);
        assert!(invalid(read_parts(&p)).contains("state 2"));
    }

    #[test]
    fn class_must_name_a_known_common() {
        let mut p = parts(33);
        p.tabs[1].records[1] = class(33, "file", Some("socket"), 2, &[("execute", 3)]);
        assert!(invalid(read_parts(&p)).contains("unknown common `socket`"));
    }

    #[test]
    fn class_permissions_follow_the_common_and_fit_32_bits() {
        let mut p = parts(33);
        p.tabs[1].records[1] = class(33, "file", Some("file"), 2, &[("execute", 2)]);
        assert!(invalid(read_parts(&p)).contains("outside 3..=3"));

        let mut p = parts(33);
        p.tabs[1].records[0] = class_with(33, "process", None, 1, 33, &[], [0; 4]);
        assert!(invalid(read_parts(&p)).contains("at most 32"));

        let mut p = parts(33);
        p.tabs[1].records[0] = class(33, "process", None, 1, &[("fork", 1), ("fork", 2)]);
        assert!(invalid(read_parts(&p)).contains("declared twice"));
    }

    #[test]
    fn class_defaults_are_mapped_and_unknown_values_refused() {
        let mut p = parts(33);
        p.tabs[1].records[0] = class_with(33, "process", None, 1, 0, &[], [1, 2, 7, 2]);
        let s = read_parts(&p).unwrap();
        let c = &s.classes[0];
        assert_eq!(
            (
                c.default_user,
                c.default_role,
                c.default_range,
                c.default_type
            ),
            (
                DefaultSide::Source,
                DefaultSide::Target,
                DefaultRange::Glblub,
                DefaultSide::Target
            )
        );
        for (i, bad) in [[3, 0, 0, 0], [0, 3, 0, 0], [0, 0, 8, 0], [0, 0, 0, 3]]
            .into_iter()
            .enumerate()
        {
            let mut p = parts(33);
            p.tabs[1].records[0] = class_with(33, "process", None, 1, 0, &[], bad);
            let d = invalid(read_parts(&p));
            assert!(
                d.contains("class `process` has unknown default_"),
                "case {i}: {d}"
            );
        }
    }

    #[test]
    fn bounds_beyond_the_table_are_errors() {
        let mut p = parts(33);
        p.tabs[3].records[0] = ty(33, "init_t", 1, PRIMARY, 4);
        assert!(invalid(read_parts(&p)).contains("bounded by value 4"));
        let mut p = parts(33);
        p.tabs[3].records[0] = ty(33, "init_t", 1, PRIMARY, 3);
        assert_eq!(read_parts(&p).unwrap().types[0].bounds, TypeId::new(3));
    }

    #[test]
    fn truncation_anywhere_in_the_tables_is_an_error() {
        let p = parts(33);
        let bytes = encode(&p);
        let end = bytes.len() - 64;
        for len in 0..end {
            let mut c = Cursor::new(&bytes[..len]);
            assert!(read(&mut c, &header(&p)).is_err(), "prefix {len}");
        }
    }
}

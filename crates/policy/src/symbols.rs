//! The symbol tables: commons, classes, roles, types, users, booleans, sensitivities and
//! categories. Each is a flat array indexed by the symbol's value - 1.

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
/// `default_type` rule takes (0 = no rule).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum DefaultSide {
    #[default]
    None,
    Source,
    Target,
}

/// What a `default_range` rule takes.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum DefaultRange {
    #[default]
    None,
    SourceLow,
    SourceHigh,
    SourceLowHigh,
    TargetLow,
    TargetHigh,
    TargetLowHigh,
    /// `glblub` (format version 32).
    Glblub,
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

use crate::cursor::Cursor;
use crate::error::{PolicyError, Result};
use crate::header::Header;
use crate::ids::ClassId;
use crate::read::Counts;

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

pub(crate) fn read(c: &mut Cursor<'_>, hdr: &Header) -> Result<Symtabs> {
    let _ = (c, hdr);
    Err(PolicyError::Inconsistent {
        what: "symbols".into(),
        detail: "reader not written yet".into(),
    })
}

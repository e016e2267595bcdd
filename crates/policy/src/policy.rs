//! The immutable policy model: everything a binary policy holds, in flat arrays indexed by
//! typed ids, sized to what the file contains.

use crate::avtab::Avtab;
use crate::cond::CondNode;
use crate::ebitmap::Ebitmap;
use crate::ids::{BoolId, ClassId, CommonId, RoleId, TypeId, UserId};
use crate::ocontext::{GenfsCon, OContexts};
use crate::symbols::{
    Bool, Category, Class, Common, MlsAlias, Role, Sensitivity, TypeAlias, TypeDatum, TypeFlavor,
    User,
};
use crate::transitions::{FilenameTrans, RangeTrans, RoleAllow, RoleTrans};

/// Oldest format version read (the kernel's `POLICYDB_VERSION_BASE`).
pub const MIN_VERSION: u32 = 15;
/// Newest format version read (`POLICYDB_VERSION_NEVERAUDIT`).
pub const MAX_VERSION: u32 = 35;

/// Format versions at which features appeared (the kernel's `POLICYDB_VERSION_*`).
pub mod version {
    pub const BASE: u32 = 15;
    pub const BOOL: u32 = 16;
    pub const IPV6: u32 = 17;
    pub const NLCLASS: u32 = 18;
    pub const VALIDATETRANS: u32 = 19;
    pub const MLS: u32 = 19;
    pub const AVTAB: u32 = 20;
    pub const RANGETRANS: u32 = 21;
    pub const POLCAP: u32 = 22;
    pub const PERMISSIVE: u32 = 23;
    pub const BOUNDARY: u32 = 24;
    pub const FILENAME_TRANS: u32 = 25;
    pub const ROLETRANS: u32 = 26;
    pub const NEW_OBJECT_DEFAULTS: u32 = 27;
    pub const DEFAULT_TYPE: u32 = 28;
    pub const CONSTRAINT_NAMES: u32 = 29;
    pub const XPERMS_IOCTL: u32 = 30;
    pub const INFINIBAND: u32 = 31;
    pub const GLBLUB: u32 = 32;
    pub const COMP_FTRANS: u32 = 33;
    pub const COND_XPERMS: u32 = 34;
    pub const NEVERAUDIT: u32 = 35;
}

/// What the kernel does with classes and permissions the policy does not define.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum HandleUnknown {
    Deny,
    Reject,
    Allow,
}

/// A loaded, validated, immutable binary policy.
///
/// Arrays are indexed by `id.index()` (value - 1). Symbols whose values the file leaves
/// unnamed (attributes before version 24) appear as [`crate::symbols::TypeFlavor::Unnamed`].
#[derive(Clone, Debug)]
pub struct Policy {
    pub version: u32,
    /// Whether the MLS configuration bit is set.
    pub mls: bool,
    pub handle_unknown: HandleUnknown,
    /// Policy capability bits (bit i = capability number i), from version 22.
    pub policycaps: Ebitmap,
    /// Permissive types, from version 23. NOTE: bit i = type VALUE i (not i-1): the kernel
    /// tests `ebitmap_get_bit(&permissive_map, scontext->type)`, so bit 0 is never set.
    pub permissive: Ebitmap,
    /// Types whose denials and grants are never audited, from 35; indexed by type value like
    /// `permissive` (bit 0 unused).
    pub neveraudit: Ebitmap,

    pub commons: Vec<Common>,
    pub classes: Vec<Class>,
    pub roles: Vec<Role>,
    pub types: Vec<TypeDatum>,
    pub type_aliases: Vec<TypeAlias>,
    pub users: Vec<User>,
    pub bools: Vec<Bool>,
    /// Indexed by sensitivity value - 1.
    pub sensitivities: Vec<Sensitivity>,
    pub sensitivity_aliases: Vec<MlsAlias>,
    /// Indexed by category value - 1.
    pub categories: Vec<Category>,
    pub category_aliases: Vec<MlsAlias>,

    /// Unconditional rules.
    pub avtab: Avtab,
    /// Conditional `if` blocks; their rules live in `cond_avtab`.
    pub cond_nodes: Vec<CondNode>,
    pub cond_avtab: Avtab,

    pub role_trans: Vec<RoleTrans>,
    pub role_allow: Vec<RoleAllow>,
    pub filename_trans: Vec<FilenameTrans>,
    pub ocontexts: OContexts,
    pub genfs: Vec<GenfsCon>,
    pub range_trans: Vec<RangeTrans>,
    /// For each type value - 1: the attributes it has, plus itself (bit i = type value i+1).
    /// Before version 20 the file has no map and each type maps only to itself.
    pub type_attr_map: Vec<Ebitmap>,
}

impl Policy {
    /// For each type or attribute value (by index), the concrete types that have it: the
    /// type itself, or the members of the attribute, from the type→attribute map. The one
    /// definition of "members of an attribute" that tests, benchmarks and tools use.
    pub fn members(&self) -> Vec<Vec<TypeId>> {
        let mut members = vec![Vec::new(); self.types.len()];
        for (i, map) in self.type_attr_map.iter().enumerate() {
            if self.types.get(i).map(|t| t.flavor) != Some(TypeFlavor::Type) {
                continue;
            }
            let Some(ty) = TypeId::from_index(i) else {
                continue;
            };
            for b in map.iter() {
                if let Some(m) = members.get_mut(b as usize) {
                    m.push(ty);
                }
            }
        }
        members
    }

    /// The `process` class (`domain` in a Xen policy, as libsepol has it), if the policy
    /// defines one (role transitions, range transitions of older formats and the role
    /// check of process transitions refer to it).
    pub fn process_class(&self) -> Option<ClassId> {
        let name = match self.ocontexts.platform {
            crate::xen::Platform::Selinux => "process",
            crate::xen::Platform::Xen => "domain",
        };
        self.classes
            .iter()
            .position(|c| &*c.name == name)
            .and_then(ClassId::from_index)
    }

    pub fn common(&self, id: CommonId) -> &Common {
        &self.commons[id.index()]
    }
    pub fn class(&self, id: ClassId) -> &Class {
        &self.classes[id.index()]
    }
    pub fn role(&self, id: RoleId) -> &Role {
        &self.roles[id.index()]
    }
    pub fn type_datum(&self, id: TypeId) -> &TypeDatum {
        &self.types[id.index()]
    }
    pub fn user(&self, id: UserId) -> &User {
        &self.users[id.index()]
    }
    pub fn bool_datum(&self, id: BoolId) -> &Bool {
        &self.bools[id.index()]
    }
}

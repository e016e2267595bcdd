//! Symbol names ⇄ typed ids, built once per policy.
//!
//! Everything a client names by string — users, roles, types, classes, permissions,
//! booleans, sensitivities, categories — is resolved here, once per query, so the decision
//! paths only ever see typed ids. The maps own their strings (a few hundred kilobytes for a
//! full reference policy) so [`Names`] does not borrow the [`Policy`] it was built from.
//!
//! Lookups follow the kernel's symbol tables exactly: aliases resolve to their primary
//! symbol (types, sensitivities, categories), type attributes are found by name but flagged
//! (the kernel's `string_to_context_struct` refuses them in a context), and a class's
//! permission table includes the permissions of its common.
//!
//! Hashing uses [`FxHasher`], a small multiplicative hasher: the keys are the policy's own
//! names, fixed when the policy is loaded, so a client cannot choose keys that collide —
//! it can only look names up, never insert them.

use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::{BoolId, CatId, ClassId, Ebitmap, Policy, RoleId, SensId, TypeId, UserId};

pub use crate::hash::FxHashMap;

/// A name table of one symbol kind: name (primary or alias) → id, and id → primary name.
#[derive(Clone, Debug)]
struct Table<I> {
    by_name: FxHashMap<Box<str>, I>,
    /// Indexed by `id.index()`; empty for values the policy leaves unnamed.
    names: Vec<Box<str>>,
}

impl<I: Copy> Table<I> {
    fn build<'a>(
        primaries: impl Iterator<Item = &'a str>,
        aliases: impl Iterator<Item = (&'a str, I)>,
        make: impl Fn(usize) -> Option<I>,
    ) -> Self {
        // Presized: a reload builds every table, and growing them rehashes every name.
        let n = primaries.size_hint().0;
        let mut by_name =
            FxHashMap::with_capacity_and_hasher(n + aliases.size_hint().0, Default::default());
        let mut names = Vec::with_capacity(n);
        for (i, name) in primaries.enumerate() {
            names.push(Box::<str>::from(name));
            if let (false, Some(id)) = (name.is_empty(), make(i)) {
                by_name.insert(name.into(), id);
            }
        }
        for (name, id) in aliases {
            // A primary name wins over an alias spelled the same (the compiler refuses
            // such policies; the kernel's hashtab_insert would keep the first).
            by_name.entry(name.into()).or_insert(id);
        }
        Table { by_name, names }
    }

    #[inline]
    fn get(&self, name: &str) -> Option<I> {
        self.by_name.get(name).copied()
    }

    #[inline]
    fn name(&self, index: usize) -> Option<&str> {
        self.names
            .get(index)
            .map(|n| &**n)
            .filter(|n| !n.is_empty())
    }
}

/// A type-table entry found by name.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct TypeSymbol {
    /// The primary type (an alias resolves to the type it names).
    pub id: TypeId,
    /// Whether this is a type or an attribute. Only [`TypeFlavor::Type`] may appear in a
    /// security context.
    pub flavor: TypeFlavor,
}

/// One class's permissions: name → access-vector bit, and bit → name.
#[derive(Clone, Debug, Default)]
struct ClassPerms {
    by_name: FxHashMap<Box<str>, u32>,
    /// `names[bit]`; empty where no permission has that value.
    names: [Box<str>; 32],
    /// The bits some permission defines.
    defined: u32,
}

/// Name ⇄ id maps for every symbol kind of one policy.
///
/// Built once per loaded policy ([`Names::new`]); immutable afterwards and cheap to share.
#[derive(Clone, Debug)]
pub struct Names {
    mls: bool,
    users: Table<UserId>,
    roles: Table<RoleId>,
    /// Types, aliases and attributes; `type_flavors[id.index()]` tells them apart.
    types: Table<TypeId>,
    type_flavors: Vec<TypeFlavor>,
    classes: Table<ClassId>,
    perms: Vec<ClassPerms>,
    bools: Table<BoolId>,
    sens: Table<SensId>,
    cats: Table<CatId>,
    /// The category sets the policy itself names (each `level` statement's, each user's
    /// range and default level, and all categories), as dense words beside the bitmap.
    /// Clients send these (`c0.c1023`) far more than any other large set, and building an
    /// [`Ebitmap`] bit by bit costs microseconds where a clone costs nanoseconds.
    common_cats: Vec<(Box<[u64]>, Ebitmap)>,
}

/// Dense words (bit i of word i/64 = category bit i) of `e`, `words` long; `None` if `e`
/// has bits beyond.
fn dense(e: &Ebitmap, words: usize) -> Option<Box<[u64]>> {
    let mut out = vec![0u64; words];
    for (start, map) in e.nodes() {
        *out.get_mut(start as usize / 64)? = map;
    }
    Some(out.into_boxed_slice())
}

impl Names {
    /// Builds every map from `policy`.
    pub fn new(policy: &Policy) -> Names {
        let users = Table::build(
            policy.users.iter().map(|u| &*u.name),
            std::iter::empty(),
            UserId::from_index,
        );
        let roles = Table::build(
            policy.roles.iter().map(|r| &*r.name),
            std::iter::empty(),
            RoleId::from_index,
        );
        let types = Table::build(
            policy.types.iter().map(|t| match t.flavor {
                TypeFlavor::Unnamed => "",
                _ => &*t.name,
            }),
            policy.type_aliases.iter().map(|a| (&*a.name, a.target)),
            TypeId::from_index,
        );
        let type_flavors = policy.types.iter().map(|t| t.flavor).collect();
        let classes = Table::build(
            policy.classes.iter().map(|c| &*c.name),
            std::iter::empty(),
            ClassId::from_index,
        );
        let perms = policy
            .classes
            .iter()
            .map(|class| {
                let mut cp = ClassPerms::default();
                let common = class
                    .common
                    .and_then(|c| policy.commons.get(c.index()))
                    .map(|c| &c.perms[..])
                    .unwrap_or(&[]);
                // Class permissions after the common's: a (malformed) duplicate name then
                // resolves to the class's own permission, as the kernel's lookup order
                // (class table first, then the common's) does.
                for p in common.iter().chain(class.perms.iter()) {
                    if !(1..=32).contains(&p.value) {
                        continue; // the reader rejects these; never index out of range
                    }
                    let bit = p.value - 1;
                    cp.by_name.insert(p.name.clone(), 1 << bit);
                    cp.names[bit as usize] = p.name.clone();
                    cp.defined |= 1 << bit;
                }
                cp
            })
            .collect();
        let bools = Table::build(
            policy.bools.iter().map(|b| &*b.name),
            std::iter::empty(),
            BoolId::from_index,
        );
        let sens = Table::build(
            policy.sensitivities.iter().map(|s| &*s.name),
            policy
                .sensitivity_aliases
                .iter()
                .filter_map(|a| Some((&*a.name, SensId::new(a.value)?))),
            SensId::from_index,
        );
        let cats = Table::build(
            policy.categories.iter().map(|c| &*c.name),
            policy
                .category_aliases
                .iter()
                .filter_map(|a| Some((&*a.name, CatId::new(a.value)?))),
            CatId::from_index,
        );
        let words = cats.names.len().div_ceil(64);
        let mut common_cats: Vec<(Box<[u64]>, Ebitmap)> = Vec::new();
        let all = Ebitmap::from_bits(0..cats.names.len() as u32);
        let sets = std::iter::once(&all)
            .chain(policy.sensitivities.iter().map(|s| &s.level.cats))
            .chain(
                policy
                    .users
                    .iter()
                    .flat_map(|u| [&u.range.low.cats, &u.range.high.cats, &u.default_level.cats]),
            );
        for set in sets {
            // Only sets worth caching: small ones are cheap to build.
            if set.len() < 16 || common_cats.iter().any(|(_, e)| e == set) {
                continue;
            }
            if let Some(d) = dense(set, words) {
                common_cats.push((d, set.clone()));
            }
        }
        Names {
            mls: policy.mls,
            common_cats,
            users,
            roles,
            types,
            type_flavors,
            classes,
            perms,
            bools,
            sens,
            cats,
        }
    }

    /// Whether the policy is MLS (contexts then carry a range).
    #[inline]
    pub fn mls(&self) -> bool {
        self.mls
    }

    /// The user called `name`.
    #[inline]
    pub fn user(&self, name: &str) -> Option<UserId> {
        self.users.get(name)
    }
    /// The role called `name`.
    #[inline]
    pub fn role(&self, name: &str) -> Option<RoleId> {
        self.roles.get(name)
    }
    /// The type called `name` (a type or a type alias; `None` for attributes, which are
    /// not types a context may hold — see [`Names::type_symbol`]).
    #[inline]
    pub fn ty(&self, name: &str) -> Option<TypeId> {
        self.type_symbol(name)
            .filter(|s| s.flavor == TypeFlavor::Type)
            .map(|s| s.id)
    }
    /// Any type-table entry called `name`: type, alias (resolved) or attribute.
    #[inline]
    pub fn type_symbol(&self, name: &str) -> Option<TypeSymbol> {
        let id = self.types.get(name)?;
        let flavor = *self.type_flavors.get(id.index())?;
        Some(TypeSymbol { id, flavor })
    }
    /// The class called `name`.
    #[inline]
    pub fn class(&self, name: &str) -> Option<ClassId> {
        self.classes.get(name)
    }
    /// The access-vector bit (`1 << (value - 1)`) of permission `name` in `class`,
    /// including the permissions the class inherits from its common.
    #[inline]
    pub fn perm(&self, class: ClassId, name: &str) -> Option<u32> {
        self.perms.get(class.index())?.by_name.get(name).copied()
    }
    /// The bits of `class`'s access vector that name a permission.
    #[inline]
    pub fn defined_perms(&self, class: ClassId) -> u32 {
        self.perms.get(class.index()).map_or(0, |p| p.defined)
    }
    /// The names of the permissions in `av`, lowest bit first. Bits no permission of the
    /// class defines are skipped (see [`Names::defined_perms`] to detect them).
    pub fn perms_to_names(&self, class: ClassId, av: u32) -> Vec<&str> {
        let Some(cp) = self.perms.get(class.index()) else {
            return Vec::new();
        };
        let mut bits = av & cp.defined;
        let mut out = Vec::with_capacity(bits.count_ones() as usize);
        while bits != 0 {
            out.push(&*cp.names[bits.trailing_zeros() as usize]);
            bits &= bits - 1;
        }
        out
    }
    /// The boolean called `name`.
    #[inline]
    pub fn boolean(&self, name: &str) -> Option<BoolId> {
        self.bools.get(name)
    }
    /// The sensitivity called `name` (primary or alias).
    #[inline]
    pub fn sensitivity(&self, name: &str) -> Option<SensId> {
        self.sens.get(name)
    }
    /// The category called `name` (primary or alias).
    #[inline]
    pub fn category(&self, name: &str) -> Option<CatId> {
        self.cats.get(name)
    }

    /// The name of `id`, if the policy defines it.
    #[inline]
    pub fn user_name(&self, id: UserId) -> Option<&str> {
        self.users.name(id.index())
    }
    /// The name of a role.
    #[inline]
    pub fn role_name(&self, id: RoleId) -> Option<&str> {
        self.roles.name(id.index())
    }
    /// The primary name of a type or attribute.
    #[inline]
    pub fn type_name(&self, id: TypeId) -> Option<&str> {
        self.types.name(id.index())
    }
    /// The name of a class.
    #[inline]
    pub fn class_name(&self, id: ClassId) -> Option<&str> {
        self.classes.name(id.index())
    }
    /// The name of the permission at access-vector bit index `bit` (0..32) of `class`.
    #[inline]
    pub fn perm_name(&self, class: ClassId, bit: u32) -> Option<&str> {
        let cp = self.perms.get(class.index())?;
        cp.names
            .get(bit as usize)
            .map(|n| &**n)
            .filter(|n| !n.is_empty())
    }
    /// The name of a boolean.
    #[inline]
    pub fn bool_name(&self, id: BoolId) -> Option<&str> {
        self.bools.name(id.index())
    }
    /// The primary name of a sensitivity.
    #[inline]
    pub fn sensitivity_name(&self, id: SensId) -> Option<&str> {
        self.sens.name(id.index())
    }
    /// The primary name of a category.
    #[inline]
    pub fn category_name(&self, id: CatId) -> Option<&str> {
        self.cats.name(id.index())
    }

    /// A copy of the policy's own bitmap for the category set `words` (dense, as
    /// [`Names::category_words`] long), if the policy names that set (see `common_cats`).
    pub(crate) fn common_category_set(&self, words: &[u64]) -> Option<Ebitmap> {
        self.common_cats
            .iter()
            .find(|(d, _)| **d == *words)
            .map(|(_, e)| e.clone())
    }

    /// Number of 64-bit words a dense category set of this policy takes.
    #[inline]
    pub(crate) fn category_words(&self) -> usize {
        self.cats.names.len().div_ceil(64)
    }

    /// Number of classes (class ids run `1..=class_count()`).
    #[inline]
    pub fn class_count(&self) -> usize {
        self.classes.names.len()
    }
    /// Number of category values (category bits run `0..category_count()`). Aliases take
    /// values too, so some may be unnamed.
    #[inline]
    pub fn category_count(&self) -> usize {
        self.cats.names.len()
    }
    /// Number of sensitivity values (aliases take values too, so some may be unnamed).
    #[inline]
    pub fn sensitivity_count(&self) -> usize {
        self.sens.names.len()
    }
}

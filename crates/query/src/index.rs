//! The query index over one [`Policy`]: name lookups as setools resolves them and attribute
//! membership in both directions, built once so each query is a scan of flat arrays.

use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::{ClassId, NameSlots, Policy, RoleId, TypeId};
use std::collections::HashMap;
use std::sync::OnceLock;

/// Name lookups and attribute membership for one policy.
///
/// Attribute membership is built on first use: most queries name a type, not an attribute,
/// and a full dump names none.
pub struct Index<'p> {
    pub(crate) policy: &'p Policy,
    types_by_name: TypeNames,
    classes_by_name: HashMap<&'p str, ClassId>,
    roles_by_name: HashMap<&'p str, RoleId>,
    bools_by_name: HashMap<&'p str, u32>,
    /// Names for the attributes a policy older than version 24 leaves unnamed, as libsepol
    /// synthesises them (`@ttr0042` for value 42), by slot.
    synthetic: HashMap<usize, Box<str>>,
    /// For each class slot: its permissions (own and common) with their bit numbers,
    /// sorted by name, as statements list them.
    sorted_perms: Vec<Box<[(&'p str, u32)]>>,
    /// For each class slot: the bits of its permissions.
    perm_masks: Vec<u32>,
    /// Every type-table slot's id, by slot: a type's expansion is its own entry.
    ids: Box<[TypeId]>,
    /// For each attribute slot: its member types, ascending (empty for a type).
    members: OnceLock<Vec<Box<[TypeId]>>>,
}

impl<'p> Index<'p> {
    /// Builds the index (the name tables; attribute membership is built on first use).
    pub fn new(policy: &'p Policy) -> Self {
        let ids: Box<[TypeId]> = (0..policy.types.len())
            .map_while(TypeId::from_index)
            .collect();
        let types_by_name = TypeNames::new(policy, &ids);
        let synthetic = policy
            .types
            .iter()
            .enumerate()
            .filter(|(_, t)| t.flavor == TypeFlavor::Unnamed)
            .map(|(i, _)| (i, format!("@ttr{:04}", i + 1).into_boxed_str()))
            .collect();
        let sorted_perms: Vec<Box<[(&str, u32)]>> = (0..policy.classes.len())
            .map(|i| {
                let mut v: Vec<(&str, u32)> = ClassId::from_index(i)
                    .map(|c| class_perms(policy, c).collect())
                    .unwrap_or_default();
                v.sort_unstable();
                v.into_boxed_slice()
            })
            .collect();
        let perm_masks = sorted_perms
            .iter()
            .map(|v| v.iter().fold(0, |m, &(_, bit)| m | (1 << bit)))
            .collect();
        Index {
            policy,
            synthetic,
            perm_masks,
            sorted_perms,
            ids,
            types_by_name,
            classes_by_name: named(policy.classes.iter().map(|c| &*c.name), ClassId::from_index),
            roles_by_name: named(policy.roles.iter().map(|r| &*r.name), RoleId::from_index),
            bools_by_name: named(policy.bools.iter().map(|b| &*b.name), |i| {
                u32::try_from(i).ok()
            }),
            members: OnceLock::new(),
        }
    }

    /// For each attribute slot, its member types (a pass over the type-attribute map).
    fn members(&self) -> &[Box<[TypeId]>] {
        self.members.get_or_init(|| {
            let policy = self.policy;
            let mut members: Vec<Vec<TypeId>> = vec![Vec::new(); policy.types.len()];
            for (i, (t, &id)) in policy.types.iter().zip(self.ids.iter()).enumerate() {
                if t.flavor != TypeFlavor::Type {
                    continue;
                }
                let Some(map) = policy.type_attr_map.get(i) else {
                    continue;
                };
                for bit in map.iter() {
                    let a = bit as usize;
                    if a != i && a < members.len() && policy.types[a].flavor != TypeFlavor::Type {
                        members[a].push(id);
                    }
                }
            }
            members.into_iter().map(Vec::into_boxed_slice).collect()
        })
    }

    /// The policy indexed.
    pub fn policy(&self) -> &'p Policy {
        self.policy
    }

    /// A type (aliases resolve to their type) or attribute by name.
    pub fn type_or_attr(&self, name: &str) -> Option<TypeId> {
        self.types_by_name.get(self.policy, &self.ids, name)
    }

    /// A class by name.
    pub fn class(&self, name: &str) -> Option<ClassId> {
        self.classes_by_name.get(name).copied()
    }

    /// A role by name.
    pub fn role(&self, name: &str) -> Option<RoleId> {
        self.roles_by_name.get(name).copied()
    }

    /// A boolean's index by name.
    pub fn boolean(&self, name: &str) -> Option<u32> {
        self.bools_by_name.get(name).copied()
    }

    /// The types a type or attribute stands for: itself for a type, its members for an
    /// attribute (setools' `expand()`).
    pub fn expand(&self, t: TypeId) -> &[TypeId] {
        let i = t.index();
        match self.policy.types.get(i).map(|d| d.flavor) {
            Some(TypeFlavor::Type) => self.ids.get(i..=i).unwrap_or(&[]),
            Some(_) => self.members().get(i).map_or(&[], |m| m),
            None => &[],
        }
    }

    /// The attributes of a type, ascending (not including the type).
    pub fn attributes_of(&self, t: TypeId) -> impl Iterator<Item = TypeId> + '_ {
        let i = t.index();
        self.policy
            .type_attr_map
            .get(i)
            .into_iter()
            .flat_map(|m| m.iter())
            .filter(move |&b| b as usize != i)
            .filter(|&b| {
                self.policy
                    .types
                    .get(b as usize)
                    .is_some_and(|d| d.flavor == TypeFlavor::Attribute)
            })
            .filter_map(|b| TypeId::from_index(b as usize))
    }

    /// The name of a type or attribute (`@ttrNNNN` for an attribute the policy leaves
    /// unnamed).
    pub fn type_name(&self, t: TypeId) -> &str {
        match self.policy.types.get(t.index()) {
            Some(d) if d.flavor == TypeFlavor::Unnamed => {
                self.synthetic.get(&t.index()).map_or("", |n| n)
            }
            Some(d) => &d.name,
            None => "",
        }
    }

    /// The name of a class.
    pub fn class_name(&self, c: ClassId) -> &'p str {
        self.policy.classes.get(c.index()).map_or("", |d| &d.name)
    }

    /// The name of a role.
    pub fn role_name(&self, r: RoleId) -> &'p str {
        self.policy.roles.get(r.index()).map_or("", |d| &d.name)
    }

    /// Whether slot `t` is an attribute.
    pub fn is_attribute(&self, t: TypeId) -> bool {
        self.policy
            .types
            .get(t.index())
            .is_some_and(|d| d.flavor == TypeFlavor::Attribute)
    }

    /// The number of type-table slots.
    pub fn type_slots(&self) -> usize {
        self.policy.types.len()
    }

    /// The names of a class's permissions (its own and its common's) with their bit numbers.
    pub fn class_perms(&self, c: ClassId) -> impl Iterator<Item = (&'p str, u32)> {
        class_perms(self.policy, c)
    }

    /// A class's permissions with their bit numbers, sorted by name.
    pub fn sorted_class_perms(&self, c: ClassId) -> &[(&'p str, u32)] {
        self.sorted_perms.get(c.index()).map_or(&[], |v| v)
    }

    /// The bits of a class's permissions (own and common), one per permission.
    pub fn class_perm_mask(&self, c: ClassId) -> u32 {
        self.perm_masks.get(c.index()).copied().unwrap_or(0)
    }
}

/// Types, attributes and aliases by name: a [`NameSlots`] of numbers naming a slot of the
/// policy's type or alias table, the names compared in the policy (a `HashMap<&str,
/// TypeId>` took 204 kB for the Debian policy's 4,300 names, built per TE query: see
/// [`NameSlots`] and [`crate::chunked`] for why a block of that size matters; this takes
/// 32 kB).
struct TypeNames {
    /// The type slots indexed (those with a [`TypeId`]): the numbers from this one on
    /// name aliases.
    types: usize,
    /// `v` below `types` the type slot `v`; above, the alias `v - types`.
    slots: NameSlots,
}

impl TypeNames {
    /// Every named type and attribute (the last of a name, as a map's `insert` keeps it),
    /// then every alias whose name is not taken yet.
    fn new(policy: &Policy, ids: &[TypeId]) -> TypeNames {
        let types = ids.len();
        let mut slots = NameSlots::with_capacity(types + policy.type_aliases.len());
        let name_of = |v| name(policy, types, v);
        for (i, t) in policy.types.iter().take(types).enumerate() {
            if t.flavor != TypeFlavor::Unnamed {
                slots.insert(&t.name, number(i), name_of);
            }
        }
        for (a, alias) in policy.type_aliases.iter().enumerate() {
            // An alias whose name a type (or an earlier alias) has keeps that one.
            let _ = slots.insert_new(&alias.name, number(types + a), name_of);
        }
        TypeNames { types, slots }
    }

    /// The type `name` names (an alias its type).
    fn get(&self, policy: &Policy, ids: &[TypeId], name: &str) -> Option<TypeId> {
        let v = self
            .slots
            .get(name, |v| self::name(policy, self.types, v))? as usize;
        match v.checked_sub(self.types) {
            None => ids.get(v).copied(),
            Some(a) => policy.type_aliases.get(a).map(|a| a.target),
        }
    }
}

/// The name number `v` of a [`TypeNames`] over `types` type slots stands for.
fn name(policy: &Policy, types: usize, v: u32) -> &str {
    let v = v as usize;
    match v.checked_sub(types) {
        None => policy.types.get(v).map_or("", |t| &t.name),
        Some(a) => policy.type_aliases.get(a).map_or("", |a| &a.name),
    }
}

/// A type or alias slot's number. Type and alias counts are bounded by the file's 32-bit
/// counts (and types by [`TypeId`]'s 16 bits), so their sum fits.
fn number(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

fn class_perms(policy: &Policy, c: ClassId) -> impl Iterator<Item = (&str, u32)> {
    let class = policy.classes.get(c.index());
    let common = class
        .and_then(|k| k.common)
        .and_then(|id| policy.commons.get(id.index()));
    class
        .into_iter()
        .flat_map(|k| k.perms.iter())
        .chain(common.into_iter().flat_map(|k| k.perms.iter()))
        .filter(|p| p.value >= 1 && p.value <= 32)
        .map(|p| (&*p.name, p.value - 1))
}

fn named<'p, I: Copy>(
    names: impl Iterator<Item = &'p str>,
    id: impl Fn(usize) -> Option<I>,
) -> HashMap<&'p str, I> {
    names
        .enumerate()
        .filter(|(_, n)| !n.is_empty())
        .filter_map(|(i, n)| id(i).map(|id| (n, id)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_policy::symbols::TypeAlias;

    #[test]
    fn type_names_resolve_as_a_map_would_keep_them() {
        let mut p = Policy::from_bytes(include_bytes!("../../../policies/bin/default.33"))
            .expect("default policy");
        let t = |i: usize| TypeId::from_index(i).expect("type slot");
        // Aliases: a new name, a type's name (the type keeps it), a repeated alias (the
        // first keeps it).
        p.type_aliases = vec![
            TypeAlias {
                name: "alias_one".into(),
                target: t(2),
            },
            TypeAlias {
                name: p.types[0].name.clone(),
                target: t(3),
            },
            TypeAlias {
                name: "alias_one".into(),
                target: t(4),
            },
        ];
        // A name two types hold: the later one keeps it.
        p.types[5].name = p.types[1].name.clone();
        let index = Index::new(&p);
        for (i, d) in p.types.iter().enumerate() {
            if d.flavor != TypeFlavor::Unnamed && i != 1 {
                assert_eq!(index.type_or_attr(&d.name), Some(t(i)), "{}", d.name);
            }
        }
        assert_eq!(index.type_or_attr(&p.types[1].name), Some(t(5)));
        assert_eq!(index.type_or_attr("alias_one"), Some(t(2)));
        assert_eq!(index.type_or_attr(&p.types[0].name), Some(t(0)));
        assert_eq!(index.type_or_attr("no_such_t"), None);
        assert_eq!(index.type_or_attr(""), None);
    }
}

//! The type table's relations (a type's attributes, an attribute's member types) held in
//! Rust, each slot's row made a Python tuple only when it is asked for.
//!
//! As Python tuples kept per policy, the Debian policy's 30,000 relations took 0.58 MB
//! resident (a tuple header per type slot, a pointer per value). A type's attributes are
//! read from the policy's own type-attribute map when its row is asked for; only the
//! attributes' member lists, which the map holds the other way round, are kept, 2 bytes a
//! member (a type value is 16 bits): 34 kB for the Debian policy, where every slot's
//! values at 4 bytes took 137 kB. The type objects hold their values natively
//! (`SymbolBase`), so no `int` per value exists to share: a row's `int`s are made on each
//! read. They were kept from a row's first read for the next (one slot per value, 34 kB
//! for the Debian policy, and the `int`s of every row read), as reading the `domain`
//! attribute's 674 members was 17 times slower making them; the one query that read that
//! row again and again, `TypeQuery` by one attribute, now keeps the attribute's member
//! types in order instead (`typequery._members_in_order`) and reads the row once.

use arbiter_policy::symbols::TypeFlavor;
use arbiter_policy::{Policy as Model, TypeId};
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::sync::Arc;

/// For every type and attribute slot, by value: a type's attributes or an attribute's
/// member types, ascending by value. A sequence: `relations[value - 1]` is a tuple of
/// `int`s, made on each read.
#[pyclass(frozen, sequence, module = "arbiter._native")]
pub struct TypeRelations {
    /// The policy, whose type-attribute map gives a type's attributes.
    model: Arc<Model>,
    /// The attributes' member types.
    members: Members,
}

impl TypeRelations {
    /// The relations of `policy`'s type table.
    pub(crate) fn build(policy: &Arc<Model>) -> PyResult<TypeRelations> {
        let members = Members::of(policy).map_err(PyValueError::new_err)?;
        Ok(TypeRelations {
            model: policy.clone(),
            members,
        })
    }

    /// A tuple of the `int`s of `values`, made on each read.
    fn row<'py>(&self, py: Python<'py>, values: &[u16]) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, values)
    }
}

/// Every attribute slot's member types (the type values whose maps name it), the runs of
/// all slots in one array; a type's slot has an empty run.
struct Members {
    /// Slot `i`'s members are `values[starts[i]..starts[i + 1]]`.
    starts: Box<[u32]>,
    /// Member type values, each slot's run ascending.
    values: Box<[u16]>,
}

impl Members {
    /// Two passes over the types' maps, counting then placing, so the members are written
    /// straight into their runs (no list per attribute).
    fn of(policy: &Model) -> Result<Members, String> {
        let slots = policy.types.len();
        let mut starts = vec![0u32; slots + 1];
        for_each_membership(policy, |_, a| starts[a + 1] += 1);
        for i in 0..slots {
            starts[i + 1] = starts[i]
                .checked_add(starts[i + 1])
                .ok_or("type relations exceed 2^32 values")?;
        }
        let mut next: Vec<u32> = starts[..slots].to_vec();
        let mut values = vec![0u16; starts[slots] as usize].into_boxed_slice();
        for_each_membership(policy, |value, a| {
            values[next[a] as usize] = value;
            next[a] += 1;
        });
        Ok(Members {
            starts: starts.into_boxed_slice(),
            values,
        })
    }

    /// Slot `slot`'s member type values, ascending (`slot` below the types' count).
    fn of_slot(&self, slot: usize) -> &[u16] {
        &self.values[self.starts[slot] as usize..self.starts[slot + 1] as usize]
    }

    /// Heap bytes held.
    #[cfg(test)]
    fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.starts) + std::mem::size_of_val(&*self.values)
    }
}

/// A type slot's attributes, ascending by value (the query layer's `attributes_of`: the
/// map's bits other than the type itself that are attributes); none for an attribute's.
fn type_attributes(p: &Model, slot: usize) -> impl Iterator<Item = u16> + '_ {
    let own = TypeId::from_index(slot).filter(|_| p.types[slot].flavor == TypeFlavor::Type);
    own.and_then(|_| p.type_attr_map.get(slot))
        .into_iter()
        .flat_map(|m| m.iter())
        .filter(move |&b| b as usize != slot)
        .filter(|&b| {
            p.types
                .get(b as usize)
                .is_some_and(|d| d.flavor == TypeFlavor::Attribute)
        })
        .filter_map(|b| TypeId::from_index(b as usize).map(|t| t.value()))
}

/// Calls `f(type value, attribute slot)` for each type in each attribute (or unnamed
/// attribute) its map names, by type ascending: the query layer's attribute members.
fn for_each_membership(policy: &Model, mut f: impl FnMut(u16, usize)) {
    for (i, t) in policy.types.iter().enumerate() {
        let Some(id) = TypeId::from_index(i).filter(|_| t.flavor == TypeFlavor::Type) else {
            continue;
        };
        for bit in policy
            .type_attr_map
            .get(i)
            .into_iter()
            .flat_map(|m| m.iter())
        {
            let a = bit as usize;
            if a != i
                && policy
                    .types
                    .get(a)
                    .is_some_and(|d| d.flavor != TypeFlavor::Type)
            {
                f(id.value(), a);
            }
        }
    }
}

#[pymethods]
impl TypeRelations {
    fn __len__(&self) -> usize {
        self.members.starts.len().saturating_sub(1)
    }

    /// Slot `i`'s row (negative `i` counts from the end, as a list's index does).
    fn __getitem__<'py>(&self, py: Python<'py>, i: isize) -> PyResult<Bound<'py, PyTuple>> {
        let len = self.__len__() as isize;
        let at = if i < 0 { i + len } else { i };
        if !(0..len).contains(&at) {
            return Err(PyIndexError::new_err("type relations index out of range"));
        }
        let at = at as usize;
        let run = self.members.of_slot(at);
        if run.is_empty() {
            let attributes: Vec<u16> = type_attributes(&self.model, at).collect();
            return self.row(py, &attributes);
        }
        self.row(py, run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_query::Index;

    /// The installed Debian policy, when there is one (the relations need a real type
    /// table with attributes).
    fn installed() -> Option<arbiter_policy::ValidPolicy> {
        let path = "/etc/selinux/default/policy/policy.33";
        std::path::Path::new(path)
            .exists()
            .then(|| arbiter_policy::ValidPolicy::open(path).expect("the installed policy"))
    }

    /// Every slot's row is the query layer's: a type's attributes (read from the map on
    /// demand), an attribute's members (kept), and the kept part is only the members, two
    /// bytes each (every row at four bytes a value was 137 kB for this policy).
    #[test]
    fn rows_are_the_query_layers_and_only_members_are_kept() {
        let Some(policy) = installed() else {
            eprintln!("skipped: no installed policy");
            return;
        };
        let index = Index::new(&policy);
        let members = Members::of(&policy).expect("members");
        let mut memberships = 0;
        for (i, t) in policy.types.iter().enumerate() {
            let id = TypeId::from_index(i).expect("a type slot");
            let (want, got): (Vec<u16>, Vec<u16>) = if t.flavor == TypeFlavor::Type {
                assert!(members.of_slot(i).is_empty(), "slot {i}");
                (
                    index.attributes_of(id).map(|a| a.value()).collect(),
                    type_attributes(&policy, i).collect(),
                )
            } else {
                memberships += members.of_slot(i).len();
                assert_eq!(type_attributes(&policy, i).count(), 0, "slot {i}");
                (
                    index.expand(id).iter().map(|m| m.value()).collect(),
                    members.of_slot(i).to_vec(),
                )
            };
            assert_eq!(got, want, "slot {i} ({})", t.name);
        }
        assert!(memberships > 10_000, "{memberships}");
        assert_eq!(
            members.heap_bytes(),
            2 * memberships + 4 * (policy.types.len() + 1)
        );
    }
}

//! `arbiter search --expand`: each matched rule replaced by the rules it stands for.
//!
//! A rule written on attributes stands for one rule per (source type, target type) pair of
//! the attributes' member types. The order is setools' `expand()`: source members ascending
//! by type value, and for each of them the target members ascending, so the output of
//! `--expand` is what printing `rule.expand()` for every rule sesearch prints gives. An
//! attribute without members stands for no rule; a type stands for itself.

use crate::index::Index;
use crate::search::{RbacHit, TeHit};
use arbiter_policy::TypeId;

/// The (source, target) type pairs a rule on `source` and `target` stands for.
pub fn type_pairs<'i>(
    index: &'i Index<'_>,
    source: TypeId,
    target: TypeId,
) -> impl Iterator<Item = (TypeId, TypeId)> + 'i {
    let targets = index.expand(target);
    index
        .expand(source)
        .iter()
        .flat_map(move |&s| targets.iter().map(move |&t| (s, t)))
}

/// The TE rules a matched TE rule stands for, each with its body and conditional.
pub fn te<'i, 'p>(
    index: &'i Index<'p>,
    hit: &'i TeHit<'p>,
) -> impl Iterator<Item = TeHit<'p>> + 'i {
    type_pairs(index, hit.source, hit.target).map(move |(source, target)| TeHit {
        source,
        target,
        ..hit.clone()
    })
}

/// The RBAC rules a matched RBAC rule stands for: a role allow rule names roles only and
/// stands for itself; a role_transition stands for one rule per member of its type.
pub fn rbac(index: &Index<'_>, hit: &RbacHit) -> Vec<RbacHit> {
    match *hit {
        RbacHit::Allow(..) => vec![hit.clone()],
        RbacHit::Trans(role, ty, class, new) => index
            .expand(ty)
            .iter()
            .map(|&t| RbacHit::Trans(role, t, class, new))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::TeBody;
    use arbiter_policy::avtab::AvtabKind;
    use arbiter_policy::symbols::TypeFlavor;
    use arbiter_policy::{ClassId, Policy};

    fn attribute_with_members(p: &Policy, index: &Index<'_>) -> Option<TypeId> {
        (0..p.types.len())
            .filter_map(TypeId::from_index)
            .find(|&t| {
                p.types[t.index()].flavor == TypeFlavor::Attribute && index.expand(t).len() > 1
            })
    }

    #[test]
    fn a_rule_on_attributes_stands_for_every_member_pair_in_value_order() {
        let p = Policy::from_bytes(arbiter_policy::BUILTIN_POLICY).expect("builtin policy");
        let index = Index::new(&p);
        let Some(attr) = attribute_with_members(&p, &index) else {
            panic!("the builtin policy has an attribute with two or more members");
        };
        let ty = index.expand(attr)[0];
        let hit = TeHit {
            kind: AvtabKind::Allowed,
            source: attr,
            target: ty,
            class: ClassId::from_index(0).expect("class 1"),
            body: TeBody::Perms(vec!["read"]),
            cond: None,
        };
        let pairs: Vec<(TypeId, TypeId)> = te(&index, &hit).map(|h| (h.source, h.target)).collect();
        let want: Vec<(TypeId, TypeId)> = index.expand(attr).iter().map(|&s| (s, ty)).collect();
        assert_eq!(pairs, want);
        assert!(pairs.windows(2).all(|w| w[0].0.value() < w[1].0.value()));
        // A type stands for itself.
        let one: Vec<(TypeId, TypeId)> = type_pairs(&index, ty, ty).collect();
        assert_eq!(one, vec![(ty, ty)]);
    }
}

//! The constraint sections: constrain, mlsconstrain, validatetrans and mlsvalidatetrans.
//!
//! sediff cannot pair up constraints (a class may have several with the same permissions),
//! so they are only added or removed. A constraint is identified by its statement text,
//! because setools hashes a constraint by that text; expressions are compared as written,
//! attributes unexpanded. setools writes the names of a name set (`t1 == { a b }`) in
//! Python's per-process hash order, arbiter in name order; see the oracle test.

use super::Section;
use crate::index::Index;
use crate::info;
use arbiter_policy::ClassId;
use std::collections::BTreeSet;

/// The section keys this module answers.
pub(super) const KEYS: &[&str] = &[
    "constrain",
    "mlsconstrain",
    "validatetrans",
    "mlsvalidatetrans",
];

/// The section for `key`, or `None` when `key` is not one of [`KEYS`].
pub(super) fn section(key: &str, li: &Index<'_>, ri: &Index<'_>) -> Option<Section> {
    let title = match key {
        "constrain" => "Constraints",
        "mlsconstrain" => "MLS Constraints",
        "validatetrans" => "Validatetrans",
        "mlsvalidatetrans" => "MLS Validatetrans",
        _ => return None,
    };
    let (l, r) = (statements(li, key), statements(ri, key));
    Some(Section {
        title,
        noun: title,
        has_modified: false,
        added: r.difference(&l).cloned().collect(),
        removed: l.difference(&r).cloned().collect(),
        ..Section::default()
    })
}

/// The statements of one kind (`constrain`, `mlsvalidatetrans`...) in a policy.
fn statements(index: &Index<'_>, kind: &str) -> BTreeSet<String> {
    let p = index.policy();
    let validatetrans = kind.ends_with("validatetrans");
    let mls = kind.starts_with("mls");
    let mut out = BTreeSet::new();
    for (i, c) in p.classes.iter().enumerate() {
        let Some(cid) = ClassId::from_index(i) else {
            continue;
        };
        if c.name.is_empty() {
            continue;
        }
        if validatetrans {
            out.extend(
                c.validatetrans
                    .iter()
                    .filter(|k| k.is_mls() == mls)
                    .map(|k| info::validatetrans_statement(index, cid, k)),
            );
        } else {
            out.extend(
                c.constraints
                    .iter()
                    .filter(|k| k.is_mls() == mls)
                    .map(|k| info::constraint_statement(index, cid, k)),
            );
        }
    }
    out
}

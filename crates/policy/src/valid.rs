//! A policy that passed validation, read-only from then on.
//!
//! [`Policy`]'s tables are public so that tools can build and rewrite policies (the CIL
//! compiler, the writer's tests). The security server must not decide with tables changed
//! after they were checked: a [`ValidPolicy`] is made only by validation (reading a
//! policy image, or [`ValidPolicy::check`]), gives read access only (it derefs to
//! `&Policy`), and changing it means taking the [`Policy`] out, which must be checked
//! again to become valid.

use crate::error::{PolicyError, Result};
use crate::policy::Policy;
use crate::MAX_STREAMED_POLICY;

/// A [`Policy`] that passed every check of the reader's validation, and that nobody can
/// change (the security server takes this type).
#[derive(Clone, Debug)]
pub struct ValidPolicy(Policy);

impl ValidPolicy {
    /// Validates a policy built or changed in memory: the reader's whole-policy checks
    /// (cross-references, bounds, contexts), with the same errors.
    pub fn check(policy: Policy) -> Result<ValidPolicy> {
        crate::validate::validate(&policy)?;
        Ok(ValidPolicy(policy))
    }

    /// Reads and validates a policy from its binary image.
    pub fn from_bytes(bytes: &[u8]) -> Result<ValidPolicy> {
        crate::read::read_policy(bytes)
    }

    /// Reads and validates a policy file (a regular file memory-mapped, anything else
    /// read to its end up to [`crate::MAX_STREAMED_POLICY`]; see [`Policy::open`]).
    pub fn open(path: impl AsRef<std::path::Path>) -> Result<ValidPolicy> {
        let path = path.as_ref();
        let io = |source| PolicyError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        if !meta.is_file() {
            let bytes = arbiter_io::read_to_end_bounded(&file, MAX_STREAMED_POLICY).map_err(io)?;
            return ValidPolicy::from_bytes(&bytes);
        }
        if meta.len() == 0 {
            return ValidPolicy::from_bytes(&[]);
        }
        // SAFETY: the mapping is read-only and private to this call; the model copies out
        // everything it keeps, so the map is dropped before returning. A concurrent writer
        // truncating the file could fault (SIGBUS); policy files are replaced by rename, not
        // rewritten in place, so this is the same assumption every policy loader makes.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        ValidPolicy::from_bytes(&map)
    }

    /// Wraps a policy the reader has just validated.
    pub(crate) fn validated(policy: Policy) -> ValidPolicy {
        ValidPolicy(policy)
    }

    /// The policy, to change it: what comes out is a plain [`Policy`] again.
    pub fn into_policy(self) -> Policy {
        self.0
    }
}

impl std::ops::Deref for ValidPolicy {
    type Target = Policy;

    fn deref(&self) -> &Policy {
        &self.0
    }
}

impl AsRef<Policy> for ValidPolicy {
    fn as_ref(&self) -> &Policy {
        &self.0
    }
}

impl From<ValidPolicy> for Policy {
    fn from(v: ValidPolicy) -> Policy {
        v.0
    }
}

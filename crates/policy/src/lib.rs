//! Reads compiled SELinux policies (`policy.NN`, format versions 15 to 35) into an
//! immutable, flat [`Policy`].
//!
//! The reader follows the kernel's `security/selinux/ss/policydb.c` section by section, and
//! treats bad input as a normal day: every count is checked against the bytes left before
//! anything is allocated, every value against the table it indexes, and every failure is a
//! [`PolicyError`] naming what was being read and at which byte offset.
//!
//! [`write::write_policy`] writes a model back out, at its own or another format version (see
//! [`mod@write`]), so policies can be converted between versions. With
//! [`write::Layout::Libsepol34`] the bytes are libsepol 3.4's own for the same policy
//! (symbols, rules and transitions in its hash tables' order), which is how a compiler
//! built on this model reproduces `secilc`'s output; [`optimize::optimize`] is libsepol's
//! `policydb_optimize` (`secilc -O`) over the model.
//!
//! The model's tables are namespaces named for what they hold ([`avtab`], [`cond`],
//! [`constraint`], [`mls`], [`ocontext`], [`symbols`], [`transitions`]), beside [`mod@write`],
//! [`optimize`] and [`stats`]; an item lives in one of them or, for what every caller
//! needs (the policy, its ids, errors, [`Ebitmap`]), at the root. (`write`'s entry points are
//! also re-exported at the root until arbiter-cil imports them from one place.)
//!
//! ```no_run
//! let policy = arbiter_policy::Policy::open("/etc/selinux/default/policy/policy.33")?;
//! println!("{} types", policy.types.len());
//! # Ok::<(), arbiter_policy::PolicyError>(())
//! ```

pub mod avtab;
pub mod cond;
pub mod constraint;
mod constraint_text;
mod cursor;
mod ebitmap;
mod error;
mod format;
mod header;
mod ids;
mod keytab;
pub mod mls;
mod nametab;
pub mod ocontext;
pub mod optimize;
mod policy;
mod read;
pub mod stats;
pub mod symbols;
#[cfg(test)]
mod testbytes;
pub mod transitions;
mod valid;
mod validate;
pub mod write;
mod xen;

/// The small policy embedded in arbiter (`policies/src/default.conf`, compiled to format
/// 33 by `policies/regen.sh`): for examples, demos and the command line's `builtin`.
pub const BUILTIN_POLICY: &[u8] = include_bytes!("../../../policies/bin/default.33");

pub use constraint_text::{constraint_infix, InfixStyle};
pub use ebitmap::Ebitmap;
pub use error::{PolicyError, Result};
pub use ids::{BoolId, CatId, ClassId, CommonId, RoleId, SensId, TypeId, UserId};
pub use nametab::NameSlots;
pub use policy::{version, HandleUnknown, Policy, MAX_VERSION, MIN_VERSION};
pub use valid::ValidPolicy;
pub use validate::Invalid;

impl Policy {
    /// Reads a policy from its binary image (validated; see [`ValidPolicy`] for the form
    /// the security server takes).
    pub fn from_bytes(bytes: &[u8]) -> Result<Policy> {
        ValidPolicy::from_bytes(bytes).map(ValidPolicy::into_policy)
    }

    /// Reads a policy file. A regular file is memory-mapped (large policies are not copied
    /// first); anything else — a pipe, a FIFO, `/dev/stdin`, a process substitution such as
    /// `<(zcat policy.gz)` — has no size to `stat`, so it is read to its end, up to
    /// [`MAX_STREAMED_POLICY`] bytes (more is an error naming the bound).
    pub fn open(path: impl AsRef<std::path::Path>) -> Result<Policy> {
        ValidPolicy::open(path).map(ValidPolicy::into_policy)
    }
}

/// The largest policy read from a pipe, FIFO or other non-regular file: 256 MiB, many times
/// the largest distribution policy (Fedora's is about 10 MiB), and what a stream read
/// costs in memory at most.
pub const MAX_STREAMED_POLICY: u64 = 256 << 20;

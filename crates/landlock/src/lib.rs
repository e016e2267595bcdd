//! Landlock in userspace: rulesets and layered domains evaluated exactly as the Linux kernel
//! (6.18, Landlock ABI 7) evaluates them, on a flat immutable table.
//!
//! The data flow follows the kernel's:
//!
//! - [`Ruleset`]: `landlock_create_ruleset` + `landlock_add_rule`, same validation, same errno;
//! - [`Domain`]: `landlock_restrict_self`, up to 16 layers merged into one flat, immutable
//!   buffer with a [`Layout::Sorted`] (binary search) or [`Layout::Hash`] (coalesced hash)
//!   rule index;
//! - [`check`]: the hooks' algorithms (path walk, open, refer/rename/link/exchange, TCP ports,
//!   mounts) as pure functions of a domain and the objects on a walk;
//! - [`walk`]: resolves real paths into walks (symlinks, `..`, mounts, inode identity);
//! - [`mounts`]: `/proc/self/mountinfo` (mount points, `noexec`, `nodev`);
//! - [`Sandbox`]: an [`Op`] on this machine's filesystem → [`Outcome`] with the kernel's
//!   errno and an explanation;
//! - [`config`]: landlockconfig's TOML and JSON formats;
//! - [`sys`]: the real syscalls, for `arbiter landlock run` and the kernel differential test;
//! - [`access`]: the access-right masks ([`access::AccessFs`], ...) and their names per ABI.
//!
//! Those six modules are the crate's namespaces; everything else is re-exported here at the
//! root, one path per item.

#![deny(missing_docs)]

pub mod access;
pub mod check;
pub mod config;
mod domain;
mod errno;
mod eval;
pub mod mounts;
mod object;
mod ops;
mod ruleset;
mod scope;
pub mod sys;
pub mod walk;

pub use domain::{Domain, DomainError, LayerEntry, Layout, RuleLayers, Rules, MAX_LAYERS};
pub use errno::Errno;
pub use eval::{Evaluation, Outcome, Sandbox, ALWAYS_ALLOWED_IOCTLS};
pub use object::{InodeKey, ObjectId, ObjectRegistry};
pub use ops::{NodeKind, Op, OpParseError, OpenFlags, IOCTL_NAMES};
pub use ruleset::{Handled, Ruleset, RulesetError};
pub use scope::is_scoped;

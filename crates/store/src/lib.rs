//! Builds a policy from a libsemanage module store, writing the files
//! `semodule -p ROOT -s NAME -B -n` writes, at the same paths and with the same bytes,
//! without ever loading a policy into a kernel.
//!
//! The pipeline: [`conf`] reads `semanage.conf`; [`modules`] lists the store's active
//! modules (priorities, `disabled/` markers, bzip2) in libsemanage's order; the CIL
//! compiler (`arbiter_cil`) builds the policy; [`fc`] and [`homedirs`] derive the text
//! files; [`install`] writes everything through temporary files renamed into place only
//! once every output has been produced, so a failed build leaves every existing file as
//! it was.

#![forbid(unsafe_code)]

pub mod build;
pub mod conf;
pub mod error;
pub mod fc;
pub mod homedirs;
pub mod install;
pub mod modules;

pub use build::{build_store, BuildReport, StoreBuild};
pub use conf::SemanageConf;
pub use error::StoreError;

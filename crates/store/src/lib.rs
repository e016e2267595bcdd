//! Builds a policy from a libsemanage module store, writing the files
//! `semodule -p ROOT -s NAME -B -n` writes, at the same paths and with the same bytes,
//! without ever loading a policy into a kernel.
//!
//! The pipeline: `conf` reads `semanage.conf` ([`SemanageConf`]); `modules` lists the
//! store's active modules (priorities, `disabled/` markers, bzip2) in libsemanage's order
//! ([`active_modules`]); the CIL compiler (`arbiter_cil`) builds the policy; `fc` and
//! [`homedirs`] derive the text files; `install` writes everything through temporary files
//! renamed into place only once every output has been produced, so a failed build leaves
//! every existing file as it was. [`build_store`] runs it all.
//!
//! The modules are private: what a caller needs is re-exported here, and [`homedirs`]
//! (`genhomedircon`'s inputs and passwd/group readers) stays a namespace of its own.
//! [`decode_bzip2`] (the modules' bzip2 decoder) and [`decode_bzip2_parallel`]
//! (block-parallel decoding of a large module) are public so that the fuzzer and the tests
//! can hold them against the `bzip2` crate's decoder. [`FcCheck`] is the in-process
//! `setfiles -c` verdict (passing only; anything else runs setfiles), public for its tests
//! against the real program; its module is the crate's one user of `unsafe` (the system
//! libpcre2-8, loaded with `dlopen`).

#![deny(unsafe_code)]

mod build;
mod bzip2_blocks;
mod bzip2_decode;
mod conf;
mod error;
mod fc;
mod fccheck;
pub mod homedirs;
mod install;
mod modules;
mod readahead;

pub use build::{build_store, BuildReport, StoreBuild};
pub use bzip2_blocks::decode_parallel as decode_bzip2_parallel;
pub use bzip2_decode::decode as decode_bzip2;
pub use conf::SemanageConf;
pub use error::StoreError;
pub use fc::{parse_seusers, parse_users_extra, split_fc, Seuser};
pub use fccheck::{FcCheck, Unsure};
pub use modules::{active_modules, check_cil, modules_checksum, read_cil, Module, ModulesChecksum};

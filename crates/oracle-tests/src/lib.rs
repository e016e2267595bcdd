//! Shared code of arbiter's benchmarks (`src/bin`) and of the differential test against
//! libsepol (`tests/oracle_diff.rs`).
//!
//! Behind the `libsepol` feature (off by default) like `sepol-oracle`, so that the workspace
//! builds without libsepol-dev; `scripts/test.sh` turns it on.
#![cfg(feature = "libsepol")]
#![forbid(unsafe_code)]

pub mod workload;

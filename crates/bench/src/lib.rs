//! Shared code of arbiter's benchmarks (`src/bin`) and of the differential test against
//! libsepol (`tests/oracle_diff.rs`).

pub mod workload;

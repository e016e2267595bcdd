//! Times libsepol's `policydb_init` + `policydb_read` on in-memory policy
//! images and reports the heap the resulting policydb holds.
//!
//! ```text
//! cargo run --release -p sepol-oracle --example load_time [POLICY...]
//! ```
//!
//! Defaults to the two Debian policies.  For each: the median (and min/max)
//! wall time of 10 `policydb_read_only` calls over the same buffer, and
//! `heap_in_use()` after minus before one load whose policydb is kept alive
//! (the file buffer is allocated before the "before" reading, so it is not
//! counted).

use std::time::{Duration, Instant};

use sepol_oracle::{heap_in_use, policydb_read_only};

const RUNS: usize = 10;

fn main() {
    let mut paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        paths = vec![
            arbiter_testkit::DEBIAN_DEFAULT.into(),
            arbiter_testkit::DEBIAN_MLS.into(),
        ];
    }
    for path in paths {
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{path}: {e}");
                continue;
            }
        };
        // Warm-up (page cache, allocator arenas).
        if let Err(e) = policydb_read_only(&bytes) {
            eprintln!("{path}: {e}");
            continue;
        }

        let mut times: Vec<Duration> = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let t = Instant::now();
            let db = policydb_read_only(&bytes);
            times.push(t.elapsed());
            drop(db);
        }
        times.sort();
        let median = (times[RUNS / 2 - 1] + times[RUNS / 2]) / 2;

        let before = heap_in_use();
        let db = match policydb_read_only(&bytes) {
            Ok(db) => db,
            Err(e) => {
                eprintln!("{path}: {e}");
                continue;
            }
        };
        let held = heap_in_use().saturating_sub(before);
        println!(
            "{path}: {} bytes, policy v{}, {} types, {} classes, {} bools",
            bytes.len(),
            db.policy_version(),
            db.type_count(),
            db.class_count(),
            db.bool_count()
        );
        println!(
            "  policydb_read: median {:.2} ms (min {:.2}, max {:.2}) over {RUNS} runs",
            median.as_secs_f64() * 1e3,
            times[0].as_secs_f64() * 1e3,
            times[RUNS - 1].as_secs_f64() * 1e3
        );
        println!(
            "  heap held after load: {held} bytes ({:.1} MiB)",
            held as f64 / (1024.0 * 1024.0)
        );
        drop(db);
    }
}

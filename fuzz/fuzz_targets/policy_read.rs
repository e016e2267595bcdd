//! The binary policy reader on arbitrary bytes.
//!
//! `ValidPolicy::from_bytes` (read, then validate) must return `Ok` or `Err`, never panic,
//! and never allocate more than the input justifies (run with `-malloc_limit_mb`). Whatever
//! it accepts must also be safe to summarise (`stats::statistics`) and to index
//! (`SecurityServer::new` builds the name tables, the SID table and the decision index).
#![no_main]

use arbiter_decide::SecurityServer;
use arbiter_policy::{stats, ValidPolicy};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = ValidPolicy::from_bytes(data) {
        let s = stats::statistics(&p);
        std::hint::black_box(&s);
        let server = SecurityServer::new(p);
        std::hint::black_box(&server);
    }
});

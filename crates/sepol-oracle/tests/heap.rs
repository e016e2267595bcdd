//! heap_in_use() accounting, in its own test binary (one test, one thread)
//! so that no concurrent test perturbs the malloc statistics.

use sepol_oracle::{heap_in_use, policydb_read_only};

#[test]
fn heap_in_use_sees_a_loaded_policydb_and_its_release() {
    let bytes = std::fs::read(arbiter_testkit::DEBIAN_DEFAULT).unwrap();
    drop(policydb_read_only(&bytes).unwrap()); // warm-up
    let before = heap_in_use();
    let db = policydb_read_only(&bytes).unwrap();
    let loaded = heap_in_use();
    drop(db);
    let after = heap_in_use();
    let held = loaded.saturating_sub(before);
    // A ~2 MiB policy expands to several MiB of libsepol structures.
    assert!(held > 4 << 20, "held {held} bytes");
    assert!(
        after < before + (64 << 10),
        "before {before}, after {after}"
    );

    // Rust allocations go through the same malloc.
    let before = heap_in_use();
    // black_box: an optimised build may otherwise elide the unused allocation.
    let v = std::hint::black_box(vec![1u8; 8 << 20]);
    assert!(heap_in_use() >= before + (8 << 20));
    drop(v);
}

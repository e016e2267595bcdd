//! The small CIL-native benchmark policy (`policies/cil/bench.cil`, about 9,000 statements,
//! written by `policies/cil/gen-bench.py`; the small row of `scripts/bench-build.sh`)
//! compiled by arbiter and by secilc 3.4 with default options (neverallow rules checked):
//! the written policy and the file_contexts text are byte-identical, so the benchmark times
//! two compilers producing the same output.

mod common;

use arbiter_cil::{compile, write_policy, Options, Source};
use arbiter_policy::Policy;
use std::path::Path;

#[test]
fn bench_policy_matches_secilc() {
    if common::skip() {
        return;
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policies/cil/bench.cil");
    let text = std::fs::read(&path).expect("policies/cil/bench.cil");
    let dir = common::scratch("bench");
    let run = common::secilc_files(&dir, &[], std::slice::from_ref(&path));
    assert_eq!(run.status, 0, "secilc failed: {}", run.stderr);
    let their_bytes = run.policy.expect("policy");
    let sources = vec![Source {
        name: path.display().to_string(),
        text,
    }];
    let opts = Options::default();
    let ours = compile(&sources, &opts).unwrap_or_else(|e| panic!("arbiter failed: {e}"));
    let written = write_policy(&ours, &opts).unwrap_or_else(|e| panic!("writing: {e}"));
    if written.bytes != their_bytes {
        let theirs = Policy::from_bytes(&their_bytes).expect("secilc output readable");
        panic!(
            "bench.cil: policy bytes differ (ours {}, secilc {}):\n{}",
            written.bytes.len(),
            their_bytes.len(),
            common::compare(&ours.policy, &theirs).join("\n")
        );
    }
    assert!(
        ours.file_contexts == run.file_contexts.expect("file_contexts"),
        "bench.cil: file_contexts differ"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

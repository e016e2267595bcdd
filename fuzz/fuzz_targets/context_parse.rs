//! The context parser on arbitrary bytes, against the repository's small MLS policy
//! (`policies/bin/default.33`, embedded).
//!
//! `parse_context_bytes` must never panic; a context it accepts must format
//! (`format_context`) to a string that parses back to the same context.
#![no_main]

use std::sync::OnceLock;

use arbiter_decide::internals::parse_context_bytes;
use arbiter_decide::{format_context, Names};
use arbiter_policy::Policy;
use libfuzzer_sys::fuzz_target;

static POLICY_BYTES: &[u8] = include_bytes!("../../policies/bin/default.33");

fn policy() -> &'static (Policy, Names) {
    static P: OnceLock<(Policy, Names)> = OnceLock::new();
    P.get_or_init(|| {
        let p = Policy::from_bytes(POLICY_BYTES).expect("policies/bin/default.33 loads");
        let n = Names::new(&p);
        (p, n)
    })
}

fuzz_target!(|data: &[u8]| {
    let (p, n) = policy();
    if let Ok(ctx) = parse_context_bytes(p, n, data) {
        let s = format_context(n, &ctx);
        match parse_context_bytes(p, n, s.as_bytes()) {
            Ok(again) => assert_eq!(
                again,
                ctx,
                "{:?} formats as {s:?}, which parses to a different context",
                String::from_utf8_lossy(data)
            ),
            Err(e) => panic!(
                "{:?} formats as {s:?}, which does not parse: {e}",
                String::from_utf8_lossy(data)
            ),
        }
    }
});

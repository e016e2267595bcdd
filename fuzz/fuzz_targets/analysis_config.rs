//! The analyses' two configuration parsers on arbitrary text: setools' permission map
//! format (`PermissionMap::parse`) and sechecker's .ini (`PolicyChecker::new`, configparser
//! and the checks' option validation) against the repository's small MLS policy.
//!
//! The first byte picks the parser (even: permission map, odd: sechecker config); the rest
//! must be UTF-8. Neither may panic; an accepted checker configuration must also run.
#![no_main]

use std::sync::OnceLock;

use arbiter_analysis::checker::PolicyChecker;
use arbiter_analysis::permmap::PermissionMap;
use arbiter_policy::Policy;
use arbiter_query::Index;
use libfuzzer_sys::fuzz_target;

static POLICY_BYTES: &[u8] = include_bytes!("../../policies/bin/default.33");

fn policy() -> &'static Policy {
    static P: OnceLock<Policy> = OnceLock::new();
    P.get_or_init(|| Policy::from_bytes(POLICY_BYTES).expect("policies/bin/default.33 loads"))
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    if sel & 1 == 0 {
        let _ = PermissionMap::parse("fuzz.map", text);
    } else {
        let index = Index::new(policy());
        if let Ok(checker) = PolicyChecker::new(&index, "fuzz.ini", text) {
            let _ = checker.run(&index);
        }
    }
});

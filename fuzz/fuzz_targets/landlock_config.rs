//! landlockconfig parsing (TOML and JSON) on arbitrary text.
//!
//! The first byte picks the format (even: TOML, odd: JSON); the rest must be UTF-8. Parsing
//! must never panic and never allocate more than the input justifies; an accepted
//! configuration must be self-consistent: every rule's rights are inside the handled set.
#![no_main]

use arbiter_landlock::config::{Config, Format};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let format = if sel & 1 == 0 { Format::Toml } else { Format::Json };
    if let Ok(c) = Config::parse(text, format) {
        for r in &c.path_beneath {
            assert_eq!(r.access & !c.handled_fs, 0, "path rule rights outside handled");
        }
        for r in &c.net_port {
            assert_eq!(r.access & !c.handled_net, 0, "port rule rights outside handled");
        }
    }
});

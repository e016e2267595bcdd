//! `semanage.conf` parsing (the module store's configuration, `arbiter build --store`) on
//! arbitrary text: never a panic, every refusal a typed error naming the file and line.
#![no_main]

use arbiter_store::SemanageConf;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = SemanageConf::parse(text, std::path::Path::new("fuzz/semanage.conf"));
});

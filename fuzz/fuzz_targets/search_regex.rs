//! sesearch's regex dialect: Python `re` patterns translated for the `regex` engine, on
//! arbitrary text.
//!
//! Nothing may panic; every pattern the translator accepts must be valid syntax for the
//! engine (only its size limit may refuse it), so that no Python pattern is ever read as
//! something else; translation is deterministic.
#![no_main]

use arbiter_query::python_re::translate;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(pattern) = std::str::from_utf8(data) else { return };
    let first = translate(pattern);
    assert_eq!(first, translate(pattern), "{pattern:?}");
    let Ok(t) = first else { return };
    match regex::RegexBuilder::new(&t).size_limit(1 << 20).build() {
        Ok(re) => {
            let _ = re.is_match("system_u:object_r:httpd_sys_content_t");
        }
        Err(regex::Error::CompiledTooBig(_)) => {}
        Err(e) => panic!("{pattern:?} translated to {t:?}, which the engine refuses: {e}"),
    }
});

//! The CIL compiler (parser, resolver, lowering) on arbitrary bytes, after the corpus base
//! policy so that mutations reach resolution and lowering.
//!
//! Nothing may panic: every input compiles or returns an error with a message.
#![no_main]

use arbiter_cil::{compile, Options, Source};
use libfuzzer_sys::fuzz_target;

const BASE: &[u8] = include_bytes!("../../crates/cil/tests/corpus/base.cil");

fuzz_target!(|data: &[u8]| {
    let sources = [
        Source {
            name: "base.cil".into(),
            text: BASE.to_vec(),
        },
        Source {
            name: "fuzz.cil".into(),
            text: data.to_vec(),
        },
    ];
    match compile(&sources, &Options::default()) {
        Ok(out) => {
            assert!(!out.policy.types.is_empty());
        }
        Err(e) => assert!(!e.messages.is_empty()),
    }
});

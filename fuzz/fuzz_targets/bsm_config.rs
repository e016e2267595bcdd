//! The BSM configuration parsers and mask syntax on arbitrary bytes.
//!
//! Nothing may panic; a mask that parses must print (with prefixes) to text that parses
//! back to a mask selecting the same whole classes.
#![no_main]

use arbiter_bsm::{ClassDb, Control, EventDb, Mask, Preselector, UserDb};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let classes = ClassDb::parse(data, "audit_class");
    let builtin = ClassDb::builtin();
    let events = EventDb::parse(data, &builtin, "audit_event");
    let _ = events.diagnostics(true);
    let p = Preselector::new(&events);
    for e in events.enumerate().take(64) {
        let _ = p.class_of(e.number);
    }
    let _ = UserDb::parse(data, &builtin, "audit_user");
    let c = Control::parse(data);
    let _ = (c.flags_mask(&builtin), c.naflags_mask(&builtin));
    let _ = Mask::parse_bytes(data, &classes).map(|m| m.to_text(&classes, true));
    // Round trip against the stock classes (fuzzed class names may contain `,` or `+`).
    if let Ok(m) = Mask::parse_bytes(data, &builtin) {
        let text = m.to_text_exact(&builtin);
        let back = Mask::parse(&text, &builtin).expect("printed mask parses");
        assert_eq!(back.to_text_exact(&builtin), text);
    }
});

//! `--json`: one valid JSON object per record, tokens in praudit's text form, decoding
//! errors named with their byte offset.

mod common;

use arbiter_bsm::{Config, PrintOptions, Printer};

#[test]
fn json_lines_carry_every_record_its_tokens_and_its_error() {
    let dir = common::data_dir();
    let cfg = Config::load(&dir.join("etc")).expect("etc");
    let data = std::fs::read(dir.join("synthetic/edge.bsm")).expect("edge.bsm");
    let mut out = Vec::new();
    let opts = PrintOptions {
        noresolve: true,
        json: true,
        ..PrintOptions::default()
    };
    let sum = Printer::new(&cfg.events, opts)
        .print_trail(&data, &mut out)
        .expect("write");
    let text = String::from_utf8(out).expect("JSON output is UTF-8");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len() as u64, sum.records);
    let mut errors = 0;
    for l in &lines {
        let v: serde_json::Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
        assert!(v["offset"].is_u64() && v["tokens"].is_array(), "{l}");
        if let Some(e) = v["error"].as_str() {
            assert!(e.starts_with("byte offset "), "{e}");
            errors += 1;
        }
    }
    assert_eq!(errors, sum.bad_tokens.len());
    assert!(
        errors >= 5,
        "edge.bsm has several undecodable records, saw {errors}"
    );
    // The praudit text of the first record, token by token.
    let first: serde_json::Value = serde_json::from_str(lines[0]).expect("json");
    assert_eq!(first["tokens"][1], "path,/etc/motd");
}

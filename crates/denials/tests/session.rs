//! A run never stops on bad input: malformed records, unknown names, huge lines and junk
//! bytes are counted and reported with their line numbers, and everything else is still
//! explained. Uses the repository's small policy (policies/bin/default.33).

use arbiter_denials::{Engine, Malformed, Mode, Options, ProblemKind, Session, Unknown};

fn engine() -> Engine {
    Engine::open(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../policies/bin/default.33"
    ))
    .unwrap()
}

fn run(engine: &Engine, input: &[u8], opts: Options) -> (String, arbiter_denials::Summary) {
    let mut s = Session::new(engine, opts);
    let mut out = Vec::new();
    s.feed("in", input, &mut out).unwrap();
    let summary = s.finish(&mut out).unwrap();
    (String::from_utf8(out).unwrap(), summary)
}

const GOOD: &str = "type=AVC msg=audit(1.0:1): avc:  denied  { read } for  pid=1 comm=\"cat\" scontext=user_u:user_r:user_t:s0 tcontext=system_u:object_r:shadow_t:s0 tclass=file permissive=0\n";

#[test]
fn bad_lines_are_counted_with_line_numbers_and_the_run_goes_on() {
    let e = engine();
    let mut input = Vec::new();
    input.extend_from_slice(b"avc: denied { read scontext=a:b:c tcontext=a:b:c tclass=file\n");
    input.extend_from_slice(&vec![b'x'; 2 << 20]);
    input.extend_from_slice(b"\n\xff\xfe junk avc: { read } \x00\n");
    input.extend_from_slice(b"avc: denied { read } scontext=user_u:user_r:nosuch_t:s0 tcontext=system_u:object_r:etc_t:s0 tclass=file\n");
    input.extend_from_slice(GOOD.as_bytes());
    let (out, s) = run(&e, &input, Options::default());
    assert_eq!(s.lines, 5);
    assert_eq!(s.records, 2);
    assert_eq!(s.malformed, 3);
    assert_eq!(s.unknown, 1);
    let at: Vec<(u64, &ProblemKind)> = s.problems.iter().map(|p| (p.line, &p.what)).collect();
    assert_eq!(
        at[0],
        (1, &ProblemKind::Malformed(Malformed::UnclosedBrace))
    );
    assert!(matches!(
        at[1],
        (
            2,
            ProblemKind::Malformed(Malformed::TooLong {
                salvaged: false,
                ..
            })
        )
    ));
    assert_eq!(at[2].0, 3);
    assert!(matches!(
        at[3],
        (4, ProblemKind::Unknown(Unknown::Scontext(_)))
    ));
    // The good record after them is still explained.
    assert!(out.starts_with(GOOD));
    assert!(out.contains("Was caused by:"));
}

/// sepolgen finds a record anywhere in a line, however long: a record behind 2 MiB of
/// other text is explained (its report quoting the record), and the line is reported.
#[test]
fn record_after_the_first_mib_of_a_long_line_is_explained_and_the_line_reported() {
    let e = engine();
    let mut input = vec![b'x'; 2 << 20];
    input.push(b' ');
    input.extend_from_slice(GOOD.as_bytes());
    let (out, s) = run(&e, &input, Options::default());
    assert_eq!(s.records, 1);
    assert!(out.starts_with(GOOD), "{:.200}", out);
    assert!(matches!(
        s.problems[0].what,
        ProblemKind::Malformed(Malformed::TooLong { salvaged: true, .. })
    ));
}

#[test]
fn unknown_names_are_never_reported_as_allowed() {
    let e = engine();
    let input = "avc: denied { read } scontext=user_u:user_r:user_t:s0 tcontext=system_u:object_r:etc_t:s0 tclass=nosuch\navc: denied { nosuch } scontext=user_u:user_r:user_t:s0 tcontext=system_u:object_r:etc_t:s0 tclass=file\n";
    let (out, s) = run(&e, input.as_bytes(), Options::default());
    assert!(out.is_empty(), "{out}");
    assert_eq!(s.unknown, 2);
    let (json, _) = run(
        &e,
        input.as_bytes(),
        Options {
            json: true,
            ..Options::default()
        },
    );
    for line in json.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v["verdict"].is_null());
        assert!(v["unknown"].as_str().unwrap().contains("nosuch"));
    }
}

#[test]
fn json_lines_carry_the_verdict_and_with_explain_the_explanation() {
    let e = engine();
    let (json, _) = run(
        &e,
        GOOD.as_bytes(),
        Options {
            json: true,
            explain: true,
            mode: Mode::Why,
            ..Options::default()
        },
    );
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(v["line"], 1);
    assert_eq!(v["tclass"], "file");
    assert!(v["verdict"].is_string());
    assert_eq!(v["explanation"]["class"], "file");
}

#[test]
fn pseudo_random_bytes_never_panic() {
    let e = engine();
    let alphabet: &[&[u8]] = &[
        b"avc:",
        b" ",
        b"{",
        b"}",
        b"scontext=",
        b"tcontext=",
        b"tclass=",
        b"user_u:user_r:user_t:s0",
        b"system_u:object_r:etc_t",
        b"file",
        b"read",
        b"\n",
        b"\r",
        b"=",
        b":",
        b"'",
        b"\"",
        b"\xff",
        b"granted",
        b"msg='avc:",
        b"security_compute_sid:",
        b"ioctlcmd=0x_",
        b"\t",
    ];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..300 {
        let mut input = Vec::new();
        for _ in 0..60 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            input.extend_from_slice(alphabet[(x % alphabet.len() as u64) as usize]);
        }
        for mode in [Mode::Why, Mode::Allow] {
            run(
                &e,
                &input,
                Options {
                    mode,
                    ..Options::default()
                },
            );
        }
    }
}

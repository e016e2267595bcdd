//! Hostile input: every case ends in an error with a message (or a policy), never a panic,
//! a stack overflow or unbounded memory. Where secilc rejects the same input, the exit
//! status must agree.

mod common;

use arbiter_cil::{compile, CilError, Options, Source};

const BASE: &[u8] = include_bytes!("corpus/base.cil");

fn run(case: &[u8]) -> Result<arbiter_cil::Compiled, CilError> {
    compile(
        &[
            Source {
                name: "base.cil".into(),
                text: BASE.to_vec(),
            },
            Source {
                name: "case.cil".into(),
                text: case.to_vec(),
            },
        ],
        &Options::default(),
    )
}

/// Our status agrees with secilc's on the same two files.
fn same_status_as_secilc(case: &[u8], ours: &Result<arbiter_cil::Compiled, CilError>) {
    if common::skip() {
        return;
    }
    let dir = common::scratch("hostile");
    let sources = [
        Source {
            name: "base.cil".into(),
            text: BASE.to_vec(),
        },
        Source {
            name: "case.cil".into(),
            text: case.to_vec(),
        },
    ];
    let theirs = common::secilc(&dir, &[], &sources);
    let status = match ours {
        Ok(_) => 0,
        Err(e) => i32::from(e.status),
    };
    assert_eq!(status, theirs.status, "secilc said: {}", theirs.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn million_deep_parentheses_hit_the_nesting_limit() {
    let mut case = vec![b'('; 1_000_000];
    case.extend(std::iter::repeat_n(b')', 1_000_000));
    let e = run(&case).expect_err("must fail");
    assert!(
        e.messages[0]
            .contains("Number of open parenthesis exceeds limit of 4096 at line 1 of case.cil"),
        "{e}"
    );
    same_status_as_secilc(&case, &Err(e));
}

#[test]
fn deep_expressions_within_the_limit_do_not_overflow_the_stack() {
    let depth = 4000;
    let mut case = b"(type d_t)(typeattribute deep)(typeattributeset deep ".to_vec();
    for _ in 0..depth {
        case.extend_from_slice(b"(not ");
    }
    case.extend_from_slice(b"d_t");
    case.extend(std::iter::repeat_n(b')', depth + 1));
    case.extend_from_slice(b"(allow deep file_t (file (read)))");
    let ours = run(&case);
    same_status_as_secilc(&case, &ours);
}

#[test]
fn long_attribute_chains_are_bounded() {
    let mut case = Vec::new();
    let n = 20_000;
    for i in 0..n {
        case.extend_from_slice(format!("(typeattribute a{i})").as_bytes());
    }
    for i in 0..n - 1 {
        case.extend_from_slice(format!("(typeattributeset a{i} (a{}))", i + 1).as_bytes());
    }
    case.extend_from_slice(format!("(typeattributeset a{} (kernel_t))", n - 1).as_bytes());
    case.extend_from_slice(b"(allow a0 file_t (file (read)))");
    let e = run(&case).expect_err("bounded");
    assert!(e.to_string().contains("nested more than"), "{e}");
}

#[test]
fn self_referencing_attributes_are_an_error() {
    let case = b"(typeattribute a)(typeattribute b)(typeattributeset a (b))(typeattributeset b (a))(allow a file_t (file (read)))";
    let e = run(case).expect_err("self reference");
    assert!(e.to_string().contains("Self-reference found for"), "{e}");
    same_status_as_secilc(case, &Err(e));
}

#[test]
fn self_inheriting_blocks_and_recursive_macros_fail_cleanly() {
    for case in [
        &b"(block b (blockinherit b))"[..],
        &b"(macro m () (call m ()))(call m ())"[..],
    ] {
        let e = run(case).expect_err("must fail");
        assert!(e.to_string().contains("case.cil:1"), "{e}");
    }
}

/// Each level holds two copies of the level below: 2^40 statements if nothing stopped it.
#[test]
fn exponential_inheritance_is_bounded() {
    // A wide bottom block: the bound is reached after few copies of blocks.
    let mut case = String::from("(block b0");
    for i in 0..4000 {
        case.push_str(&format!(" (type t{i})"));
    }
    case.push_str(")\n");
    for i in 1..40 {
        case.push_str(&format!(
            "(block b{i} (block x (blockinherit b{p})) (block y (blockinherit b{p})))\n",
            p = i - 1
        ));
    }
    let e = run(case.as_bytes()).expect_err("must fail");
    assert!(e.to_string().contains("statements after copying"), "{e}");
    assert!(e.to_string().contains("case.cil:"), "{e}");
}

/// Deeply nested blocks: within libsepol's name length they compile, past it (the
/// qualified names grow with depth) they fail as secilc fails.
#[test]
fn deeply_nested_blocks_do_not_overflow_the_stack() {
    for (depth, ok) in [(600, true), (1500, false)] {
        let mut case = String::new();
        for _ in 0..depth {
            case.push_str("(block n (type t)");
        }
        case.push_str("(allow t .n.t (file (read)))");
        case.push_str(&")".repeat(depth));
        let ours = run(case.as_bytes());
        assert_eq!(ours.is_ok(), ok, "depth {depth}");
        same_status_as_secilc(case.as_bytes(), &ours);
    }
}

#[test]
fn huge_names_are_refused() {
    let mut case = b"(type ".to_vec();
    case.extend(std::iter::repeat_n(b'a', 10 << 20));
    case.extend_from_slice(b")");
    let e = run(&case).expect_err("name too long");
    assert!(e.to_string().contains("case.cil:1"), "{e}");
    same_status_as_secilc(&case, &Err(e));
}

#[test]
fn non_utf8_and_nul_bytes_are_invalid_tokens() {
    for case in [&b"(type \xff_t)"[..], &b"(type a\0b)"[..]] {
        let e = run(case).expect_err("invalid token");
        assert!(e.messages[0].starts_with("Invalid token"), "{e}");
        assert!(e.messages[0].contains("at line 1 of case.cil"), "{e}");
        same_status_as_secilc(case, &Err(e));
    }
}

#[test]
fn truncated_files_fail_cleanly() {
    let text = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/ok_contexts.cil"
    ))
    .expect("corpus");
    for cut in (0..text.len()).step_by(7) {
        let _ = run(&text[..cut]);
    }
    let e = run(&text[..text.len() / 2]).expect_err("cut in the middle of a statement");
    assert!(e.messages[0].contains("of case.cil"), "{e}");
}

/// Every argument of every corpus statement replaced in turn by a list, an empty list and
/// a dropped argument: the compiler reports an error or compiles, and never panics (a
/// panic would surface as "internal error").
#[test]
fn malformed_statement_shapes_never_panic() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus");
    let mut cases: Vec<_> = std::fs::read_dir(dir)
        .expect("corpus")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cil"))
        .collect();
    cases.sort();
    let mut tried = 0;
    for case in cases {
        let text = String::from_utf8(std::fs::read(&case).expect("read")).expect("utf-8 corpus");
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let words: Vec<&str> = line.split(' ').collect();
            for w in 1..words.len() {
                for replacement in ["(x)", "()", ""] {
                    let mut ws = words.clone();
                    ws[w] = replacement;
                    let mut mutated = lines.clone();
                    let new_line = ws.join(" ");
                    mutated[i] = &new_line;
                    let body = mutated.join("\n");
                    if let Err(e) = run(body.as_bytes()) {
                        assert!(
                            !e.to_string().contains("internal error"),
                            "{}: line {} as `{new_line}` panicked",
                            case.display(),
                            i + 1
                        );
                    }
                    tried += 1;
                }
            }
        }
    }
    assert!(tried > 1000, "only {tried} mutations");
}
